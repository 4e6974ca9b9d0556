// SPDX-License-Identifier: GPL-2.0

//! The record of recent placements: what `place_entity()` saw and did, per CPU (shown by
//! `/sys/kernel/debug/sched/eevdf/place`, debugfs/place.rs).
//!
//! Each runqueue keeps a ring of its last [`NR`] placements, `struct rq::eevdf_place`
//! (patch 0013), with `eevdf_place_seq`, the number of placements recorded since the last
//! clear. Both are written under the runqueue lock that the placing entry point already
//! holds, and read and cleared under it by [`RqGuard::placements`] and
//! [`RqGuard::clear_placements`]: a CPU's ring is one consistent snapshot. Nothing is
//! allocated, and a record is plain stores into the runqueue.
//!
//! The ring fills only while recording is on ([`recording`]: a write of `on` to the file),
//! which is off at boot: the placing entry points then pay one load of a global flag and
//! a branch that is not taken, and keep their own code (the recording path is out of
//! line, [`logged`]). Without `CONFIG_SCHED_EEVDF_RUST_STATS` there is no ring, and
//! [`recording`] is a constant false.
//!
//! [`RqGuard::placements`]: crate::rq::RqGuard::placements
//! [`RqGuard::clear_placements`]: crate::rq::RqGuard::clear_placements

use crate::fair::{config, CfsRq, Se};
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
use crate::sched_eevdf::{calc_delta_fair, lag_span, Entity, Runqueue};
use crate::sched_eevdf::{Config, EnqueueFlags};
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
use kernel::bindings;

/// One recorded placement: C's `struct sched_eevdf_place`. Fields (virtual ns unless
/// said otherwise):
///
/// - `seq`: its number on this CPU, from 1 (0: an empty slot);
/// - `pid`: the task's pid, 0 for a group entity;
/// - `flags`: the `ENQUEUE_*` flags `place_entity()` got;
/// - `weight`: the entity's weight, scaled down (nice 0 = 1024);
/// - `load`: W, the queue's weight without the entity (current's included when queued);
/// - `vlag`: the lag saved at dequeue, before placement;
/// - `lag`: the lag applied, after PLACE_LAG's scaling (0 without it or on an empty queue);
/// - `avruntime`: V at placement;
/// - `vruntime`, `deadline`: what the placement set;
/// - `limit`: the clamp that holds `vlag`, `calc_delta_fair(span, w)` with the span of
///   [`lag_span`] (the entity's slice and this queue's largest slice now).
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
pub type Placement = bindings::sched_eevdf_place;

/// Placements a CPU keeps.
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
pub const NR: usize = bindings::SCHED_EEVDF_NR_PLACE as usize;

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
mod on {
    use core::sync::atomic::{AtomicBool, Ordering};

    /// Whether placements are recorded: off at boot, set by the debugfs file.
    static ENABLED: AtomicBool = AtomicBool::new(false);

    /// Turns recording on or off (a placement in flight on another CPU may still land).
    pub(crate) fn set_recording(on: bool) {
        ENABLED.store(on, Ordering::Relaxed);
    }

    /// Whether placements are recorded: one relaxed load.
    #[inline(always)]
    pub(crate) fn recording() -> bool {
        ENABLED.load(Ordering::Relaxed)
    }
}
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
pub(crate) use on::{recording, set_recording};

/// Whether placements are recorded: never without `CONFIG_SCHED_EEVDF_RUST_STATS`.
#[cfg(not(CONFIG_SCHED_EEVDF_RUST_STATS))]
#[inline(always)]
pub(crate) fn recording() -> bool {
    false
}

/// `se`'s pid, 0 for a group entity.
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
fn pid_of(se: Se<'_>) -> i32 {
    let p = se.as_ptr();
    #[cfg(CONFIG_FAIR_GROUP_SCHED)]
    {
        // SAFETY: `se` is a valid entity whose runqueue lock is held (`Se`'s invariant);
        // `my_q` is set when a group entity is made and never changes.
        if !unsafe { (*p).my_q }.is_null() {
            return 0;
        }
    }
    let off = core::mem::offset_of!(bindings::task_struct, se);
    // SAFETY: `se` is valid and not a group entity (its `my_q` is null; without
    // FAIR_GROUP_SCHED every entity is a task's), so it is the `se` of a live `task_struct`
    // at offset `off` (`task_of()`); its `pid` is a plain integer that never changes after
    // fork.
    unsafe { (*p.byte_sub(off).cast::<bindings::task_struct>()).pid }
}

/// `place_entity()` (`place` is the core's function: [`crate::sched_eevdf::place_entity`]
/// or `place_curr_entity`) on `rq`, recorded in its CPU's ring. Returns the lag applied.
///
/// The record's values are the placement's own: `vlag` is read before it, `load` as the
/// core computes W, and V from the result, `vruntime = V - lag`. The limit is computed
/// after (the slice is set by then): `calc_delta_fair()`, a multiplication and a shift.
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
#[inline(never)]
pub(crate) fn logged<'rq>(
    rq: &mut CfsRq<'rq>,
    se: Se<'rq>,
    flags: EnqueueFlags,
    place: impl FnOnce(&mut CfsRq<'rq>, Se<'rq>, EnqueueFlags, Config) -> i64,
) -> i64 {
    let cfg = config();
    let vlag = se.vlag();
    let mut load = rq.avg_load();
    if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
        load = load.wrapping_add(c.load().weight_down());
    }
    let lag = place(rq, se, flags, cfg);
    let vruntime = se.vruntime();
    let rec = Placement {
        seq: 0,
        avruntime: vruntime.wrapping_add(lag as u64),
        vruntime,
        deadline: se.deadline(),
        vlag,
        lag,
        limit: calc_delta_fair(lag_span(&*rq, se, cfg), se.load()),
        weight: se.load().weight_down(),
        load,
        pid: pid_of(se),
        flags: flags.0,
    };
    record(rq, rec);
    lag
}

/// `place` on `rq` without a record: there is none without
/// `CONFIG_SCHED_EEVDF_RUST_STATS` ([`recording`] is false, so this is never called).
#[cfg(not(CONFIG_SCHED_EEVDF_RUST_STATS))]
#[inline(never)]
pub(crate) fn logged<'rq>(
    rq: &mut CfsRq<'rq>,
    se: Se<'rq>,
    flags: EnqueueFlags,
    place: impl FnOnce(&mut CfsRq<'rq>, Se<'rq>, EnqueueFlags, Config) -> i64,
) -> i64 {
    place(rq, se, flags, config())
}

/// Appends `rec` to the ring of `rq`'s CPU, numbered.
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
#[inline(always)]
fn record(rq: &CfsRq<'_>, rec: Placement) {
    // SAFETY:
    // - `rq_of()` of a valid `cfs_rq` is its valid runqueue, whose lock is held for the
    //   borrow of `rq` (`CfsRq`'s invariant);
    // - the ring and its count are written only under that lock, so this is their one
    //   user.
    let r = unsafe { &mut *rq.rq() };
    let seq = r.eevdf_place_seq.wrapping_add(1);
    r.eevdf_place_seq = seq;
    if let Some(slot) = r.eevdf_place.get_mut(slot_of(seq)) {
        *slot = Placement { seq, ..rec };
    }
}

/// The slot of placement number `seq` in a ring of [`NR`].
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
#[inline(always)]
fn slot_of(seq: u64) -> usize {
    // `NR` is a small constant, not 0: the remainder is below it.
    seq.checked_rem(NR as u64).unwrap_or(0) as usize
}

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
impl crate::rq::RqGuard {
    /// This CPU's ring in order, oldest first, into `out`; returns how many placements
    /// were recorded since the last clear (more than [`NR`]: the oldest were overwritten).
    pub fn placements(&self, out: &mut [Placement; NR]) -> u64 {
        // SAFETY: the guard holds the runqueue lock (type invariant), under which alone
        // the ring is written.
        let r = unsafe { &*self.as_ptr() };
        let seq = r.eevdf_place_seq;
        // The oldest slot follows the newest, `slot_of(seq)`.
        for (i, o) in out.iter_mut().enumerate() {
            let from = slot_of(seq.wrapping_add(1).wrapping_add(i as u64));
            if let Some(p) = r.eevdf_place.get(from) {
                *o = *p;
            }
        }
        seq
    }

    /// Empties this CPU's ring and restarts its count.
    pub fn clear_placements(&mut self) {
        // SAFETY: the guard holds the runqueue lock (type invariant), under which alone the
        // ring is written, and `&mut self` is the guard's one user.
        let r = unsafe { &mut *self.as_ptr() };
        r.eevdf_place_seq = 0;
        for p in r.eevdf_place.iter_mut() {
            p.seq = 0;
        }
    }
}
