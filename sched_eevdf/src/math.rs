// SPDX-License-Identifier: GPL-2.0

//! The EEVDF math, each formula derived in the comment above the code that computes it:
//! the entity key, the sums behind `V` (`avg_vruntime`), the virtual lag and its clamp, and
//! eligibility, exact in 64-bit arithmetic with a two-limb 128-bit fallback (no `i128`, no
//! 128-bit division). Documentation/eevdf-math.md has the overflow bounds.
//!
//! Nothing here makes a scheduling decision; the operations ([`super::ops`]) do, from these.

use super::features::{Config, Features};
use super::load::{calc_delta_fair, div_s64, NICE_0_WEIGHT};
use super::tree::{cfs_rq_max_slice, sum_slice, Entity, Runqueue};
use super::vtime::{vadd, vdelta};

/// `entity_key()`: `(s64)(v_i - v0)`.
///
/// Per avg_vruntime(), `zero_vruntime` is at most a little stale, so keys stay within two
/// lag bounds: `|key| <= 2 * calc_delta_fair(2 max(r_max, TICK), w_min)` (either lag
/// limit, [`lag_span`]), about 2^38 with 100 ms slices and w = 2 (see
/// Documentation/eevdf-math.md).
#[inline]
pub fn entity_key<R: Runqueue>(rq: &R, se: R::Se) -> i64 {
    vdelta(se.vruntime(), rq.zero_vruntime())
}

/// Compute virtual time from the per-task service numbers.
///
/// Fair schedulers conserve lag, `Σ lag_i = 0`, with `lag_i = S - s_i = w_i * (V - v_i)`,
/// hence
///
/// ```text
///       Σ v_i * w_i     Σ (v_i - v0) * w_i
///   V = ----------- = --------------------- + v0
///           W                  W
/// ```
///
/// `v0 := zero_vruntime`, `Σ (v_i - v0) w_i := avg_vruntime`, `W := avg_load`, with
/// scaled-down weights. The sums are updated here at every tree insertion and removal.
/// They wrap like the C (they are exact modulo 2^64, so whenever the true value fits in
/// an `i64` the stored one is it). Bound: `|Σ key*w| <= n * max|key| * w_max`; see the docs
/// for the numbers. `sum_slice` (`Σ r_i`) is kept alongside, for BIAS_ELIGIBLE, when the
/// update keeps the slice sums (`keep_sum`, [`keeps_slice_sums`](super::keeps_slice_sums)).
#[inline(always)]
pub(crate) fn avg_vruntime_add<R: Runqueue>(rq: &mut R, se: R::Se, keep_sum: bool) {
    let weight = se.load().weight_down();
    let key = entity_key(rq, se);
    rq.set_avg_vruntime(
        rq.avg_vruntime()
            .wrapping_add(key.wrapping_mul(weight as i64)),
    );
    rq.set_avg_load(rq.avg_load().wrapping_add(weight));
    if keep_sum {
        rq.set_sum_slice(rq.sum_slice().wrapping_add(se.slice()));
    }
}

/// Removes an entity from the sums (see [`avg_vruntime_add`]).
#[inline(always)]
pub(crate) fn avg_vruntime_sub<R: Runqueue>(rq: &mut R, se: R::Se, keep_sum: bool) {
    let weight = se.load().weight_down();
    let key = entity_key(rq, se);
    rq.set_avg_vruntime(
        rq.avg_vruntime()
            .wrapping_sub(key.wrapping_mul(weight as i64)),
    );
    rq.set_avg_load(rq.avg_load().wrapping_sub(weight));
    if keep_sum {
        rq.set_sum_slice(rq.sum_slice().wrapping_sub(se.slice()));
    }
}

/// Moves the zero point: `v0' = v0 + d  ==>  avg_vruntime' = avg_vruntime - d * avg_load`
/// (every key shrinks by `d`).
///
/// `d * avg_load` may overflow (`d` is the whole distance V moved since the last move);
/// the wrapping arithmetic is exact modulo 2^64, so the new sum is right whenever its true
/// value fits in an `i64`, whatever the intermediate product did.
#[inline(always)]
pub(crate) fn update_zero_vruntime<R: Runqueue>(rq: &mut R, delta: i64) {
    let load = rq.avg_load() as i64;
    rq.set_avg_vruntime(rq.avg_vruntime().wrapping_sub(load.wrapping_mul(delta)));
    rq.set_zero_vruntime(vadd(rq.zero_vruntime(), delta));
}

/// `V` as [`avg_vruntime`](super::avg_vruntime) computes it, without moving the zero
/// point: read-only.
///
/// Equal to what [`avg_vruntime`](super::avg_vruntime) would return now: it returns
/// `v0 + delta` after moving `v0` by the same `delta`.
pub fn avg_vruntime_peek<R: Runqueue>(rq: &R) -> u64 {
    vadd(rq.zero_vruntime(), avg_vruntime_delta(rq))
}

/// `V - v0` (see [`avg_vruntime`](super::avg_vruntime)).
///
/// The sums cover the tree only; a runnable current is added here, at query time, as
/// fair.c does: `(avg_vruntime + key_curr * w_curr) / (avg_load + w_curr)`, floored.
#[inline(always)]
pub(crate) fn avg_vruntime_delta<R: Runqueue>(rq: &R) -> i64 {
    let curr = rq.curr().filter(|c| c.on_rq());
    let mut weight = rq.avg_load() as i64;

    if weight != 0 {
        let mut runtime = rq.avg_vruntime();
        if let Some(c) = curr {
            let w = c.load().weight_down() as i64;
            runtime = runtime.wrapping_add(entity_key(rq, c).wrapping_mul(w));
            weight = weight.wrapping_add(w);
        }
        // sign flips effective floor / ceiling
        if runtime < 0 {
            runtime = runtime.wrapping_sub(weight.wrapping_sub(1));
        }
        div_s64(runtime, weight)
    } else if let Some(c) = curr {
        // When there is but one element, it is the average.
        entity_key(rq, c)
    } else {
        0
    }
}

/// The span of the lag limit, in ns of real time: `vl_i` is clamped to
/// `±calc_delta_fair(span, w_i)` ([`entity_lag`]).
///
/// EEVDF's steady-state bound on the lag of any entity (Stoica et al., for requests of at
/// most `r_max` and a scheduling quantum `q`) is
///
/// ```text
///   -r_max < lag_i < max(r_max, q)
/// ```
///
/// It names the largest request of the system, not the entity's own. Since V is an
/// approximation that joins and leaves move, the saved lag is limited:
///
/// - 6.12 (default): `span = max(2 r_i, TICK_NSEC)`. XXX (as fair.c): the bound wants the
///   largest slice, which 6.12 did not track; twice the own slice is the cheap stand-in.
///   It cuts a short-slice entity's lag well inside the bound: an entity with `r_i` =
///   0.1 ms that waited behind a 100 ms-slice hog loses all but 4 ms (HZ=250) of the
///   service it is owed, while the hog keeps up to 200 ms.
/// - LAG_CLAMP_MAX_SLICE (upstream 7.0, "sched/eevdf: Fix lag clamp"):
///   `span = max(r_max, r_i) + TICK_NSEC`, with `r_max` = [`cfs_rq_max_slice`] (the
///   tree's augmented `max_slice` and current's slice). Since `max(r_max, q) <= r_max + q`
///   with the tick as the quantum, the bound still holds inside the limit on both sides,
///   and a big-slice entity's limit shrinks from `2 r_i` to `r_i + TICK_NSEC`. In the
///   example above both entities get 104 ms.
///
/// `max(.., r_i)`: [`update_entity_lag`](super::ops) asks while `se` is queued (in the tree
/// or current), where `r_i <= r_max` already; `reweight_entity()` asks once it took `se`
/// out of the tree, where upstream 7.0's `reweight_eevdf()` asks before: with the `max`
/// both see the same span.
///
/// Bound: `span <= max(2 r_max, r_max + TICK) <= 2 max(r_max, TICK)`, at most 200 ms with
/// 100 ms slices and `TICK_NSEC <= 10 ms`: the limit stays below the `2^36.6` of
/// Documentation/eevdf-math.md either way.
#[inline(always)]
pub fn lag_span<R: Runqueue>(rq: &R, se: R::Se, cfg: Config) -> u64 {
    lag_span_of(se.slice(), || cfs_rq_max_slice(rq), cfg)
}

/// [`lag_span`]'s rule from `se`'s slice `r_i` and a way to get `r_max`, asked only under
/// LAG_CLAMP_MAX_SLICE: the core passes the augmented value, the O(n) reference
/// ([`oracle::lag_limit`](super::oracle::lag_limit)) a scan of the queue.
#[inline(always)]
pub fn lag_span_of(r_i: u64, r_max: impl FnOnce() -> u64, cfg: Config) -> u64 {
    if cfg.feat(Features::LAG_CLAMP_MAX_SLICE) {
        r_max().max(r_i).saturating_add(cfg.tick_nsec)
    } else {
        r_i.saturating_mul(2).max(cfg.tick_nsec)
    }
}

/// `entity_lag()`: `vl_i = V - v_i`, clamped to `±calc_delta_fair(span, w_i)` with the
/// span of [`lag_span`].
///
/// `lag_i = S - s_i = w_i * (V - v_i)`; we keep the virtual lag `vl_i = V - v_i`.
#[inline(always)]
pub fn entity_lag<R: Runqueue>(rq: &R, avruntime: u64, se: R::Se, cfg: Config) -> i64 {
    let vlag = vdelta(avruntime, se.vruntime());
    let limit = calc_delta_fair(lag_span(rq, se, cfg), se.load()).min(i64::MAX as u64) as i64;
    // limit is in [0, i64::MAX], so its negation cannot overflow.
    vlag.clamp(limit.wrapping_neg(), limit)
}

/// The eligibility test, prepared once for a runqueue (current's share folded in).
///
/// Entity i is eligible once it received less service than it ought to have, lag >= 0:
///
/// ```text
///   lag_i = w_i (V - v_i) >= 0  <=>  V >= v_i
///   V = Σ (v_j - v0) w_j / W + v0
///   lag_i >= 0  <=>  Σ (v_j - v0) w_j >= (v_i - v0) * W        (no division)
/// ```
///
/// With ELIGIBLE off every entity is eligible, and the earliest deadline wins (EVDF).
/// With BIAS_ELIGIBLE the threshold moves right by one average request:
///
/// ```text
///   Σ_j w_j (v_j - v_i) + NICE_0_LOAD * Σ_j r_j >= 0
///   <=>  Σ (v_j - v0) w_j + NICE_0_LOAD * Σ r_j >= (v_i - v0) * W
/// ```
///
/// (equal weights w: `v_i <= V + r̄ * NICE_0_LOAD / w`, V plus one average virtual slice).
/// `NICE_0_LOAD` is 1024 here, in the scaled-down units of `w`. The bias is at most
/// `1024 * 100k * 100 ms < 2^53.2`. `W`, a sum of scaled-down weights, each below 2^32,
/// is far below 2^63. The comparison is exact for all keys, sums and biases: when a side
/// does not fit in 64 bits it is done on 128-bit values held in two `u64`.
/// Eligibility is monotone in `v_i`, so the eligible entities are a prefix of the
/// timeline.
#[derive(Clone, Copy, Debug)]
pub struct Eligibility {
    all: bool,
    zero: u64,
    avg: i64,
    bias: i64,
    load: u64,
}

impl Eligibility {
    /// Snapshot of the runqueue's eligibility threshold.
    #[inline(always)]
    pub fn new<R: Runqueue>(rq: &R, cfg: Config) -> Eligibility {
        Eligibility::with_features(rq, cfg.features)
    }

    /// [`Eligibility::new`] from the feature bits alone (the only part of the [`Config`] it
    /// reads).
    #[inline(always)]
    pub fn with_features<R: Runqueue>(rq: &R, features: Features) -> Eligibility {
        Eligibility::folding(rq, features, rq.curr().filter(|c| c.on_rq()))
    }

    /// The test for `se` alone: [`Eligibility::with_features`], except that current's
    /// share is not folded in when `se` is current. For current c (queued), with the
    /// timeline's sums `A = Σ (v_j - v0) w_j` and `W = Σ w_j` (c not among them) and
    /// `k_c = v_c - v0`:
    ///
    /// ```text
    ///   A + k_c w_c + bias >= k_c (W + w_c)  <=>  A + bias >= k_c W
    /// ```
    ///
    /// (`k_c w_c` on both sides; `bias` counts c's request either way). The two tests are
    /// the same inequality over the integers, and [`Eligibility::vruntime`] decides it
    /// exactly, so the answer is the same wherever the folded sums fit in 64 bits; where
    /// they would wrap (as fair.c's do: far outliers, huge weights) the right side is the
    /// exact answer. It costs no load of current's weight, no product and no sums. It is
    /// the dequeue's question (a task going to sleep is current) and `update_curr()`'s
    /// (PREEMPT_SHORT).
    #[inline(always)]
    pub fn for_entity<R: Runqueue>(rq: &R, se: R::Se, features: Features) -> Eligibility {
        Eligibility::folding(rq, features, rq.curr().filter(|c| *c != se && c.on_rq()))
    }

    /// The sums with `curr`'s share folded in, when there is one to fold.
    #[inline(always)]
    fn folding<R: Runqueue>(rq: &R, features: Features, curr: Option<R::Se>) -> Eligibility {
        let mut avg = rq.avg_vruntime();
        let mut load = rq.avg_load();
        if let Some(c) = curr {
            let w = c.load().weight_down();
            avg = avg.wrapping_add(entity_key(rq, c).wrapping_mul(w as i64));
            load = load.wrapping_add(w);
        }
        Eligibility::from_sums(rq, features, avg, load)
    }

    /// [`Eligibility::with_features`] from the sums it folds current into, `avg`
    /// (`Σ (v_j - v0) w_j`) and `load` (`Σ w_j`), as [`Eligibility::sums`] returns them:
    /// for a pick that computed them once and hands them to its out-of-line descent.
    #[inline(always)]
    pub(crate) fn from_sums<R: Runqueue>(
        rq: &R,
        features: Features,
        avg: i64,
        load: u64,
    ) -> Eligibility {
        // Σ r_j only when it is used: every pick and wakeup builds one of these.
        let bias = if features.contains(Features::BIAS_ELIGIBLE) {
            let curr = rq.curr().filter(|c| c.on_rq());
            let sum_r = sum_slice(rq).wrapping_add(curr.map_or(0, |c| c.slice()));
            NICE_0_WEIGHT.saturating_mul(sum_r).min(i64::MAX as u64) as i64
        } else {
            0
        };
        Eligibility {
            all: !features.contains(Features::ELIGIBLE),
            zero: rq.zero_vruntime(),
            avg,
            bias,
            load,
        }
    }

    /// The sums `(avg, load)` this test was built from, for [`Eligibility::from_sums`].
    #[inline(always)]
    pub(crate) fn sums(&self) -> (i64, u64) {
        (self.avg, self.load)
    }

    /// `vruntime_eligible()`: `avg + bias >= (v - v0) * load`.
    #[inline(always)]
    pub fn vruntime(&self, vruntime: u64) -> bool {
        match self.vruntime_narrow(vruntime) {
            Some(e) => e,
            None => eligible_wide(self.avg, self.bias, vdelta(vruntime, self.zero), self.load),
        }
    }

    /// [`Eligibility::vruntime`] when both sides fit in 64 bits (all but far outliers and
    /// huge weights), `None` otherwise: for a fast path that hands the rare case over to
    /// code that can afford the 128-bit comparison.
    #[inline(always)]
    pub fn vruntime_narrow(&self, vruntime: u64) -> Option<bool> {
        if self.all {
            return Some(true);
        }
        let key = vdelta(vruntime, self.zero);
        // `load as i64`, as fair.c's `long load`: a sum of scaled-down weights, each
        // below 2^32 (a task's at most 88761, a group's `MAX_SHARES`), is far below 2^63.
        // No clamp: it would cost three instructions a test, where `W` never needs one.
        match (
            self.avg.checked_add(self.bias),
            key.checked_mul(self.load as i64),
        ) {
            (Some(lhs), Some(rhs)) => Some(lhs >= rhs),
            _ => None,
        }
    }
}

/// `avg + bias >= key * load` in 128 bits, when a side does not fit in 64: rare (far
/// outliers, huge weights). Out of line on the host, to keep it out of the pick loop's
/// way; inlined in the kernel, where a call would make every entry point that tests
/// eligibility save registers for it on its common path.
#[cfg_attr(not(sched_eevdf_in_kernel), cold, inline(never))]
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
fn eligible_wide(avg: i64, bias: i64, key: i64, load: u64) -> bool {
    Wide::from_i64(avg)
        .add(Wide::from_i64(bias))
        .ge(Wide::mul_u64(key, load))
}

/// A 128-bit two's-complement value as two 64-bit limbs: the crate's one 128-bit type
/// (no `i128`, whose division the kernel lacks; only `+`, `*` and comparison are needed).
/// The core's rare 128-bit eligibility test and the O(n) reference's exact sums
/// ([`oracle`](super::oracle)) both use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wide {
    hi: i64,
    lo: u64,
}

impl Wide {
    /// Zero. The reference's, which the kernel has only under VERIFY and KUnit.
    #[cfg(any(
        not(sched_eevdf_in_kernel),
        CONFIG_SCHED_EEVDF_RUST_VERIFY,
        CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST
    ))]
    pub(crate) const ZERO: Wide = Wide { hi: 0, lo: 0 };

    #[inline(always)]
    pub(crate) fn from_i64(v: i64) -> Wide {
        Wide {
            hi: if v < 0 { -1 } else { 0 },
            lo: v as u64,
        }
    }

    #[inline(always)]
    pub(crate) fn add(self, o: Wide) -> Wide {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        Wide {
            hi: self.hi.wrapping_add(o.hi).wrapping_add(carry as i64),
            lo,
        }
    }

    #[inline(always)]
    fn neg(self) -> Wide {
        // -x = !x + 1
        Wide {
            hi: !self.hi,
            lo: !self.lo,
        }
        .add(Wide { hi: 0, lo: 1 })
    }

    /// `ua * ub` as an unsigned 128-bit product (exact: below 2^128).
    #[inline(always)]
    fn mul_magnitude(ua: u64, ub: u64) -> Wide {
        let (a0, a1) = (ua & 0xffff_ffff, ua >> 32);
        let (b0, b1) = (ub & 0xffff_ffff, ub >> 32);
        // Each partial product of 32-bit halves is < 2^64: the wrapping ops never wrap.
        let p00 = a0.wrapping_mul(b0);
        let p01 = a0.wrapping_mul(b1);
        let p10 = a1.wrapping_mul(b0);
        let p11 = a1.wrapping_mul(b1);
        let (mid, c1) = p01.overflowing_add(p10);
        let (lo, c2) = p00.overflowing_add(mid << 32);
        let hi = p11
            .wrapping_add(mid >> 32)
            .wrapping_add((c1 as u64) << 32)
            .wrapping_add(c2 as u64);
        Wide { hi: hi as i64, lo }
    }

    /// `a * b` for an unsigned `b` (a weight or a load), exactly: |a| * b <= 2^63 *
    /// (2^64 - 1) < 2^127 fits.
    #[inline(always)]
    pub(crate) fn mul_u64(a: i64, b: u64) -> Wide {
        let m = Wide::mul_magnitude(a.unsigned_abs(), b);
        if a < 0 {
            m.neg()
        } else {
            m
        }
    }

    /// `self >= o`: the high limbs compare signed, the low ones unsigned.
    #[inline(always)]
    pub(crate) fn ge(self, o: Wide) -> bool {
        if self.hi != o.hi {
            self.hi > o.hi
        } else {
            self.lo >= o.lo
        }
    }
}

/// `vruntime_eligible()`: would an entity at `vruntime` be eligible (see [`Eligibility`]).
/// With ELIGIBLE off every entity is.
#[inline(always)]
pub fn vruntime_eligible<R: Runqueue>(rq: &R, vruntime: u64, cfg: Config) -> bool {
    Eligibility::new(rq, cfg).vruntime(vruntime)
}

// Host only: the kernel-module-check crate compiles this file as a module of another crate
// (`--cfg sched_eevdf_in_kernel`), where `std` is not there.
#[cfg(all(test, not(sched_eevdf_in_kernel)))]
mod tests {
    use super::Wide;

    fn value(w: Wide) -> i128 {
        (i128::from(w.hi) << 64) | i128::from(w.lo)
    }

    const EDGES: [i64; 9] = [
        0,
        1,
        -1,
        i64::MIN,
        i64::MAX,
        -123_456_789_012,
        987_654_321,
        1 << 32,
        -(1 << 32) - 1,
    ];

    #[test]
    fn mul_is_exact() {
        for &a in &EDGES {
            for b in [0u64, 1, 15, 88_761, (1 << 63) - 1, 1 << 63, u64::MAX] {
                assert_eq!(
                    value(Wide::mul_u64(a, b)),
                    i128::from(a) * i128::from(b),
                    "{a} * {b}"
                );
            }
        }
    }

    #[test]
    fn add_and_ge_agree_with_i128() {
        for &a in &EDGES {
            for &b in &EDGES {
                let (wa, wb) = (Wide::mul_u64(a, 3), Wide::mul_u64(b, 5).neg());
                let (ia, ib) = (i128::from(a) * 3, i128::from(b) * -5);
                assert_eq!(value(wa.add(wb)), ia + ib, "{a}*3 + {b}*-5");
                assert_eq!(wa.ge(wb), ia >= ib, "{a}*3 >= {b}*-5");
                assert_eq!(Wide::from_i64(a).ge(Wide::ZERO), a >= 0);
            }
        }
    }
}
