// SPDX-License-Identifier: GPL-2.0

//! The interfaces the core needs: an entity, the timeline (tree) and the runqueue.
//!
//! They are traits so that the core is generic and monomorphizes to plain loads and
//! stores: the kernel glue implements them over `struct sched_entity`, `struct cfs_rq`
//! and lib/rbtree.c's augmented cached rbtree; [`super::user`] implements them in plain
//! Rust for the simulator, the tests and the benchmarks.
//!
//! The traits are safe to implement: the core never relies on them for memory safety
//! (it holds no pointers of its own), so a wrong implementation can only give wrong
//! scheduling decisions, which [`super::check_invariants`] reports. An implementation
//! backed by raw pointers (the kernel's) keeps its `unsafe` inside its own methods,
//! justified by holding the runqueue lock.

use super::features::Features;
use super::load::LoadWeight;
use super::vtime::vruntime_min;

/// A handle to a scheduling entity (`struct sched_entity`).
///
/// The handle is `Copy` (a reference or a pointer) and its setters take `self`: the
/// entity's fields are written through the handle (interior mutability), because the
/// timeline holds other handles to the same entity at the same time. Handles compare
/// equal when they designate the same entity.
pub trait Entity: Copy + PartialEq {
    /// Virtual runtime `v_i` (ns of virtual time, wrapping).
    fn vruntime(self) -> u64;
    /// Sets the virtual runtime.
    fn set_vruntime(self, v: u64);
    /// Virtual deadline `vd_i = ve_i + r_i / w_i`.
    fn deadline(self) -> u64;
    /// Sets the virtual deadline.
    fn set_deadline(self, d: u64);
    /// Request size `r_i` (the slice), in ns of real time.
    fn slice(self) -> u64;
    /// Sets the slice.
    fn set_slice(self, s: u64);
    /// The slice was set through `sched_attr::sched_runtime` (not the base slice).
    fn custom_slice(self) -> bool;
    /// Sets the custom-slice flag.
    fn set_custom_slice(self, c: bool);
    /// Virtual lag `V - v_i` saved at dequeue.
    fn vlag(self) -> i64;
    /// Sets the virtual lag.
    fn set_vlag(self, l: i64);
    /// Slice protection while current: the virtual time until which RUN_TO_PARITY keeps
    /// it (RUN_TO_PARITY_MIN_SLICE), or a copy of the deadline stashed at the pick (6.12's
    /// test, `vprot == deadline`; 6.12 stashes it in `vlag`). See
    /// [`protect_slice`](super::protect_slice).
    fn vprot(self) -> u64;
    /// Sets the slice protection.
    fn set_vprot(self, v: u64);
    /// Load weight.
    fn load(self) -> LoadWeight;
    /// Sets the load weight (the core does this in `reweight_entity()` only).
    fn set_load(self, lw: LoadWeight);
    /// Queued (in the tree, or current and runnable).
    fn on_rq(self) -> bool;
    /// Sets `on_rq`.
    fn set_on_rq(self, on: bool);
    /// Sleeping but kept queued by DELAY_DEQUEUE.
    fn sched_delayed(self) -> bool;
    /// Sets `sched_delayed`.
    fn set_sched_delayed(self, d: bool);
    /// `deadline` holds `deadline - vruntime` (PLACE_REL_DEADLINE across a dequeue).
    fn rel_deadline(self) -> bool;
    /// Sets `rel_deadline`.
    fn set_rel_deadline(self, r: bool);
    /// Augmented value: the earliest deadline in this node's subtree.
    fn min_deadline(self) -> u64;
    /// Sets the subtree's earliest deadline (tree callbacks only).
    fn set_min_deadline(self, d: u64);
    /// Augmented value: the smallest slice in this node's subtree.
    fn min_slice(self) -> u64;
    /// Sets the subtree's smallest slice (tree callbacks only).
    fn set_min_slice(self, s: u64);
    /// Augmented value: the largest slice in this node's subtree (for
    /// LAG_CLAMP_MAX_SLICE's lag limit, [`cfs_rq_max_slice`]). Kept only while a reader's
    /// feature is on ([`keeps_slice_sums`]); the runqueue says when it may be stale
    /// ([`Runqueue::slice_sums_stale`]).
    fn max_slice(self) -> u64;
    /// Sets the subtree's largest slice (tree callbacks only).
    fn set_max_slice(self, s: u64);
}

/// The timeline: a red-black tree of the queued entities except the current one,
/// ordered by vruntime and augmented by [`min_deadline_update`].
///
/// An implementation must:
/// - order nodes by [`entity_less`]: a node with an equal vruntime is inserted to the
///   right of the existing ones (FIFO among equal keys);
/// - keep the augmented values (`min_deadline`, `min_slice`, and with `keep_max_slice`
///   `max_slice`) of every node
///   equal to what [`min_deadline_update`] computes from the node and its children, by
///   calling it as the propagate / copy / rotate callbacks of `RB_DECLARE_CALLBACKS` do
///   (a newly inserted node's values are initialised by calling it with no children,
///   before it is linked: upstream's "Fix augmented max_slice"), with a copy callback
///   (a rotation's, and the erase's when a successor takes a node's place) that copies
///   all three values (`RB_DECLARE_CALLBACKS` copies one field: upstream's bug
///   51b0e68cfa0a, whose rotated-up node kept stale slice values; the test mutants of
///   [`super::user`] put that copy back to show that the checker reports it); the walk
///   up of an insertion may widen each ancestor by the new leaf instead
///   ([`augment_absorb`]);
/// - cache the leftmost node.
///
/// [`super::check_invariants`] verifies all of this. Navigation and colour accessors
/// exist for the pick and for the checker.
pub trait Timeline {
    /// The entity handle type.
    type Se: Entity;
    /// The root node.
    fn root(&self) -> Option<Self::Se>;
    /// The cached leftmost node (`rb_first_cached()`): smallest vruntime.
    fn first(&self) -> Option<Self::Se>;
    /// Left child.
    fn left(&self, se: Self::Se) -> Option<Self::Se>;
    /// Right child.
    fn right(&self, se: Self::Se) -> Option<Self::Se>;
    /// Parent.
    fn parent(&self, se: Self::Se) -> Option<Self::Se>;
    /// Whether the node is red (checker only).
    fn is_red(&self, se: Self::Se) -> bool;

    /// `rb_next()`: the entity after `se` in timeline order.
    fn rb_next(&self, se: Self::Se) -> Option<Self::Se> {
        if let Some(mut r) = self.right(se) {
            while let Some(l) = self.left(r) {
                r = l;
            }
            return Some(r);
        }
        let mut n = se;
        while let Some(p) = self.parent(n) {
            if self.left(p) == Some(n) {
                return Some(p);
            }
            n = p;
        }
        None
    }

    /// `rb_add_augmented_cached()`. Inserting an entity that is already in a tree must
    /// leave both trees unchanged, name no holder, and return false; true when `se` was
    /// inserted. `keep_max_slice`: whether the callbacks keep `max_slice` too
    /// ([`min_deadline_update`]'s `MAX`); the caller
    /// ([`__enqueue_entity`](super::__enqueue_entity)) records when they did not.
    /// `earliest`: asked, once the insertion is known to go ahead and before `se` is
    /// linked (of the timeline as it is without `se`), whether `se` becomes the holder of
    /// the earliest deadline ([`Runqueue::earliest`], which the timeline of a runqueue
    /// then names; a timeline alone keeps no holder and does not ask). Asked there so that
    /// the rebalancing can be the insertion's last step (in the kernel a tail call, with
    /// nothing kept across it). It gets the timeline shared: it cannot change it between
    /// the check and the linking.
    fn insert(
        &mut self,
        se: Self::Se,
        keep_max_slice: bool,
        earliest: impl FnOnce(&Self) -> bool,
    ) -> bool;
    /// `rb_erase_augmented_cached()`. Erasing an entity that is not in this tree must
    /// leave the tree unchanged. `keep_max_slice` as for [`Timeline::insert`].
    fn erase(&mut self, se: Self::Se, keep_max_slice: bool);
}

/// A fair runqueue (`struct cfs_rq`): the EEVDF accounting plus its timeline.
///
/// The current entity is accounted in the sums only at query time (as fair.c does): it
/// is kept out of the tree and out of `avg_vruntime`, `avg_load` and `sum_slice`.
pub trait Runqueue: Timeline {
    /// `v0`: the zero point of the keys (6.12.117's `zero_vruntime`).
    fn zero_vruntime(&self) -> u64;
    /// Sets `zero_vruntime`.
    fn set_zero_vruntime(&mut self, v: u64);
    /// `Σ (v_i - v0) * w_i` over the tree (`cfs_rq->avg_vruntime`), wrapping.
    fn avg_vruntime(&self) -> i64;
    /// Sets `avg_vruntime`.
    fn set_avg_vruntime(&mut self, s: i64);
    /// `Σ w_i` over the tree, scaled-down weights (`cfs_rq->avg_load`).
    fn avg_load(&self) -> u64;
    /// Sets `avg_load`.
    fn set_avg_load(&mut self, w: u64);
    /// `Σ r_i` over the tree: slices in ns (for BIAS_ELIGIBLE, [`sum_slice`]). Kept, like
    /// `max_slice`, only while a reader's feature is on ([`keeps_slice_sums`]).
    fn sum_slice(&self) -> u64;
    /// Sets `sum_slice`.
    fn set_sum_slice(&mut self, r: u64);
    /// Queued entities, the current one included if on_rq, delayed ones included
    /// (6.12's `nr_running`).
    fn nr_queued(&self) -> u32;
    /// Sets `nr_queued`.
    fn set_nr_queued(&mut self, n: u32);
    /// Whether the timeline's `max_slice` values and `sum_slice` may be stale: a tree
    /// update ran without keeping them ([`keeps_slice_sums`] false) since they were last
    /// rebuilt ([`rebuild_slice_sums`]). The other augmented values and sums are always
    /// kept.
    fn slice_sums_stale(&self) -> bool;
    /// Sets the flag: `true` after an update that did not keep them, `false` once
    /// rebuilt.
    fn set_slice_sums_stale(&mut self, stale: bool);
    /// The running entity (`cfs_rq->curr`), kept out of the tree.
    fn curr(&self) -> Option<Self::Se>;
    /// Sets the running entity.
    fn set_curr(&mut self, se: Option<Self::Se>);
    /// The next buddy (`cfs_rq->next`): an entity of this runqueue (current or in the
    /// timeline) that was marked to be picked next while it is eligible (a wakee with
    /// NEXT_BUDDY, `yield_to()`'s target, a group whose task just slept), or `None`. The
    /// core reads it with NEXT_BUDDY_EEVDF only.
    fn next_buddy(&self) -> Option<Self::Se>;
    /// Sets the next buddy: one level of fair.c's `set_next_buddy()`, or a
    /// `clear_buddies()`.
    fn set_next_buddy(&mut self, se: Option<Self::Se>);
    /// The holder of the timeline's earliest deadline, where it is known: the first entity
    /// in tree order whose deadline is the root's `min_deadline`, or `None` (an empty
    /// timeline, or a holder not known since the last one left). Kept by
    /// [`__enqueue_entity`](super::__enqueue_entity) and
    /// [`__dequeue_entity`](super::__dequeue_entity); read by the pick, which returns an
    /// eligible holder in O(1), as 6.12 returns its eligible leftmost.
    fn earliest(&self) -> Option<Self::Se>;
    /// Sets [`Runqueue::earliest`].
    fn set_earliest(&mut self, se: Option<Self::Se>);
}

/// `__entity_less()`: the timeline's order, `(s64)(a->vruntime - b->vruntime) < 0`.
///
/// 6.12 sorts by deadline and augments with the subtree's minimum vruntime; we sort by
/// vruntime and augment with the minimum deadline (see the crate docs for why).
#[inline]
pub fn entity_less<S: Entity>(a: S, b: S) -> bool {
    super::vtime::vruntime_before(a.vruntime(), b.vruntime())
}

/// The augmented-value computation (`RBCOMPUTE` of `RB_DECLARE_CALLBACKS`):
///
/// ```text
///   se->min_deadline = min(se->deadline, left->min_deadline, right->min_deadline)
///   se->min_slice    = min(se->slice,    left->min_slice,    right->min_slice)
///   se->max_slice    = max(se->slice,    left->max_slice,    right->max_slice)   (MAX)
/// ```
///
/// Deadlines are compared wrap-safe, slices as plain ns. Returns `true` when none of the
/// values it keeps changed, which is when the propagate callback stops walking up: a walk
/// that stopped because one value was unchanged would leave the others stale above.
///
/// `MAX`: whether to keep `max_slice`, which only LAG_CLAMP_MAX_SLICE reads
/// ([`keeps_slice_sums`]). Without it the third value costs every recomputed node a load,
/// a comparison and a store: 61 instructions a switch among 80 yielding tasks in the
/// kernel (Documentation/pick-cost.md), where stock 6.12 keeps two values.
///
/// This runs at every level of every propagation and rotation, so it is straight-line
/// code: no iterator adaptors (at the kernel's opt-level they stay out-of-line calls
/// into `core`). The userspace tree ([`super::user`], a port of lib/rbtree.c) and the
/// kernel glue (lib/rbtree.c's `rb_add_augmented_cached()` / `rb_erase_augmented_cached()`)
/// both call it as the propagate, copy and rotate callbacks.
#[inline(always)]
pub fn min_deadline_update<S: Entity, const MAX: bool>(
    se: S,
    left: Option<S>,
    right: Option<S>,
) -> bool {
    let old_deadline = se.min_deadline();
    let old_min = se.min_slice();
    let mut d = se.deadline();
    let mut min = se.slice();
    if let Some(c) = right {
        d = vruntime_min(d, c.min_deadline());
        min = min.min(c.min_slice());
    }
    if let Some(c) = left {
        d = vruntime_min(d, c.min_deadline());
        min = min.min(c.min_slice());
    }
    se.set_min_deadline(d);
    se.set_min_slice(min);
    let mut unchanged = d == old_deadline && min == old_min;
    if MAX {
        let old_max = se.max_slice();
        let mut max = se.slice();
        if let Some(c) = right {
            max = max.max(c.max_slice());
        }
        if let Some(c) = left {
            max = max.max(c.max_slice());
        }
        se.set_max_slice(max);
        unchanged &= max == old_max;
    }
    unchanged
}

/// Whether the timeline's updates keep the slice aggregates that only some features
/// read: `max_slice` (LAG_CLAMP_MAX_SLICE's lag limit) and `sum_slice` (BIAS_ELIGIBLE's
/// threshold). With both features off (the default) an insertion and an erase skip them:
/// two instructions each for `sum_slice` in the kernel, and `max_slice`'s load, comparison
/// and store at every recomputed node. Either feature keeps both, so that one flag
/// ([`Runqueue::slice_sums_stale`]) says when they are stale.
#[inline(always)]
pub fn keeps_slice_sums(features: Features) -> bool {
    features.intersects(SLICE_SUM_READERS)
}

/// The features that read `max_slice` or `sum_slice` ([`keeps_slice_sums`]).
pub const SLICE_SUM_READERS: Features =
    Features::LAG_CLAMP_MAX_SLICE.with(Features::BIAS_ELIGIBLE, true);

/// Makes `max_slice` right again in every node of the timeline, and `sum_slice` the sum of
/// its slices, once a feature that reads them is on after updates that did not keep them
/// ([`Runqueue::slice_sums_stale`]): each node from its children, children first (a
/// post-order walk over the parent links, no stack), then clears the flag. O(n), once per
/// runqueue and toggle; the other augmented values and sums are untouched, since they
/// were always kept.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cold]
pub fn rebuild_slice_sums<R: Runqueue>(rq: &mut R) {
    let mut sum = 0u64;
    if let Some(root) = rq.root() {
        let mut n = first_postorder(rq, root);
        loop {
            sum = sum.wrapping_add(n.slice());
            let mut max = n.slice();
            if let Some(c) = rq.left(n) {
                max = max.max(c.max_slice());
            }
            if let Some(c) = rq.right(n) {
                max = max.max(c.max_slice());
            }
            n.set_max_slice(max);
            // Post-order: after a left child comes its parent's right subtree, else the
            // parent itself.
            let Some(p) = rq.parent(n) else { break };
            n = match rq.right(p) {
                Some(r) if rq.left(p) == Some(n) => first_postorder(rq, r),
                _ => p,
            };
        }
    }
    rq.set_sum_slice(sum);
    rq.set_slice_sums_stale(false);
}

/// The first node of `n`'s subtree in post-order: down, left where it can, else right.
#[inline(always)]
fn first_postorder<R: Timeline>(rq: &R, mut n: R::Se) -> R::Se {
    loop {
        n = match (rq.left(n), rq.right(n)) {
            (Some(l), _) => l,
            (None, Some(r)) => r,
            (None, None) => return n,
        };
    }
}

/// The insertion's propagation: `anc` gains a descendant, a new leaf with `deadline` and
/// `slice`. Each augmented value is a minimum (or maximum) over the subtree, and min and
/// max are associative, so the new value needs only the old one and the leaf's:
///
/// ```text
///   anc->min_deadline' = min(anc->min_deadline, leaf->deadline)
///   anc->min_slice'    = min(anc->min_slice,    leaf->slice)
///   anc->max_slice'    = max(anc->max_slice,    leaf->slice)
/// ```
///
/// which is what [`min_deadline_update`] gives `anc` once the leaf is linked below it, when
/// its values were right before (`max_slice` only with `MAX`, as there). Returns `true`
/// when none of the values it keeps changed: then no
/// ancestor above changes either, since each one's values already cover `anc`'s subtree
/// (its minima are at most, its maximum at least, `anc`'s), so the walk up stops there.
///
/// `rb_add_augmented_cached()` recomputes every ancestor from its children instead
/// ("suboptimal", says its comment): two children's three values a level, where this
/// reads the ancestor's own values and compares them with two values held in registers.
/// With the third value (`max_slice`) the recomputation cost the kernel's ping-pong 25
/// instructions a switch; this costs fewer than 6.12's two-value recomputation did
/// (Documentation/kernel-integration.md, Performance).
#[inline(always)]
pub fn augment_absorb<S: Entity, const MAX: bool>(anc: S, deadline: u64, slice: u64) -> bool {
    let mut unchanged = true;
    if super::vtime::vruntime_before(deadline, anc.min_deadline()) {
        anc.set_min_deadline(deadline);
        unchanged = false;
    }
    if slice < anc.min_slice() {
        anc.set_min_slice(slice);
        unchanged = false;
    }
    if MAX && slice > anc.max_slice() {
        anc.set_max_slice(slice);
        unchanged = false;
    }
    unchanged
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

/// `cfs_rq_max_slice()` (upstream 7.0): the largest slice among the queued entities (the
/// tree root's augmented `max_slice` and current's), 0 when empty. LAG_CLAMP_MAX_SLICE's
/// lag limit ([`lag_span`](super::math::lag_span)).
///
/// While the timeline's `max_slice` may be stale ([`Runqueue::slice_sums_stale`]: the
/// feature was turned on and this runqueue's tree has not changed since), it scans the
/// tree instead, O(n), without writing: the next tree update rebuilds the values.
#[inline]
pub fn cfs_rq_max_slice<R: Runqueue>(rq: &R) -> u64 {
    let mut max_slice = 0;
    if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
        max_slice = c.slice();
    }
    if let Some(root) = rq.root() {
        max_slice = max_slice.max(if rq.slice_sums_stale() {
            scan_max_slice(rq)
        } else {
            root.max_slice()
        });
    }
    max_slice
}

/// The largest slice in the timeline, by walking it in order: [`cfs_rq_max_slice`] of a
/// runqueue whose `max_slice` values may be stale.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cold]
fn scan_max_slice<R: Runqueue>(rq: &R) -> u64 {
    let mut max = 0;
    let mut n = rq.first();
    while let Some(se) = n {
        max = max.max(se.slice());
        n = rq.rb_next(se);
    }
    max
}

/// `Σ r_i` over the timeline, BIAS_ELIGIBLE's threshold: [`Runqueue::sum_slice`], or,
/// while it may be stale ([`Runqueue::slice_sums_stale`]: the feature was turned on and
/// this runqueue's tree has not changed since), the sum of a walk of the tree, O(n),
/// without writing: the next tree update rebuilds it, as [`cfs_rq_max_slice`] does.
#[inline(always)]
pub fn sum_slice<R: Runqueue>(rq: &R) -> u64 {
    if rq.slice_sums_stale() {
        scan_sum_slice(rq)
    } else {
        rq.sum_slice()
    }
}

/// The sum of the timeline's slices, by walking it in order: [`sum_slice`] of a runqueue
/// whose `sum_slice` may be stale.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
#[cold]
fn scan_sum_slice<R: Runqueue>(rq: &R) -> u64 {
    let mut sum = 0u64;
    let mut n = rq.first();
    while let Some(se) = n {
        sum = sum.wrapping_add(se.slice());
        n = rq.rb_next(se);
    }
    sum
}
