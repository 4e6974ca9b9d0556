// SPDX-License-Identifier: GPL-2.0

//! The O(n) oracle: EEVDF's pick and wakeup-preemption decisions from their
//! definitions, by a linear scan of a runqueue, against which the O(log n) core is judged;
//! also the largest queued slice ([`max_slice`], the augmented `max_slice`'s definition) and
//! the lag limit built on it ([`lag_limit`]).
//!
//! The host tests (the model test after every step) and the kernel's live oracle
//! (`CONFIG_SCHED_EEVDF_RUST_VERIFY`, kernel/verify.rs, on the real runqueues under their
//! lock) both call these functions, so both judge the core by one definition.
//!
//! Nothing cached is trusted: no `avg_vruntime`, `avg_load` or `sum_slice`, no augmented
//! `min_deadline`, no tree shortcut. The queued set is walked in timeline order
//! (`rb_next` from the leftmost node, plus a runnable current) and the sums are recomputed
//! from the entities, exactly, in 128 bits. Eligibility is tested in the lag form
//!
//! ```text
//!   lag_i >= 0  <=>  Σ_j w_j (v_j - v_i) (+ NICE_0_LOAD Σ_j r_j with BIAS_ELIGIBLE) >= 0
//!               <=>  S + B >= W (v_i - v0),   S = Σ_j w_j (v_j - v0),  W = Σ_j w_j
//! ```
//!
//! over the queued entities j (current included while runnable), with v0 any common
//! origin (the runqueue's `zero_vruntime`). That is one multiplication per entity and one
//! per test, with no division: O(n) for the scan, O(1) per test.
//!
//! The rule it applies is the one [`crate::pick_eevdf`] documents: with one queued entity,
//! that entity (current if runnable); else, with NEXT_BUDDY_EEVDF and PICK_BUDDY, an
//! eligible next buddy; else a runnable, eligible current is kept under RUN_TO_PARITY (or
//! RUN_TO_PARITY_MIN_SLICE) while its slice is protected ([`protect_slice`], the one test
//! of the protection it shares with the core); else the earliest deadline among the
//! eligible, first in timeline order on ties, with current winning only with a strictly
//! earlier deadline. Cost O(n) time, O(1) space, no allocation: fit for a runqueue lock.

use super::features::{Config, Features};
use super::load::{calc_delta_fair, NICE_0_WEIGHT};
use super::math::{lag_span_of, Wide};
use super::ops::{protect_slice, Wake, WakeFlags};
use super::tree::{Entity, Runqueue};
use super::vtime::{vdelta, vruntime_before};

/// The queued entities in timeline order: the tree from its leftmost node by `rb_next`
/// (the cached leftmost is not trusted: the walk starts at the root), then a runnable
/// current. At most `nr_queued + 1` steps, so a corrupted tree cannot make it loop.
struct Queued<'a, R: Runqueue> {
    rq: &'a R,
    next: Option<R::Se>,
    curr: Option<R::Se>,
    budget: u32,
}

impl<'a, R: Runqueue> Queued<'a, R> {
    fn new(rq: &'a R) -> Self {
        let mut first = rq.root();
        while let Some(l) = first.and_then(|n| rq.left(n)) {
            first = Some(l);
        }
        Queued {
            rq,
            next: first,
            curr: rq.curr().filter(|c| c.on_rq()),
            budget: rq.nr_queued().saturating_add(1),
        }
    }
}

impl<R: Runqueue> Iterator for Queued<'_, R> {
    type Item = R::Se;

    fn next(&mut self) -> Option<R::Se> {
        self.budget = self.budget.checked_sub(1)?;
        match self.next {
            Some(n) => {
                self.next = self.rq.rb_next(n);
                Some(n)
            }
            None => self.curr.take(),
        }
    }
}

/// Eligibility recomputed from the queued entities (see the module docs).
struct Lag {
    all: bool,
    zero: u64,
    /// `S + B`: Σ w_j (v_j - v0), plus NICE_0_LOAD Σ r_j with BIAS_ELIGIBLE.
    lhs: Wide,
    /// `W`: Σ w_j.
    load: u64,
}

impl Lag {
    fn new<R: Runqueue>(rq: &R, features: Features) -> Lag {
        let zero = rq.zero_vruntime();
        let (mut sum, mut load, mut slices) = (Wide::ZERO, 0u64, Wide::ZERO);
        for se in Queued::new(rq) {
            let w = se.load().weight_down();
            sum = sum.add(Wide::mul_u64(vdelta(se.vruntime(), zero), w));
            load = load.saturating_add(w);
            slices = slices.add(Wide::mul_u64(
                i64::try_from(se.slice()).unwrap_or(i64::MAX),
                NICE_0_WEIGHT,
            ));
        }
        if features.contains(Features::BIAS_ELIGIBLE) {
            sum = sum.add(slices);
        }
        Lag {
            all: !features.contains(Features::ELIGIBLE),
            zero,
            lhs: sum,
            load: load.min(i64::MAX as u64),
        }
    }

    fn eligible(&self, vruntime: u64) -> bool {
        self.all
            || self
                .lhs
                .ge(Wide::mul_u64(vdelta(vruntime, self.zero), self.load))
    }
}

/// The next buddy the pick tests first: `cfs_rq->next` with NEXT_BUDDY_EEVDF and
/// PICK_BUDDY.
fn buddy<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    rq.next_buddy().filter(|_| picks_buddy(features))
}

/// Whether the pick tests the next buddy: NEXT_BUDDY_EEVDF and PICK_BUDDY.
fn picks_buddy(features: Features) -> bool {
    features.contains(Features::NEXT_BUDDY_EEVDF) && features.contains(Features::PICK_BUDDY)
}

/// The entity `pick_eevdf()` must return, by linear scan. `cancel_parity` pretends
/// current's slice protection was cancelled (the state a PREEMPT_SHORT wakeup leaves);
/// `buddy` is the next buddy the pick tests first (none without NEXT_BUDDY_EEVDF and
/// PICK_BUDDY).
fn pick_scan<R: Runqueue>(
    rq: &R,
    features: Features,
    cancel_parity: bool,
    buddy: Option<R::Se>,
) -> Option<R::Se> {
    let runnable = rq.curr().filter(|c| c.on_rq());
    if rq.nr_queued() == 1 {
        return runnable.or_else(|| Queued::new(rq).next());
    }
    let lag = Lag::new(rq, features);
    if let Some(b) = buddy.filter(|b| lag.eligible(b.vruntime())) {
        return Some(b);
    }
    let curr = runnable.filter(|c| lag.eligible(c.vruntime()));
    if let Some(c) = curr {
        let parity = features.contains(Features::RUN_TO_PARITY)
            || features.contains(Features::RUN_TO_PARITY_MIN_SLICE);
        if parity && protect_slice(c, features) && !cancel_parity {
            return Some(c);
        }
    }
    let mut best: Option<R::Se> = None;
    // Tree entities first, in timeline order: the first of equal deadlines wins.
    for se in Queued::new(rq).filter(|&se| Some(se) != runnable) {
        if lag.eligible(se.vruntime())
            && best.is_none_or(|b| vruntime_before(se.deadline(), b.deadline()))
        {
            best = Some(se);
        }
    }
    match (best, curr) {
        (Some(b), Some(c)) if vruntime_before(c.deadline(), b.deadline()) => Some(c),
        (None, c) => c,
        (b, _) => b,
    }
}

/// `pick_eevdf()` by definition, in O(n): what [`crate::pick_eevdf`] must return for this
/// runqueue and these features.
pub fn pick<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    pick_scan(rq, features, false, buddy(rq, features))
}

/// Whether the tree entity `pick` shares its deadline with another eligible tree entity
/// of another vruntime: a tie, which this core breaks by tree order (the smaller
/// vruntime) and 6.12's deadline-sorted tree by enqueue order (the first enqueued), so the
/// two may pick differently (Documentation/c-parity.md). Entities equal in both vruntime
/// and deadline are ordered by enqueue in both trees, and current loses a tie in both:
/// neither counts. The live oracle counts these picks (`ties`), an upper bound of the
/// picks where 6.12 would have chosen another entity.
pub fn pick_is_tie<R: Runqueue>(rq: &R, features: Features, pick: Option<R::Se>) -> bool {
    let curr = rq.curr();
    let Some(p) = pick.filter(|&p| Some(p) != curr) else {
        return false;
    };
    let lag = Lag::new(rq, features);
    Queued::new(rq).any(|se| {
        Some(se) != curr
            && se != p
            && se.deadline() == p.deadline()
            && se.vruntime() != p.vruntime()
            && lag.eligible(se.vruntime())
    })
}

/// The wakeup-preemption decision of `check_preempt_wakeup_fair()` for the enqueued
/// wakee `pse`, by definition, in O(n), on the state *before* the decision (the core's
/// decision may cancel current's slice protection; this reads only):
///
/// - no current: preempt; the wakee is current: do not;
/// - PREEMPT_SHORT (`do_preempt_short()`): a wakee with a shorter slice than current's
///   that is eligible, and has an earlier deadline or finds current not eligible, cancels
///   current's RUN_TO_PARITY protection; with RUN_TO_PARITY_MIN_SLICE (6.17) a wakee with
///   a shorter slice is enough, and the pick ignores the protection for it;
/// - then preempt iff `pick_eevdf()` returns the wakee.
pub fn wakeup_preempt<R: Runqueue>(rq: &R, pse: R::Se, features: Features) -> bool {
    let Some(curr) = rq.curr() else {
        return true;
    };
    if curr == pse {
        return false;
    }
    let short = features.contains(Features::PREEMPT_SHORT) && pse.slice() < curr.slice();
    preempts_short(rq, pse, curr, features, short, buddy(rq, features))
}

/// Whether the pick is `pse`, after PREEMPT_SHORT's cancel for a `short` wakee (one with a
/// shorter slice, PREEMPT_SHORT on): 6.12 cancels if the wakee is eligible and has an
/// earlier deadline than current or finds current not eligible; with
/// RUN_TO_PARITY_MIN_SLICE (6.17) a shorter slice is enough, and the pick ignores the
/// protection for it.
fn preempts_short<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    curr: R::Se,
    features: Features,
    short: bool,
    buddy: Option<R::Se>,
) -> bool {
    let cancel = short
        && (features.contains(Features::RUN_TO_PARITY_MIN_SLICE) || {
            let lag = Lag::new(rq, features);
            lag.eligible(pse.vruntime())
                && (vruntime_before(pse.deadline(), curr.deadline())
                    || !lag.eligible(curr.vruntime()))
        });
    pick_scan(rq, features, cancel, buddy) == Some(pse)
}

/// NEXT_BUDDY_EEVDF's wakeup decision (6.19's `check_preempt_wakeup_fair()`), by
/// definition, in O(n), on the state before it (the core's decision sets the buddy and may
/// cancel current's protection; this reads only): `(preempt, set_buddy)`.
///
/// - no current: preempt; the wakee is current: nothing;
/// - a wakee with a shorter slice (PREEMPT_SHORT): [`wakeup_preempt`]'s rule, the buddy
///   untouched;
/// - a new (WF_FORK) or delayed wakee: nothing;
/// - NEXT_BUDDY: the wakee becomes the buddy unless the buddy has an earlier deadline; a
///   WF_SYNC wakeup that made it the buddy preempts iff its deadline is earlier than
///   current's and the waker ran for the migration cost (a quarter with WF_RQ_SELECTED);
/// - else preempt iff the pick, testing the (new) buddy first, returns the wakee.
pub fn wakeup_preempt_buddy<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    wake: Wake,
    features: Features,
) -> (bool, bool) {
    let Some(curr) = rq.curr() else {
        return (true, false);
    };
    if curr == pse {
        return (false, false);
    }
    let mut next = buddy(rq, features);
    if features.contains(Features::PREEMPT_SHORT) && pse.slice() < curr.slice() {
        return (preempts_short(rq, pse, curr, features, true, next), false);
    }
    if wake.flags.contains(WakeFlags::FORK) || pse.sched_delayed() {
        return (false, false);
    }
    let mut set_buddy = false;
    if features.contains(Features::NEXT_BUDDY)
        && !rq
            .next_buddy()
            .is_some_and(|n| vruntime_before(n.deadline(), pse.deadline()))
    {
        set_buddy = true;
        // What the pick reads from now on: the new buddy, if it reads buddies.
        if !wake.wakee_idle && picks_buddy(features) {
            next = Some(pse);
        }
        if wake.flags.contains(WakeFlags::SYNC) {
            let threshold = if wake.flags.contains(WakeFlags::RQ_SELECTED) {
                wake.migration_cost_ns / 4
            } else {
                wake.migration_cost_ns
            };
            let resched =
                vruntime_before(pse.deadline(), curr.deadline()) && wake.waker_ran_ns >= threshold;
            return (resched, true);
        }
    }
    (pick_scan(rq, features, false, next) == Some(pse), set_buddy)
}

/// `cfs_rq_max_slice()` by definition: the largest slice among the queued entities (the
/// tree's and a runnable current's), 0 when none, by a scan that trusts no augmented
/// value. O(n).
pub fn max_slice<R: Runqueue>(rq: &R) -> u64 {
    Queued::new(rq).map(|se| se.slice()).max().unwrap_or(0)
}

/// The lag limit `update_entity_lag()` must clamp `se`'s lag to, `±` this:
/// `calc_delta_fair(span, w_i)` with the core's rule for the span
/// ([`lag_span_of`](super::math::lag_span_of): `max(r_max, r_i) + TICK_NSEC` under
/// LAG_CLAMP_MAX_SLICE, 6.12's `max(2 r_i, TICK_NSEC)` without), but `r_max` by
/// [`max_slice`]'s scan, not the augmented value. O(n).
pub fn lag_limit<R: Runqueue>(rq: &R, se: R::Se, cfg: Config) -> i64 {
    let span = lag_span_of(se.slice(), || max_slice(rq), cfg);
    i64::try_from(calc_delta_fair(span, se.load())).unwrap_or(i64::MAX)
}

// Host only: the kernel-module-check crate compiles this file as a module of another crate
// (`--cfg sched_eevdf_in_kernel`), where `crate::` and `std` are not the core's.
#[cfg(all(test, not(sched_eevdf_in_kernel)))]
mod tests {
    use super::*;
    use crate::user::{UserEntity, UserRunqueue};
    use crate::{pick_eevdf, Config, EnqueueFlags, LoadWeight};

    #[test]
    fn scan_agrees_with_the_tree_on_a_small_runqueue() {
        let ents: std::vec::Vec<UserEntity> = (0..6)
            .map(|i| UserEntity::new(LoadWeight::from_nice(i - 3)))
            .collect();
        let mut rq = UserRunqueue::with_zero_vruntime(u64::MAX - 5_000_000);
        let cfg = Config::DEFAULT;
        for e in &ents {
            crate::enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, cfg);
            for f in [
                Features::DEFAULT,
                Features::DEFAULT.with(Features::ELIGIBLE, false),
            ] {
                assert_eq!(pick(&rq, f), pick_eevdf(&rq, Config { features: f, ..cfg }));
            }
        }
        assert!(pick(&rq, cfg.features).is_some());
    }
}
