// SPDX-License-Identifier: GPL-2.0

//! NEXT_BUDDY_EEVDF (upstream 6.19's wakeup path), rule by rule, on small runqueues built
//! for each rule; and the invariant checker's view of the next buddy. The random sequences
//! of tests/model.rs compare the same rules with the reference models.

mod common;

use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

/// 6.12's defaults with 6.19's wakeup path and NEXT_BUDDY.
fn buddy_cfg() -> Config {
    Config {
        features: Features::DEFAULT
            .with(Features::NEXT_BUDDY_EEVDF, true)
            .with(Features::NEXT_BUDDY, true),
        ..Config::DEFAULT
    }
}

/// A wakeup as fair.c describes it: no flags, the waker's runtime as 6.19 reads it (0),
/// the default migration cost.
fn wake(flags: WakeFlags) -> Wake {
    Wake {
        flags,
        wakee_idle: false,
        waker_ran_ns: 0,
        migration_cost_ns: 500_000,
    }
}

/// `a` (current, just picked: eligible and slice-protected) and `b` queued, both at lag 0
/// with base slices; returns the runqueue.
fn running_pair<'a>(a: &'a UserEntity, b: &'a UserEntity, cfg: Config) -> UserRunqueue<'a> {
    let mut rq = UserRunqueue::with_zero_vruntime(u64::MAX - 2_000_000);
    enqueue_entity(&mut rq, a.se(), EnqueueFlags::NONE, cfg);
    enqueue_entity(&mut rq, b.se(), EnqueueFlags::NONE, cfg);
    assert_eq!(schedule(&mut rq, cfg), Pick::Run(a.se()));
    rq
}

/// Wakes `w` with virtual lag `vlag` (positive: owed service) and, optionally, a custom
/// slice.
fn wake_up<'a>(rq: &mut UserRunqueue<'a>, w: UserSe<'a>, vlag: i64, slice: u64, cfg: Config) {
    if slice != 0 {
        w.set_slice(slice);
        w.set_custom_slice(true);
    }
    w.set_vlag(vlag);
    enqueue_entity(rq, w, EnqueueFlags::WAKEUP, cfg);
}

fn ents() -> [UserEntity; 3] {
    [0, 1, 2].map(|_| UserEntity::new(LoadWeight::from_nice(0)))
}

/// An eligible wakee that NEXT_BUDDY makes the buddy preempts through current's slice
/// protection: the pick tests the buddy first. 6.12 (the flag off) keeps current.
#[test]
fn new_buddy_preempts_through_protection() {
    let [a, b, w] = ents();
    for eevdf in [false, true] {
        let cfg = Config {
            features: buddy_cfg().features.with(Features::NEXT_BUDDY_EEVDF, eevdf),
            ..Config::DEFAULT
        };
        let mut rq = running_pair(&a, &b, cfg);
        wake_up(&mut rq, w.se(), 0, 0, cfg);
        let preempt = check_preempt_wakeup_fair(&mut rq, w.se(), wake(WakeFlags::NONE), false, cfg);
        // Both kernels make the wakee the buddy (6.12 unconditionally, first).
        assert_eq!(rq.next_buddy(), Some(w.se()));
        assert_eq!(preempt, eevdf, "NEXT_BUDDY_EEVDF {eevdf}");
        assert_eq!(
            oracle::pick(&rq, cfg.features),
            Some(if eevdf { w.se() } else { a.se() })
        );
        // 6.12 picks the buddy at the next schedule (pick_next_entity()'s PICK_BUDDY).
        assert_eq!(schedule(&mut rq, cfg), Pick::Run(w.se()));
        assert_eq!(rq.next_buddy(), None, "set_next_entity() clears the buddy");
        check_invariants(&rq).unwrap();
        drop(rq);
        for e in [&a, &b, &w] {
            e.se().set_on_rq(false);
        }
    }
}

/// An older buddy with an earlier deadline is kept (and, eligible, picked: no preemption).
#[test]
fn older_buddy_with_earlier_deadline_is_kept() {
    let [a, b, w] = ents();
    let [x, _, _] = ents();
    let cfg = buddy_cfg();
    let mut rq = running_pair(&a, &b, cfg);
    rq.set_next_buddy(Some(b.se()));
    // A 3 ms slice: a later deadline than b's, and no PREEMPT_SHORT.
    wake_up(&mut rq, w.se(), 0, 3_000_000, cfg);
    assert!(vtime::vruntime_before(b.se().deadline(), w.se().deadline()));
    let want = oracle::wakeup_preempt_buddy(&rq, w.se(), wake(WakeFlags::NONE), cfg.features);
    let act = wakeup_preempt_buddy(&mut rq, w.se(), wake(WakeFlags::NONE), cfg);
    assert_eq!(
        (act.preempt, act.set_buddy, act.kept_buddy),
        (false, false, true)
    );
    assert_eq!((act.preempt, act.set_buddy), want);
    assert_eq!(rq.next_buddy(), Some(b.se()));
    assert_eq!(pick_eevdf(&rq, cfg), Some(b.se()));
    assert_eq!(pick_reason(&rq, Some(b.se()), cfg), PickReason::Buddy);
    assert_eq!(
        wakeup_buddy_reason(&rq, w.se(), act, cfg),
        WakeupPreempt::None
    );
    // A wakee with a deadline that is not later replaces it.
    wake_up(&mut rq, x.se(), 0, 0, cfg);
    let act = wakeup_preempt_buddy(&mut rq, x.se(), wake(WakeFlags::NONE), cfg);
    assert!(act.set_buddy && !act.kept_buddy && act.preempt, "{act:?}");
    assert_eq!(rq.next_buddy(), Some(x.se()));
    assert_eq!(
        wakeup_buddy_reason(&rq, x.se(), act, cfg),
        WakeupPreempt::Buddy
    );
    check_invariants(&rq).unwrap();
}

/// WF_SYNC: a sync wakeup that made the buddy does not reach the pick. With the waker's
/// runtime as 6.19 reads it (0) it reschedules only when the threshold is 0: the migration
/// cost set to 0, or below 4 with WF_RQ_SELECTED; and only for an earlier deadline.
#[test]
fn sync_wakeup_follows_preempt_sync() {
    let cases = [
        // (flags, migration cost, waker ran, wakee lag, preempt)
        (WakeFlags::SYNC, 500_000, 0, 400_000, false),
        (WakeFlags::SYNC, 0, 0, 400_000, true),
        (
            WakeFlags::SYNC | WakeFlags::RQ_SELECTED,
            3,
            0,
            400_000,
            true,
        ),
        (
            WakeFlags::SYNC | WakeFlags::RQ_SELECTED,
            4,
            0,
            400_000,
            false,
        ),
        (
            WakeFlags::SYNC | WakeFlags::RQ_SELECTED,
            500_000,
            125_000,
            400_000,
            true,
        ),
        (WakeFlags::SYNC, 500_000, 499_999, 400_000, false),
        // A later deadline than current's: never.
        (WakeFlags::SYNC, 0, 0, 0, false),
    ];
    for (k, &(flags, cost, ran, lag, preempt)) in cases.iter().enumerate() {
        let [a, b, w] = ents();
        let cfg = buddy_cfg();
        let mut rq = running_pair(&a, &b, cfg);
        let _ = update_curr(&mut rq, 200_000, cfg);
        wake_up(&mut rq, w.se(), lag, 0, cfg);
        let wk = Wake {
            flags,
            wakee_idle: false,
            waker_ran_ns: ran,
            migration_cost_ns: cost,
        };
        let want = oracle::wakeup_preempt_buddy(&rq, w.se(), wk, cfg.features);
        let act = wakeup_preempt_buddy(&mut rq, w.se(), wk, cfg);
        assert_eq!(act.rule, WakeupRule::Sync, "case {k}");
        assert_eq!((act.preempt, act.set_buddy), (preempt, true), "case {k}");
        assert_eq!((act.preempt, act.set_buddy), want, "case {k}");
        assert_eq!(rq.next_buddy(), Some(w.se()), "case {k}");
        let why = wakeup_buddy_reason(&rq, w.se(), act, cfg);
        let want_why = if preempt {
            WakeupPreempt::SyncResched
        } else {
            WakeupPreempt::SyncNone
        };
        assert_eq!(why, want_why, "case {k}");
    }
}

/// A new task's wakeup (WF_FORK) or a delayed entity's never preempts and makes no buddy,
/// although 6.12 (the flag off) preempts for the same runqueue.
#[test]
fn fork_and_delayed_never_preempt() {
    let [a, b, w] = ents();
    let cfg = Config {
        features: buddy_cfg().features.with(Features::RUN_TO_PARITY, false),
        ..Config::DEFAULT
    };
    let mut rq = running_pair(&a, &b, cfg);
    let _ = update_curr(&mut rq, 200_000, cfg);
    wake_up(&mut rq, w.se(), 400_000, 0, cfg);
    let off = Config {
        features: cfg.features.with(Features::NEXT_BUDDY_EEVDF, false),
        ..cfg
    };
    assert!(oracle::wakeup_preempt(&rq, w.se(), off.features));
    let fork = wake(WakeFlags::FORK);
    assert_eq!(
        oracle::wakeup_preempt_buddy(&rq, w.se(), fork, cfg.features),
        (false, false)
    );
    let act = wakeup_preempt_buddy(&mut rq, w.se(), fork, cfg);
    assert_eq!(
        (act.preempt, act.set_buddy, act.rule),
        (false, false, WakeupRule::ForkOrDelayed)
    );
    assert_eq!(rq.next_buddy(), None);
    // b sleeps while not eligible (it ran ahead): delayed; its "wakeup" is not a preemption.
    b.se().set_sched_delayed(true);
    let act = wakeup_preempt_buddy(&mut rq, b.se(), wake(WakeFlags::NONE), cfg);
    assert_eq!((act.preempt, act.rule), (false, WakeupRule::ForkOrDelayed));
    assert_eq!(
        wakeup_buddy_reason(&rq, b.se(), act, cfg),
        WakeupPreempt::ForkOrDelayed
    );
}

/// PREEMPT_SHORT's wakee with a shorter slice skips the buddy logic (the buddy stays) and
/// is decided by 6.12's PREEMPT_SHORT rule with the pick testing the buddy first, so an
/// eligible older buddy holds it off (6.19 as released; 7.1's 78cde54ea5f0 "Clear buddies
/// for preempt_short" changed that).
#[test]
fn short_wakee_leaves_the_buddy_alone() {
    let [a, b, w] = ents();
    let cfg = buddy_cfg();
    let mut rq = running_pair(&a, &b, cfg);
    let _ = update_curr(&mut rq, 100_000, cfg);
    rq.set_next_buddy(Some(b.se()));
    wake_up(&mut rq, w.se(), 0, 100_000, cfg);
    let wk = wake(WakeFlags::NONE);
    let want = oracle::wakeup_preempt_buddy(&rq, w.se(), wk, cfg.features);
    let act = wakeup_preempt_buddy(&mut rq, w.se(), wk, cfg);
    assert_eq!(act.rule, WakeupRule::Short);
    assert_eq!((act.preempt, act.set_buddy), (false, false));
    assert_eq!((act.preempt, act.set_buddy), want);
    assert_eq!(rq.next_buddy(), Some(b.se()));
    // Without the buddy the short wakee preempts.
    rq.set_next_buddy(None);
    assert!(wakeup_preempt_buddy(&mut rq, w.se(), wk, cfg).preempt);
}

/// Without NEXT_BUDDY_EEVDF the core's pick ignores the buddy (fair.c's
/// pick_next_entity() tests it), and with it but NO_PICK_BUDDY too.
#[test]
fn pick_reads_the_buddy_only_with_the_flag_and_pick_buddy() {
    let [a, b, w] = ents();
    let cfg = buddy_cfg();
    let mut rq = running_pair(&a, &b, cfg);
    wake_up(&mut rq, w.se(), 0, 3_000_000, cfg);
    rq.set_next_buddy(Some(w.se()));
    let f = cfg.features;
    for (features, want) in [
        (f, w.se()),
        (f.with(Features::NEXT_BUDDY_EEVDF, false), a.se()),
        (f.with(Features::PICK_BUDDY, false), a.se()),
    ] {
        let c = Config { features, ..cfg };
        assert_eq!(pick_eevdf(&rq, c), Some(want), "{features:?}");
        assert_eq!(oracle::pick(&rq, features), Some(want), "{features:?}");
    }
    // An ineligible buddy is passed over: current, after running ahead of V.
    let _ = update_curr(&mut rq, 600_000, cfg);
    rq.set_next_buddy(Some(a.se()));
    check_invariants(&rq).unwrap();
    assert!(!entity_eligible(&rq, a.se(), cfg));
    let pick = pick_eevdf(&rq, cfg);
    assert!(pick.is_some() && pick != Some(a.se()));
    assert_eq!(pick, oracle::pick(&rq, cfg.features));
    assert_ne!(pick_reason(&rq, pick, cfg), PickReason::Buddy);
}

/// An idle wakee (a SCHED_IDLE group: set_next_buddy() marks nothing): fair.c is asked to
/// set the buddy, which it does not, and the core leaves this level's alone too.
#[test]
fn idle_wakee_is_not_marked() {
    let [a, b, w] = ents();
    let cfg = buddy_cfg();
    let mut rq = running_pair(&a, &b, cfg);
    wake_up(&mut rq, w.se(), 0, 0, cfg);
    let wk = Wake {
        wakee_idle: true,
        ..wake(WakeFlags::NONE)
    };
    let want = oracle::wakeup_preempt_buddy(&rq, w.se(), wk, cfg.features);
    let act = wakeup_preempt_buddy(&mut rq, w.se(), wk, cfg);
    assert_eq!((act.preempt, act.set_buddy), want);
    assert!(act.set_buddy && !act.preempt, "{act:?}");
    assert_eq!(rq.next_buddy(), None);
}

/// The checker: a buddy must be current or in the tree, queued and not delayed.
#[test]
fn checker_sees_a_bad_buddy() {
    let [a, b, w] = ents();
    let cfg = buddy_cfg();
    let mut rq = running_pair(&a, &b, cfg);
    for ok in [a.se(), b.se()] {
        rq.set_next_buddy(Some(ok));
        check_invariants(&rq).unwrap();
    }
    rq.set_next_buddy(Some(w.se()));
    assert_eq!(
        check_invariants(&rq).unwrap_err(),
        InvariantError::Buddy {
            on_this_rq: false,
            on_rq: false,
            delayed: false
        }
    );
    rq.set_next_buddy(Some(b.se()));
    b.se().set_sched_delayed(true);
    let e = check_invariants(&rq).unwrap_err();
    assert_eq!(e.name(), "buddy");
    b.se().set_sched_delayed(false);
    // Dequeued without clear_buddies().
    rq.set_next_buddy(Some(b.se()));
    sched_eevdf::__dequeue_entity(&mut rq, b.se(), cfg.features);
    b.se().set_on_rq(false);
    rq.set_nr_queued(1);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::Buddy {
            on_this_rq: false,
            ..
        })
    ));
}
