// SPDX-License-Identifier: GPL-2.0

//! Wakeup preemption: `check_preempt_wakeup_fair()`'s EEVDF decision, PREEMPT_SHORT,
//! RUN_TO_PARITY_MIN_SLICE's shrinking window, and NEXT_BUDDY_EEVDF's buddy.

use super::super::features::{Config, Features};
use super::super::math::Eligibility;
use super::super::tree::{Entity, Runqueue};
use super::super::vtime::vruntime_before;
use super::pick::{
    pick_eevdf_fast, pick_eevdf_general, pick_eevdf_tree_is, pick_features, pick_reason, Fast,
};
use super::protect::{cancel_protect_slice, update_protect_slice, without_protection};
use super::{PickReason, Wake, WakeFlags, WakeupAction, WakeupPreempt, WakeupRule};

/// `check_preempt_wakeup_fair()`'s EEVDF decision for the woken, already enqueued `pse`:
/// whether current must be rescheduled. Call `update_curr()` first; [`wakeup_reason`] says
/// why.
///
/// Current's slice protection is what `set_next_entity()` set at the pick
/// ([`set_protect_slice`](super::set_protect_slice): 6.12's stashed deadline, or 6.17's
/// window), and with RUN_TO_PARITY the pick keeps an eligible protected current. With
/// PREEMPT_SHORT, a wakee with a shorter slice that is eligible and either has an earlier
/// deadline than current or finds current ineligible cancels current's slice
/// protection (even if it does not get picked). Then current is preempted iff
/// [`pick_eevdf`](super::pick_eevdf) now returns the wakee. With RUN_TO_PARITY_MIN_SLICE,
/// 6.17's decision ([`wakeup_preempt_min_slice`]'s docs). In the kernel the common case
/// (equal slices, the pick's O(1) cases) is straight-line code, and the rest is reached by
/// tail calls. It reads the feature bits alone: a [`Config`] converts.
#[inline(always)]
pub fn wakeup_preempt<R: Runqueue>(rq: &mut R, pse: R::Se, features: impl Into<Features>) -> bool {
    let f = features.into();
    let Some(curr) = rq.curr() else {
        return true;
    };
    if curr == pse {
        return false;
    }
    if f.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
        return wakeup_preempt_min_slice(rq, pse, curr, f);
    }
    if f.contains(Features::PREEMPT_SHORT) && pse.slice() < curr.slice() {
        return wakeup_preempt_shorter(rq, pse, curr, f);
    }
    match pick_eevdf_fast(rq, f) {
        Fast::Pick(pick) => pick == Some(pse),
        Fast::Tree { curr, avg, load } => pick_eevdf_tree_is(rq, pse, curr, avg, load),
        Fast::General => pick_eevdf_general_is(rq, pse, f),
    }
}

/// [`wakeup_preempt`] for a wakee with a shorter slice than current's (PREEMPT_SHORT on).
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn wakeup_preempt_shorter<R: Runqueue>(rq: &R, pse: R::Se, curr: R::Se, f: Features) -> bool {
    if shorter_preempts(rq, pse, curr, f) {
        cancel_protect_slice(curr, f);
    }
    pick_features(rq, f) == Some(pse)
}

/// [`wakeup_preempt`] with RUN_TO_PARITY_MIN_SLICE (6.17's "Remove spurious shorter slice
/// preemption" and "Fix entity's lag with run to parity"):
///
/// - the wakee is short when PREEMPT_SHORT is on and its slice is shorter than
///   current's: no eligibility or deadline test;
/// - current is preempted iff the pick returns the wakee, a pick that ignores current's
///   protection for a short wakee; only then does a short wakee cancel the protection;
/// - a short wakee that does not preempt (RUN_TO_PARITY) limits what is left of current's
///   window to the smallest queued slice ([`update_protect_slice`]).
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn wakeup_preempt_min_slice<R: Runqueue>(rq: &R, pse: R::Se, curr: R::Se, f: Features) -> bool {
    let short = f.contains(Features::PREEMPT_SHORT) && pse.slice() < curr.slice();
    let pick = if short {
        pick_features(rq, without_protection(f))
    } else {
        pick_features(rq, f)
    };
    if pick == Some(pse) {
        if short {
            cancel_protect_slice(curr, f);
        }
        return true;
    }
    if short && f.contains(Features::RUN_TO_PARITY) {
        update_protect_slice(rq, curr);
    }
    false
}

/// Whether [`pick_eevdf_general`] picks `pse`: out of line, so that [`wakeup_preempt`]
/// reaches it by a tail call.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn pick_eevdf_general_is<R: Runqueue>(rq: &R, pse: R::Se, features: Features) -> bool {
    pick_eevdf_general(rq, features) == Some(pse)
}

/// Why [`wakeup_preempt`] decided `preempts` (what it returned) for the woken `pse`: the
/// debugfs counters' classification of `check_preempt_wakeup_fair()`'s decision. Asked
/// after the decision, of the state it left: cancelling or shrinking the slice
/// protection writes only current's `vprot`, which neither `do_preempt_short()` nor the
/// eligibility tests read.
pub fn wakeup_reason<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    preempts: bool,
    cfg: Config,
) -> WakeupPreempt {
    let Some(curr) = rq.curr() else {
        return WakeupPreempt::Idle;
    };
    if curr == pse {
        return WakeupPreempt::None;
    }
    let min_slice = cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE);
    let short = if min_slice {
        cfg.feat(Features::PREEMPT_SHORT) && pse.slice() < curr.slice()
    } else {
        do_preempt_short(rq, pse, curr, cfg)
    };
    let el = Eligibility::new(rq, cfg);
    if preempts {
        return if short {
            WakeupPreempt::ShortSlice
        } else if !curr.on_rq() || !el.vruntime(curr.vruntime()) {
            WakeupPreempt::CurrIneligible
        } else {
            WakeupPreempt::EarlierDeadline
        };
    }
    // RUN_TO_PARITY kept current against an eligible wakee whose deadline does not lose to
    // current's: without the protection the deadline order would have let the wakee (or
    // another earlier deadline) run. O(1): no second pick. The reason is asked of current:
    // Parity holds exactly when the pick kept current by its slice protection, and the
    // other reasons are not Parity whatever was picked. With RUN_TO_PARITY_MIN_SLICE a
    // short wakee's pick ignored the protection, so it did not hold current.
    if !(min_slice && short)
        && pick_reason(rq, Some(curr), cfg) == PickReason::Parity
        && el.vruntime(pse.vruntime())
        && !vruntime_before(curr.deadline(), pse.deadline())
    {
        return WakeupPreempt::RunToParity;
    }
    WakeupPreempt::None
}

/// `check_preempt_wakeup_fair()`'s decision with NEXT_BUDDY_EEVDF: upstream 6.19's
/// (e837456fdca8 "sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals", as left by
/// 15257cc2f905 "Revert force wakeup preemption"), for the woken, already enqueued `pse`,
/// after `update_curr()`. fair.c calls it instead of [`wakeup_preempt`] while the flag is
/// on, past the same early exits (need-resched set, WAKEUP_PREEMPTION off, the idle-policy
/// rules).
///
/// The next buddy (`cfs_rq->next`) is an entity fair.c marked to run next: a wakee with
/// NEXT_BUDDY, `yield_to()`'s target, a group whose task just slept. `set_next_buddy()`
/// marks every level of the hierarchy; `clear_buddies()` unmarks it when it is picked,
/// dequeued or rescheduled by `update_curr()`. In 6.12 (and here without
/// NEXT_BUDDY_EEVDF) NEXT_BUDDY marks every wakee that is not new or delayed, before any
/// test, `pick_next_entity()` returns an eligible buddy before `pick_eevdf()` (PICK_BUDDY,
/// on by default), and the wakeup decision ([`wakeup_preempt`]) ignores it. With
/// NEXT_BUDDY_EEVDF the pick tests the buddy itself, and the wakeup decides by these
/// rules, in order:
///
/// ```text
///   no current: preempt;  pse is current: nothing
///   PREEMPT_SHORT && r_pse < r_curr:  PREEMPT_SHORT's rule, buddy untouched   (Short)
///   WF_FORK || pse delayed:           no preemption, no buddy                 (ForkOrDelayed)
///   NEXT_BUDDY:
///       next && d_next < d_pse:       keep the older buddy
///       else:                         next = pse (set_next_buddy)
///                                     WF_SYNC: preempt_sync() decides         (Sync)
///   preempt iff pick_eevdf() == pse                                           (Pick)
/// ```
///
/// The pick tests an eligible next buddy first (PICK_BUDDY,
/// [`pick_eevdf`](super::pick_eevdf)), so with NEXT_BUDDY an eligible wakee that became
/// the buddy preempts through current's slice protection. `preempt_sync()`, for a sync
/// wakeup that made a new buddy:
///
/// ```text
///   threshold = sysctl_sched_migration_cost  (/ 4 with WF_RQ_SELECTED)
///   resched iff d_pse < d_curr && waker_ran >= threshold,  else no preemption
/// ```
///
/// `waker_ran` is 6.19's `rq_clock_task(rq) - se->exec_start` (negative: 0). Checked
/// against mainline (the v5 patch as applied, e837456fdca8, and its later Rust and C
/// copies): `preempt_sync()` reads it in `check_preempt_wakeup_fair()` right after
/// `update_curr(cfs_rq)`, whose `update_se()` has just set `se->exec_start = now =
/// rq_clock_task(rq)` (or left a later one when no time passed), with the runqueue clock
/// not updated in between. So `waker_ran` is 0, and a sync wakeup reschedules only with a
/// threshold of 0 (`migration_cost_ns` = 0, or < 4 with WF_RQ_SELECTED); otherwise it only
/// makes the buddy, which runs when the waker sleeps. fair.c passes the value it computes
/// the same way, and this tests it literally.
///
/// Against the stash (6.12's slice protection), the Short rule is 6.12's PREEMPT_SHORT
/// ([`wakeup_preempt`]): 6.19's pick without protection becomes the cancel by
/// `do_preempt_short()`. With RUN_TO_PARITY_MIN_SLICE it is 6.17's (and 6.19's): the pick
/// ignores the protection for the short wakee. Where 6.19 does not preempt after the pick
/// it calls `update_protect_slice()` with RUN_TO_PARITY, a shrink that only
/// RUN_TO_PARITY_MIN_SLICE's protection has; the stash has none.
///
/// 6.19 as released has NEXT_BUDDY off: then only the restructure applies (no preemption
/// for forks and delayed wakees, PICK_BUDDY in the pick).
pub fn wakeup_preempt_buddy<R: Runqueue>(
    rq: &mut R,
    pse: R::Se,
    wake: Wake,
    cfg: Config,
) -> WakeupAction {
    let Some(curr) = rq.curr() else {
        return WakeupAction::by(WakeupRule::Idle, true);
    };
    if curr == pse {
        return WakeupAction::by(WakeupRule::Curr, false);
    }
    let f = cfg.features;
    if f.contains(Features::PREEMPT_SHORT) && pse.slice() < curr.slice() {
        let preempt = if f.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
            wakeup_preempt_min_slice(rq, pse, curr, f)
        } else {
            wakeup_preempt_shorter(rq, pse, curr, f)
        };
        return WakeupAction::by(WakeupRule::Short, preempt);
    }
    // Fork: less likely to share data, as exec often follows. Delayed: preempting for it
    // would queue an ineligible task by force.
    if wake.flags.contains(WakeFlags::FORK) || pse.sched_delayed() {
        return WakeupAction::by(WakeupRule::ForkOrDelayed, false);
    }
    let mut act = WakeupAction::by(WakeupRule::Pick, false);
    if f.contains(Features::NEXT_BUDDY) {
        // set_preempt_buddy(): keep an older buddy whose deadline is earlier (entity_before()
        // compares deadlines), as obeying the deadline is what EEVDF wants.
        if rq
            .next_buddy()
            .is_some_and(|n| vruntime_before(n.deadline(), pse.deadline()))
        {
            act.kept_buddy = true;
        } else {
            act.set_buddy = true;
            if !wake.wakee_idle {
                rq.set_next_buddy(Some(pse));
            }
            if wake.flags.contains(WakeFlags::SYNC) {
                act.rule = WakeupRule::Sync;
                act.preempt = preempt_sync(pse, curr, wake);
                return act;
            }
        }
    }
    act.preempt = pick_features(rq, f) == Some(pse);
    // 6.19 shrinks current's window at every wakeup that does not preempt (6.17: only for
    // a short wakee), with RUN_TO_PARITY; only RUN_TO_PARITY_MIN_SLICE's window shrinks.
    if !act.preempt
        && f.contains(Features::RUN_TO_PARITY_MIN_SLICE)
        && f.contains(Features::RUN_TO_PARITY)
    {
        update_protect_slice(rq, curr);
    }
    act
}

/// `preempt_sync()`: see [`wakeup_preempt_buddy`]. `entity_before()` is 6.19's deadline
/// order, wrap-safe.
#[inline]
fn preempt_sync<S: Entity>(pse: S, se: S, wake: Wake) -> bool {
    let mut threshold = wake.migration_cost_ns;
    if wake.flags.contains(WakeFlags::RQ_SELECTED) {
        threshold >>= 2;
    }
    vruntime_before(pse.deadline(), se.deadline()) && wake.waker_ran_ns >= threshold
}

/// Why [`wakeup_preempt_buddy`] decided `action` for the woken `pse`: the debugfs counters'
/// classification, asked of the state the decision left (the buddy set, a protection
/// cancelled), as [`wakeup_reason`] is. The pick's rules classify as [`wakeup_reason`]
/// does, except that a preemption by the buddy test is [`WakeupPreempt::Buddy`].
pub fn wakeup_buddy_reason<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    action: WakeupAction,
    cfg: Config,
) -> WakeupPreempt {
    match action.rule {
        WakeupRule::Idle => WakeupPreempt::Idle,
        WakeupRule::Curr => WakeupPreempt::None,
        WakeupRule::ForkOrDelayed => WakeupPreempt::ForkOrDelayed,
        WakeupRule::Sync if action.preempt => WakeupPreempt::SyncResched,
        WakeupRule::Sync => WakeupPreempt::SyncNone,
        WakeupRule::Short | WakeupRule::Pick => {
            if action.preempt && pick_reason(rq, Some(pse), cfg) == PickReason::Buddy {
                WakeupPreempt::Buddy
            } else {
                wakeup_reason(rq, pse, action.preempt, cfg)
            }
        }
    }
}

/// `do_preempt_short()`: may the waking `pse` (shorter slice, eligible) override the slice
/// protection of `se`? The slice comparison, which settles the common case of equal
/// slices, is inlined into the wakeup; the eligibility tests are not.
#[inline(always)]
fn do_preempt_short<R: Runqueue>(rq: &R, pse: R::Se, se: R::Se, cfg: Config) -> bool {
    if !cfg.feat(Features::PREEMPT_SHORT) || pse.slice() >= se.slice() {
        return false;
    }
    shorter_preempts(rq, pse, se, cfg.features)
}

/// [`do_preempt_short`] for a wakee with a shorter slice: it must be eligible, and have an
/// earlier deadline than `se` or find `se` ineligible.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn shorter_preempts<R: Runqueue>(rq: &R, pse: R::Se, se: R::Se, features: Features) -> bool {
    let el = Eligibility::with_features(rq, features);
    if !el.vruntime(pse.vruntime()) {
        return false;
    }
    if vruntime_before(pse.deadline(), se.deadline()) {
        return true;
    }
    !el.vruntime(se.vruntime())
}
