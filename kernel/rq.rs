// SPDX-License-Identifier: GPL-2.0

//! CPUs and their runqueue locks: the proof of the lock that the glue's references need.
//!
//! A [`CfsRq`] reference, and every [`Se`] handle made from it, exists only while the
//! runqueue lock is held, for a lifetime that cannot outlive the proof of it:
//!
//! - fair.c holds the lock when it calls an entry point: [`with_locked`] gives the entry
//!   point's body a reference that lives for the call (kernel/entry.rs).
//! - The debugfs files take the lock themselves: an [`RqGuard`] holds it, and the
//!   references it gives out borrow the guard, so they end before the unlock.
//!
//! [`Se`]: crate::fair::Se

use crate::fair::CfsRq;
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
use crate::stats;
use kernel::bindings;
#[cfg(CONFIG_SCHED_DEBUG)]
use kernel::error::{code::EINVAL, Result};

/// The CPU ids below `nr_cpu_ids`: a superset of the possible CPUs (the possible mask may
/// have holes), so only [`possible_cpus`] may be used to reach a runqueue.
pub fn cpu_ids() -> core::ops::Range<u32> {
    // As cpumask.h: `nr_cpu_ids` is the constant `NR_CPUS` (a macro, which bindgen does
    // not see) with one CPU or a forced count (FORCE_NR_CPUS, which !SMP sets).
    #[cfg(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS))]
    let n = bindings::NR_CPUS;
    #[cfg(not(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS)))]
    // SAFETY: `nr_cpu_ids` is set once during early boot, long before debugfs exists.
    let n = unsafe { bindings::nr_cpu_ids };
    0..n
}

/// Whether `cpu` is set in `mask` (`cpumask_test_cpu()`), read with one load of its word.
///
/// # Safety
///
/// `mask` points to one of the kernel's static CPU masks (`__cpu_possible_mask`,
/// `__cpu_online_mask`), which live for the kernel's lifetime and are updated with
/// atomic bit operations.
unsafe fn cpu_in_mask(mask: *const bindings::cpumask, cpu: u32) -> bool {
    const BITS: u32 = u64::BITS;
    let word = (cpu / BITS) as usize;
    // SAFETY: `mask` is valid (caller); the word index is checked against the bitmap's
    // length before the load, which is a single volatile load (`READ_ONCE()`).
    unsafe {
        let bits = &raw const (*mask).bits;
        if word >= (*bits).len() {
            return false;
        }
        let w = core::ptr::read_volatile((bits as *const u64).add(word));
        w & (1u64 << (cpu % BITS)) != 0
    }
}

/// Whether `cpu` is possible (`cpu_possible()`): it has a runqueue, for the kernel's
/// lifetime.
pub fn cpu_possible(cpu: u32) -> bool {
    // SAFETY: `__cpu_possible_mask` is a static mask, set during early boot.
    cpu_ids().contains(&cpu)
        && unsafe { cpu_in_mask(&raw const bindings::__cpu_possible_mask, cpu) }
}

/// Whether `cpu` is online now (`cpu_online()`). A CPU may go offline right after; its
/// runqueue stays valid, so callers only get an out-of-date answer.
pub fn cpu_online(cpu: u32) -> bool {
    // SAFETY: `__cpu_online_mask` is a static mask that hotplug updates atomically.
    cpu_possible(cpu) && unsafe { cpu_in_mask(&raw const bindings::__cpu_online_mask, cpu) }
}

/// The possible CPUs, in order: the ones with a runqueue.
pub fn possible_cpus() -> impl Iterator<Item = u32> {
    cpu_ids().filter(|&c| cpu_possible(c))
}

/// The online CPUs, in order.
pub fn online_cpus() -> impl Iterator<Item = u32> {
    cpu_ids().filter(|&c| cpu_online(c))
}

#[cfg(CONFIG_SCHED_DEBUG)]
/// `cpu`'s `rq->nr_running`, read without the lock (a hint that may be stale at once);
/// 0 for a CPU id that does not exist.
pub fn nr_running(cpu: u32) -> usize {
    if !cpu_possible(cpu) {
        return 0;
    }
    // SAFETY: `cpu` is possible, so its runqueue exists; a single racy load of
    // an aligned `unsigned int` (`READ_ONCE()`).
    unsafe {
        let rq = bindings::sched_eevdf_cpu_rq(cpu as i32);
        core::ptr::read_volatile(&raw const (*rq).nr_running) as usize
    }
}

// The runqueue accessors are kernel/sched/debug.c's (patch 0005): the readers that lock a
// runqueue other than through fair.c's entry points are the debugfs files and KUnit.
#[cfg(CONFIG_SCHED_DEBUG)]
/// A CPU's runqueue, locked (`rq_lock_irqsave()`), unlocked on drop.
///
/// # Invariants
///
/// `rq` is a valid runqueue whose lock this guard holds, taken with `rf`.
pub struct RqGuard {
    rq: *mut bindings::rq,
    rf: bindings::rq_flags,
}

#[cfg(CONFIG_SCHED_DEBUG)]
impl RqGuard {
    /// Locks `cpu`'s runqueue, with interrupts off. EINVAL for a CPU that is not possible
    /// (it has no runqueue). Do not allocate or touch user memory while holding it.
    pub fn lock(cpu: u32) -> Result<RqGuard> {
        if !cpu_possible(cpu) {
            return Err(EINVAL);
        }
        // SAFETY: `cpu` is possible, so its per-CPU runqueue exists for the kernel's
        // lifetime.
        let rq = unsafe { bindings::sched_eevdf_cpu_rq(cpu as i32) };
        // SAFETY: all-zero is a valid `rq_flags`; `rq_lock_irqsave()` fills it in.
        let mut rf: bindings::rq_flags = unsafe { core::mem::zeroed() };
        // SAFETY: `rq` is valid; the lock is not held by this context (debugfs handlers
        // run in process context without scheduler locks).
        unsafe { bindings::sched_eevdf_rq_lock_irqsave(rq, &mut rf) };
        // INVARIANT: locked just now with `rf`.
        Ok(RqGuard { rq, rf })
    }

    /// The locked runqueue.
    pub fn as_ptr(&self) -> *mut bindings::rq {
        self.rq
    }

    /// The root `cfs_rq` of the locked runqueue, for as long as the guard is borrowed.
    pub fn root(&self) -> &CfsRq<'_> {
        // SAFETY:
        // - `rq` is valid and its lock held for as long as `self` lives (type invariant),
        //   so its embedded root `cfs_rq` is valid and locked for the borrow of `self`;
        // - the returned reference is shared: the guard gives out no `&mut` meanwhile.
        unsafe { CfsRq::from_raw(&raw mut (*self.rq).cfs) }
    }

    /// A `cfs_rq` of the locked runqueue (the root's or a group's), for as long as the
    /// guard is borrowed: the lock that makes it safe to read bounds the reference.
    ///
    /// # Safety
    ///
    /// `cfs` is a valid `cfs_rq` of this guard's runqueue (its root, or the `my_q` of a
    /// group entity queued on one of them, read under this lock).
    pub unsafe fn cfs_rq(&self, cfs: *mut bindings::cfs_rq) -> &CfsRq<'_> {
        // SAFETY:
        // - `cfs` is a valid `cfs_rq` of this runqueue (the caller's obligation), whose lock
        //   `self` holds for as long as it lives (type invariant), so it is valid and
        //   locked for the borrow of `self`;
        // - the returned reference is shared: the guard gives out no `&mut` meanwhile.
        unsafe { CfsRq::from_raw(cfs) }
    }
}

#[cfg(CONFIG_SCHED_DEBUG)]
impl Drop for RqGuard {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we hold the lock, taken with `rf`.
        unsafe { bindings::sched_eevdf_rq_unlock_irqrestore(self.rq, &mut self.rf) };
    }
}

/// Runs `f` on `cfs_rq`, whose runqueue lock the caller holds: the reference (and every
/// handle made from it) lives for the call and cannot leave it (`f` is generic over the
/// lifetime, so its result cannot name it).
///
/// # Safety
///
/// - `cfs_rq` is a valid `struct cfs_rq`;
/// - the caller holds the lock of its runqueue, `rq_of(cfs_rq)`, for the whole call;
/// - nothing else uses `cfs_rq` meanwhile (the lock's exclusion; fair.c does not pass the
///   same `cfs_rq` to a second entry point while one runs).
#[inline(always)]
pub unsafe fn with_locked<R>(
    cfs_rq: *mut bindings::cfs_rq,
    f: impl for<'rq> FnOnce(&'rq mut CfsRq<'rq>) -> R,
) -> R {
    // SAFETY: the caller's obligations are `CfsRq::from_raw_mut`'s, for the call.
    f(unsafe { CfsRq::from_raw_mut(cfs_rq) })
}

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
impl RqGuard {
    // The counters of kernel/stats.rs, read and reset by their debugfs file.

    /// This CPU's counts, with the totals `picks` and `wakeups` summed from their parts, and
    /// `pick_fast` the picks that took neither of the tree's paths.
    pub fn counts(&self) -> stats::Counts {
        let mut out = [0; stats::NR];
        // SAFETY: the guard holds the runqueue lock, under which the counters are written.
        let c = unsafe { &(*self.as_ptr()).eevdf_stats };
        for (o, c) in out.iter_mut().zip(c.iter()) {
            *o = *c;
        }
        let sum = |out: &stats::Counts, parts: &[stats::Stat]| {
            parts.iter().fold(0u64, |a, &p| {
                a.wrapping_add(out.get(p as usize).copied().unwrap_or(0))
            })
        };
        let picks = sum(
            &out,
            &[
                stats::Stat::Picks,
                stats::Stat::PicksParity,
                stats::Stat::PicksIneligibleEarliest,
                stats::Stat::PicksBuddy,
            ],
        );
        let wakeups = sum(
            &out,
            &[
                stats::Stat::WakeupParityHeld,
                stats::Stat::PreemptShort,
                stats::Stat::PreemptIneligible,
                stats::Stat::PreemptDeadline,
                stats::Stat::WakeupNoPreempt,
                stats::Stat::PreemptBuddy,
                stats::Stat::WakeupSyncResched,
                stats::Stat::WakeupSyncNone,
                stats::Stat::WakeupForkDelayed,
            ],
        );
        if let Some(p) = out.get_mut(stats::Stat::Picks as usize) {
            *p = picks;
        }
        let slow = sum(&out, &[stats::Stat::PickShortcut, stats::Stat::PickDescent]);
        if let Some(f) = out.get_mut(stats::Stat::PickFast as usize) {
            *f = picks.wrapping_sub(slow);
        }
        if let Some(w) = out.get_mut(stats::Stat::Wakeups as usize) {
            *w = wakeups;
        }
        out
    }

    /// Resets this CPU's counts.
    pub fn reset_counts(&mut self) {
        // SAFETY: the guard holds the runqueue lock (type invariant), under which alone the
        // counters are written, and `&mut self` is the guard's one user.
        unsafe { (*self.as_ptr()).eevdf_stats = [0; bindings::SCHED_EEVDF_NR_STATS as usize] };
    }
}
