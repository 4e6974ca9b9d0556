// SPDX-License-Identifier: GPL-2.0

//! Slice protection, one case at a time: RUN_TO_PARITY_MIN_SLICE's window (6.17) where it
//! is set, shrunk, cancelled and ended; PROTECT_AT_PICK across a sched_change and a
//! reweight (7.0); toggles of either in the middle of a window; a window past the deadline;
//! Vincent Guittot's lag error. The values are worked out by hand beside each assertion: every entity is nice 0, so a real slice and its virtual
//! length are the same number of ns.

use sched_eevdf::user::{UserEntity, UserRunqueue};
use sched_eevdf::*;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn cfg(flags: &[(Features, bool)]) -> Config {
    let mut c = Config::DEFAULT;
    for &(f, on) in flags {
        c.features = c.features.with(f, on);
    }
    c
}

fn min_slice() -> Config {
    cfg(&[(Features::RUN_TO_PARITY_MIN_SLICE, true)])
}

/// A nice-0 entity with a custom slice.
fn entity(slice: u64) -> UserEntity {
    let e = UserEntity::new(LoadWeight::from_nice(0));
    e.se().set_slice(slice);
    e.se().set_custom_slice(true);
    e
}

/// `a` is queued alone and picked: current, protected for its whole slice.
fn run_alone<'a>(rq: &mut UserRunqueue<'a>, a: &'a UserEntity, c: Config) {
    enqueue_entity(rq, a.se(), EnqueueFlags::WAKEUP, c);
    assert_eq!(schedule(rq, c), Pick::Run(a.se()));
    assert_eq!(a.se().vprot(), a.se().deadline(), "alone: the whole slice");
}

#[test]
fn window_is_the_smallest_queued_slice() {
    let (b, c) = (entity(500 * US), entity(2 * MS));
    let mut rq = UserRunqueue::with_zero_vruntime(u64::MAX - 10 * MS);
    for e in [&b, &c] {
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::WAKEUP, min_slice());
    }
    // `a` is about to become current: out of the tree, 3 ms of slice left.
    let a = entity(3 * MS);
    let se = a.se();
    se.set_vruntime(rq.zero_vruntime());
    se.set_deadline(se.vruntime().wrapping_add(3 * MS));
    let v = se.vruntime();

    // RUN_TO_PARITY: min(queued 0.5 ms, own 3 ms).
    assert!(!set_protect_slice(&rq, se, true, min_slice()));
    assert_eq!(se.vprot(), v.wrapping_add(500 * US));
    // NO_RUN_TO_PARITY: min(normalized base slice, own slice).
    let mut no_rtp = cfg(&[
        (Features::RUN_TO_PARITY_MIN_SLICE, true),
        (Features::RUN_TO_PARITY, false),
    ]);
    no_rtp.normalized_base_slice_ns = 300 * US;
    no_rtp.base_slice_ns = 900 * US; // three CPUs' worth: not what 6.17 reads
    set_protect_slice(&rq, se, true, no_rtp);
    assert_eq!(se.vprot(), v.wrapping_add(300 * US));
    // A quantum longer than what is left of the slice: the deadline.
    se.set_vruntime(v.wrapping_add(2_800 * US));
    set_protect_slice(&rq, se, true, min_slice());
    assert_eq!(se.vprot(), se.deadline());
    // Own slice the smallest: the deadline, as 6.12's stash.
    se.set_vruntime(v);
    se.set_slice(200 * US);
    set_protect_slice(&rq, se, true, min_slice());
    assert_eq!(se.vprot(), se.deadline());
    // 6.12: the stash.
    se.set_slice(3 * MS);
    set_protect_slice(&rq, se, true, Config::DEFAULT);
    assert_eq!(se.vprot(), se.deadline());
}

/// A shorter-slice wakee that is not eligible does not preempt: 6.17 limits current's
/// window to the smallest queued slice; 6.12 leaves it (the wakee is not eligible, so
/// PREEMPT_SHORT does not cancel it either).
#[test]
fn short_wakee_that_does_not_preempt_shrinks_the_window() {
    for on in [true, false] {
        let c = cfg(&[(Features::RUN_TO_PARITY_MIN_SLICE, on)]);
        let (a, w) = (entity(3 * MS), entity(100 * US));
        let mut rq = UserRunqueue::new();
        run_alone(&mut rq, &a, c);
        assert!(!update_curr(&mut rq, 200 * US, c));
        let d = a.se().deadline();
        // Owed less than nothing: placed right of V, not eligible.
        w.se().set_vlag(-(2 * MS as i64));
        enqueue_entity(&mut rq, w.se(), EnqueueFlags::WAKEUP, c);
        assert!(!entity_eligible(&rq, w.se(), c));
        assert!(!wakeup_preempt(&mut rq, w.se(), c));
        check_invariants(&rq).unwrap();
        if on {
            // min(d, v + min(0.1 ms, 3 ms))
            assert_eq!(a.se().vprot(), a.se().vruntime().wrapping_add(100 * US));
            assert_eq!(wakeup_reason(&rq, w.se(), false, c), WakeupPreempt::None);
            // 0.1 ms later the window has ended: update_curr() asks for a resched, with
            // current still eligible.
            assert!(update_curr(&mut rq, 100 * US, c));
            assert!(entity_eligible(&rq, a.se(), c));
        } else {
            assert_eq!(a.se().vprot(), d, "6.12: the stash stays");
            assert!(!update_curr(&mut rq, 100 * US, c));
        }
    }
}

/// A short wakee that wins the pick (which ignores the protection for it) cancels it; one
/// that loses does not (6.12 cancels as soon as it is eligible with an earlier deadline).
#[test]
fn short_wakee_cancels_only_when_it_preempts() {
    let c = min_slice();
    let (a, w) = (entity(3 * MS), entity(100 * US));
    let mut rq = UserRunqueue::new();
    run_alone(&mut rq, &a, c);
    assert!(!update_curr(&mut rq, MS, c));
    // Placed at V (lag 0): eligible, deadline V + 0.1 ms, before current's.
    enqueue_entity(&mut rq, w.se(), EnqueueFlags::WAKEUP, c);
    assert!(wakeup_preempt(&mut rq, w.se(), c));
    assert_eq!(a.se().vprot(), a.se().vruntime(), "cancelled: ended at v");
    assert_eq!(
        wakeup_reason(&rq, w.se(), true, c),
        WakeupPreempt::ShortSlice
    );
    check_invariants(&rq).unwrap();
    assert_eq!(schedule(&mut rq, c), Pick::Run(w.se()));
}

/// PROTECT_AT_PICK: a sched_change of current neither restores a cancelled window nor
/// restarts a running one; without it, 6.12 stashes the deadline again.
#[test]
fn sched_change_keeps_the_window_with_protect_at_pick() {
    for (min, pap) in [(false, false), (false, true), (true, false), (true, true)] {
        let c = cfg(&[
            (Features::RUN_TO_PARITY_MIN_SLICE, min),
            (Features::PROTECT_AT_PICK, pap),
        ]);
        let (a, b) = (entity(3 * MS), entity(MS));
        let mut rq = UserRunqueue::new();
        run_alone(&mut rq, &a, c);
        // b waits with a later deadline, current keeps running.
        b.se().set_vlag(-(500 * US as i64));
        enqueue_entity(&mut rq, b.se(), EnqueueFlags::WAKEUP, c);
        assert!(!update_curr(&mut rq, 200 * US, c));

        // A running window: 2.8 ms left. A renice keeps it, or sets it again.
        let left = vtime::vdelta(a.se().vprot(), a.se().vruntime());
        assert_eq!(left, (2_800 * US) as i64);
        renice(&mut rq, a.se(), LoadWeight::from_nice(0), c);
        let after = vtime::vdelta(a.se().vprot(), a.se().vruntime());
        if pap || !min {
            assert_eq!(after, left, "kept (or 6.12's stash: the deadline again)");
        } else {
            // 6.17 sets the window again at the sched_change: min(d, v + 1 ms).
            assert_eq!(after, MS as i64);
        }
        check_invariants(&rq).unwrap();

        // A cancelled window: only without PROTECT_AT_PICK does a setattr restore it.
        cancel_protect_slice(a.se(), c.features);
        assert!(!protect_slice(a.se(), c.features));
        let kept = sched_change(&mut rq, a.se(), c, |_, _| {});
        assert_eq!(kept, pap, "set_next_entity() kept an ended window");
        assert_eq!(protect_slice(a.se(), c.features), !pap, "restored?");
        check_invariants(&rq).unwrap();
    }
}

/// PROTECT_AT_PICK: a reweight of current scales what is left of its window like the
/// deadline's distance (7.0's "Update se->vprot in reweight_entity()").
#[test]
fn reweight_of_current_scales_the_window() {
    let double = LoadWeight::from_weight(scale_load(2048));
    for (min, pap) in [(false, false), (false, true), (true, false), (true, true)] {
        let c = cfg(&[
            (Features::RUN_TO_PARITY_MIN_SLICE, min),
            (Features::PROTECT_AT_PICK, pap),
        ]);
        let a = entity(3 * MS);
        let mut rq = UserRunqueue::new();
        run_alone(&mut rq, &a, c);
        assert!(!update_curr(&mut rq, MS, c));
        let se = a.se();
        if min {
            // A 6.17 window shorter than the slice: 0.5 ms left.
            se.set_vprot(se.vruntime().wrapping_add(500 * US));
        }
        reweight_entity(&mut rq, se, double, c);
        check_invariants(&rq).unwrap();
        // Alone on the runqueue, current is V: its vruntime stays; the 2 ms to its
        // deadline become 1 ms of virtual time at twice the weight.
        let (v, d) = (se.vruntime(), se.deadline());
        assert_eq!(vtime::vdelta(d, v), MS as i64);
        match (min, pap) {
            (true, true) => assert_eq!(vtime::vdelta(se.vprot(), v), (250 * US) as i64),
            (false, true) => assert_eq!(se.vprot(), d, "the stash follows the deadline"),
            // 6.17 without the fix: the window stays where it was (it ends by d).
            (true, false) => assert_eq!(vtime::vdelta(se.vprot(), v), (500 * US) as i64),
            // 6.12: the stash no longer matches: protection lost.
            (false, false) => assert!(!protect_slice(se, c.features)),
        }
    }
}

/// A window that a reweight would leave past the new deadline is ended (6.17 kept
/// protecting until `vprot`, past the request).
#[test]
fn reweight_never_leaves_a_window_past_the_deadline() {
    let c = min_slice();
    let a = entity(3 * MS);
    let mut rq = UserRunqueue::new();
    run_alone(&mut rq, &a, c);
    assert!(!update_curr(&mut rq, MS, c));
    // 2 ms left of both; at 4x the weight the deadline is 0.5 ms away, the window 2 ms.
    reweight_entity(
        &mut rq,
        a.se(),
        LoadWeight::from_weight(scale_load(4096)),
        c,
    );
    check_invariants(&rq).unwrap();
    assert!(!protect_slice(a.se(), c.features));
}

/// RUN_TO_PARITY_MIN_SLICE toggled in the middle of a window, both ways: the window read
/// is bounded by the deadline, and an ended one stays ended.
#[test]
fn toggles_in_the_middle_of_a_window_are_bounded() {
    let (on, off) = (min_slice(), Config::DEFAULT);
    let (a, b) = (entity(3 * MS), entity(MS));
    let mut rq = UserRunqueue::new();
    run_alone(&mut rq, &a, off);
    b.se().set_vlag(-(500 * US as i64));
    enqueue_entity(&mut rq, b.se(), EnqueueFlags::WAKEUP, off);
    assert!(!update_curr(&mut rq, 200 * US, off));
    // 6.12's stash read by 6.17: protected until the deadline.
    assert!(protect_slice(a.se(), on.features));
    assert!(!update_curr(&mut rq, 2_700 * US, on));
    assert!(
        update_curr(&mut rq, 100 * US, on),
        "request used up: resched"
    );
    check_invariants(&rq).unwrap();

    // A 6.17 window shorter than the slice (a picked again, b's 1 ms queued), read by
    // 6.12: not protected.
    put_prev_entity(&mut rq, on);
    set_next_entity(&mut rq, a.se(), true, on);
    let se = a.se();
    assert_eq!(vtime::vdelta(se.vprot(), se.vruntime()), MS as i64);
    assert!(!protect_slice(se, off.features));
    // Cancelled under one, ended under both.
    for (cancel, other) in [(on, off), (off, on)] {
        set_protect_slice(&rq, se, true, Config::DEFAULT);
        cancel_protect_slice(se, cancel.features);
        assert!(!protect_slice(se, cancel.features));
        assert!(!protect_slice(se, other.features));
    }
    check_invariants(&rq).unwrap();
}

/// A window past the deadline protects nothing under 6.17's reading: what a
/// `set_protect_slice()` without its `min(d, ...)`, 6.12's cancel (`d + 1`) or a stash
/// left behind by a reweight would leave; 6.12's reading of it is 6.12's.
#[test]
fn a_window_past_the_deadline_is_ended() {
    let c = min_slice();
    let a = entity(3 * MS);
    let mut rq = UserRunqueue::new();
    run_alone(&mut rq, &a, c);
    let se = a.se();
    se.set_vprot(se.deadline().wrapping_add(1));
    assert!(!protect_slice(se, c.features));
    assert!(!protect_slice(se, Features::DEFAULT));
    se.set_vprot(se.deadline());
    assert!(protect_slice(se, c.features));
    assert!(protect_slice(se, Features::DEFAULT));
    check_invariants(&rq).unwrap();
}

/// Vincent Guittot's bound: ±(slice + tick), or ±max(slice, normalized base slice + tick)
/// without RUN_TO_PARITY; RUN_TO_PARITY_MIN_SLICE does not change it.
#[test]
fn lag_error_bound() {
    let a = entity(3 * MS);
    let se = a.se();
    for min in [false, true] {
        let rtp = cfg(&[(Features::RUN_TO_PARITY_MIN_SLICE, min)]);
        let bound = (3 * MS + rtp.tick_nsec) as i64;
        for sign in [1, -1] {
            assert!(!lag_error(sign * bound, se, rtp));
            assert!(lag_error(sign * (bound + 1), se, rtp));
        }
        let mut no_rtp = rtp;
        no_rtp.features = no_rtp.features.with(Features::RUN_TO_PARITY, false);
        no_rtp.normalized_base_slice_ns = 700 * US;
        let bound = (700 * US + no_rtp.tick_nsec) as i64;
        assert!(!lag_error(bound, se, no_rtp));
        assert!(lag_error(-bound - 1, se, no_rtp));
        // A slice longer than base + tick is its own bound.
        se.set_slice(10 * MS);
        assert!(!lag_error((10 * MS) as i64, se, no_rtp));
        assert!(lag_error((10 * MS) as i64 + 1, se, no_rtp));
        se.set_slice(3 * MS);
    }
    // Virtual time: at twice the weight the same real bound is half as long.
    let heavy = UserEntity::new(LoadWeight::from_weight(scale_load(2048)));
    heavy.se().set_slice(3 * MS);
    let c = Config::DEFAULT;
    let bound = calc_delta_fair(3 * MS + c.tick_nsec, heavy.se().load()) as i64;
    // __calc_delta()'s fixed point: within a few ns of half.
    assert!(
        bound.abs_diff(((3 * MS + c.tick_nsec) / 2) as i64) <= 4,
        "{bound}"
    );
    assert!(!lag_error(bound, heavy.se(), c));
    assert!(lag_error(bound + 1, heavy.se(), c));
}

/// 6.12 stashes current's protection in `vlag`, which `requeue_delayed_entity()`'s
/// `update_entity_lag()` overwrites with the lag: a delayed current woken before the pick
/// puts it away loses its protection. tests/fair-c-diff found the core keeping it; this
/// fixes fair.c's behaviour.
#[test]
fn requeued_delayed_current_loses_its_6_12_protection() {
    let c = Config::DEFAULT;
    let (a, b) = (entity(3 * MS), entity(3 * MS));
    let mut rq = UserRunqueue::new();
    for e in [&a, &b] {
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::WAKEUP, c);
    }
    let Pick::Run(x) = schedule(&mut rq, c) else {
        panic!("nothing picked")
    };
    // 1 ms of its 3 ms: ahead of V (not eligible), its request not used up.
    assert!(!update_curr(&mut rq, MS, c));
    assert!(protect_slice(x, c.features), "protected until its deadline");
    // It blocks, not eligible: DELAY_DEQUEUE keeps it queued, and current.
    assert!(!dequeue_entity(&mut rq, x, DequeueFlags::SLEEP, c));
    assert!(x.sched_delayed() && rq.curr() == Some(x));
    assert!(
        protect_slice(x, c.features),
        "a delayed dequeue leaves the stash"
    );
    // Woken before the pick: DELAY_ZERO saves the lag, negative, so no new placement.
    requeue_delayed_entity(&mut rq, x, c);
    assert!(x.vlag() < 0);
    assert_eq!(
        x.vprot(),
        x.vlag() as u64,
        "the stash holds the lag, as 6.12's vlag"
    );
    assert!(!protect_slice(x, c.features));
}

/// The same for a current whose sleep is not delayed: the dequeue saves its lag over
/// 6.12's stash, so `update_curr()` before the pick (another task's enqueue while the
/// pick balances) finds it unprotected, and PREEMPT_SHORT's test asks for a reschedule
/// as fair.c's `did_preempt_short()` does. Found by tests/fair-c-diff's fuzz target.
#[test]
fn dequeued_current_loses_its_6_12_protection() {
    let c = Config::DEFAULT;
    let (a, b, d) = (entity(3 * MS), entity(3 * MS), entity(3 * MS));
    let mut rq = UserRunqueue::new();
    // Three, so that two stay queued (update_curr() asks nothing of a lone entity).
    for e in [&a, &b, &d] {
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::WAKEUP, c);
    }
    let Pick::Run(x) = schedule(&mut rq, c) else {
        panic!("nothing picked")
    };
    assert!(!update_curr(&mut rq, MS, c));
    assert!(protect_slice(x, c.features));
    // A special sleep is never delayed: it leaves, still current until the pick.
    let flags = DequeueFlags::SLEEP | DequeueFlags::SPECIAL;
    assert!(dequeue_entity(&mut rq, x, flags, c));
    assert_eq!(x.vprot(), x.vlag() as u64, "the stash holds the lag");
    assert!(!protect_slice(x, c.features));
    // Charged while dequeued, not eligible (it is ahead of V) and unprotected:
    // PREEMPT_SHORT asks for the reschedule.
    assert!(update_curr(&mut rq, 100 * US, c));
}
