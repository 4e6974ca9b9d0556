// SPDX-License-Identifier: GPL-2.0

//! A model of fair.c's outer logic around the operations: `enqueue_entity()`,
//! `dequeue_entity()`, `set_next_entity()`, `put_prev_entity()`, `pick_next_entity()`,
//! `update_curr()`, `check_preempt_wakeup_fair()`, `yield_task_fair()`, the sched_change pattern of
//! `sched_setattr()`'s slice and of `set_user_nice()`, and one scheduling decision,
//! [`schedule`].
//!
//! The kernel does not run this: there fair.c's own C does these steps and calls the
//! [operations](super::ops) where it used to call its EEVDF functions. The model does the
//! same steps for the simulator, the host tests and the benchmarks (and the kernel's KUnit
//! suites, which drive a private runqueue with it), so it is compiled only on the host and
//! with `CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST`. It keeps the C's order of the EEVDF steps and
//! leaves out what EEVDF does not read (load tracking, group hierarchy, bandwidth); of the
//! buddies it keeps the next buddy of one runqueue (`cfs_rq->next`: set by NEXT_BUDDY's
//! wakeups, cleared by `clear_buddies()` where fair.c calls it). Where it differs from the
//! C, the function says so.
//!
//! # Driving a runqueue
//!
//! Time is an input. A simulator does, per event: [`update_curr`] with the real time
//! current ran since the last event; then one of [`enqueue_entity`] (wakeup: first
//! [`requeue_delayed_entity`] if the entity is still queued as delayed, then
//! [`check_preempt_wakeup_fair`]), [`dequeue_entity`] (sleep: `DequeueFlags::SLEEP`),
//! [`reweight_entity`], [`sched_setattr_slice`], [`renice`]; and [`schedule`] when the
//! previous step
//! asked for a reschedule (`update_curr` returned true or the wakeup preempts), repeating
//! while it returns [`Pick::Blocked`].

use super::features::{Config, Features};
use super::load::calc_delta_fair;
use super::load::LoadWeight;
use super::ops::{
    __dequeue_entity, __enqueue_entity, dequeue_picked, dequeue_start, entity_eligible, flags,
    pick_eevdf, place_curr_entity, place_entity, requeue_delayed, reweight_entity,
    set_protect_slice, update_curr_resched, update_deadline, wakeup_preempt, wakeup_preempt_buddy,
    EnqueueFlags, Wake, WakeFlags,
};
use super::tree::{Entity, Runqueue};

/// Smallest custom slice (`NSEC_PER_MSEC / 10`, HZ=1000 * 10).
pub const SLICE_MIN_NS: u64 = 100_000;
/// Largest custom slice (`NSEC_PER_MSEC * 100`, HZ=100 / 10).
pub const SLICE_MAX_NS: u64 = 100_000_000;

flags!(
    /// `DEQUEUE_*` flags the model reads.
    DequeueFlags {
        /// The task goes to sleep: may be delayed; the deadline is not made relative.
        SLEEP = 0x01,
        /// Save/restore dance (informational).
        SAVE = 0x02,
        /// Special task state: never delayed (no spurious wakeups allowed).
        SPECIAL = 0x10,
        /// Finishing a delayed dequeue.
        DELAYED = 0x200,
    }
);

/// The outcome of [`pick_next_entity`] / [`schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick<S> {
    /// Run this entity.
    Run(S),
    /// The pick was a delayed (sleeping) entity; it has now been dequeued for real and
    /// its task is blocked. Pick again.
    Blocked(S),
    /// Nothing is queued.
    Idle,
}

/// `enqueue_entity()`: place and queue. Current (dequeued while running) is placed but
/// stays out of the tree, and its slice protection ends ([`place_curr_entity`]). A no-op
/// for an entity already queued.
///
/// Unlike fair.c this does not account current's runtime first: call [`update_curr`]
/// with the elapsed time before.
pub fn enqueue_entity<R: Runqueue>(rq: &mut R, se: R::Se, flags: EnqueueFlags, cfg: Config) {
    if se.on_rq() {
        return;
    }
    if rq.curr() == Some(se) {
        place_curr_entity(rq, se, flags, cfg);
    } else {
        place_entity(rq, se, flags, cfg);
        __enqueue_entity(rq, se, cfg.features);
    }
    se.set_on_rq(true);
    rq.set_nr_queued(rq.nr_queued().wrapping_add(1));
}

/// `dequeue_entity()`. Returns `false` when the dequeue is delayed (DELAY_DEQUEUE: a
/// sleeping entity that is not eligible stays queued, marked `sched_delayed`, to burn off
/// its negative lag; it leaves when picked or is requeued when woken), `true` otherwise.
///
/// Saves the lag (`update_entity_lag()`); on a non-sleep dequeue with PLACE_REL_DEADLINE
/// makes the deadline relative, and the slice protection with it (PROTECT_AT_PICK keeps
/// it across a sched_change: [`set_protect_slice`]). With `DELAYED` (finishing a delayed
/// dequeue) and
/// DELAY_ZERO, positive lag is clipped to 0. Call [`update_curr`] first.
pub fn dequeue_entity<R: Runqueue>(
    rq: &mut R,
    se: R::Se,
    flags: DequeueFlags,
    cfg: Config,
) -> bool {
    if !se.on_rq() {
        return true;
    }
    clear_buddies(rq, se);
    let sleep = flags.contains(DequeueFlags::SLEEP);

    // DELAY_DEQUEUE relies on spurious wakeups, special task states must not suffer them:
    // exempt them. A delayed entity being dequeued for good is not delayed again.
    let delay = sleep && !flags.intersects(DequeueFlags::SPECIAL | DequeueFlags::DELAYED);
    if dequeue_start(rq, se, delay, cfg, cfg) {
        se.set_sched_delayed(true);
        return false;
    }

    if cfg.feat(Features::PLACE_REL_DEADLINE) && !sleep {
        se.set_deadline(se.deadline().wrapping_sub(se.vruntime()));
        se.set_vprot(se.vprot().wrapping_sub(se.vruntime()));
        se.set_rel_deadline(true);
    }

    if rq.curr() != Some(se) {
        __dequeue_entity(rq, se, cfg.features);
    }
    se.set_on_rq(false);
    rq.set_nr_queued(rq.nr_queued().saturating_sub(1));

    if flags.contains(DequeueFlags::DELAYED) {
        // finish_delayed_dequeue_entity()
        se.set_sched_delayed(false);
        if cfg.feat(Features::DELAY_ZERO) && se.vlag() > 0 {
            se.set_vlag(0);
        }
    }
    true
}

/// `requeue_delayed_entity()`: a delayed entity is woken. With DELAY_ZERO positive lag is
/// dropped: the entity is re-placed at V (lag 0).
pub fn requeue_delayed_entity<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) {
    if !se.sched_delayed() || !se.on_rq() {
        return;
    }
    requeue_delayed(rq, se, cfg, cfg);
    se.set_sched_delayed(false);
}

/// `clear_buddies()`: `se` is no longer the next buddy (one runqueue's level of
/// `__clear_buddies_next()`).
pub fn clear_buddies<R: Runqueue>(rq: &mut R, se: R::Se) {
    if rq.next_buddy() == Some(se) {
        rq.set_next_buddy(None);
    }
}

/// `set_next_entity()`: make `se` current, picked (`first`, as `pick_next_task_fair()`
/// does) or set again by a sched_change (`!first`, `set_next_task_fair()`'s `first`). It
/// stops being the next buddy; a queued entity leaves the tree (current is not kept in it)
/// and gets its slice protected ([`set_protect_slice`]). A previous current is put back
/// first. Returns whether PROTECT_AT_PICK kept an ended window that 6.12 would have set
/// again.
pub fn set_next_entity<R: Runqueue>(rq: &mut R, se: R::Se, first: bool, cfg: Config) -> bool {
    match rq.curr() {
        Some(c) if c == se => return false,
        Some(_) => put_prev_entity(rq, cfg),
        None => {}
    }
    clear_buddies(rq, se);
    let mut kept = false;
    if se.on_rq() {
        if first {
            dequeue_picked(rq, se, cfg.features, cfg);
        } else {
            __dequeue_entity(rq, se, cfg.features);
            kept = set_protect_slice(rq, se, first, cfg);
        }
    }
    rq.set_curr(Some(se));
    kept
}

/// `put_prev_entity()`: current stops running; if still queued it goes back into the
/// tree. Call [`update_curr`] first.
pub fn put_prev_entity<R: Runqueue>(rq: &mut R, cfg: Config) {
    if let Some(prev) = rq.curr() {
        if prev.on_rq() {
            __enqueue_entity(rq, prev, cfg.features);
        }
        rq.set_curr(None);
    }
}

/// `pick_next_entity()`: with PICK_BUDDY an eligible next buddy (6.12's test here; with
/// NEXT_BUDDY_EEVDF the core's pick makes it, and this one is skipped), else
/// [`pick_eevdf`], and a delayed pick is dequeued for real (`DEQUEUE_SLEEP |
/// DEQUEUE_DELAYED`) and reported as [`Pick::Blocked`].
pub fn pick_next_entity<R: Runqueue>(rq: &mut R, cfg: Config) -> Pick<R::Se> {
    if cfg.feat(Features::PICK_BUDDY) && !cfg.feat(Features::NEXT_BUDDY_EEVDF) {
        if let Some(next) = rq.next_buddy() {
            if entity_eligible(rq, next, cfg) {
                // ->next will never be delayed.
                return Pick::Run(next);
            }
        }
    }
    let Some(se) = pick_eevdf(rq, cfg) else {
        return Pick::Idle;
    };
    if se.sched_delayed() {
        dequeue_entity(rq, se, DequeueFlags::SLEEP | DequeueFlags::DELAYED, cfg);
        return Pick::Blocked(se);
    }
    Pick::Run(se)
}

/// One scheduling decision: [`pick_next_entity`], then switch current to the pick
/// (`put_prev_entity` + `set_next_entity`). Re-picking current changes nothing (its slice
/// protection is kept). On [`Pick::Blocked`] call again; on [`Pick::Idle`] current (no
/// longer queued) has been put away. Call [`update_curr`] first.
pub fn schedule<R: Runqueue>(rq: &mut R, cfg: Config) -> Pick<R::Se> {
    let pick = pick_next_entity(rq, cfg);
    match pick {
        Pick::Run(se) => {
            set_next_entity(rq, se, true, cfg);
        }
        Pick::Idle => put_prev_entity(rq, cfg),
        Pick::Blocked(_) => {}
    }
    pick
}

/// `update_curr()`: charge `delta_exec` ns of real time to current.
///
/// `v_i += delta * NICE_0_LOAD / w_i`, then [`update_deadline`]. Returns whether current
/// should be rescheduled: its request is used up, or [`update_curr_resched`] (6.12:
/// PREEMPT_SHORT and it lost eligibility without slice protection; 6.17: its protected
/// window ended). Never with a single queued entity.
pub fn update_curr<R: Runqueue>(rq: &mut R, delta_exec: u64, cfg: Config) -> bool {
    let Some(curr) = rq.curr() else {
        return false;
    };
    if delta_exec == 0 {
        return false;
    }
    curr.set_vruntime(
        curr.vruntime()
            .wrapping_add(calc_delta_fair(delta_exec, curr.load())),
    );
    let resched = update_deadline(rq, curr, cfg);
    if rq.nr_queued() == 1 {
        return false;
    }
    if resched || update_curr_resched(rq, curr, cfg) {
        clear_buddies(rq, curr);
        return true;
    }
    false
}

/// `check_preempt_wakeup_fair()` for the woken, enqueued `pse` (call [`update_curr`]
/// first; `wake.waker_ran_ns` is then 0, as fair.c computes it): whether current must be
/// rescheduled. `need_resched`: current has a reschedule pending, which ends the function
/// early (`test_tsk_need_resched()`).
///
/// Without NEXT_BUDDY_EEVDF, 6.12's: with NEXT_BUDDY the wakee (unless new, delayed or
/// idle) becomes the next buddy first, even with a reschedule pending; then
/// [`wakeup_preempt`] decides, which ignores the buddy. With it, [`wakeup_preempt_buddy`]
/// decides and may make the wakee the buddy. Nothing runs: preempt (fair.c is not asked
/// then, so no buddy).
pub fn check_preempt_wakeup_fair<R: Runqueue>(
    rq: &mut R,
    pse: R::Se,
    wake: Wake,
    need_resched: bool,
    cfg: Config,
) -> bool {
    let Some(curr) = rq.curr() else {
        return true;
    };
    if curr == pse {
        return false;
    }
    let eevdf = cfg.feat(Features::NEXT_BUDDY_EEVDF);
    if !eevdf
        && cfg.feat(Features::NEXT_BUDDY)
        && !wake.flags.contains(WakeFlags::FORK)
        && !pse.sched_delayed()
        && !wake.wakee_idle
    {
        rq.set_next_buddy(Some(pse));
    }
    if need_resched {
        return false;
    }
    if eevdf {
        // set_next_buddy() over the hierarchy: the core has set this (the only) level.
        return wakeup_preempt_buddy(rq, pse, wake, cfg).preempt;
    }
    wakeup_preempt(rq, pse, cfg)
}

/// `yield_task_fair()`: current gives up what is left of its request. With other tasks
/// queued, it stops being the next buddy and, if eligible, its vruntime moves to its
/// deadline and [`update_deadline`] gives it the next request (an ineligible current
/// keeps its vruntime, so that core scheduling's forced picks of an ineligible task
/// cannot run its vruntime away). The `schedule()` that follows is the caller's. Call
/// [`update_curr`] first.
pub fn yield_task<R: Runqueue>(rq: &mut R, cfg: Config) {
    let Some(curr) = rq.curr() else {
        return;
    };
    if rq.nr_queued() == 1 {
        return;
    }
    clear_buddies(rq, curr);
    if entity_eligible(rq, curr, cfg) {
        curr.set_vruntime(curr.deadline());
        update_deadline(rq, curr, cfg);
    }
}

/// `__setparam_fair()`'s slice rule: a non-zero `sched_runtime` is clamped to
/// [100 µs, 100 ms] and marks the slice custom; 0 restores the base slice. Returns
/// `(slice, custom)`.
pub const fn sched_attr_slice(sched_runtime: u64, base_slice_ns: u64) -> (u64, bool) {
    if sched_runtime != 0 {
        let s = if sched_runtime < SLICE_MIN_NS {
            SLICE_MIN_NS
        } else if sched_runtime > SLICE_MAX_NS {
            SLICE_MAX_NS
        } else {
            sched_runtime
        };
        (s, true)
    } else {
        (base_slice_ns, false)
    }
}

/// The sched_change pattern of the core (`__sched_setscheduler()`, `set_user_nice()`,
/// `sched_move_task()`): a queued entity is dequeued (`DEQUEUE_SAVE`, so lag and relative
/// deadline are kept), current is put back, `change` runs, then the entity is re-enqueued
/// (`ENQUEUE_RESTORE`) and made current again with `set_next_task(rq, p)`, whose `first`
/// is false (so PROTECT_AT_PICK keeps current's window). Returns what
/// [`set_next_entity`] returned. Call [`update_curr`] first.
pub fn sched_change<R: Runqueue>(
    rq: &mut R,
    se: R::Se,
    cfg: Config,
    change: impl FnOnce(&mut R, R::Se),
) -> bool {
    let queued = se.on_rq();
    let running = rq.curr() == Some(se);
    if queued {
        dequeue_entity(rq, se, DequeueFlags::SAVE, cfg);
    }
    if running {
        put_prev_entity(rq, cfg);
    }
    change(rq, se);
    if queued {
        enqueue_entity(rq, se, EnqueueFlags::RESTORE, cfg);
    }
    running && set_next_entity(rq, se, false, cfg)
}

/// `sched_setattr()` of the slice: a [`sched_change`] that sets the slice. The new slice
/// takes effect with the next deadline. Call [`update_curr`] first.
pub fn sched_setattr_slice<R: Runqueue>(rq: &mut R, se: R::Se, sched_runtime: u64, cfg: Config) {
    sched_change(rq, se, cfg, |_, se| {
        let (slice, custom) = sched_attr_slice(sched_runtime, cfg.base_slice_ns);
        se.set_slice(slice);
        se.set_custom_slice(custom);
    });
}

/// `set_user_nice()`: a [`sched_change`] around the new weight, which
/// `reweight_task_fair()` gives the (dequeued) entity by [`reweight_entity`]: its saved
/// lag is rescaled. Call [`update_curr`] first.
pub fn renice<R: Runqueue>(rq: &mut R, se: R::Se, lw: LoadWeight, cfg: Config) {
    sched_change(rq, se, cfg, |rq, se| reweight_entity(rq, se, lw, cfg));
}
