// SPDX-License-Identifier: GPL-2.0

//! Weight and slice changes of queued entities: `reweight_entity()` with its lag and
//! window kept, and a queued entity's new slice (`set_queued_slice`).

use super::super::features::{Config, Features};
use super::super::load::{div_s64, LoadWeight};
use super::super::math::entity_lag;
use super::super::tree::{min_deadline_update, Entity, Runqueue};
use super::super::vtime::{vadd, vdelta, vruntime_min};
use super::protect::{protect_6_12, protect_slice, protect_within_deadline};
use super::{
    __dequeue_entity, __enqueue_entity, avg_vruntime, save_vlag, timeline_keeps_slice_sums,
};

/// `reweight_eevdf()`: new weight for a queued entity, preserving its lag.
///
/// Lag is preserved, `(V - v)*w = (V' - v')*w'`, and reweight does not move V (fair.c's
/// corollaries #1 and #2), so
///
/// ```text
///   v' = V - (V - v)*w/w' = V - vl*w/w'
///   d' = V + (d - V)*w/w'            (the relative deadline scales the same way)
/// ```
///
/// with the kernel's lag clamp on `vl` ([`entity_lag`]; `se` is out of the tree here, which
/// [`lag_span`](super::math::lag_span) makes up for) and high-resolution weights, as
/// fair.c. Bounds: `|vl| * w <= 2^20 * 2 max(r_max, TICK) < 2^48`; `(d - V) * w` is below
/// `2^20 * r` plus the lag term for an entity placed by the core. The deadline's distance
/// `d - V` is not clamped: with a deadline far from V (an unclamped lag after a vruntime
/// spread such as the 2^53 of production crash dumps) and a heavy cgroup weight,
/// `(d - V) * w` exceeds 2^63 and wraps in s64, in fair.c and, identically, here (the fuzz
/// target found it: sched_eevdf/fuzz/regressions/; the test model wraps there as well).
fn reweight_eevdf<R: Runqueue>(rq: &R, se: R::Se, avruntime: u64, weight: u64, cfg: Config) {
    let old_weight = se.load().weight.min(i64::MAX as u64) as i64;
    let new_weight = weight.min(i64::MAX as u64) as i64;

    if avruntime != se.vruntime() {
        let vlag = entity_lag(rq, avruntime, se, cfg);
        let vlag = div_s64(vlag.wrapping_mul(old_weight), new_weight);
        se.set_vruntime(avruntime.wrapping_sub(vlag as u64));
    }

    let vslice = vdelta(se.deadline(), avruntime);
    let vslice = div_s64(vslice.wrapping_mul(old_weight), new_weight);
    se.set_deadline(vadd(avruntime, vslice));
}

/// Current's slice protection across [`reweight_eevdf`], which moves its vruntime and
/// deadline but not `vprot`. With PROTECT_AT_PICK (7.0, "sched/eevdf: Update se->vprot
/// in reweight_entity()"), a window current had (`window` = `vprot - v` before) scales
/// like the deadline's distance:
///
/// ```text
///   vprot' = min(v' + (vprot - v) * w / w', d')      RUN_TO_PARITY_MIN_SLICE
///   vprot' = d'                                      6.12's stash: protected until d
/// ```
///
/// (the `min`: two truncating divisions may put `vprot'` one past `d'`). Without it, 6.12's
/// stash no longer matches the new deadline, so its protection ends as in 6.12 (the stash
/// stays, as 6.12's does), and a 6.17 window stays where it was, ended if the deadline
/// moved before it. Bound:
/// `(vprot - v) * w <= (d - v) * w`, the deadline's product.
#[inline]
fn reweight_protect<S: Entity>(se: S, window: Option<i64>, weight: u64, cfg: Config) {
    if let Some(rel) = window {
        if cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
            let old = se.load().weight.min(i64::MAX as u64) as i64;
            let new = weight.min(i64::MAX as u64) as i64;
            let vprot = vadd(se.vruntime(), div_s64(rel.wrapping_mul(old), new));
            se.set_vprot(vruntime_min(vprot, se.deadline()));
        } else {
            se.set_vprot(se.deadline());
        }
    }
    // 6.12 leaves its stash where it was.
    if !protect_6_12(cfg.features) {
        protect_within_deadline(se);
    }
}

/// `reweight_entity()`: change an entity's weight (nice or group share).
///
/// Queued: `reweight_eevdf()` around V, out of the tree and the sums meanwhile; current
/// keeps its slice protection as [`reweight_protect`] says. Not queued: the saved virtual
/// lag is rescaled, `vl' = vl * w / w'`, since lag_i = w_i * vl_i is what is preserved.
/// Call `update_curr()` first. A zero weight is ignored.
#[inline(always)]
pub fn reweight_entity<R: Runqueue>(rq: &mut R, se: R::Se, lw: LoadWeight, cfg: Config) {
    if lw.weight == 0 {
        return;
    }
    let is_curr = rq.curr() == Some(se);
    if se.on_rq() {
        let avruntime = avg_vruntime(rq);
        if !is_curr {
            __dequeue_entity(rq, se, cfg.features);
        }
        let window =
            (is_curr && cfg.feat(Features::PROTECT_AT_PICK) && protect_slice(se, cfg.features))
                .then(|| vdelta(se.vprot(), se.vruntime()));
        reweight_eevdf(rq, se, avruntime, lw.weight, cfg);
        if is_curr {
            reweight_protect(se, window, lw.weight, cfg);
        }
    } else {
        let old = se.load().weight.min(i64::MAX as u64) as i64;
        let new = lw.weight.min(i64::MAX as u64) as i64;
        save_vlag(
            rq,
            se,
            div_s64(se.vlag().wrapping_mul(old), new),
            cfg.features,
        );
    }
    se.set_load(lw);
    if se.on_rq() && !is_curr {
        __enqueue_entity(rq, se, cfg.features);
    }
}

/// Sets the slice of an entity that may be queued, keeping `Σ r_i` and the augmented
/// `min_slice` and `max_slice` right: what `enqueue_task_fair()` / `dequeue_entities()` do
/// when a group entity takes its queue's minimum slice (`se->slice = slice` followed by
/// `min_vruntime_cb_propagate()` in fair.c). An entity in the timeline (queued, not
/// current) has its share of `sum_slice` replaced and the augmented values recomputed up
/// the tree, stopping early where none of them changed. O(log n). `max_slice` and
/// `sum_slice` as the other tree updates keep them ([`timeline_keeps_slice_sums`]).
#[inline]
pub fn set_queued_slice<R: Runqueue>(rq: &mut R, se: R::Se, slice: u64, features: Features) {
    let in_tree = se.on_rq() && rq.curr() != Some(se);
    // Asked before the slice changes: a rebuild then counts `se`'s old slice, which the
    // sum's update below replaces.
    let keep = in_tree && timeline_keeps_slice_sums(rq, features);
    if keep {
        rq.set_sum_slice(rq.sum_slice().wrapping_sub(se.slice()).wrapping_add(slice));
    }
    se.set_slice(slice);
    if in_tree {
        if keep {
            propagate_slice::<R, true>(rq, se);
        } else {
            propagate_slice::<R, false>(rq, se);
        }
    }
}

/// [`set_queued_slice`]'s walk up from `se`, recomputing until nothing changes.
#[inline(always)]
fn propagate_slice<R: Runqueue, const MAX: bool>(rq: &R, se: R::Se) {
    let mut node = Some(se);
    while let Some(n) = node {
        if min_deadline_update::<_, MAX>(n, rq.left(n), rq.right(n)) {
            break;
        }
        node = rq.parent(n);
    }
}
