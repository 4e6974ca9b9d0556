// SPDX-License-Identifier: GPL-2.0

//! The fair class's EEVDF core, in Rust: `struct sched_entity` and `struct cfs_rq`
//! (from bindgen, never hand-copied) implement the core's [`Entity`], [`Timeline`]
//! and [`Runqueue`], and the `extern "C"` entry points that fair.c calls under
//! `CONFIG_SCHED_EEVDF_RUST` run the core's operations on them.
//!
//! # Safety argument
//!
//! Every entry point is called by fair.c with the runqueue lock of `cfs_rq` held
//! (that is where fair.c calls the C functions they replace), with `cfs_rq`
//! valid and every `sched_entity` pointer valid and belonging to that `cfs_rq`
//! (queued on it, or about to be). The lock gives exclusive access to the
//! `cfs_rq`, its timeline and the queued entities for the duration of the call,
//! which is what [`Se`] and [`CfsRq`] require. Nothing here allocates, sleeps or
//! panics (the core is panic-free and uses wrapping arithmetic), so these are
//! fine in atomic context.

use crate::debugfs::stats::{self, Stat};
use crate::rbtree_augmented::{self as rb, Augment, RbRootCached};
use crate::sched_eevdf::{
    self as core_, min_deadline_update, Config, Context, EnqueueFlags, Entity, Features,
    LoadWeight, PickReason, Runqueue, Timeline, WakeupPreempt,
};
use crate::verify;
use core::ptr::{self, NonNull};
use kernel::{bindings, types::Opaque};

/// A handle to a `struct sched_entity`.
///
/// # Invariants
///
/// The pointer is valid, and the entity is accessed only under the runqueue lock
/// of the `cfs_rq` it is queued on (or about to be), held for as long as the
/// handle is used. Handles are not kept beyond the entry point that made them.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Se(NonNull<bindings::sched_entity>);

impl Se {
    /// Wraps a pointer from C.
    ///
    /// # Safety
    ///
    /// `se` must be null or valid, and the caller must hold the runqueue lock
    /// that protects it for as long as the handle is used.
    #[inline]
    pub unsafe fn from_raw(se: *mut bindings::sched_entity) -> Option<Se> {
        // INVARIANT: guaranteed by the caller.
        NonNull::new(se).map(Se)
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

    /// `rb_entry(node, struct sched_entity, run_node)`.
    ///
    /// # Safety
    ///
    /// `node` must be the `run_node` of a valid entity that the caller may access
    /// under the same lock as its other handles.
    #[inline]
    unsafe fn from_node(node: NonNull<bindings::rb_node>) -> Se {
        let off = core::mem::offset_of!(bindings::sched_entity, run_node);
        // SAFETY: the caller guarantees `node` is embedded in a sched_entity at
        // offset `off`, so the subtraction stays in that object.
        Se(unsafe { NonNull::new_unchecked(node.as_ptr().byte_sub(off).cast()) })
    }
}

/// Plain-load getters and plain-store setters of `sched_entity` fields.
macro_rules! se_fields {
    ($($get:ident / $set:ident : $field:ident as $t:ty),* $(,)?) => {
        $(
            #[inline]
            fn $get(self) -> $t {
                // SAFETY: by the type invariant the entity is valid and ours.
                unsafe { (*self.0.as_ptr()).$field as $t }
            }
            #[inline]
            fn $set(self, v: $t) {
                // SAFETY: as above.
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
                // SAFETY: by the type invariant the entity is valid and ours.
                unsafe { (*self.0.as_ptr()).$field != 0 }
            }
            #[inline]
            fn $set(self, v: bool) {
                // SAFETY: as above.
                unsafe { (*self.0.as_ptr()).$field = u8::from(v) };
            }
        )*
    };
}

impl Entity for Se {
    se_fields! {
        vruntime / set_vruntime: vruntime as u64,
        deadline / set_deadline: deadline as u64,
        slice / set_slice: slice as u64,
        vlag / set_vlag: vlag as i64,
        min_deadline / set_min_deadline: min_deadline as u64,
        min_slice / set_min_slice: min_slice as u64,
    }
    se_flags! {
        custom_slice / set_custom_slice: custom_slice,
        on_rq / set_on_rq: on_rq,
        sched_delayed / set_sched_delayed: sched_delayed,
        rel_deadline / set_rel_deadline: rel_deadline,
    }

    #[inline]
    fn load(self) -> LoadWeight {
        // SAFETY: by the type invariant the entity is valid and ours.
        let lw = unsafe { (*self.0.as_ptr()).load };
        LoadWeight {
            weight: lw.weight as u64,
            inv_weight: lw.inv_weight,
        }
    }

    #[inline]
    fn set_load(self, lw: LoadWeight) {
        // SAFETY: as above.
        unsafe {
            (*self.0.as_ptr()).load.weight = lw.weight as _;
            (*self.0.as_ptr()).load.inv_weight = lw.inv_weight;
        }
    }
}

/// The timeline's augmentation: the core's [`min_deadline_update`].
pub struct SeAugment;

// SAFETY: `compute` and `copy` touch only the entity embedding the node(s) and,
// read-only, its children's; `compute` is the core's one compute function and
// `copy` copies both augmented values.
unsafe impl Augment for SeAugment {
    #[inline]
    unsafe fn compute(node: NonNull<bindings::rb_node>) -> bool {
        // SAFETY: the caller guarantees `node` and its children are run_nodes of
        // entities of a timeline it holds exclusively.
        unsafe {
            let l = rb::left(node).map(|n| Se::from_node(n));
            let r = rb::right(node).map(|n| Se::from_node(n));
            min_deadline_update(Se::from_node(node), l, r)
        }
    }

    #[inline]
    unsafe fn copy(old: NonNull<bindings::rb_node>, new: NonNull<bindings::rb_node>) {
        // SAFETY: as for `compute`.
        let (o, n) = unsafe { (Se::from_node(old), Se::from_node(new)) };
        n.set_min_deadline(o.min_deadline());
        n.set_min_slice(o.min_slice());
    }
}

/// A `struct cfs_rq`, seen through a reference: `&CfsRq` is the C pointer itself, so
/// the entry points pass it on in a register (a stack copy of a handle would force a
/// frame on every entry point that calls out, and rule out tail calls).
///
/// # Invariants
///
/// A reference to it is valid and its runqueue lock is held for as long as the reference
/// lives; its timeline's nodes are the `run_node`s of its queued entities (except current)
/// and are augmented by [`SeAugment`]. The fields are written through raw pointers
/// ([`Opaque`]), by this file under the lock, as C does.
#[repr(transparent)]
pub struct CfsRq(Opaque<bindings::cfs_rq>);

impl CfsRq {
    /// Wraps a pointer from C.
    ///
    /// # Safety
    ///
    /// `cfs_rq` must be valid, and the caller must hold its runqueue lock for as
    /// long as the reference (and the entity handles obtained from it) are used.
    #[inline]
    pub unsafe fn from_raw<'a>(cfs_rq: *mut bindings::cfs_rq) -> &'a mut CfsRq {
        // INVARIANT: guaranteed by the caller; fair.c calls the entry points
        // with a valid cfs_rq.
        // SAFETY: `CfsRq` is a transparent wrapper of `Opaque<cfs_rq>`, itself transparent
        // over `cfs_rq`; the pointer is valid and, under the lock, not used by anyone else
        // while the reference lives.
        unsafe { &mut *cfs_rq.cast::<CfsRq>() }
    }

    #[inline]
    pub(crate) fn raw(&self) -> *mut bindings::cfs_rq {
        self.0.get()
    }

    #[inline]
    fn tree(&self) -> RbRootCached<SeAugment> {
        // SAFETY: by the type invariant the cfs_rq is valid and locked, and its
        // timeline is augmented by `SeAugment`.
        // The address of a field of a valid object is not null.
        unsafe {
            RbRootCached::from_raw(NonNull::new_unchecked(
                &raw mut (*self.raw()).tasks_timeline,
            ))
        }
    }

    /// `rq_of()`: the runqueue this `cfs_rq` belongs to, whose lock is held.
    ///
    /// Only for the `cfs_rq`s of a runqueue, which fair.c passes to the entry points (not
    /// the KUnit suites' private ones, which no runqueue holds).
    #[inline(always)]
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

    /// Counts `s` in this CPU's counters (`/sys/kernel/debug/sched/eevdf/stats`).
    #[inline(always)]
    fn count(&self, s: Stat) {
        // SAFETY: by the type invariant the cfs_rq is valid and the lock of its runqueue,
        // `rq_of(cfs_rq)`, is held.
        unsafe { stats::count(self.rq(), s) }
    }

    #[inline]
    fn se(n: Option<NonNull<bindings::rb_node>>) -> Option<Se> {
        // SAFETY: by the type invariant every node of the timeline is the
        // run_node of an entity protected by the same lock.
        n.map(|n| unsafe { Se::from_node(n) })
    }
}

macro_rules! rq_fields {
    ($($get:ident / $set:ident : $field:ident as $t:ty),* $(,)?) => {
        $(
            #[inline]
            fn $get(&self) -> $t {
                // SAFETY: by the type invariant the cfs_rq is valid and locked.
                unsafe { (*self.raw()).$field as $t }
            }
            #[inline]
            fn $set(&mut self, v: $t) {
                // SAFETY: as above.
                unsafe { (*self.raw()).$field = v as _ };
            }
        )*
    };
}

impl Timeline for CfsRq {
    type Se = Se;

    #[inline]
    fn root(&self) -> Option<Se> {
        Self::se(self.tree().root_node())
    }
    #[inline]
    fn first(&self) -> Option<Se> {
        Self::se(self.tree().first())
    }
    #[inline]
    fn left(&self, se: Se) -> Option<Se> {
        // SAFETY: `se` is a handle of this runqueue's timeline (type invariants).
        Self::se(unsafe { rb::left(se.node()) })
    }
    #[inline]
    fn right(&self, se: Se) -> Option<Se> {
        // SAFETY: as above.
        Self::se(unsafe { rb::right(se.node()) })
    }
    #[inline]
    fn parent(&self, se: Se) -> Option<Se> {
        // SAFETY: as above.
        Self::se(unsafe { rb::parent(se.node()) })
    }
    #[inline]
    fn is_red(&self, se: Se) -> bool {
        // SAFETY: as above.
        unsafe { rb::is_red(se.node()) }
    }
    #[inline(always)]
    fn insert(&mut self, se: Se) {
        // SAFETY: fair.c inserts only entities that are not in a tree, after
        // `__enqueue_entity()` initialised the leaf's augmented values; the order
        // is the core's `entity_less`, that of the whole timeline.
        unsafe {
            self.tree().insert(se.node(), |a, b| {
                core_::entity_less(Se::from_node(a), Se::from_node(b))
            })
        };
    }
    #[inline(always)]
    fn erase(&mut self, se: Se) {
        // SAFETY: fair.c erases only entities in this timeline (queued, not
        // current), as it did with the C `__dequeue_entity()`.
        unsafe { self.tree().erase(se.node()) };
    }
}

impl Runqueue for CfsRq {
    rq_fields! {
        zero_vruntime / set_zero_vruntime: zero_vruntime as u64,
        avg_vruntime / set_avg_vruntime: avg_vruntime as i64,
        avg_load / set_avg_load: avg_load as u64,
        sum_slice / set_sum_slice: sum_slice as u64,
        nr_queued / set_nr_queued: nr_running as u32,
    }

    #[inline]
    fn curr(&self) -> Option<Se> {
        // SAFETY: by the type invariant; `curr` is an entity of this cfs_rq.
        unsafe { Se::from_raw((*self.raw()).curr) }
    }

    #[inline]
    fn set_curr(&mut self, se: Option<Se>) {
        // SAFETY: as above.
        unsafe { (*self.raw()).curr = se.map_or(ptr::null_mut(), Se::as_ptr) };
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
                    Features::$name.bits() == 1u32 << (bindings::[<__SCHED_FEAT_ $name>] as u32)
                );
            }
        )*
    };
}
eevdf_feature_table!(kernel_features);

/// The core's [`Config`], from the `sched_feat()` bits ([`feature_bits`]) and the live
/// `sysctl_sched_base_slice`: a debugfs write takes effect at the next call.
#[inline]
pub fn config() -> Config {
    let bits = feature_bits();
    // SAFETY: a plain read of a global word; debugfs and `update_sysctl()` update it
    // with single stores, so a racing read sees the old or the new value (READ_ONCE).
    let base = unsafe { ptr::read_volatile(&raw const bindings::sysctl_sched_base_slice) };
    Config {
        features: Features::from_bits_truncate(bits),
        base_slice_ns: u64::from(base),
        tick_nsec: bindings::SCHED_EEVDF_TICK_NSEC,
    }
}

/// The live `sched_feat()` word: with SCHED_DEBUG, `sysctl_sched_features` is the word
/// that /sys/kernel/debug/sched/features writes.
#[cfg(CONFIG_SCHED_DEBUG)]
#[inline(always)]
fn feature_bits() -> u32 {
    // SAFETY: a plain read of a global word; debugfs updates it with single stores, so a
    // racing read sees the old or the new value (READ_ONCE).
    unsafe { ptr::read_volatile(&raw const bindings::sysctl_sched_features) }
}

/// The `sched_feat()` word without SCHED_DEBUG: a constant, the table's defaults. sched.h
/// then gives each C file a `static const` copy of features.h's defaults instead of a
/// global word (nothing can change them), and fair.c is compiled for those; `with_config!`
/// keeps only its default-set copy.
#[cfg(not(CONFIG_SCHED_DEBUG))]
#[inline(always)]
fn feature_bits() -> u32 {
    Features::DEFAULT.bits()
}

// The core's defaults are features.h's (bindgen sees sched.h's `static const` word as a
// constant), or this does not compile.
#[cfg(not(CONFIG_SCHED_DEBUG))]
const _: () = assert!(
    Features::from_bits_truncate(bindings::sysctl_sched_features).bits()
        == Features::DEFAULT.bits()
);

/// `with_config!(cfg, (a: A, ...) -> T => body)`: `body` with `cfg` = [`config()`],
/// compiled twice. Inline, with the default feature set as a constant, where every feature
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
    ($cfg:ident, ($($a:ident: $t:ty),*) -> $ret:ty => $body:expr) => {{
        let cfg = config();
        if cfg.features == Features::DEFAULT {
            let $cfg = Config {
                features: Features::DEFAULT,
                ..cfg
            };
            $body
        } else {
            #[inline(never)]
            fn other($($a: $t),*) -> $ret {
                let $cfg = config();
                $body
            }
            other($($a),*)
        }
    }};
}

/// The kernel's [`Context`] of an operation's out-of-line steps: the live configuration,
/// read again ([`config()`]), and the debugfs `stats` of the runqueue's CPU, while counting.
#[derive(Clone, Copy)]
struct Live;

impl Context<CfsRq> for Live {
    #[inline]
    fn config(self) -> Config {
        config()
    }

    #[inline(always)]
    fn lag_clamped(self, rq: &CfsRq) {
        if stats::counting() {
            rq.count(Stat::LagClamped);
        }
    }
}

// The core reads ENQUEUE_INITIAL with fair.c's value.
const _: () = assert!(EnqueueFlags::INITIAL.0 == bindings::ENQUEUE_INITIAL);

/// Wraps the arguments of an entry point.
///
/// # Safety
///
/// See the module docs: valid (so non-null) pointers, runqueue lock held. fair.c never
/// passes a null entity to these (the C functions they replace dereference it), so there
/// is no test for one.
#[inline(always)]
unsafe fn args<'a>(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
) -> (&'a mut CfsRq, Se) {
    // SAFETY: guaranteed by the caller; `se` is valid, hence not null.
    unsafe { (CfsRq::from_raw(cfs_rq), Se(NonNull::new_unchecked(se))) }
}

/// `avg_vruntime()`.
///
/// # Safety
///
/// Called by fair.c with `cfs_rq` valid and its runqueue lock held.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_avg_vruntime(cfs_rq: *mut bindings::cfs_rq) -> u64 {
    // SAFETY: guaranteed by the caller.
    let rq = unsafe { CfsRq::from_raw(cfs_rq) };
    core_::avg_vruntime(&mut *rq)
}

/// `entity_eligible()`.
///
/// # Safety
///
/// As [`sched_eevdf_avg_vruntime`], and `se` valid, of this `cfs_rq`.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_entity_eligible(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
) -> i32 {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    // update_curr()'s did_preempt_short() asks this once its current lost slice
    // protection: specialised as the pick is.
    let eligible = with_config!(cfg, (rq: &CfsRq, se: Se) -> bool => {
        core_::entity_eligible(rq, se, cfg)
    });
    eligible.into()
}

/// `__enqueue_entity()`: into the sums and the timeline.
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`], and `se` not in any timeline.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_enqueue_entity(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    core_::__enqueue_entity(&mut *rq, se);
}

/// `__dequeue_entity()`: out of the timeline and the sums.
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`], and `se` in this `cfs_rq`'s timeline.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_dequeue_entity(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    core_::__dequeue_entity(&mut *rq, se);
}

/// `__pick_first_entity()`: the leftmost (smallest vruntime) entity.
///
/// # Safety
///
/// As [`sched_eevdf_avg_vruntime`].
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_pick_first_entity(
    cfs_rq: *mut bindings::cfs_rq,
) -> *mut bindings::sched_entity {
    // SAFETY: guaranteed by the caller.
    let rq = unsafe { CfsRq::from_raw(cfs_rq) };
    rq.first().map_or(ptr::null_mut(), Se::as_ptr)
}

/// `pick_eevdf()`, with RUN_TO_PARITY slice protection.
///
/// # Safety
///
/// As [`sched_eevdf_avg_vruntime`].
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_pick_eevdf(
    cfs_rq: *mut bindings::cfs_rq,
) -> *mut bindings::sched_entity {
    if stats::counting() {
        // SAFETY: guaranteed by the caller.
        return unsafe { pick_counted(cfs_rq) };
    }
    // SAFETY: guaranteed by the caller.
    let rq = unsafe { CfsRq::from_raw(cfs_rq) };
    let se = with_config!(cfg, (rq: &CfsRq) -> Option<Se> => {
        let se = core_::pick_eevdf(rq, cfg);
        verify::pick(rq, se, cfg.features);
        se
    });
    se.map_or(ptr::null_mut(), Se::as_ptr)
}

/// [`sched_eevdf_pick_eevdf`] while counting: the same pick, and its reason counted. Out of
/// line and called with the raw pointer (a tail call), so that the pick without counting
/// keeps its own, shorter code.
///
/// # Safety
///
/// As [`sched_eevdf_pick_eevdf`].
#[inline(never)]
unsafe fn pick_counted(cfs_rq: *mut bindings::cfs_rq) -> *mut bindings::sched_entity {
    // SAFETY: guaranteed by the caller.
    let rq = unsafe { CfsRq::from_raw(cfs_rq) };
    let cfg = config();
    let se = core_::pick_eevdf(&*rq, cfg);
    let why = core_::pick_reason(&*rq, se, cfg);
    verify::pick(rq, se, cfg.features);
    // One increment a pick: `picks` is summed from the three when the file is read.
    match why {
        PickReason::Idle => {}
        PickReason::Only | PickReason::Earliest => rq.count(Stat::Picks),
        PickReason::Parity => rq.count(Stat::PicksParity),
        PickReason::EarliestIneligible => rq.count(Stat::PicksIneligibleEarliest),
    }
    se.map_or(ptr::null_mut(), Se::as_ptr)
}

/// `place_entity()` on `rq`, counted.
#[inline(always)]
fn place(rq: &mut CfsRq, se: Se, flags: i32) {
    let flags = EnqueueFlags(flags as u32);
    let lag = with_config!(cfg, (rq: &mut CfsRq, se: Se, flags: EnqueueFlags) -> i64 => {
        core_::place_entity(rq, se, flags, cfg)
    });
    if stats::counting() {
        if lag != 0 {
            rq.count(Stat::PlaceLag);
        }
        if flags.contains(EnqueueFlags::INITIAL) {
            rq.count(Stat::PlaceInitial);
        }
    }
}

/// `place_entity()` (current, which stays out of the timeline).
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`].
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_place_entity(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
    flags: i32,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    place(&mut *rq, se, flags);
}

/// `place_entity()` then `__enqueue_entity()`: `enqueue_entity()` of an entity that is not
/// current, in one call.
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`], and `se` not in any timeline.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_place_enqueue_entity(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
    flags: i32,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    place(&mut *rq, se, flags);
    core_::__enqueue_entity(&mut *rq, se);
}

/// `update_deadline()`: true when current used up its request.
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`].
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_update_deadline(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
) -> bool {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    // Most calls (every update_curr()) end at the core's first comparison, before it asks
    // for the configuration. No feature on this path: one copy, unlike the entry points
    // below.
    let expired = core_::update_deadline(&mut *rq, se, Live);
    if expired && stats::counting() {
        rq.count(Stat::SliceExpired);
    }
    expired
}

/// The start of `dequeue_entity()`: DELAY_DEQUEUE's decision for a sleep that may be
/// delayed (`delay`) and, when the entity leaves, its lag saved (`update_entity_lag()`).
/// Returns true when the dequeue is delayed (nothing changed).
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`], and `se` queued (`on_rq`).
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_dequeue_start(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
    delay: bool,
) -> bool {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    with_config!(cfg, (rq: &mut CfsRq, se: Se, delay: bool) -> bool => {
        core_::dequeue_start(rq, se, delay, cfg, Live)
    })
}

/// The EEVDF part of `requeue_delayed_entity()`: with DELAY_ZERO, the lag saved and, when
/// positive, dropped by placing the entity at V again.
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`], and `se` queued and delayed.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_requeue_delayed(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    with_config!(cfg, (rq: &mut CfsRq, se: Se) -> () => {
        core_::requeue_delayed(rq, se, cfg, Live)
    })
}

/// The EEVDF part of `reweight_entity()`: lag-preserving rescaling of vruntime
/// and deadline (queued, out of the timeline meanwhile) or of vlag, then
/// `update_load_set()` (weight set, inverse left to be computed lazily).
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`]; current's runtime already accounted.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_reweight_entity(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
    weight: core::ffi::c_ulong,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    #[expect(
        clippy::unnecessary_cast,
        reason = "c_ulong is u64 on the 64-bit targets this builds for, not on others"
    )]
    let lw = LoadWeight {
        weight: weight as u64,
        inv_weight: 0,
    };
    core_::reweight_entity(&mut *rq, se, lw, config());
    if stats::counting() {
        rq.count(Stat::Reweights);
    }
}

/// The wakeup-preemption decision of `check_preempt_wakeup_fair()` for `pse`,
/// already enqueued, against `cfs_rq->curr` (PREEMPT_SHORT included).
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`]; current's runtime already accounted.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_wakeup_preempt(
    cfs_rq: *mut bindings::cfs_rq,
    pse: *mut bindings::sched_entity,
) -> bool {
    if stats::counting() {
        // SAFETY: guaranteed by the caller.
        return unsafe { wakeup_counted(cfs_rq, pse) };
    }
    // SAFETY: guaranteed by the caller.
    let (rq, pse) = unsafe { args(cfs_rq, pse) };
    // The decision alone (the same core code), without classifying it.
    with_config!(cfg, (rq: &mut CfsRq, pse: Se) -> bool => {
        let want = verify::wakeup_before(rq, pse, cfg.features);
        let got = core_::wakeup_preempt(rq, pse, cfg);
        verify::wakeup_after(rq, want, got);
        got
    })
}

/// [`sched_eevdf_wakeup_preempt`] while counting: the same decision, classified and counted
/// (out of line, as [`pick_counted`]).
///
/// # Safety
///
/// As [`sched_eevdf_wakeup_preempt`].
#[inline(never)]
unsafe fn wakeup_counted(cfs_rq: *mut bindings::cfs_rq, pse: *mut bindings::sched_entity) -> bool {
    // SAFETY: guaranteed by the caller.
    let (rq, pse) = unsafe { args(cfs_rq, pse) };
    let cfg = config();
    let want = verify::wakeup_before(rq, pse, cfg.features);
    let preempts = core_::wakeup_preempt(&mut *rq, pse, cfg);
    let why = core_::wakeup_reason(&*rq, pse, preempts, cfg);
    verify::wakeup_after(rq, want, preempts);
    // One increment a wakeup: `wakeups` is the sum of the outcomes.
    rq.count(match why {
        WakeupPreempt::ShortSlice => Stat::PreemptShort,
        WakeupPreempt::CurrIneligible | WakeupPreempt::Idle => Stat::PreemptIneligible,
        WakeupPreempt::EarlierDeadline => Stat::PreemptDeadline,
        WakeupPreempt::RunToParity => Stat::WakeupParityHeld,
        WakeupPreempt::None => Stat::WakeupNoPreempt,
    });
    preempts
}

/// A group entity takes its queue's minimum slice, possibly while queued.
///
/// # Safety
///
/// As [`sched_eevdf_entity_eligible`].
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_set_slice(
    cfs_rq: *mut bindings::cfs_rq,
    se: *mut bindings::sched_entity,
    slice: u64,
) {
    // SAFETY: guaranteed by the caller.
    let (rq, se) = unsafe { args(cfs_rq, se) };
    core_::set_queued_slice(&mut *rq, se, slice);
}
