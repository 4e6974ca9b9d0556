// SPDX-License-Identifier: GPL-2.0

//! Deadlines and placement: `update_deadline()`, `place_entity()`, the lag saved at a
//! dequeue (`dequeue_start`) and the re-placement of a delayed entity (`requeue_delayed`).

use super::super::features::{Config, Features};
use super::super::load::{calc_delta_fair, div_s64};
use super::super::tree::{Entity, Runqueue};
use super::super::vtime::vruntime_before;
use super::protect::{ended_vprot, protect_6_12};
use super::{
    __dequeue_entity, __enqueue_entity, avg_vruntime, entity_eligible, save_vlag,
    update_entity_lag, Context, EnqueueFlags,
};

/// `update_deadline()`: when current has consumed its request, give it a new one.
///
/// EEVDF: `vd_i = ve_i + r_i / w_i`; the virtual slice is `calc_delta_fair(r_i)`. An
/// entity without a custom slice takes the current base slice. XXX (as fair.c): strictly
/// `vd_i += N * r_i / w_i` such that `vd_i > ve_i`; one request is good enough. The new
/// request starts at `v_i >= vd_i` (the old deadline is the paper's `ve` of the next
/// request): when a request ends exactly at a tick, `v_i = vd_i` and this equals the
/// paper's `vd = ve + r/w`. Returns whether a new deadline was set (current should be
/// rescheduled).
///
/// The configuration is asked of `ctx` only once the request is used up: most calls (the
/// kernel's every `update_curr()`) end at the first comparison, without reading it.
#[inline(always)]
pub fn update_deadline<R: Runqueue>(rq: &mut R, se: R::Se, ctx: impl Context<R>) -> bool {
    if vruntime_before(se.vruntime(), se.deadline()) {
        return false;
    }
    let cfg = ctx.config();
    if !se.custom_slice() {
        se.set_slice(cfg.base_slice_ns);
    }
    se.set_deadline(
        se.vruntime()
            .wrapping_add(calc_delta_fair(se.slice(), se.load())),
    );
    avg_vruntime(rq);
    true
}

/// `place_entity()`: set the vruntime and deadline of an entity about to be enqueued.
///
/// Placement strategy #1 (PLACE_LAG): preserve the lag saved at dequeue. Adding entity i
/// with virtual lag `vl_i` (`v_i = V - vl_i`) moves the average:
///
/// ```text
///   V' = (W*V + w_i*(V - vl_i)) / (W + w_i) = V - w_i*vl_i / (W + w_i)
///   vl'_i = V' - v_i = vl_i - w_i*vl_i / (W + w_i)          (< vl_i)
/// ```
///
/// so the lag is inflated beforehand such that it comes out right:
///
/// ```text
///   vl_i = (W + w_i) * vl'_i / W  =  vl'_i + vl'_i * w_i / W
/// ```
///
/// computed in the second form (identical under truncating division, since both terms
/// have the sign of `vl'_i`), whose product is bounded by `|vl'_i| * w_i <= NICE_0_LOAD *
/// 2 max(r_max, TICK)` ≈ 2^37.6 for 100 ms slices (either lag limit),
/// where the first form's `vl*(W + w)` could exceed 2^63 at 100k entities. W includes
/// current. Without PLACE_LAG (strategy #2) the entity is placed at V.
///
/// Deadline: `vd_i = v_i + r_i / w_i`, half of it for a new task with
/// PLACE_DEADLINE_INITIAL (existing tasks are on average halfway through their slice);
/// with PLACE_REL_DEADLINE a deadline saved relative at dequeue is made absolute again.
///
/// Returns the (inflated) virtual lag it applied: 0 without PLACE_LAG or on an empty queue.
#[inline(always)]
pub fn place_entity<R: Runqueue>(rq: &mut R, se: R::Se, flags: EnqueueFlags, cfg: Config) -> i64 {
    let vruntime = avg_vruntime(rq);
    let mut lag = 0i64;

    if !se.custom_slice() {
        se.set_slice(cfg.base_slice_ns);
    }
    let mut vslice = calc_delta_fair(se.slice(), se.load());

    if cfg.feat(Features::PLACE_LAG) && rq.nr_queued() != 0 {
        lag = se.vlag();
        let mut load = rq.avg_load();
        if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
            load = load.wrapping_add(c.load().weight_down());
        }
        // load == 0 with queued entities would be a bookkeeping bug (the kernel WARNs and
        // divides by 1); keep the lag uninflated then.
        if load != 0 {
            let w = se.load().weight_down() as i64;
            // `load` read as fair.c's `long load`: a sum of weights, far below 2^63.
            lag = lag.wrapping_add(div_s64(lag.wrapping_mul(w), load as i64));
        }
    }

    se.set_vruntime(vruntime.wrapping_sub(lag as u64));

    // Unlike fair.c, the relative-deadline flag is consumed even when PLACE_REL_DEADLINE
    // was turned off since the dequeue: a stale flag would later make a fresh absolute
    // deadline be read as relative (and land ~2^63 away from V; the model test found it,
    // tests/model.rs's `model_stale_rel_deadline_flag`). The dequeue made the slice
    // protection relative too (PROTECT_AT_PICK keeps it across a sched_change, see
    // `set_protect_slice()`), to the nanosecond; it is absolute again either way.
    if se.rel_deadline() {
        se.set_rel_deadline(false);
        se.set_vprot(se.vprot().wrapping_add(se.vruntime()));
        if cfg.feat(Features::PLACE_REL_DEADLINE) {
            se.set_deadline(se.deadline().wrapping_add(se.vruntime()));
            return lag;
        }
    }

    if cfg.feat(Features::PLACE_DEADLINE_INITIAL) && flags.contains(EnqueueFlags::INITIAL) {
        vslice /= 2;
    }

    se.set_deadline(se.vruntime().wrapping_add(vslice));
    lag
}

/// [`place_entity`] of current: dequeued while it ran and queued again before it was put
/// (woken while its CPU balanced a newidle runqueue; a group entity). Its slice
/// protection ends: in 6.12 the dequeue overwrote the stash with the lag it saved, and
/// a window would be read against the new vruntime and deadline. With 6.12's protection
/// ([`protect_6_12`]) `vprot` becomes that saved lag, as 6.12's stash does; otherwise an
/// ended window. Returns the lag applied.
#[inline]
pub fn place_curr_entity<R: Runqueue>(
    rq: &mut R,
    se: R::Se,
    flags: EnqueueFlags,
    cfg: Config,
) -> i64 {
    let lag = place_entity(rq, se, flags, cfg);
    if protect_6_12(cfg.features) {
        se.set_vprot(se.vlag() as u64);
    } else {
        se.set_vprot(ended_vprot(se));
    }
    lag
}

/// The EEVDF start of `dequeue_entity()`: DELAY_DEQUEUE's decision and, when the entity
/// leaves, its lag saved. Returns true when the dequeue is delayed (nothing changed).
///
/// With `delay` (a sleep that DELAY_DEQUEUE may delay) an entity that is not eligible stays
/// queued to burn off its negative lag: delayed. Otherwise its lag is saved
/// (`update_entity_lag()`), and a clamp counted by `ctx`. fair.c asks this at the start
/// of its dequeue (the load tracking it does next neither reads nor moves V or the entity).
///
/// The lag is saved by a separate step, out of line in the kernel and reached by a tail
/// call, so that the decision (a delayed sleep: the common end in a ping-pong) needs few
/// registers. The decision reads the feature bits alone (a [`Config`] converts); the lag's
/// step asks `ctx` for the configuration.
#[inline(always)]
pub fn dequeue_start<R: Runqueue, C: Context<R>>(
    rq: &mut R,
    se: R::Se,
    delay: bool,
    features: impl Into<Features>,
    ctx: C,
) -> bool {
    let features = features.into();
    (delay && features.contains(Features::DELAY_DEQUEUE) && !entity_eligible(rq, se, features))
        || dequeue_save_lag(rq, se, ctx)
}

/// The second step of [`dequeue_start`]: the lag saved, a clamp counted, the saved lag
/// shown to `ctx` (`lag_error`). Returns false (not delayed), for the tail call. The lag
/// reads no feature: one copy for every feature set.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn dequeue_save_lag<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, ctx: C) -> bool {
    if let Some(clamp) = update_entity_lag(rq, se, ctx.config()) {
        ctx.lag_clamped(rq, clamp);
    }
    ctx.lag_saved(rq, se);
    false
}

/// Vincent Guittot's lag error, the metric of his 6.17 series ("sched/fair: Manage lag
/// and run to parity with different slices"): the lag `vlag = V - v_i`, before the
/// clamp, lies outside the bound EEVDF gives an entity with request `r_i`:
///
/// ```text
///   |V - v_i| > (r_i + TICK_NSEC) / w_i                                RUN_TO_PARITY
///   |V - v_i| > max(r_i, normalized base slice + TICK_NSEC) / w_i   NO_RUN_TO_PARITY
/// ```
///
/// (his cover letter: outside ±(slice + tick), or ±max(slice, 0.7 ms + tick); without
/// RUN_TO_PARITY current may run a base slice past a tick before it is preempted).
/// RUN_TO_PARITY_MIN_SLICE does not enter, so that runs with it off and on count the same
/// thing. The kernel counts it where a dequeue saves the lag (`lag_error`). His rt-app
/// runs: lag errors in 14 of 37 cases before the series, 0 of 37 after, with RUN_TO_PARITY
/// and without; tests/scenarios/run_to_parity_min_slice.toml is one such case in the
/// simulator.
pub fn lag_error<S: Entity>(vlag: i64, se: S, cfg: Config) -> bool {
    let span = if cfg.feat(Features::RUN_TO_PARITY) {
        se.slice().saturating_add(cfg.tick_nsec)
    } else {
        se.slice()
            .max(cfg.normalized_base_slice_ns.saturating_add(cfg.tick_nsec))
    };
    vlag.unsigned_abs() > calc_delta_fair(span, se.load())
}

/// The EEVDF part of `requeue_delayed_entity()` (fair.c keeps the delayed flag and its
/// accounting): with DELAY_ZERO the lag is saved (a clamp counted by `ctx`) and, when
/// positive, dropped by placing the entity again at V (lag 0).
///
/// The placement, rare, is a separate step, out of line in the kernel and reached by a tail
/// call, so that the common requeue needs few registers.
#[inline(always)]
pub fn requeue_delayed<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, cfg: Config, ctx: C) {
    if !cfg.feat(Features::DELAY_ZERO) {
        return;
    }
    let clamped = update_entity_lag(rq, se, cfg);
    let place = se.vlag() > 0;
    if let Some(clamp) = clamped {
        ctx.lag_clamped(rq, clamp);
    }
    if place {
        requeue_delayed_place(rq, se, ctx);
    }
}

/// The second step of [`requeue_delayed`], for positive lag: the entity placed again at V
/// (lag 0), in the tree (unless current) and in the count. Rare: one copy for every feature
/// set, which asks `ctx` for the configuration.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn requeue_delayed_place<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, ctx: C) {
    let cfg = ctx.config();
    let is_curr = rq.curr() == Some(se);
    rq.set_nr_queued(rq.nr_queued().saturating_sub(1));
    if !is_curr {
        __dequeue_entity(rq, se, cfg.features);
    }
    save_vlag(rq, se, 0, cfg.features);
    place_entity(rq, se, EnqueueFlags::NONE, cfg);
    if !is_curr {
        __enqueue_entity(rq, se, cfg.features);
    }
    rq.set_nr_queued(rq.nr_queued().wrapping_add(1));
}
