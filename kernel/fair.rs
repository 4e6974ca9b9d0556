// SPDX-License-Identifier: GPL-2.0

//! The fair class's EEVDF core, in Rust: `struct sched_entity` and `struct cfs_rq`
//! (from bindgen, never hand-copied) implement the core's [`Entity`], [`Timeline`]
//! and [`Runqueue`], so the core's operations run on them; kernel/entry.rs calls them
//! for fair.c.
//!
//! # Safety argument
//!
//! A [`CfsRq`] reference and the [`Se`] handles made from it carry the lifetime `'rq` of
//! the proof that the runqueue lock is held (kernel/rq.rs: [`with_locked`] for an entry
//! point, whose caller holds it; [`RqGuard`] for a reader that takes it). The lock gives
//! exclusive access to the `cfs_rq`, its timeline and its entities for that lifetime,
//! which is what every access here relies on. Nothing here allocates, sleeps or panics
//! (the core is panic-free and uses wrapping arithmetic), so all of it is fine in atomic
//! context.
//!
//! [`with_locked`]: crate::rq::with_locked
//! [`RqGuard`]: crate::rq::RqGuard

use crate::rbtree_augmented::{self as rb, Augment, RbRootCached};
use crate::sched_eevdf::{
    self as eevdf, augment_absorb, min_deadline_update, Config, Context, Entity, Features,
    LagClamp, LoadWeight, Runqueue, Timeline,
};
use crate::stats::{self, Stat};
use core::{
    marker::PhantomData,
    ptr::{self, NonNull},
};
use kernel::{bindings, types::Opaque};

/// A handle to a `struct sched_entity` of a locked runqueue, for the lifetime `'rq` of the
/// proof of that lock.
///
/// `'rq` is invariant: it brands the handle with the [`CfsRq`] it came from. An entry point
/// gets its `&'rq mut CfsRq<'rq>` from [`with_locked`], whose closure is generic over
/// `'rq`, so no two calls share a brand, and a handle of one `cfs_rq` cannot be given to
/// another's timeline (several `cfs_rq`s of a runqueue share its lock, so the lock alone
/// would not tell them apart).
///
/// # Invariants
///
/// For all of `'rq`: the pointer is a valid `struct sched_entity`, of the `cfs_rq` it is
/// queued on (or about to be, or current of), and that `cfs_rq`'s runqueue lock is held,
/// so this CPU alone accesses the entity's scheduling fields.
///
/// [`with_locked`]: crate::rq::with_locked
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Se<'rq>(
    NonNull<bindings::sched_entity>,
    PhantomData<fn(&'rq ()) -> &'rq ()>,
);

impl<'rq> Se<'rq> {
    /// Wraps a pointer from C.
    ///
    /// # Safety
    ///
    /// - `se` is null or a valid `struct sched_entity`;
    /// - the lock of the runqueue it belongs to is held for all of `'rq`;
    /// - it is an entity of the one [`CfsRq`] whose brand `'rq` is (queued on it, about to
    ///   be, or its current): the brand is what keeps it from another's timeline.
    #[inline]
    pub unsafe fn from_raw(se: *mut bindings::sched_entity) -> Option<Se<'rq>> {
        // INVARIANT: the caller's obligations are the invariant's.
        NonNull::new(se).map(|p| Se(p, PhantomData))
    }

    /// The raw pointer.
    #[inline]
    pub fn as_ptr(self) -> *mut bindings::sched_entity {
        self.0.as_ptr()
    }

    /// The embedded `run_node`.
    #[inline]
    fn node(self) -> NonNull<bindings::rb_node> {
        // SAFETY: by the type invariant the entity is valid; this computes a
        // field address without reading.
        unsafe { NonNull::new_unchecked(&raw mut (*self.0.as_ptr()).run_node) }
    }

    /// Empties a new entity's node, as fork and `init_tg_cfs_entry()` do (patch 0011): for
    /// the KUnit suites' private entities, which no fork made.
    ///
    /// # Safety
    ///
    /// The entity is in no tree.
    #[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
    pub(crate) unsafe fn init_private(self) {
        // SAFETY: the entity is valid and its lock held (type invariant), and its node in
        // no tree (this function's `# Safety`).
        unsafe { rb::clear_node(self.node()) };
    }

    /// `rb_entry(node, struct sched_entity, run_node)`.
    ///
    /// # Safety
    ///
    /// `node` must be the `run_node` of a valid entity that the caller may access
    /// under the same lock as its other handles.
    #[inline]
    unsafe fn from_node(node: NonNull<bindings::rb_node>) -> Se<'rq> {
        let off = core::mem::offset_of!(bindings::sched_entity, run_node);
        // SAFETY: `node` is the `run_node` of a `sched_entity` (caller), at offset `off`
        // in it: the subtraction stays in that object and gives its (non-null) start.
        let se = unsafe { NonNull::new_unchecked(node.as_ptr().byte_sub(off).cast()) };
        // INVARIANT: the entity is valid and its lock held for `'rq` (caller).
        Se(se, PhantomData)
    }
}

/// Plain-load getters and plain-store setters of `sched_entity` fields.
macro_rules! se_fields {
    ($($get:ident / $set:ident : $field:ident as $t:ty),* $(,)?) => {
        $(
            #[inline]
            fn $get(self) -> $t {
                // SAFETY: the entity is valid and its runqueue lock held (type invariant):
                // no other CPU writes the field meanwhile.
                unsafe { (*self.0.as_ptr()).$field as $t }
            }
            #[inline]
            fn $set(self, v: $t) {
                // SAFETY: the entity is valid and its runqueue lock held (type invariant):
                // no other CPU reads or writes the field meanwhile.
                unsafe { (*self.0.as_ptr()).$field = v as _ };
            }
        )*
    };
}

/// Byte-sized flags (`unsigned char`) as `bool`.
macro_rules! se_flags {
    ($($get:ident / $set:ident : $field:ident),* $(,)?) => {
        $(
            #[inline]
            fn $get(self) -> bool {
                // SAFETY: the entity is valid and its runqueue lock held (type invariant):
                // no other CPU writes the flag meanwhile.
                unsafe { (*self.0.as_ptr()).$field != 0 }
            }
            #[inline]
            fn $set(self, v: bool) {
                // SAFETY: the entity is valid and its runqueue lock held (type invariant):
                // no other CPU reads or writes the flag meanwhile.
                unsafe { (*self.0.as_ptr()).$field = u8::from(v) };
            }
        )*
    };
}

impl Entity for Se<'_> {
    se_fields! {
        vruntime / set_vruntime: vruntime as u64,
        deadline / set_deadline: deadline as u64,
        slice / set_slice: slice as u64,
        vlag / set_vlag: vlag as i64,
        vprot / set_vprot: vprot as u64,
        min_deadline / set_min_deadline: min_deadline as u64,
        min_slice / set_min_slice: min_slice as u64,
        max_slice / set_max_slice: max_slice as u64,
    }
    se_flags! {
        custom_slice / set_custom_slice: custom_slice,
        on_rq / set_on_rq: on_rq,
        sched_delayed / set_sched_delayed: sched_delayed,
        rel_deadline / set_rel_deadline: rel_deadline,
    }

    #[inline]
    fn load(self) -> LoadWeight {
        // SAFETY: the entity is valid and its runqueue lock held (type invariant).
        let lw = unsafe { (*self.0.as_ptr()).load };
        LoadWeight {
            weight: lw.weight as u64,
            inv_weight: lw.inv_weight,
        }
    }

    #[inline]
    fn set_load(self, lw: LoadWeight) {
        // SAFETY: the entity is valid and its runqueue lock held (type invariant): no
        // other CPU reads or writes its weight meanwhile.
        unsafe {
            (*self.0.as_ptr()).load.weight = lw.weight as _;
            (*self.0.as_ptr()).load.inv_weight = lw.inv_weight;
        }
    }
}

/// The timeline's augmentation: the core's [`min_deadline_update`]. `MAX`: whether it keeps
/// `max_slice` too (under LAG_CLAMP_MAX_SLICE or BIAS_ELIGIBLE, the core's
/// `keeps_slice_sums()`); without, its augmented values are `min_deadline` and
/// `min_slice`, and the `cfs_rq` records that `max_slice` is stale (`slice_sums_stale`,
/// patches 0012 and 0015).
pub struct SeAugment<const MAX: bool>;

// SAFETY: `compute`, `copy`, `leaf` and `absorb` touch only the entity embedding the
// node(s) and, read-only, its children's; `compute` is the core's one compute function,
// which recomputes the augmented values (`min_deadline`, `min_slice`, with `MAX`
// `max_slice`), `copy` copies them, and `absorb` is the core's `augment_absorb()`, which
// widens them by the leaf's deadline and slice and reports whether any changed.
unsafe impl<const MAX: bool> Augment for SeAugment<MAX> {
    #[inline]
    unsafe fn compute(node: NonNull<bindings::rb_node>) -> bool {
        // SAFETY: `node` and its children are `run_node`s of entities of a timeline whose
        // lock the caller holds (`Augment::compute`'s contract), for this call.
        unsafe {
            let l = rb::left(node).map(|n| Se::from_node(n));
            let r = rb::right(node).map(|n| Se::from_node(n));
            min_deadline_update::<_, MAX>(Se::from_node(node), l, r)
        }
    }

    #[inline]
    unsafe fn copy(old: NonNull<bindings::rb_node>, new: NonNull<bindings::rb_node>) {
        // SAFETY: `old` and `new` are `run_node`s of entities of a timeline whose lock the
        // caller holds (`Augment::copy`'s contract), for this call.
        let (o, n) = unsafe { (Se::from_node(old), Se::from_node(new)) };
        n.set_min_deadline(o.min_deadline());
        n.set_min_slice(o.min_slice());
        if MAX {
            n.set_max_slice(o.max_slice());
        }
    }

    /// The new leaf's deadline and slice.
    type Leaf = (u64, u64);

    #[inline(always)]
    unsafe fn leaf(node: NonNull<bindings::rb_node>) -> (u64, u64) {
        // SAFETY: `node` is the `run_node` of a live entity of a timeline whose lock the
        // caller holds (`Augment::leaf`'s contract), for this call.
        let se = unsafe { Se::from_node(node) };
        (se.deadline(), se.slice())
    }

    #[inline(always)]
    unsafe fn absorb(node: NonNull<bindings::rb_node>, (deadline, slice): (u64, u64)) -> bool {
        // SAFETY: `node` is a `run_node` of an entity of a timeline whose lock the caller
        // holds (`Augment::absorb`'s contract), for this call.
        augment_absorb::<_, MAX>(unsafe { Se::from_node(node) }, deadline, slice)
    }
}

/// A `struct cfs_rq` whose runqueue lock is held for `'rq`, seen through a reference
/// `&'rq CfsRq<'rq>`: the reference is the C pointer itself, so the entry points pass it
/// on in a register (a stack copy of a handle would force a frame on every entry point
/// that calls out, and rule out tail calls). The entity handles it gives out are
/// [`Se<'rq>`](Se): they end with the proof of the lock.
///
/// Only kernel/rq.rs makes these references ([`with_locked`], [`RqGuard::root`]), and
/// kernel/snapshot.rs for the groups of a runqueue whose guard it holds.
///
/// # Invariants
///
/// For all of `'rq`: the `cfs_rq` is valid and its runqueue lock is held; its timeline's
/// nodes are the `run_node`s of its queued entities (except current) and are augmented by
/// [`SeAugment`] (its `max_slice` right while `slice_sums_stale` is clear, patches 0012 and
/// 0015); the `run_node` of every entity that is in no timeline is empty
/// (`RB_EMPTY_NODE()`) and has no children (patch 0011 clears it at fork and at a group
/// entity's creation, [`CfsRq::try_erase`] after each unlink), so an entity of this
/// `cfs_rq` whose node is not empty is in its timeline, and the links of one in no
/// timeline lead nowhere. The fields are written through raw pointers
/// ([`Opaque`]), under the lock, as C does.
///
/// [`with_locked`]: crate::rq::with_locked
/// [`RqGuard::root`]: crate::rq::RqGuard::root
#[repr(transparent)]
pub struct CfsRq<'rq>(Opaque<bindings::cfs_rq>, PhantomData<Se<'rq>>);

impl<'rq> CfsRq<'rq> {
    /// Wraps a pointer from C, shared.
    ///
    /// # Safety
    ///
    /// - `cfs_rq` is a valid `struct cfs_rq`;
    /// - the lock of its runqueue is held for all of `'rq`;
    /// - `'rq` brands no other `cfs_rq` ([`Se`]'s brand): a caller that holds two
    ///   `cfs_rq`s in one scope must not let their lifetimes be the same, or an entity of
    ///   one could reach the other's timeline. [`with_locked`]'s closure, generic over
    ///   `'rq`, is the way to get a fresh one.
    ///
    /// [`with_locked`]: crate::rq::with_locked
    #[inline]
    #[cfg_attr(not(CONFIG_SCHED_DEBUG), expect(dead_code))]
    pub(crate) unsafe fn from_raw(cfs_rq: *mut bindings::cfs_rq) -> &'rq CfsRq<'rq> {
        // SAFETY: `CfsRq` is transparent over `Opaque<cfs_rq>`, itself transparent over
        // `cfs_rq`, and the pointer is valid for `'rq` (caller); a shared reference to an
        // `Opaque` allows the writes under the lock that other holders of it make.
        // INVARIANT: the caller's obligations are the invariant's.
        unsafe { &*cfs_rq.cast::<CfsRq<'rq>>() }
    }

    /// Wraps a pointer from C, exclusive.
    ///
    /// # Safety
    ///
    /// As [`CfsRq::from_raw`], and no other reference to this `cfs_rq` is used during
    /// `'rq` (the lock's exclusion: fair.c's caller does not use it meanwhile).
    #[inline]
    pub(crate) unsafe fn from_raw_mut(cfs_rq: *mut bindings::cfs_rq) -> &'rq mut CfsRq<'rq> {
        // SAFETY: as in `from_raw`, and the reference is unique for `'rq` (caller).
        // INVARIANT: the caller's obligations are the invariant's.
        unsafe { &mut *cfs_rq.cast::<CfsRq<'rq>>() }
    }

    /// The handle of an entity of this `cfs_rq`, for the same lifetime.
    ///
    /// # Safety
    ///
    /// `se` is a valid `struct sched_entity` of this `cfs_rq` (queued on it, about to be,
    /// or its current), so the lock this reference proves protects it.
    #[inline(always)]
    pub(crate) unsafe fn entity(&self, se: *mut bindings::sched_entity) -> Se<'rq> {
        // SAFETY: `se` is valid, hence not null (caller).
        let p = unsafe { NonNull::new_unchecked(se) };
        // INVARIANT: valid, and protected by the lock held for `'rq` (caller, and this
        // reference's invariant).
        Se(p, PhantomData)
    }

    #[inline]
    pub(crate) fn raw(&self) -> *mut bindings::cfs_rq {
        self.0.get()
    }

    /// A handle of the timeline.
    ///
    /// # Safety
    ///
    /// The handle changes the tree only while no other handle of this timeline is used
    /// (`RbRootCached`'s invariant): [`CfsRq::tree`] only reads through it, and
    /// [`CfsRq::tree_mut`] holds `&mut self`.
    #[inline(always)]
    unsafe fn timeline<const MAX: bool>(&self) -> RbRootCached<'_, SeAugment<MAX>> {
        // `SeAugment<false>` keeps a subset of `SeAugment<true>`'s values, and the
        // `slice_sums_stale` flag says when the rest is stale (type invariant).
        // SAFETY:
        // - the cfs_rq is valid and locked, and its timeline augmented by `SeAugment` (type
        //   invariant), for as long as `self` is borrowed;
        // - the address of a field of a valid object is not null;
        // - the handle's exclusive use is the caller's obligation.
        unsafe {
            RbRootCached::from_raw(NonNull::new_unchecked(
                &raw mut (*self.raw()).tasks_timeline,
            ))
        }
    }

    /// The timeline, to read: its root and leftmost.
    #[inline]
    fn tree(&self) -> RbRootCached<'_, SeAugment<false>> {
        // SAFETY: the callers only read through it (`root_node`, `first`).
        unsafe { self.timeline() }
    }

    /// The timeline, to change: the handle borrows `self` exclusively, so it is the one
    /// that changes the tree's shape and augmented values while it lives.
    #[inline]
    fn tree_mut<const MAX: bool>(&mut self) -> RbRootCached<'_, SeAugment<MAX>> {
        // SAFETY: `&mut self` makes this handle the only user of the timeline while it lives.
        unsafe { self.timeline() }
    }

    /// `rq_of()`: the runqueue this `cfs_rq` belongs to, whose lock is held.
    ///
    /// Only for the `cfs_rq`s of a runqueue, which fair.c passes to the entry points (not
    /// the KUnit suites' private ones, which no runqueue holds).
    #[inline(always)]
    #[cfg_attr(
        not(any(CONFIG_SCHED_EEVDF_RUST_STATS, CONFIG_SCHED_EEVDF_RUST_VERIFY)),
        expect(dead_code)
    )]
    pub(crate) fn rq(&self) -> *mut bindings::rq {
        #[cfg(CONFIG_FAIR_GROUP_SCHED)]
        // SAFETY: by the type invariant the cfs_rq is valid; `cfs_rq->rq` is set when the
        // cfs_rq is made and never changes.
        let rq = unsafe { (*self.raw()).rq };
        #[cfg(not(CONFIG_FAIR_GROUP_SCHED))]
        // SAFETY: without group scheduling a runqueue's only cfs_rq is the one embedded in
        // it, `rq->cfs` (C's `rq_of()` is this `container_of()`), so the result is the
        // start of the same `struct rq`.
        let rq = unsafe {
            self.raw()
                .byte_sub(core::mem::offset_of!(bindings::rq, cfs))
                .cast::<bindings::rq>()
        };
        rq
    }

    /// Counts `s` in this CPU's counters (kernel/stats.rs). Callers count only while
    /// [`stats::counting`].
    #[inline(always)]
    pub(crate) fn count(&self, s: Stat) {
        #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
        {
            // SAFETY:
            // - `rq_of()` of a valid `cfs_rq` is its valid runqueue, whose lock is held
            //   for `'rq` (type invariant);
            // - the counters are written only under that lock, so this is their one user.
            let c = unsafe { &mut (*self.rq()).eevdf_stats };
            if let Some(c) = c.get_mut(s as usize) {
                *c = c.wrapping_add(1);
            }
        }
        #[cfg(not(CONFIG_SCHED_EEVDF_RUST_STATS))]
        let _ = s;
    }

    #[inline]
    fn se(n: Option<NonNull<bindings::rb_node>>) -> Option<Se<'rq>> {
        // SAFETY: `n` is a node of this timeline (every caller passes one: the root, the
        // leftmost, or a link of a node of it; an entity in no tree has no links): the
        // `run_node` of an entity protected by the lock held for `'rq` (type invariant).
        n.map(|n| unsafe { Se::from_node(n) })
    }
}

macro_rules! rq_fields {
    ($($get:ident / $set:ident : $field:ident as $t:ty),* $(,)?) => {
        $(
            #[inline]
            fn $get(&self) -> $t {
                // SAFETY: the cfs_rq is valid and its runqueue lock held (type invariant):
                // no other CPU writes the field meanwhile.
                unsafe { (*self.raw()).$field as $t }
            }
            #[inline]
            fn $set(&mut self, v: $t) {
                // SAFETY: the cfs_rq is valid and its runqueue lock held (type invariant),
                // and `&mut self` is this CPU's one reference to it.
                unsafe { (*self.raw()).$field = v as _ };
            }
        )*
    };
}

impl<'rq> Timeline for CfsRq<'rq> {
    type Se = Se<'rq>;

    #[inline]
    fn root(&self) -> Option<Se<'rq>> {
        Self::se(self.tree().root_node())
    }
    #[inline]
    fn first(&self) -> Option<Se<'rq>> {
        Self::se(self.tree().first())
    }
    #[inline]
    fn left(&self, se: Se<'rq>) -> Option<Se<'rq>> {
        // SAFETY: `se` is an entity of this `cfs_rq`, whose lock is held (type invariants):
        // its node's links are read under the lock that their writers hold. Its node is in
        // this timeline, so its children are too, or it is in no tree and then empty, with
        // no children (type invariant).
        Self::se(unsafe { rb::left(se.node()) })
    }
    #[inline]
    fn right(&self, se: Se<'rq>) -> Option<Se<'rq>> {
        // SAFETY: as in `left`.
        Self::se(unsafe { rb::right(se.node()) })
    }
    #[inline]
    fn parent(&self, se: Se<'rq>) -> Option<Se<'rq>> {
        // SAFETY: as in `left`: `se`'s node is in this timeline or empty.
        if unsafe { rb::is_empty_node(se.node()) } {
            // An empty node's parent word is its own address, not a parent.
            return None;
        }
        // SAFETY: as in `left`.
        Self::se(unsafe { rb::parent(se.node()) })
    }
    #[inline]
    fn is_red(&self, se: Se<'rq>) -> bool {
        // SAFETY: as in `left`.
        unsafe { rb::is_red(se.node()) }
    }
    /// Inserts `se`, or refuses with one WARN when its node is in a tree (see
    /// [`CfsRq::try_insert`]): lib/rbtree's links stay as they were. What the core wrote
    /// before the call (its sums, the leaf's augmented values) stays written: a refusal
    /// reports a bug in the caller, it does not undo it.
    #[inline(always)]
    fn insert(
        &mut self,
        se: Se<'rq>,
        keep_max_slice: bool,
        earliest: impl FnOnce(&Self) -> bool,
    ) -> bool {
        let done = if keep_max_slice {
            self.try_insert_keeping_max_slice(se, earliest)
        } else {
            self.try_insert::<false>(se, earliest)
        };
        match done {
            Ok(()) => true,
            Err(r) => {
                refused(r);
                false
            }
        }
    }

    /// Erases `se`, or refuses with one WARN when its node is in no tree (see
    /// [`CfsRq::try_erase`]): lib/rbtree's links stay as they were.
    #[inline(always)]
    fn erase(&mut self, se: Se<'rq>, keep_max_slice: bool) {
        let done = if keep_max_slice {
            self.try_erase_keeping_max_slice(se)
        } else {
            self.try_erase::<false>(se)
        };
        if let Err(r) = done {
            refused(r);
        }
    }
}

/// Why the timeline refused an insert or an erase: a caller broke the queueing rules,
/// and lib/rbtree would have corrupted the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// An insert of an entity whose node is in a tree.
    InsertQueued,
    /// An erase of an entity whose node is in no tree.
    EraseUnqueued,
}

impl Refused {
    /// What the WARN names.
    fn what(self) -> &'static str {
        match self {
            Refused::InsertQueued => "an insert of an entity that is in a tree",
            Refused::EraseUnqueued => "an erase of an entity that is in no tree",
        }
    }
}

/// Reports a refusal: one WARN, issued by fair.c from an irq_work once the runqueue lock
/// is dropped (patch 0011's `sched_eevdf_timeline_refused()`).
#[cold]
#[inline(never)]
fn refused(r: Refused) {
    let what = r.what();
    // SAFETY: `what` is a static string, and the function keeps only its pointer and
    // length (for its WARN) and takes no lock.
    unsafe { bindings::sched_eevdf_timeline_refused(what.as_ptr().cast(), what.len() as _) };
}

impl<'rq> CfsRq<'rq> {
    /// [`CfsRq::try_insert`] keeping `max_slice` (LAG_CLAMP_MAX_SLICE or BIAS_ELIGIBLE, off
    /// by default): out
    /// of line, so that the default path carries one copy of the insertion.
    #[cold]
    #[inline(never)]
    fn try_insert_keeping_max_slice(
        &mut self,
        se: Se<'rq>,
        earliest: impl FnOnce(&Self) -> bool,
    ) -> Result<(), Refused> {
        self.try_insert::<true>(se, earliest)
    }

    /// [`CfsRq::try_erase`] keeping `max_slice`: out of line, as
    /// [`CfsRq::try_insert_keeping_max_slice`].
    #[cold]
    #[inline(never)]
    fn try_erase_keeping_max_slice(&mut self, se: Se<'rq>) -> Result<(), Refused> {
        self.try_erase::<true>(se)
    }

    /// `__enqueue_entity()`'s tree part: links `se` into this timeline, unless its node is
    /// in a tree (not [`rb::is_empty_node`]); named the holder of the earliest deadline in
    /// between when `earliest` says so ([`Timeline::insert`]).
    #[inline(always)]
    pub(crate) fn try_insert<const MAX: bool>(
        &mut self,
        se: Se<'rq>,
        earliest: impl FnOnce(&Self) -> bool,
    ) -> Result<(), Refused> {
        // SAFETY: `se` is valid and its lock held (`Se`'s invariant): no one writes its node.
        if !unsafe { rb::is_empty_node(se.node()) } {
            return Err(Refused::InsertQueued);
        }
        // `earliest` gets this runqueue shared: it cannot link `se` (or change the tree)
        // between the check above and the linking below.
        if earliest(self) {
            self.set_earliest(Some(se));
        }
        // The leaf's augmented values, which `RbRootCached::insert` also asks for, are the
        // core's `__enqueue_entity()`'s (they make the picks right, not the links safe).
        // SAFETY:
        // - `se` is an entity of this locked runqueue whose node is empty, so in no tree (a
        //   linked node's parent word is its parent's address, never its own);
        // - the order is the core's `entity_less`, that of the whole timeline, and the
        //   comparison's nodes are this timeline's, entities under the same lock.
        unsafe {
            self.tree_mut::<MAX>().insert(se.node(), |a, b| {
                eevdf::entity_less(Se::from_node(a), Se::from_node(b))
            })
        };
        Ok(())
    }

    /// `__dequeue_entity()`'s tree part: unlinks `se` from this timeline and empties its
    /// node, unless the node is in no tree ([`rb::is_empty_node`]).
    #[inline(always)]
    pub(crate) fn try_erase<const MAX: bool>(&mut self, se: Se<'rq>) -> Result<(), Refused> {
        // SAFETY: `se` is valid and its lock held (`Se`'s invariant): no one writes its node.
        if unsafe { rb::is_empty_node(se.node()) } {
            return Err(Refused::EraseUnqueued);
        }
        // SAFETY: `se` is this `cfs_rq`'s (`Se`'s invariant; the brand `'rq` ties the handle
        // to this `cfs_rq`) and its node is not empty, so the node is in this timeline
        // (type invariant: an entity in no tree has an empty node).
        // INVARIANT: the erase leaves the node empty, without children.
        unsafe { self.tree_mut::<MAX>().erase(se.node()) };
        Ok(())
    }
}

impl<'rq> Runqueue for CfsRq<'rq> {
    rq_fields! {
        zero_vruntime / set_zero_vruntime: zero_vruntime as u64,
        avg_vruntime / set_avg_vruntime: avg_vruntime as i64,
        avg_load / set_avg_load: avg_load as u64,
        sum_slice / set_sum_slice: sum_slice as u64,
        nr_queued / set_nr_queued: nr_running as u32,
    }

    #[inline]
    fn slice_sums_stale(&self) -> bool {
        // SAFETY: the cfs_rq is valid and its runqueue lock held (type invariant): no other
        // CPU writes the field meanwhile.
        unsafe { (*self.raw()).slice_sums_stale != 0 }
    }

    #[inline]
    fn set_slice_sums_stale(&mut self, stale: bool) {
        // SAFETY: the cfs_rq is valid and its runqueue lock held (type invariant), and
        // `&mut self` is this CPU's one reference to it.
        unsafe { (*self.raw()).slice_sums_stale = stale.into() };
    }

    #[inline]
    fn curr(&self) -> Option<Se<'rq>> {
        // SAFETY: the cfs_rq is valid and locked for `'rq` (type invariant); its `curr` is
        // null or one of its entities, protected by the same lock.
        unsafe { Se::from_raw((*self.raw()).curr) }
    }

    #[inline]
    fn set_curr(&mut self, se: Option<Se<'rq>>) {
        // SAFETY: the cfs_rq is valid and locked (type invariant), and `&mut self` is this
        // CPU's one reference to it.
        unsafe { (*self.raw()).curr = se.map_or(ptr::null_mut(), Se::as_ptr) };
    }

    #[inline]
    fn next_buddy(&self) -> Option<Se<'rq>> {
        // SAFETY: the cfs_rq is valid and locked for `'rq` (type invariant); its `next` is
        // null or one of its entities (fair.c's buddy bookkeeping: set to a queued entity
        // of this cfs_rq, cleared when that entity is dequeued), protected by the same lock.
        unsafe { Se::from_raw((*self.raw()).next) }
    }

    #[inline]
    fn set_next_buddy(&mut self, se: Option<Se<'rq>>) {
        // SAFETY: the cfs_rq is valid and locked (type invariant), and `&mut self` is this
        // CPU's one reference to it.
        unsafe { (*self.raw()).next = se.map_or(ptr::null_mut(), Se::as_ptr) };
    }

    #[inline]
    fn earliest(&self) -> Option<Se<'rq>> {
        // SAFETY: the cfs_rq is valid and locked for `'rq` (type invariant); its `earliest`
        // (patch 0014) is null or an entity of its timeline: only the core writes it, in
        // its enqueue (the entity it inserts) and erase (null when it takes that entity
        // out), under the same lock; C never writes it, and a zeroed cfs_rq has it null.
        unsafe { Se::from_raw((*self.raw()).earliest) }
    }

    #[inline]
    fn set_earliest(&mut self, se: Option<Se<'rq>>) {
        // SAFETY: the cfs_rq is valid and locked (type invariant), and `&mut self` is this
        // CPU's one reference to it.
        unsafe { (*self.raw()).earliest = se.map_or(ptr::null_mut(), Se::as_ptr) };
    }
}

/// The core's feature bits are the kernel's `__SCHED_FEAT_*` numbers (features/table.rs),
/// so the core's features are the kernel's word masked: checked here flag by flag, or
/// this does not compile.
macro_rules! kernel_features {
    ($( $(#[doc = $doc:expr])* ($name:ident, $bit:literal, $default:literal) ),* $(,)?) => {
        $(
            kernel::macros::paste! {
                const _: () = assert!(
                    Features::$name.bits() == 1u64 << (bindings::[<__SCHED_FEAT_ $name>] as u32)
                );
            }
        )*
    };
}
eevdf_feature_table!(kernel_features);

/// The core's [`Config`], from the `sched_feat()` bits ([`feature_bits`]), the live
/// `sysctl_sched_base_slice` and fair.c's `normalized_sysctl_sched_base_slice`: a debugfs
/// write takes effect at the next call.
#[inline]
pub fn config() -> Config {
    config_full(features())
}

/// What `with_config!` reads in each copy: [`config()`] with the feature bits `features`
/// already read. The default feature set never reads `normalized_base_slice_ns` (only
/// RUN_TO_PARITY_MIN_SLICE and the `lag_error` bound read it, both without
/// RUN_TO_PARITY): for it the base slice stands in, and the default copy, where
/// `features` is a constant, loads one tunable, not two.
#[inline(always)]
pub fn config_of(features: Features) -> Config {
    if features == Features::DEFAULT {
        config_base(features)
    } else {
        config_full(features)
    }
}

/// [`config()`] with the feature bits `features`.
#[inline(always)]
fn config_full(features: Features) -> Config {
    // SAFETY: a plain read of a global word; `sched_update_scaling()` (a debugfs write of
    // the base slice) updates it with a single store, so a racing read sees the old or
    // the new value (READ_ONCE).
    let normalized =
        unsafe { ptr::read_volatile(&raw const bindings::normalized_sysctl_sched_base_slice) };
    Config {
        normalized_base_slice_ns: u64::from(normalized),
        ..config_base(features)
    }
}

/// [`config_of()`]'s default: the base slice stands in for the normalized one.
#[inline(always)]
fn config_base(features: Features) -> Config {
    // SAFETY: a plain read of a global word; debugfs and `update_sysctl()` update it
    // with single stores, so a racing read sees the old or the new value (READ_ONCE).
    let base = unsafe { ptr::read_volatile(&raw const bindings::sysctl_sched_base_slice) };
    Config {
        features,
        base_slice_ns: u64::from(base),
        tick_nsec: bindings::SCHED_EEVDF_TICK_NSEC,
        normalized_base_slice_ns: u64::from(base),
    }
}

// `config_of()`'s stand-in is never read by the default feature set.
const _: () = assert!(
    Features::DEFAULT.contains(Features::RUN_TO_PARITY)
        && !Features::DEFAULT.contains(Features::RUN_TO_PARITY_MIN_SLICE)
);

/// The live feature bits alone ([`config()`]'s `features`), for the entry points that read
/// no other part of the configuration: the timeline's updates, which keep `max_slice` and
/// `sum_slice` only under LAG_CLAMP_MAX_SLICE or BIAS_ELIGIBLE (the core's
/// `keeps_slice_sums()`). One load.
#[inline(always)]
pub(crate) fn features() -> Features {
    Features::from_bits_truncate(feature_bits())
}

/// The live `sched_feat()` word: with SCHED_DEBUG, `sysctl_sched_features` is the word
/// that /sys/kernel/debug/sched/features writes.
#[cfg(CONFIG_SCHED_DEBUG)]
#[inline(always)]
fn feature_bits() -> u64 {
    // SAFETY: a plain read of a global word; debugfs updates it with single stores, so a
    // racing read sees the old or the new value (READ_ONCE).
    let word = unsafe { ptr::read_volatile(&raw const bindings::sysctl_sched_features) };
    // An `unsigned long` (bindgen's `usize`), 64 bits here: CONFIG_SCHED_EEVDF_RUST needs
    // 64BIT.
    word as u64
}

/// The `sched_feat()` word without SCHED_DEBUG: a constant, the table's defaults. sched.h
/// then gives each C file a `static const` copy of features.h's defaults instead of a
/// global word (nothing can change them), and fair.c is compiled for those; `with_config!`
/// keeps only its default-set copy.
#[cfg(not(CONFIG_SCHED_DEBUG))]
#[inline(always)]
fn feature_bits() -> u64 {
    Features::DEFAULT.bits()
}

// The core's defaults are features.h's (bindgen sees sched.h's `static const` word as a
// constant), or this does not compile.
#[cfg(not(CONFIG_SCHED_DEBUG))]
const _: () = assert!(
    Features::from_bits_truncate(bindings::sysctl_sched_features as u64).bits()
        == Features::DEFAULT.bits()
);

/// `with_config!(cfg, (a: A, ...) -> T => body)`: `body` with `cfg` = [`config()`],
/// compiled twice by [`with_features!`], with the tunables read in each copy
/// ([`config_of`]). Inline, with the default feature set as a constant, where every feature
/// test folds away: the common case, straight-line code. Out of line, for any other set,
/// in a function of the listed arguments (passed in registers, so that the call can be a
/// tail call and the inline path spills nothing for it), which reads the configuration
/// again (a toggle in between is seen now or at the next call, as with any toggle).
///
/// A per-call feature word otherwise costs a test and a branch at each feature the path
/// meets, and BIAS_ELIGIBLE's two paths a merge, where fair.c's `sched_feat()` is a patched
/// jump. Both copies are the same core code, so they decide alike; only the default set is
/// fast. The kernel boots with that set (KUnit `sched_eevdf_bindings.live_features` checks
/// it); the guest tests toggle features, which runs the other copy.
macro_rules! with_config {
    ($cfg:ident, ($($a:ident: $t:ty),*) -> $ret:ty => $body:expr) => {
        $crate::fair::with_features!(f, ($($a: $t),*) -> $ret => {
            let $cfg = $crate::fair::config_of(f);
            $body
        })
    };
}

pub(crate) use with_config;

/// `with_features!(f, (a: A, ...) -> T => body)`: `body` with `f` the live feature bits,
/// compiled twice as [`with_config!`] says; used alone by the decisions that read the
/// feature bits alone (the pick, the eligibility test, the wakeup's decision, the
/// dequeue's delay: the core's functions that take `impl Into<Features>`), with `f` the
/// live [`Features`]. Neither copy loads the tunables: a volatile load that the compiler
/// must keep even where nothing reads it, on the hottest entry points.
macro_rules! with_features {
    ($f:ident, ($($a:ident: $t:ty),*) -> $ret:ty => $body:expr) => {{
        if $crate::fair::features() == $crate::sched_eevdf::Features::DEFAULT {
            let $f = $crate::sched_eevdf::Features::DEFAULT;
            $body
        } else {
            #[inline(never)]
            fn other<'r>($($a: $t),*) -> $ret {
                let $f = $crate::fair::features();
                $body
            }
            other($($a),*)
        }
    }};
}

pub(crate) use with_features;

/// The kernel's [`Context`] of an operation's out-of-line steps: the live configuration,
/// read again ([`config()`]), and the debugfs `stats` of the runqueue's CPU, while counting.
#[derive(Clone, Copy)]
pub(crate) struct Live;

impl<'rq> Context<CfsRq<'rq>> for Live {
    #[inline]
    fn config(self) -> Config {
        config()
    }

    #[inline(always)]
    fn lag_clamped(self, rq: &CfsRq<'rq>, clamp: LagClamp) {
        if stats::counting() {
            rq.count(match clamp {
                LagClamp::Positive => Stat::LagClampedPos,
                LagClamp::Negative => Stat::LagClampedNeg,
            });
        }
    }

    #[inline(always)]
    fn lag_saved(self, rq: &CfsRq<'rq>, se: <CfsRq<'rq> as Timeline>::Se) {
        if stats::counting() {
            lag_saved_counted(rq, se);
        }
    }
}

/// [`Live::lag_saved`] while counting: Vincent Guittot's lag error of the lag a dequeue
/// saved, before the clamp, against `V` (`se` still counted in it, as when it was saved).
/// Out of line: a division for `V`, on a counting path.
#[inline(never)]
fn lag_saved_counted<'rq>(rq: &CfsRq<'rq>, se: Se<'rq>) {
    let v = eevdf::avg_vruntime_peek(rq);
    if eevdf::lag_error(eevdf::vtime::vdelta(v, se.vruntime()), se, config()) {
        rq.count(Stat::LagError);
    }
}
