// SPDX-License-Identifier: GPL-2.0

//! The EEVDF operations of kernel/sched/fair.c (Linux 6.12.117), generic over
//! [`Runqueue`]. Names follow the C.
//!
//! Time is an input: where fair.c reads the clock (`update_curr()`), the caller passes the
//! executed real time. Every operation takes the [`Config`] to use, features included.

use super::entity::{min_deadline_update, Entity, Runqueue};
use super::features::Features;
use super::load::{calc_delta_fair, div_s64, LoadWeight, NICE_0_WEIGHT};
use super::vtime::{vadd, vdelta, vruntime_before};

/// Per-call configuration: features and the tunables the EEVDF core reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Feature flags.
    pub features: Features,
    /// `sysctl_sched_base_slice` in ns: the request of entities without a custom slice.
    pub base_slice_ns: u64,
    /// `TICK_NSEC`: the floor of the lag clamp.
    pub tick_nsec: u64,
}

impl Config {
    /// 6.12 defaults on one CPU: base slice 0.7 ms (`normalized_sysctl_sched_base_slice`;
    /// the kernel multiplies it by `1 + ilog2(min(ncpus, 8))`), HZ=250 tick (4 ms).
    pub const DEFAULT: Config = Config {
        features: Features::DEFAULT,
        base_slice_ns: 700_000,
        tick_nsec: 4_000_000,
    };

    /// Whether `f` is on.
    #[inline]
    pub const fn feat(&self, f: Features) -> bool {
        self.features.contains(f)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

/// Smallest custom slice (`NSEC_PER_MSEC / 10`, HZ=1000 * 10).
pub const SLICE_MIN_NS: u64 = 100_000;
/// Largest custom slice (`NSEC_PER_MSEC * 100`, HZ=100 / 10).
pub const SLICE_MAX_NS: u64 = 100_000_000;

macro_rules! flags {
    ($(#[$m:meta])* $t:ident { $($(#[$fm:meta])* $f:ident = $v:expr,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub struct $t(pub u32);
        impl $t {
            /// No flag.
            pub const NONE: $t = $t(0);
            $($(#[$fm])* pub const $f: $t = $t($v);)*
            /// Whether all flags of `o` are set.
            #[inline]
            pub const fn contains(self, o: $t) -> bool { self.0 & o.0 == o.0 }
            /// Whether any flag of `o` is set.
            #[inline]
            pub const fn intersects(self, o: $t) -> bool { self.0 & o.0 != 0 }
        }
        impl core::ops::BitOr for $t {
            type Output = $t;
            fn bitor(self, o: $t) -> $t { $t(self.0 | o.0) }
        }
    };
}

flags!(
    /// `ENQUEUE_*` flags the core reads.
    EnqueueFlags {
        /// Wakeup (informational).
        WAKEUP = 0x01,
        /// Undo of a `DEQUEUE_SAVE` (informational).
        RESTORE = 0x02,
        /// A new task: PLACE_DEADLINE_INITIAL gives it half a slice.
        INITIAL = 0x80,
    }
);

flags!(
    /// `DEQUEUE_*` flags the core reads.
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

/// Why `check_preempt_wakeup_fair()` did or did not preempt (the debugfs counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WakeupPreempt {
    /// No preemption: current stays.
    None,
    /// Nothing runs: the wakee runs.
    Idle,
    /// Preempt: PREEMPT_SHORT cancelled current's slice protection for a shorter-slice
    /// eligible wakee, which is now the pick.
    ShortSlice,
    /// Preempt: current is not eligible (or not runnable), the wakee is the pick.
    CurrIneligible,
    /// Preempt: the wakee has the earliest eligible virtual deadline.
    EarlierDeadline,
    /// No preemption because RUN_TO_PARITY kept current, although the wakee is eligible
    /// and its deadline is not later than current's (the deadline order asked for a switch).
    RunToParity,
}

impl WakeupPreempt {
    /// Whether current must be rescheduled.
    pub const fn preempts(self) -> bool {
        matches!(
            self,
            WakeupPreempt::Idle
                | WakeupPreempt::ShortSlice
                | WakeupPreempt::CurrIneligible
                | WakeupPreempt::EarlierDeadline
        )
    }
}

/// `entity_key()`: `(s64)(v_i - v0)`.
///
/// Per avg_vruntime(), `zero_vruntime` is at most a little stale, so keys stay within two
/// lag bounds: `|key| <= 2 * calc_delta_fair(max(2 r_max, TICK), w_min)`, about 2^38 with
/// 100 ms slices and w = 2 (see Documentation/eevdf-math.md).
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
/// for the numbers. `sum_slice` (`Σ r_i`) is kept alongside for BIAS_ELIGIBLE.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn avg_vruntime_add<R: Runqueue>(rq: &mut R, se: R::Se) {
    let weight = se.load().weight_down();
    let key = entity_key(rq, se);
    rq.set_avg_vruntime(
        rq.avg_vruntime()
            .wrapping_add(key.wrapping_mul(weight as i64)),
    );
    rq.set_avg_load(rq.avg_load().wrapping_add(weight));
    rq.set_sum_slice(rq.sum_slice().wrapping_add(se.slice()));
}

/// Removes an entity from the sums (see [`avg_vruntime_add`]).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn avg_vruntime_sub<R: Runqueue>(rq: &mut R, se: R::Se) {
    let weight = se.load().weight_down();
    let key = entity_key(rq, se);
    rq.set_avg_vruntime(
        rq.avg_vruntime()
            .wrapping_sub(key.wrapping_mul(weight as i64)),
    );
    rq.set_avg_load(rq.avg_load().wrapping_sub(weight));
    rq.set_sum_slice(rq.sum_slice().wrapping_sub(se.slice()));
}

/// Moves the zero point: `v0' = v0 + d  ==>  avg_vruntime' = avg_vruntime - d * avg_load`
/// (every key shrinks by `d`).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn update_zero_vruntime<R: Runqueue>(rq: &mut R, delta: i64) {
    let load = rq.avg_load() as i64;
    rq.set_avg_vruntime(rq.avg_vruntime().wrapping_sub(load.wrapping_mul(delta)));
    rq.set_zero_vruntime(vadd(rq.zero_vruntime(), delta));
}

/// `avg_vruntime()`: `V`, the weighted average vruntime of the queued entities (current
/// included), and move `zero_vruntime` there.
///
/// `V = v0 + floor(Σ (v_i - v0) w_i / W)`: the division rounds toward minus infinity ("sign
/// flips effective floor / ceiling"), so `V` has a left bias and the entity at `v_i = V`
/// is always eligible. With one entity (only current), `V` is its vruntime.
///
/// This writes the runqueue (the zero point follows V, which keeps keys small). A reader
/// that must not change scheduler state, such as a debugfs file, uses
/// [`avg_vruntime_peek`]: the upstream fix "sched/debug: Fix avg_vruntime() usage" is
/// about exactly that.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn avg_vruntime<R: Runqueue>(rq: &mut R) -> u64 {
    let delta = avg_vruntime_delta(rq);
    update_zero_vruntime(rq, delta);
    rq.zero_vruntime()
}

/// `V` as [`avg_vruntime`] computes it, without moving the zero point: read-only.
///
/// Equal to what [`avg_vruntime`] would return now: it returns `v0 + delta` after moving
/// `v0` by the same `delta`.
pub fn avg_vruntime_peek<R: Runqueue>(rq: &R) -> u64 {
    vadd(rq.zero_vruntime(), avg_vruntime_delta(rq))
}

/// `V - v0` (see [`avg_vruntime`]).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
fn avg_vruntime_delta<R: Runqueue>(rq: &R) -> i64 {
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

/// `entity_lag()`: `vl_i = V - v_i`, clamped.
///
/// `lag_i = S - s_i = w_i * (V - v_i)`; we keep the virtual lag `vl_i = V - v_i`. Since V
/// is an approximation that joins and leaves move, the lag is limited to
/// `±calc_delta_fair(max(2 r_i, TICK_NSEC))`, EEVDF's steady-state bound being
/// `-r_max < lag < max(r_max, q)`.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn entity_lag<S: Entity>(avruntime: u64, se: S, cfg: Config) -> i64 {
    let vlag = vdelta(avruntime, se.vruntime());
    let span = se.slice().saturating_mul(2).max(cfg.tick_nsec);
    let limit = calc_delta_fair(span, se.load()).min(i64::MAX as u64) as i64;
    // limit is in [0, i64::MAX], so its negation cannot overflow.
    vlag.clamp(limit.wrapping_neg(), limit)
}

/// `update_entity_lag()`: saves `vl_i` before a dequeue. Returns whether the lag was
/// clamped (the debugfs counter `lag_clamped`).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn update_entity_lag<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) -> bool {
    let v = avg_vruntime(rq);
    let vlag = entity_lag(v, se, cfg);
    se.set_vlag(vlag);
    vlag != vdelta(v, se.vruntime())
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
/// With BIAS_ELIGIBLE the threshold moves right by one average request:
///
/// ```text
///   Σ_j w_j (v_j - v_i) + NICE_0_LOAD * Σ_j r_j >= 0
///   <=>  Σ (v_j - v0) w_j + NICE_0_LOAD * Σ r_j >= (v_i - v0) * W
/// ```
///
/// (equal weights w: `v_i <= V + r̄ * NICE_0_LOAD / w`, V plus one average virtual slice).
/// `NICE_0_LOAD` is 1024 here, in the scaled-down units of `w`. The bias is at most
/// `1024 * 100k * 100 ms < 2^53.2`. The comparison is exact for all inputs: when a side
/// does not fit in 64 bits it is done on 128-bit values held in two `u64`.
/// Eligibility is monotone in `v_i`, so the eligible entities are a prefix of the
/// timeline.
#[derive(Clone, Copy, Debug)]
pub struct Eligibility {
    all: bool,
    zero: u64,
    avg: i64,
    bias: i64,
    load: i64,
}

impl Eligibility {
    /// Snapshot of the runqueue's eligibility threshold.
    #[cfg_attr(sched_eevdf_in_kernel, inline(always))]
    #[cfg_attr(not(sched_eevdf_in_kernel), inline)]
    pub fn new<R: Runqueue>(rq: &R, cfg: Config) -> Eligibility {
        Eligibility::with_features(rq, cfg.features)
    }

    /// [`Eligibility::new`] from the feature bits alone (the only part of the [`Config`] it
    /// reads).
    #[cfg_attr(sched_eevdf_in_kernel, inline(always))]
    #[cfg_attr(not(sched_eevdf_in_kernel), inline)]
    pub fn with_features<R: Runqueue>(rq: &R, features: Features) -> Eligibility {
        let mut avg = rq.avg_vruntime();
        let mut load = rq.avg_load();
        let curr = rq.curr().filter(|c| c.on_rq());
        if let Some(c) = curr {
            let w = c.load().weight_down();
            avg = avg.wrapping_add(entity_key(rq, c).wrapping_mul(w as i64));
            load = load.wrapping_add(w);
        }
        // Σ r_j only when it is used: every pick and wakeup builds one of these.
        let bias = if features.contains(Features::BIAS_ELIGIBLE) {
            let sum_r = rq.sum_slice().wrapping_add(curr.map_or(0, |c| c.slice()));
            NICE_0_WEIGHT.saturating_mul(sum_r).min(i64::MAX as u64) as i64
        } else {
            0
        };
        Eligibility {
            all: !features.contains(Features::ELIGIBLE),
            zero: rq.zero_vruntime(),
            avg,
            bias,
            load: load.min(i64::MAX as u64) as i64,
        }
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
        match (self.avg.checked_add(self.bias), key.checked_mul(self.load)) {
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
fn eligible_wide(avg: i64, bias: i64, key: i64, load: i64) -> bool {
    wide_ge(
        Wide::from_i64(avg).add(Wide::from_i64(bias)),
        Wide::mul(key, load),
    )
}

/// A 128-bit two's-complement value as two 64-bit limbs (no `i128` in the crate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wide {
    hi: i64,
    lo: u64,
}

impl Wide {
    #[cfg_attr(sched_eevdf_in_kernel, inline(always))]
    fn from_i64(v: i64) -> Wide {
        Wide {
            hi: if v < 0 { -1 } else { 0 },
            lo: v as u64,
        }
    }

    #[cfg_attr(sched_eevdf_in_kernel, inline(always))]
    fn add(self, o: Wide) -> Wide {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        Wide {
            hi: self.hi.wrapping_add(o.hi).wrapping_add(carry as i64),
            lo,
        }
    }

    #[cfg_attr(sched_eevdf_in_kernel, inline(always))]
    fn neg(self) -> Wide {
        // -x = !x + 1
        Wide {
            hi: !self.hi,
            lo: !self.lo,
        }
        .add(Wide { hi: 0, lo: 1 })
    }

    /// `a * b` for `b >= 0`, exactly: |a| * b < 2^63 * 2^63 fits in 127 bits.
    #[cfg_attr(sched_eevdf_in_kernel, inline(always))]
    fn mul(a: i64, b: i64) -> Wide {
        let ua = a.unsigned_abs();
        let ub = b.unsigned_abs();
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
        let m = Wide { hi: hi as i64, lo };
        if (a < 0) != (b < 0) {
            m.neg()
        } else {
            m
        }
    }
}

#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
fn wide_ge(a: Wide, b: Wide) -> bool {
    if a.hi != b.hi {
        a.hi > b.hi
    } else {
        a.lo >= b.lo
    }
}

/// `vruntime_eligible()`: would an entity at `vruntime` be eligible (see [`Eligibility`]).
/// With ELIGIBLE off every entity is.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn vruntime_eligible<R: Runqueue>(rq: &R, vruntime: u64, cfg: Config) -> bool {
    Eligibility::new(rq, cfg).vruntime(vruntime)
}

/// `entity_eligible()`.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn entity_eligible<R: Runqueue>(rq: &R, se: R::Se, cfg: Config) -> bool {
    vruntime_eligible(rq, se.vruntime(), cfg)
}

/// `cfs_rq_min_slice()`: the smallest slice among the queued entities (the tree root's
/// augmented `min_slice` and current's), `u64::MAX` when empty. A group entity's slice.
#[inline]
pub fn cfs_rq_min_slice<R: Runqueue>(rq: &R) -> u64 {
    let mut min_slice = u64::MAX;
    if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
        min_slice = c.slice();
    }
    if let Some(root) = rq.root() {
        min_slice = min_slice.min(root.min_slice());
    }
    min_slice
}

/// `__enqueue_entity()`: into the sums and the timeline.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn __enqueue_entity<R: Runqueue>(rq: &mut R, se: R::Se) {
    avg_vruntime_add(rq, se);
    // Initialise the augmented values of a leaf (straight-line: the `None` arms fold away).
    min_deadline_update(se, None, None);
    rq.insert(se);
}

/// `__dequeue_entity()`: out of the timeline and the sums.
#[inline]
pub fn __dequeue_entity<R: Runqueue>(rq: &mut R, se: R::Se) {
    rq.erase(se);
    avg_vruntime_sub(rq, se);
}

/// `set_protect_slice()`: HACK, stash a copy of the deadline at the point of pick in vlag,
/// which is not used until dequeue. Current keeps running (RUN_TO_PARITY) until the stash
/// no longer matches: a new deadline (slice used up), or a cancel.
#[inline]
pub fn set_protect_slice<S: Entity>(se: S) {
    se.set_vlag(se.deadline() as i64);
}

/// `protect_slice()`: `vlag == deadline`.
#[inline]
pub fn protect_slice<S: Entity>(se: S) -> bool {
    se.vlag() as u64 == se.deadline()
}

/// `cancel_protect_slice()`.
#[inline]
pub fn cancel_protect_slice<S: Entity>(se: S) {
    if protect_slice(se) {
        se.set_vlag(se.deadline().wrapping_add(1) as i64);
    }
}

/// The tree part of `pick_eevdf()`: the eligible tree entity with the earliest virtual
/// deadline, ties broken by tree order (smaller vruntime, then earlier insertion).
///
/// Cost O(log n). The timeline is sorted by vruntime and eligibility is monotone in
/// vruntime, so the eligible nodes are a prefix of the in-order sequence. Walking down
/// from the root decomposes that prefix into at most 2 log n pieces, each an eligible node
/// or the whole left subtree of one, met in in-order sequence. Each piece's earliest
/// deadline is known (`deadline`, or the subtree's augmented `min_deadline`), so the best
/// piece is chosen keeping the first on ties; a second descent inside the winning subtree
/// finds its leftmost node whose deadline equals the subtree's `min_deadline`.
///
/// [`pick_eevdf`] tries an O(1) shortcut before this (see there).
#[inline]
fn pick_tree<R: Runqueue>(rq: &R, el: &Eligibility, root: R::Se) -> Option<R::Se> {
    // (piece, piece is a whole subtree, its earliest deadline)
    let mut best: Option<(R::Se, bool, u64)> = None;
    let mut node = Some(root);

    while let Some(n) = node {
        // Nothing below n can beat the best piece so far (later pieces lose ties).
        if let Some((_, _, d)) = best {
            if !vruntime_before(n.min_deadline(), d) {
                break;
            }
        }
        if !el.vruntime(n.vruntime()) {
            // n and its right subtree are not eligible.
            node = rq.left(n);
            continue;
        }
        // n is eligible, so its whole left subtree is.
        if let Some(l) = rq.left(n) {
            let d = l.min_deadline();
            if best.is_none_or(|(_, _, bd)| vruntime_before(d, bd)) {
                best = Some((l, true, d));
            }
        }
        let d = n.deadline();
        if best.is_none_or(|(_, _, bd)| vruntime_before(d, bd)) {
            best = Some((n, false, d));
        }
        // The rest of the eligible prefix is in the right subtree.
        node = rq.right(n);
    }

    let (mut n, subtree, d) = best?;
    if !subtree {
        return Some(n);
    }
    // Leftmost node of the subtree with deadline == d.
    loop {
        if let Some(l) = rq.left(n) {
            if l.min_deadline() == d {
                n = l;
                continue;
            }
        }
        if n.deadline() == d {
            return Some(n);
        }
        match rq.right(n) {
            Some(r) => n = r,
            // Only with a corrupted augmentation (the checker reports it).
            None => return Some(n),
        }
    }
}

/// Why [`pick_eevdf_why`] chose its entity (the debugfs pick counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PickReason {
    /// Nothing is runnable: no pick.
    Idle,
    /// A single runnable entity: no choice, eligibility not tested.
    Only,
    /// RUN_TO_PARITY kept current (eligible, slice protected).
    Parity,
    /// The pick has the earliest deadline of all runnable entities.
    Earliest,
    /// The earliest deadline belongs to an entity that is not eligible: the pick is a
    /// later deadline. These are the picks that ELIGIBLE changed.
    EarliestIneligible,
}

/// `pick_eevdf()`: Earliest Eligible Virtual Deadline First.
///
/// In order to provide latency guarantees for different request sizes EEVDF selects the
/// best runnable entity from two criteria:
///
///  1. the entity must be eligible (must be owed service, [`Eligibility`]);
///  2. from those that meet 1), the one with the earliest virtual deadline.
///
/// Rule, deterministic: with one queued entity, it (current if runnable). Otherwise
/// current competes only if runnable and eligible; with RUN_TO_PARITY an eligible current
/// whose slice is protected ([`protect_slice`]) is kept. Else the earliest deadline wins
/// among the eligible tree entities (ties: tree order, i.e. smaller vruntime, then FIFO)
/// and current, which wins only with a strictly earlier deadline. O(log n).
///
/// O(1) shortcut before the descent (6.12's pick has the same one for its layout): when
/// the leftmost entity holds the tree's earliest deadline (the root's `min_deadline`) and
/// is eligible, it is the tree's answer, since it comes first in tree order among all
/// entities with that deadline. Equal slices and weights make this the common case, and
/// everything up to here is straight-line code; the descent is a separate function
/// ([`pick_eevdf_general`], out of line in the kernel), so that the common picks do not
/// pay for the registers it needs.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn pick_eevdf<R: Runqueue>(rq: &R, cfg: Config) -> Option<R::Se> {
    pick_features(rq, cfg.features)
}

/// [`pick_eevdf`] from the feature bits alone (the only part of the [`Config`] it reads).
#[inline(always)]
fn pick_features<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    match pick_eevdf_fast(rq, features) {
        Some(pick) => pick,
        None => pick_eevdf_general(rq, features),
    }
}

/// The O(1) cases of [`pick_eevdf`], with 64-bit eligibility tests only: `Some(pick)`, or
/// `None` for what they leave undecided (the descent, a test that needs 128 bits), which
/// is [`pick_eevdf_general`]'s.
#[inline(always)]
fn pick_eevdf_fast<R: Runqueue>(rq: &R, features: Features) -> Option<Option<R::Se>> {
    let runnable = rq.curr().filter(|c| c.on_rq());
    // We can safely skip the eligibility test with one queued entity.
    if rq.nr_queued() == 1 {
        return Some(runnable.or_else(|| rq.first()));
    }
    let el = Eligibility::with_features(rq, features);
    let curr = match runnable.map(|c| (c, el.vruntime_narrow(c.vruntime()))) {
        None | Some((_, Some(false))) => None,
        Some((c, Some(true))) => Some(c),
        Some((_, None)) => return None,
    };
    if let Some(c) = curr {
        if keeps_slice(c, features) {
            return Some(Some(c));
        }
    }
    let Some(root) = rq.root() else {
        return Some(curr);
    };
    if let Some(first) = rq.first() {
        if first.deadline() == root.min_deadline()
            && el.vruntime_narrow(first.vruntime()) == Some(true)
        {
            return Some(earlier(curr, Some(first)));
        }
    }
    None
}

/// RUN_TO_PARITY: once selected, an eligible current runs until it either becomes
/// non-eligible or gets a new slice (see [`set_protect_slice`]).
#[inline(always)]
fn keeps_slice<S: Entity>(curr: S, features: Features) -> bool {
    features.contains(Features::RUN_TO_PARITY) && protect_slice(curr)
}

/// [`pick_eevdf`] for more than one queued entity, in general: eligibility in 128 bits
/// where needed, and the descent of the tree. It prepares its own [`Eligibility`] (a few
/// instructions, on the rare path) so that [`pick_eevdf`] reaches it by a tail call and
/// its own common path needs few registers.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
fn pick_eevdf_general<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    let el = Eligibility::with_features(rq, features);
    let curr = rq.curr().filter(|c| c.on_rq() && el.vruntime(c.vruntime()));
    if let Some(c) = curr {
        if keeps_slice(c, features) {
            return Some(c);
        }
    }
    earlier(curr, rq.root().and_then(|root| pick_tree(rq, &el, root)))
}

/// The final step of [`pick_eevdf`]: an eligible current (`curr`) against the tree's
/// best; current wins only with a strictly earlier deadline.
#[inline(always)]
fn earlier<S: Entity>(curr: Option<S>, best: Option<S>) -> Option<S> {
    match (best, curr) {
        (Some(b), Some(c)) if vruntime_before(c.deadline(), b.deadline()) => Some(c),
        (None, c) => c,
        (b, _) => b,
    }
}

/// [`pick_eevdf`], and why.
#[inline]
pub fn pick_eevdf_why<R: Runqueue>(rq: &R, cfg: Config) -> (Option<R::Se>, PickReason) {
    let se = pick_eevdf(rq, cfg);
    (se, pick_reason(rq, se, cfg))
}

/// Why [`pick_eevdf`] returned `se` (in the state it picked from).
///
/// [`PickReason::Parity`]: `se` is current, eligible and slice-protected under
/// RUN_TO_PARITY, which is exactly when the pick keeps current without comparing
/// deadlines. [`PickReason::EarliestIneligible`] costs one comparison: the earliest
/// deadline of all runnable entities is `min(root.min_deadline, curr.deadline)`, and the
/// pick is the earliest among the eligible ones, so some runnable entity has a strictly
/// earlier deadline than the pick iff that entity is not eligible.
pub fn pick_reason<R: Runqueue>(rq: &R, se: Option<R::Se>, cfg: Config) -> PickReason {
    let Some(se) = se else {
        return PickReason::Idle;
    };
    if rq.nr_queued() == 1 {
        return PickReason::Only;
    }
    let runnable = rq.curr().filter(|c| c.on_rq());
    if runnable == Some(se)
        && keeps_slice(se, cfg.features)
        && Eligibility::new(rq, cfg).vruntime(se.vruntime())
    {
        return PickReason::Parity;
    }
    let earliest = match (rq.root().map(|r| r.min_deadline()), runnable) {
        (Some(d), Some(c)) if vruntime_before(c.deadline(), d) => c.deadline(),
        (Some(d), _) => d,
        (None, Some(c)) => c.deadline(),
        (None, None) => se.deadline(),
    };
    if vruntime_before(earliest, se.deadline()) {
        PickReason::EarliestIneligible
    } else {
        PickReason::Earliest
    }
}

/// `update_deadline()`: when current has consumed its request, give it a new one.
///
/// EEVDF: `vd_i = ve_i + r_i / w_i`; the virtual slice is `calc_delta_fair(r_i)`. An
/// entity without a custom slice takes the current base slice. XXX (as fair.c): strictly
/// `vd_i += N * r_i / w_i` such that `vd_i > ve_i`; one request is good enough. Returns
/// whether a new deadline was set (current should be rescheduled).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn update_deadline<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) -> bool {
    if vruntime_before(se.vruntime(), se.deadline()) {
        return false;
    }
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

/// `did_preempt_short()`: with PREEMPT_SHORT, an unprotected current that is no longer
/// eligible is preempted at the next update.
fn did_preempt_short<R: Runqueue>(rq: &R, curr: R::Se, cfg: Config) -> bool {
    if !cfg.feat(Features::PREEMPT_SHORT) || protect_slice(curr) {
        return false;
    }
    !entity_eligible(rq, curr, cfg)
}

/// `do_preempt_short()`: may the waking `pse` (shorter slice, eligible) override the slice
/// protection of `se`? The slice comparison, which settles the common case of equal
/// slices, is inlined into the wakeup; the eligibility tests are not.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
fn do_preempt_short<R: Runqueue>(rq: &R, pse: R::Se, se: R::Se, cfg: Config) -> bool {
    if !cfg.feat(Features::PREEMPT_SHORT) || pse.slice() >= se.slice() {
        return false;
    }
    shorter_preempts(rq, pse, se, cfg.features)
}

/// [`do_preempt_short`] for a wakee with a shorter slice: it must be eligible, and have an
/// earlier deadline than `se` or find `se` ineligible.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
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

/// `update_curr()`: charge `delta_exec` ns of real time to current.
///
/// `v_i += delta * NICE_0_LOAD / w_i`, then [`update_deadline`]. Returns whether current
/// should be rescheduled: its request is used up, or (PREEMPT_SHORT) it lost eligibility
/// without slice protection. Never with a single queued entity.
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
    resched || did_preempt_short(rq, curr, cfg)
}

/// `entity_tick()`'s EEVDF part: [`update_curr`] for one tick's worth of runtime.
pub fn entity_tick<R: Runqueue>(rq: &mut R, delta_exec: u64, cfg: Config) -> bool {
    update_curr(rq, delta_exec, cfg)
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
/// 2 max(r_i, TICK)` ≈ 2^37.6 for 100 ms slices, where the first form's `vl*(W + w)` could
/// exceed 2^63 at 100k entities. W includes current. Without PLACE_LAG (strategy #2) the
/// entity is placed at V.
///
/// Deadline: `vd_i = v_i + r_i / w_i`, half of it for a new task with
/// PLACE_DEADLINE_INITIAL (existing tasks are on average halfway through their slice);
/// with PLACE_REL_DEADLINE a deadline saved relative at dequeue is made absolute again.
///
/// Returns the (inflated) virtual lag it applied: 0 without PLACE_LAG or on an empty queue.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
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
            lag = lag.wrapping_add(div_s64(
                lag.wrapping_mul(w),
                load.min(i64::MAX as u64) as i64,
            ));
        }
    }

    se.set_vruntime(vruntime.wrapping_sub(lag as u64));

    // Unlike fair.c, the relative-deadline flag is consumed even when PLACE_REL_DEADLINE
    // was turned off since the dequeue: a stale flag would later make a fresh absolute
    // deadline be read as relative (and land ~2^63 away from V).
    if se.rel_deadline() {
        se.set_rel_deadline(false);
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

/// `enqueue_entity()`: place and queue. Current (dequeued while running) is placed but
/// stays out of the tree. A no-op for an entity already queued.
///
/// Unlike fair.c this does not account current's runtime first: call [`update_curr`]
/// with the elapsed time before.
pub fn enqueue_entity<R: Runqueue>(rq: &mut R, se: R::Se, flags: EnqueueFlags, cfg: Config) {
    if se.on_rq() {
        return;
    }
    let is_curr = rq.curr() == Some(se);
    place_entity(rq, se, flags, cfg);
    if !is_curr {
        __enqueue_entity(rq, se);
    }
    se.set_on_rq(true);
    rq.set_nr_queued(rq.nr_queued().wrapping_add(1));
}

/// `dequeue_entity()`. Returns `false` when the dequeue is delayed (DELAY_DEQUEUE: a
/// sleeping entity that is not eligible stays queued, marked `sched_delayed`, to burn off
/// its negative lag; it leaves when picked or is requeued when woken), `true` otherwise.
///
/// Saves the lag ([`update_entity_lag`]); on a non-sleep dequeue with PLACE_REL_DEADLINE
/// makes the deadline relative. With `DELAYED` (finishing a delayed dequeue) and
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
    let sleep = flags.contains(DequeueFlags::SLEEP);

    // DELAY_DEQUEUE relies on spurious wakeups, special task states must not suffer them:
    // exempt them. A delayed entity being dequeued for good is not delayed again.
    let delay = sleep && !flags.intersects(DequeueFlags::SPECIAL | DequeueFlags::DELAYED);
    if dequeue_start(rq, se, delay, cfg).is_none() {
        se.set_sched_delayed(true);
        return false;
    }

    if cfg.feat(Features::PLACE_REL_DEADLINE) && !sleep {
        se.set_deadline(se.deadline().wrapping_sub(se.vruntime()));
        se.set_rel_deadline(true);
    }

    if rq.curr() != Some(se) {
        __dequeue_entity(rq, se);
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

/// The EEVDF start of `dequeue_entity()`: whether it is delayed and, if not, the lag saved.
///
/// With `delay` (a sleep that DELAY_DEQUEUE may delay) an entity that is not eligible stays
/// queued to burn off its negative lag ([`dequeue_delays`]): returns `None` and changes
/// nothing. Otherwise saves its lag ([`update_entity_lag`]) and returns whether that was
/// clamped. fair.c asks both at the start of its dequeue (it does the load tracking between
/// the two, which neither reads nor moves V or the entity).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn dequeue_start<R: Runqueue>(rq: &mut R, se: R::Se, delay: bool, cfg: Config) -> Option<bool> {
    if dequeue_delays(rq, se, delay, cfg) {
        return None;
    }
    Some(update_entity_lag(rq, se, cfg))
}

/// DELAY_DEQUEUE's decision: a sleep that may be delayed (`delay`) of an entity that is not
/// eligible is delayed.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn dequeue_delays<R: Runqueue>(rq: &R, se: R::Se, delay: bool, cfg: Config) -> bool {
    delay && cfg.feat(Features::DELAY_DEQUEUE) && !entity_eligible(rq, se, cfg)
}

/// The EEVDF part of `requeue_delayed_entity()` (fair.c keeps the delayed flag and its
/// accounting): with DELAY_ZERO the lag is saved and, when positive, dropped by placing
/// the entity again at V (lag 0). Returns whether the lag was clamped.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn requeue_delayed_lag<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) -> bool {
    let (clamped, place) = requeue_delayed_start(rq, se, cfg);
    if place {
        requeue_delayed_place(rq, se, cfg);
    }
    clamped
}

/// The first step of [`requeue_delayed_lag`]: with DELAY_ZERO the lag saved. Returns
/// whether it was clamped and whether it is positive, when [`requeue_delayed_place`] must
/// follow (the kernel does that out of line: the common requeue then needs few registers).
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn requeue_delayed_start<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) -> (bool, bool) {
    if !cfg.feat(Features::DELAY_ZERO) {
        return (false, false);
    }
    let clamped = update_entity_lag(rq, se, cfg);
    (clamped, se.vlag() > 0)
}

/// The second step of [`requeue_delayed_lag`], for positive lag: the entity placed again
/// at V (lag 0), in the tree (unless current) and in the count.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn requeue_delayed_place<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) {
    let is_curr = rq.curr() == Some(se);
    rq.set_nr_queued(rq.nr_queued().saturating_sub(1));
    if !is_curr {
        __dequeue_entity(rq, se);
    }
    se.set_vlag(0);
    place_entity(rq, se, EnqueueFlags::NONE, cfg);
    if !is_curr {
        __enqueue_entity(rq, se);
    }
    rq.set_nr_queued(rq.nr_queued().wrapping_add(1));
}

/// `requeue_delayed_entity()`: a delayed entity is woken. With DELAY_ZERO positive lag is
/// dropped: the entity is re-placed at V (lag 0).
pub fn requeue_delayed_entity<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) {
    if !se.sched_delayed() || !se.on_rq() {
        return;
    }
    requeue_delayed_lag(rq, se, cfg);
    se.set_sched_delayed(false);
}

/// `set_next_entity()`: make `se` current. A queued entity leaves the tree (current is not
/// kept in it) and gets its slice protected. A previous current is put back first.
pub fn set_next_entity<R: Runqueue>(rq: &mut R, se: R::Se) {
    match rq.curr() {
        Some(c) if c == se => return,
        Some(_) => put_prev_entity(rq),
        None => {}
    }
    if se.on_rq() {
        __dequeue_entity(rq, se);
        set_protect_slice(se);
    }
    rq.set_curr(Some(se));
}

/// `put_prev_entity()`: current stops running; if still queued it goes back into the
/// tree. Call [`update_curr`] first.
pub fn put_prev_entity<R: Runqueue>(rq: &mut R) {
    if let Some(prev) = rq.curr() {
        if prev.on_rq() {
            __enqueue_entity(rq, prev);
        }
        rq.set_curr(None);
    }
}

/// `pick_next_entity()` (without buddies): [`pick_eevdf`], and a delayed pick is dequeued
/// for real (`DEQUEUE_SLEEP | DEQUEUE_DELAYED`) and reported as [`Pick::Blocked`].
pub fn pick_next_entity<R: Runqueue>(rq: &mut R, cfg: Config) -> Pick<R::Se> {
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
        Pick::Run(se) => set_next_entity(rq, se),
        Pick::Idle => put_prev_entity(rq),
        Pick::Blocked(_) => {}
    }
    pick
}

/// `check_preempt_wakeup_fair()`'s EEVDF decision for the woken, already enqueued `pse`:
/// whether current must be rescheduled. Call [`update_curr`] first. This is
/// [`check_preempt_wakeup_fair`] without the reason.
///
/// With PREEMPT_SHORT, a wakee with a shorter slice that is eligible and either has an
/// earlier deadline than current or finds current ineligible cancels current's slice
/// protection (even if it does not get picked). Then current is preempted iff
/// [`pick_eevdf`] now returns the wakee. In the kernel the common case (equal slices, the
/// pick's O(1) cases) is straight-line code, and the rest is reached by tail calls.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn wakeup_preempt<R: Runqueue>(rq: &mut R, pse: R::Se, cfg: Config) -> bool {
    let Some(curr) = rq.curr() else {
        return true;
    };
    if curr == pse {
        return false;
    }
    if cfg.feat(Features::PREEMPT_SHORT) && pse.slice() < curr.slice() {
        return wakeup_preempt_shorter(rq, pse, curr, cfg.features);
    }
    match pick_eevdf_fast(rq, cfg.features) {
        Some(pick) => pick == Some(pse),
        None => pick_eevdf_general_is(rq, pse, cfg.features),
    }
}

/// [`wakeup_preempt`] for a wakee with a shorter slice than current's (PREEMPT_SHORT on).
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
fn wakeup_preempt_shorter<R: Runqueue>(rq: &R, pse: R::Se, curr: R::Se, f: Features) -> bool {
    if shorter_preempts(rq, pse, curr, f) {
        cancel_protect_slice(curr);
    }
    pick_features(rq, f) == Some(pse)
}

/// Whether [`pick_eevdf_general`] picks `pse`: out of line, so that [`wakeup_preempt`]
/// reaches it by a tail call.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
fn pick_eevdf_general_is<R: Runqueue>(rq: &R, pse: R::Se, features: Features) -> bool {
    pick_eevdf_general(rq, features) == Some(pse)
}

/// `check_preempt_wakeup_fair()`'s EEVDF decision for the woken, already enqueued `pse`,
/// and why (the debugfs counters). The decision is [`wakeup_preempt`]'s, the same code;
/// the reason is worked out afterwards from the state it left (cancelling the slice
/// protection writes only current's `vlag`, which neither `do_preempt_short()` nor the
/// eligibility tests read). Call [`update_curr`] first.
pub fn check_preempt_wakeup_fair<R: Runqueue>(
    rq: &mut R,
    pse: R::Se,
    cfg: Config,
) -> WakeupPreempt {
    let Some(curr) = rq.curr() else {
        return WakeupPreempt::Idle;
    };
    if curr == pse {
        return WakeupPreempt::None;
    }
    let preempts = wakeup_preempt(rq, pse, cfg);
    let short = do_preempt_short(rq, pse, curr, cfg);
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
    // other reasons are not Parity whatever was picked.
    if pick_reason(rq, Some(curr), cfg) == PickReason::Parity
        && el.vruntime(pse.vruntime())
        && !vruntime_before(curr.deadline(), pse.deadline())
    {
        return WakeupPreempt::RunToParity;
    }
    WakeupPreempt::None
}

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
/// with the kernel's lag clamp on `vl` and high-resolution weights, as fair.c. Bounds:
/// `|vl| * w <= 2^20 * 2 max(r, TICK) < 2^48`; `(d - V) * w` is below `2^20 * r` plus the
/// lag term for an entity placed by the core.
fn reweight_eevdf<S: Entity>(se: S, avruntime: u64, weight: u64, cfg: Config) {
    let old_weight = se.load().weight.min(i64::MAX as u64) as i64;
    let new_weight = weight.min(i64::MAX as u64) as i64;

    if avruntime != se.vruntime() {
        let vlag = entity_lag(avruntime, se, cfg);
        let vlag = div_s64(vlag.wrapping_mul(old_weight), new_weight);
        se.set_vruntime(avruntime.wrapping_sub(vlag as u64));
    }

    let vslice = vdelta(se.deadline(), avruntime);
    let vslice = div_s64(vslice.wrapping_mul(old_weight), new_weight);
    se.set_deadline(vadd(avruntime, vslice));
}

/// `reweight_entity()`: change an entity's weight (nice or group share).
///
/// Queued: `reweight_eevdf()` around V, out of the tree and the sums meanwhile. Not
/// queued: the saved virtual lag is rescaled, `vl' = vl * w / w'`, since lag_i =
/// w_i * vl_i is what is preserved. Call [`update_curr`] first. A zero weight is ignored.
#[cfg_attr(sched_eevdf_in_kernel, inline(always))]
#[cfg_attr(not(sched_eevdf_in_kernel), inline)]
pub fn reweight_entity<R: Runqueue>(rq: &mut R, se: R::Se, lw: LoadWeight, cfg: Config) {
    if lw.weight == 0 {
        return;
    }
    let is_curr = rq.curr() == Some(se);
    if se.on_rq() {
        let avruntime = avg_vruntime(rq);
        if !is_curr {
            __dequeue_entity(rq, se);
        }
        reweight_eevdf(se, avruntime, lw.weight, cfg);
    } else {
        let old = se.load().weight.min(i64::MAX as u64) as i64;
        let new = lw.weight.min(i64::MAX as u64) as i64;
        se.set_vlag(div_s64(se.vlag().wrapping_mul(old), new));
    }
    se.set_load(lw);
    if se.on_rq() && !is_curr {
        __enqueue_entity(rq, se);
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

/// `sched_setattr()` of the slice, with `__sched_setscheduler()`'s save/restore around
/// it: a queued entity is dequeued (`DEQUEUE_SAVE`, so lag and relative deadline are
/// kept), current is put back, the slice set, then re-enqueued (`ENQUEUE_RESTORE`) and
/// made current again. The new slice takes effect with the next deadline. Call
/// [`update_curr`] first.
pub fn sched_setattr_slice<R: Runqueue>(rq: &mut R, se: R::Se, sched_runtime: u64, cfg: Config) {
    let queued = se.on_rq();
    let running = rq.curr() == Some(se);
    if queued {
        dequeue_entity(rq, se, DequeueFlags::SAVE, cfg);
    }
    if running {
        put_prev_entity(rq);
    }
    let (slice, custom) = sched_attr_slice(sched_runtime, cfg.base_slice_ns);
    se.set_slice(slice);
    se.set_custom_slice(custom);
    if queued {
        enqueue_entity(rq, se, EnqueueFlags::RESTORE, cfg);
    }
    if running {
        set_next_entity(rq, se);
    }
}

/// Sets the slice of an entity that may be queued, keeping `Σ r_i` and the augmented
/// `min_slice` right: what `enqueue_task_fair()` / `dequeue_entities()` do when a group
/// entity takes its queue's minimum slice (`se->slice = slice` followed by
/// `min_vruntime_cb_propagate()` in fair.c). An entity in the timeline (queued, not
/// current) has its share of `sum_slice` replaced and the augmented values recomputed up
/// the tree, stopping early where nothing changed. O(log n).
#[inline]
pub fn set_queued_slice<R: Runqueue>(rq: &mut R, se: R::Se, slice: u64) {
    let in_tree = se.on_rq() && rq.curr() != Some(se);
    if in_tree {
        rq.set_sum_slice(rq.sum_slice().wrapping_sub(se.slice()).wrapping_add(slice));
    }
    se.set_slice(slice);
    if in_tree {
        let mut node = Some(se);
        while let Some(n) = node {
            if min_deadline_update(n, rq.left(n), rq.right(n)) {
                break;
            }
            node = rq.parent(n);
        }
    }
}
