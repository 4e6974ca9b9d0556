// SPDX-License-Identifier: GPL-2.0

//! Slice protection: RUN_TO_PARITY's window in `vprot`, 6.12's stash or 6.17's end of
//! the window (RUN_TO_PARITY_MIN_SLICE, PROTECT_AT_PICK), read at the pick and at a
//! wakeup.

use super::super::features::{Config, Features};
use super::super::load::calc_delta_fair;
use super::super::tree::{cfs_rq_min_slice, Entity, Runqueue};
use super::super::vtime::{vruntime_after, vruntime_before, vruntime_min};
use super::entity_eligible;

/// `protect_slice()`: whether current's slice is protected (RUN_TO_PARITY keeps an
/// eligible, protected current at the pick), read from `vprot` as the features say.
///
/// - 6.12: `vprot` is a copy of the deadline stashed at the pick ([`set_protect_slice`];
///   6.12 stashes it in `vlag`, which is not used until the dequeue), and current is
///   protected while it still matches: `vprot == deadline`. A new deadline (the request
///   used up) or a cancel ends the protection.
/// - RUN_TO_PARITY_MIN_SLICE (6.17): `vprot` is the virtual time at which the protection
///   ends, `v < vprot` (wrap-safe).
///
/// 6.17's reading is guarded, `v < vprot <= d`: a window never outlasts the request,
/// whichever way the flag is read, so a toggle in the middle of a window is sound in both
/// directions. A 6.12 stash reads as protected until the deadline (what 6.12 gave it); a
/// stash left past a deadline that a reweight moved back, or 6.12's cancel value
/// `d + 1`, reads as ended; a 6.17 window shorter than the request reads as unprotected
/// under 6.12's test, and an ended window as ended under both ([`cancel_protect_slice`]).
/// With the new flags off `vprot` takes exactly the values 6.12's stash takes (the
/// deadline at the pick, `d + 1` at a cancel, untouched by a reweight), so that 6.12's
/// decisions, coincidences of a later deadline with a stale stash included, are kept (the
/// model test found such a case: an "ended" value of our own coincided with a deadline
/// two reweights later). With both flags off every decision is 6.12's: the test model
/// mirrors 6.12's `vlag` slot and asserts that both readings agree at every test of the
/// protection.
///
/// Representation: 6.12 stashes the deadline in `vlag`, which is free while an entity
/// runs; 6.17 keeps `vprot` in a union with `vlag`. Here `vprot` is a field of its own in
/// both modes (7.0 separated them too): PROTECT_AT_PICK must keep the window across a
/// sched_change, whose `DEQUEUE_SAVE` saves the lag in `vlag` while the task is current.
#[inline(always)]
pub fn protect_slice<S: Entity>(se: S, features: Features) -> bool {
    if features.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
        vruntime_before(se.vruntime(), se.vprot()) && !vruntime_after(se.vprot(), se.deadline())
    } else {
        se.vprot() == se.deadline()
    }
}

/// The `vprot` of a window that RUN_TO_PARITY_MIN_SLICE ends: unprotected under both
/// readings of [`protect_slice`], and not past the deadline:
///
/// ```text
///   vprot' = min(v, d - 1)                  (wrap-safe)
///   vprot' <= v         =>  not v < vprot'   (6.17's test)
///   vprot' <= d - 1     =>  vprot' != d      (6.12's test)
/// ```
///
/// 6.17 cancels to `vruntime`, which 6.12's test reads as protected when `v == d` (no
/// `update_curr()` since the deadline was reached). Where `v < d`, which `update_curr()`
/// leaves, this is 6.17's value. Used for every window that ends without the request
/// being used up: a cancel, a re-placement of current, a window that a reweight or a
/// sched_change would leave past the deadline; a renewed deadline does not bring it back.
#[inline]
pub(super) fn ended_vprot<S: Entity>(se: S) -> u64 {
    vruntime_min(se.vruntime(), se.deadline().wrapping_sub(1))
}

/// Whether slice protection is 6.12's: neither RUN_TO_PARITY_MIN_SLICE nor
/// PROTECT_AT_PICK. `vprot` then takes exactly the values of 6.12's stash.
#[inline(always)]
pub(super) fn protect_6_12(features: Features) -> bool {
    !features.contains(Features::RUN_TO_PARITY_MIN_SLICE)
        && !features.contains(Features::PROTECT_AT_PICK)
}

/// `cancel_protect_slice()`: current loses what is left of its protected window
/// (PREEMPT_SHORT's wakee preempts; the kernel's idle-policy rule). 6.12's value,
/// `deadline + 1`, with 6.12's protection ([`protect_6_12`]); [`ended_vprot`] otherwise.
#[inline]
pub fn cancel_protect_slice<S: Entity>(se: S, features: Features) {
    if protect_slice(se, features) {
        if protect_6_12(features) {
            se.set_vprot(se.deadline().wrapping_add(1));
        } else {
            se.set_vprot(ended_vprot(se));
        }
    }
}

/// Ends a window that reaches past the deadline: a reweight or a sched_change of current
/// can move the deadline before the window's end. [`protect_slice`] already reads such a
/// window as ended; ending it keeps a later, renewed deadline from bringing it back.
#[inline]
pub(super) fn protect_within_deadline<S: Entity>(se: S) {
    if vruntime_before(se.vruntime(), se.vprot()) && vruntime_after(se.vprot(), se.deadline()) {
        se.set_vprot(ended_vprot(se));
    }
}

/// `set_protect_slice()`, the protection step of `set_next_entity()`: `se` becomes
/// current, picked (`first`) or set again by a sched_change (`!first`: setattr, renice, a
/// move between groups or classes while it runs). Call it with `se` out of the timeline
/// and not yet `rq`'s current, as set_next_entity() does, so that `cfs_rq_min_slice()` is
/// the smallest slice of the others. Returns whether PROTECT_AT_PICK kept an ended window
/// that 6.12 would have set again (the `protect_restored` counter).
///
/// 6.12 stashes the deadline, `vprot = d`: protected until the request is used up. With
/// RUN_TO_PARITY_MIN_SLICE (6.17) current is protected for the quantum
///
/// ```text
///   q     = min(RUN_TO_PARITY ? cfs_rq_min_slice : normalized base slice, r_i)
///   vprot = q == r_i ? d : min(d, v + q / w_i)            (min wrap-safe)
/// ```
///
/// so never past the deadline (`v + q / w_i` may be, after part of the request ran). A
/// long-slice current is protected only for the smallest queued slice, and without
/// RUN_TO_PARITY still for up to a normalized base slice (6.12 has no protection then;
/// the pick reads the window whether RUN_TO_PARITY is on or not).
///
/// PROTECT_AT_PICK (7.0, "Only set slice protection at pick time"): a sched_change keeps
/// the window current had, so that it cannot restore a cancelled window or restart a
/// 6.17 window. `dequeue_entity()` and [`place_entity`](super::place_entity) carry `vprot`
/// relative to the vruntime across it, as they carry the deadline with PLACE_REL_DEADLINE,
/// so the window kept is the one before to the nanosecond; a window that no longer ends by
/// the deadline (the deadline was made anew) is ended.
#[inline]
pub fn set_protect_slice<R: Runqueue>(rq: &R, se: R::Se, first: bool, cfg: Config) -> bool {
    if !first && cfg.feat(Features::PROTECT_AT_PICK) {
        protect_within_deadline(se);
        return !protect_slice(se, cfg.features);
    }
    let deadline = se.deadline();
    if !cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
        se.set_vprot(deadline);
        return false;
    }
    let quantum = if cfg.feat(Features::RUN_TO_PARITY) {
        cfs_rq_min_slice(rq)
    } else {
        cfg.normalized_base_slice_ns
    };
    let slice = se.slice();
    let mut vprot = deadline;
    if quantum < slice {
        let end = se
            .vruntime()
            .wrapping_add(calc_delta_fair(quantum, se.load()));
        vprot = vruntime_min(vprot, end);
    }
    se.set_vprot(vprot);
    false
}

/// `update_protect_slice()` (6.17): a shorter-slice wakee that did not preempt current
/// limits what is left of current's window to the smallest queued slice (the wakee's
/// included):
///
/// ```text
///   vprot' = min(vprot, v + cfs_rq_min_slice / w)          (wrap-safe)
/// ```
///
/// It only shrinks, so the window still ends by the deadline, and an ended one stays
/// ended. Returns whether it shrank (the `protect_shrunk` counter).
#[inline]
pub(super) fn update_protect_slice<R: Runqueue>(rq: &R, se: R::Se) -> bool {
    let end = se
        .vruntime()
        .wrapping_add(calc_delta_fair(cfs_rq_min_slice(rq), se.load()));
    let vprot = vruntime_min(se.vprot(), end);
    let shrunk = vprot != se.vprot();
    se.set_vprot(vprot);
    shrunk
}

/// `update_curr()`'s reason to reschedule besides a used-up request. 6.12's
/// `did_preempt_short()`: with PREEMPT_SHORT, current is neither protected nor eligible.
/// With RUN_TO_PARITY_MIN_SLICE, 6.17's "always trigger resched at the end of a
/// protected period": current's window has ended, eligible or not.
#[inline]
pub fn update_curr_resched<R: Runqueue>(rq: &R, curr: R::Se, cfg: Config) -> bool {
    if cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
        return !protect_slice(curr, cfg.features);
    }
    if !cfg.feat(Features::PREEMPT_SHORT) || protect_slice(curr, cfg.features) {
        return false;
    }
    !entity_eligible(rq, curr, cfg)
}

/// The features of a pick that ignores current's slice protection (6.17's
/// `__pick_eevdf(cfs_rq, protect = false)`, for a shorter-slice wakee): the pick reads
/// the protection only through RUN_TO_PARITY and RUN_TO_PARITY_MIN_SLICE.
#[inline]
pub(super) const fn without_protection(features: Features) -> Features {
    features
        .with(Features::RUN_TO_PARITY, false)
        .with(Features::RUN_TO_PARITY_MIN_SLICE, false)
}
