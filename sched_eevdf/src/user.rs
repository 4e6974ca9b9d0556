// SPDX-License-Identifier: GPL-2.0

//! A plain-Rust backing for the traits: [`UserEntity`], an intrusive augmented
//! red-black tree with a cached leftmost node ([`UserTimeline`]) and [`UserRunqueue`].
//!
//! The simulator, the tests and the benchmarks use it; Miri runs on it. The tree is a
//! port of lib/rbtree.c (`__rb_insert`, `____rb_erase_color`) and
//! include/linux/rbtree_augmented.h (`__rb_erase_augmented`, `RB_DECLARE_CALLBACKS`),
//! with the augmented value computed by the core's [`min_deadline_update`].
//!
//! Entities are borrowed for the runqueue's lifetime `'a`, so they cannot move or be
//! freed while linked; their fields are `Cell`s, so the tree's raw links and the
//! caller's shared references coexist soundly. Allocate them first (a `Vec`, an arena or
//! `Box::leak`), then build the runqueue:
//!
//! ```
//! use sched_eevdf::{user::{UserEntity, UserRunqueue}, Config, EnqueueFlags, LoadWeight, Pick};
//! use sched_eevdf::{enqueue_entity, schedule, update_curr, check_invariants};
//! let cfg = Config::DEFAULT;
//! let tasks = [
//!     UserEntity::new(LoadWeight::from_nice(0)),
//!     UserEntity::new(LoadWeight::from_nice(5)),
//! ];
//! let mut rq = UserRunqueue::new();
//! for t in &tasks {
//!     enqueue_entity(&mut rq, t.se(), EnqueueFlags::INITIAL, cfg);
//! }
//! let Pick::Run(first) = schedule(&mut rq, cfg) else { panic!() };
//! update_curr(&mut rq, 1_000_000, cfg); // it ran 1 ms
//! check_invariants(&rq).unwrap();
//! # let _ = first;
//! ```

use core::cell::Cell;
use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::load::LoadWeight;
use super::tree::{augment_absorb, entity_less, min_deadline_update, Entity, Runqueue, Timeline};

/// The tree links embedded in a [`UserEntity`] (`struct rb_node`).
#[derive(Default)]
struct RbLinks {
    parent: Cell<Option<NonNull<UserEntity>>>,
    left: Cell<Option<NonNull<UserEntity>>>,
    right: Cell<Option<NonNull<UserEntity>>>,
    red: Cell<bool>,
    /// Id of the [`UserTimeline`] this node is linked into, 0 when unlinked.
    owner: Cell<usize>,
}

/// An entity's weight, nice 0 by default. A plain value, as the kernel's `se->load`: read
/// without a branch (an `Option` defaulting to nice 0 cost the pick a test and, for the
/// call that built the default, saved registers on the host).
#[derive(Clone, Copy)]
struct UserWeight(LoadWeight);

impl Default for UserWeight {
    fn default() -> Self {
        UserWeight(LoadWeight::from_nice(0))
    }
}

/// A userspace scheduling entity (`struct sched_entity`, EEVDF fields only).
///
/// Use it through its handle [`UserSe`] (`entity.se()`), which implements [`Entity`].
#[derive(Default)]
pub struct UserEntity {
    vruntime: Cell<u64>,
    deadline: Cell<u64>,
    slice: Cell<u64>,
    custom_slice: Cell<bool>,
    vlag: Cell<i64>,
    vprot: Cell<u64>,
    load: Cell<UserWeight>,
    on_rq: Cell<bool>,
    sched_delayed: Cell<bool>,
    rel_deadline: Cell<bool>,
    min_deadline: Cell<u64>,
    min_slice: Cell<u64>,
    max_slice: Cell<u64>,
    links: RbLinks,
}

impl UserEntity {
    /// A new, unqueued entity with weight `load`, zero vruntime, lag and slice (the first
    /// placement sets the base slice).
    pub fn new(load: LoadWeight) -> UserEntity {
        let e = UserEntity::default();
        e.load.set(UserWeight(load));
        e
    }

    /// The entity's handle.
    pub fn se(&self) -> UserSe<'_> {
        UserSe(self)
    }
}

impl fmt::Debug for UserEntity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserEntity")
            .field("vruntime", &self.vruntime.get())
            .field("deadline", &self.deadline.get())
            .field("slice", &self.slice.get())
            .field("vlag", &self.vlag.get())
            .field("vprot", &self.vprot.get())
            .field("load", &self.se().load())
            .field("on_rq", &self.on_rq.get())
            .field("sched_delayed", &self.sched_delayed.get())
            .finish()
    }
}

/// Handle to a [`UserEntity`]: a shared reference compared by address.
#[derive(Clone, Copy)]
pub struct UserSe<'a>(&'a UserEntity);

impl<'a> UserSe<'a> {
    /// The handle of `e`.
    pub fn new(e: &'a UserEntity) -> Self {
        UserSe(e)
    }

    /// The entity.
    pub fn get(self) -> &'a UserEntity {
        self.0
    }

    fn ptr(self) -> NonNull<UserEntity> {
        NonNull::from(self.0)
    }
}

impl PartialEq for UserSe<'_> {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.0, other.0)
    }
}

impl Eq for UserSe<'_> {}

impl fmt::Debug for UserSe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserSe({:p})", self.0)
    }
}

macro_rules! cell_accessors {
    ($($get:ident / $set:ident : $t:ty;)*) => {
        $(
            #[inline]
            fn $get(self) -> $t { self.0.$get.get() }
            #[inline]
            fn $set(self, v: $t) { self.0.$get.set(v) }
        )*
    };
}

impl Entity for UserSe<'_> {
    cell_accessors! {
        vruntime / set_vruntime: u64;
        deadline / set_deadline: u64;
        slice / set_slice: u64;
        custom_slice / set_custom_slice: bool;
        vlag / set_vlag: i64;
        vprot / set_vprot: u64;
        on_rq / set_on_rq: bool;
        sched_delayed / set_sched_delayed: bool;
        rel_deadline / set_rel_deadline: bool;
        min_deadline / set_min_deadline: u64;
        min_slice / set_min_slice: u64;
        max_slice / set_max_slice: u64;
    }

    #[inline]
    fn load(self) -> LoadWeight {
        self.0.load.get().0
    }

    #[inline]
    fn set_load(self, lw: LoadWeight) {
        self.0.load.set(UserWeight(lw))
    }
}

static NEXT_TREE_ID: AtomicUsize = AtomicUsize::new(1);

mod timeline;

pub use timeline::UserTimeline;

/// A userspace fair runqueue over [`UserEntity`].
#[derive(Default)]
pub struct UserRunqueue<'a> {
    tree: UserTimeline<'a>,
    zero_vruntime: u64,
    avg_vruntime: i64,
    avg_load: u64,
    sum_slice: u64,
    nr_queued: u32,
    curr: Option<UserSe<'a>>,
    next: Option<UserSe<'a>>,
    slice_sums_stale: bool,
    earliest: Option<UserSe<'a>>,
}

impl<'a> UserRunqueue<'a> {
    /// An empty runqueue with `zero_vruntime` 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty runqueue whose virtual time starts at `v0` (to test the wrap, say).
    pub fn with_zero_vruntime(v0: u64) -> Self {
        UserRunqueue {
            zero_vruntime: v0,
            ..Self::default()
        }
    }
}

impl<'a> Timeline for UserRunqueue<'a> {
    type Se = UserSe<'a>;
    fn root(&self) -> Option<UserSe<'a>> {
        self.tree.root()
    }
    fn first(&self) -> Option<UserSe<'a>> {
        self.tree.first()
    }
    fn left(&self, se: UserSe<'a>) -> Option<UserSe<'a>> {
        self.tree.left(se)
    }
    fn right(&self, se: UserSe<'a>) -> Option<UserSe<'a>> {
        self.tree.right(se)
    }
    fn parent(&self, se: UserSe<'a>) -> Option<UserSe<'a>> {
        self.tree.parent(se)
    }
    fn is_red(&self, se: UserSe<'a>) -> bool {
        self.tree.is_red(se)
    }
    fn insert(
        &mut self,
        se: UserSe<'a>,
        keep_max_slice: bool,
        earliest: impl FnOnce(&Self) -> bool,
    ) -> bool {
        if self.tree.is_linked(se) {
            return false;
        }
        if earliest(self) {
            self.earliest = Some(se);
        }
        self.tree.insert(se, keep_max_slice, |_| false)
    }
    fn erase(&mut self, se: UserSe<'a>, keep_max_slice: bool) {
        self.tree.erase(se, keep_max_slice)
    }
}

impl<'a> Runqueue for UserRunqueue<'a> {
    fn zero_vruntime(&self) -> u64 {
        self.zero_vruntime
    }
    fn set_zero_vruntime(&mut self, v: u64) {
        self.zero_vruntime = v
    }
    fn avg_vruntime(&self) -> i64 {
        self.avg_vruntime
    }
    fn set_avg_vruntime(&mut self, s: i64) {
        self.avg_vruntime = s
    }
    fn avg_load(&self) -> u64 {
        self.avg_load
    }
    fn set_avg_load(&mut self, w: u64) {
        self.avg_load = w
    }
    fn sum_slice(&self) -> u64 {
        self.sum_slice
    }
    fn set_sum_slice(&mut self, r: u64) {
        self.sum_slice = r
    }
    fn nr_queued(&self) -> u32 {
        self.nr_queued
    }
    fn set_nr_queued(&mut self, n: u32) {
        self.nr_queued = n
    }
    fn slice_sums_stale(&self) -> bool {
        self.slice_sums_stale
    }
    fn set_slice_sums_stale(&mut self, stale: bool) {
        self.slice_sums_stale = stale
    }
    fn curr(&self) -> Option<UserSe<'a>> {
        self.curr
    }
    fn set_curr(&mut self, se: Option<UserSe<'a>>) {
        self.curr = se
    }
    fn next_buddy(&self) -> Option<UserSe<'a>> {
        self.next
    }
    fn set_next_buddy(&mut self, se: Option<UserSe<'a>>) {
        self.next = se
    }
    fn earliest(&self) -> Option<UserSe<'a>> {
        self.earliest
    }
    fn set_earliest(&mut self, se: Option<UserSe<'a>>) {
        self.earliest = se
    }
}

/// Test-only mutants of the tree's callbacks: upstream's augmented-tree bugs put back, for
/// the tests that prove the invariant checker catches them. Per thread, so that the tests
/// running in parallel do not see each other's.
#[cfg(all(test, not(sched_eevdf_in_kernel)))]
mod mutant {
    use core::cell::Cell;

    /// What [`UserTimeline::copy`](super::UserTimeline) copies.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum CopyMutant {
        /// All three augmented values: the tree as shipped.
        Correct,
        /// `min_deadline` only: 6.12's `RB_DECLARE_CALLBACKS(..., min_vruntime, ...)`,
        /// whose copy and rotate carry one field (upstream's 51b0e68cfa0a fixed it).
        MinDeadlineOnly,
        /// `min_deadline` and `min_slice` but not `max_slice`: the third value forgotten.
        NoMaxSlice,
    }

    std::thread_local! {
        pub(super) static COPY: Cell<CopyMutant> = const { Cell::new(CopyMutant::Correct) };
        /// The insertion's walk up stops at the first ancestor whose `min_deadline` did not
        /// change, though its slice values did: a propagation that watched one value.
        pub(super) static ABSORB_DEADLINE_ONLY: Cell<bool> = const { Cell::new(false) };
    }
}

#[cfg(all(test, not(sched_eevdf_in_kernel)))]
mod tests {
    use super::mutant::{CopyMutant, ABSORB_DEADLINE_ONLY, COPY};
    use super::*;
    use crate::check::{check_invariants, InvariantError};
    use crate::features::Features;
    use crate::ops::{__dequeue_entity, __enqueue_entity, set_queued_slice};
    use crate::tree::{cfs_rq_max_slice, cfs_rq_min_slice};
    use std::vec::Vec;

    /// LAG_CLAMP_MAX_SLICE on: every update keeps `max_slice` (the mutants below break it).
    const KEEP: Features = Features::DEFAULT.with(Features::LAG_CLAMP_MAX_SLICE, true);

    fn queue<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>) {
        se.set_on_rq(true);
        __enqueue_entity(rq, se, KEEP);
        rq.set_nr_queued(rq.nr_queued().wrapping_add(1));
    }

    fn unqueue<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>) {
        __dequeue_entity(rq, se, KEEP);
        se.set_on_rq(false);
        rq.set_nr_queued(rq.nr_queued().wrapping_sub(1));
    }

    /// The check after a mutation: the invariants, and the root's slice values against a
    /// scan of the entities (what `cfs_rq_{min,max}_slice` must return).
    fn check(rq: &UserRunqueue<'_>, ents: &[UserEntity]) -> Result<(), InvariantError> {
        check_invariants(rq)?;
        let queued = || ents.iter().filter(|e| e.on_rq.get()).map(|e| e.slice.get());
        assert_eq!(cfs_rq_max_slice(rq), queued().max().unwrap_or(0));
        assert_eq!(cfs_rq_min_slice(rq), queued().min().unwrap_or(u64::MAX));
        Ok(())
    }

    /// A rotation-heavy sequence with distinct slices, under the copy `mutant`: ascending
    /// then descending insertions (rotations at every level), erasures of the root (an
    /// inner node: its successor takes its place through `copy`), slice changes of queued
    /// entities. Returns the first invariant the checker found broken.
    fn rotations(mutant: CopyMutant) -> Result<(), InvariantError> {
        COPY.with(|c| c.set(mutant));
        let n = if cfg!(miri) { 24 } else { 96 };
        let ents: Vec<UserEntity> = (0..n)
            .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
            .collect();
        let result = (|| {
            for descending in [false, true] {
                let mut rq = UserRunqueue::new();
                for (k, e) in ents.iter().enumerate() {
                    let key = if descending { n - k } else { k } as u64;
                    let se = e.se();
                    se.set_vruntime(key * 1000);
                    se.set_deadline(key * 1000 + 500);
                    // Distinct, in no order of the key: 100 µs to about 10 ms.
                    se.set_slice(100_000 + (key * 7919 % 97) * 100_000);
                    queue(&mut rq, se);
                    check(&rq, &ents)?;
                }
                for step in 0..n / 2 {
                    let root = rq.root().ok_or(InvariantError::TooManyNodes)?;
                    if step % 3 == 2 {
                        let se = rq.first().unwrap_or(root);
                        set_queued_slice(
                            &mut rq,
                            se,
                            100_000 + (step as u64 * 31 % 89) * 110_000,
                            KEEP,
                        );
                    } else {
                        unqueue(&mut rq, root);
                    }
                    check(&rq, &ents)?;
                }
                for e in &ents {
                    if e.on_rq.get() {
                        unqueue(&mut rq, e.se());
                        check(&rq, &ents)?;
                    }
                }
            }
            Ok(())
        })();
        COPY.with(|c| c.set(CopyMutant::Correct));
        result
    }

    #[test]
    fn copy_keeps_all_three_augmented_values() {
        assert_eq!(rotations(CopyMutant::Correct), Ok(()));
    }

    /// 6.12's one-field copy: the checker reports a stale slice value (min_slice is checked
    /// before max_slice at each node).
    #[test]
    fn checker_catches_a_one_field_copy() {
        let e = rotations(CopyMutant::MinDeadlineOnly);
        assert!(matches!(e, Err(InvariantError::MinSlice { .. })), "{e:?}");
    }

    /// A copy that forgets the third value: the checker reports max_slice.
    #[test]
    fn checker_catches_a_copy_without_max_slice() {
        let e = rotations(CopyMutant::NoMaxSlice);
        assert!(matches!(e, Err(InvariantError::MaxSlice { .. })), "{e:?}");
    }

    /// An insertion whose walk up watches the deadline only: ascending keys bring later
    /// deadlines, so it stops at the new leaf's parent while the leaf's slice is a new
    /// minimum or maximum above; the checker reports a stale slice value.
    #[test]
    fn checker_catches_an_insertion_that_watches_one_value() {
        ABSORB_DEADLINE_ONLY.with(|c| c.set(true));
        let e = rotations(CopyMutant::Correct);
        ABSORB_DEADLINE_ONLY.with(|c| c.set(false));
        assert!(
            matches!(
                e,
                Err(InvariantError::MinSlice { .. } | InvariantError::MaxSlice { .. })
            ),
            "{e:?}"
        );
    }
}
