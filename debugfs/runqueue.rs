// SPDX-License-Identifier: GPL-2.0

//! CPUs and their runqueue locks, for the debugfs files: they take each CPU's snapshot
//! under its runqueue lock and format it after dropping the lock.

use kernel::{
    bindings,
    error::{code::EINVAL, Result},
};

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

/// A CPU's runqueue, locked (`rq_lock_irqsave()`), unlocked on drop.
///
/// # Invariants
///
/// `rq` is a valid runqueue whose lock this guard holds, taken with `rf`.
pub struct RqGuard {
    rq: *mut bindings::rq,
    rf: bindings::rq_flags,
}

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

    /// The root `cfs_rq` of the locked runqueue.
    pub fn cfs(&self) -> *mut bindings::cfs_rq {
        // SAFETY: by the type invariant `rq` is valid; this computes a field address.
        unsafe { &raw mut (*self.rq).cfs }
    }
}

impl Drop for RqGuard {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we hold the lock, taken with `rf`.
        unsafe { bindings::sched_eevdf_rq_unlock_irqrestore(self.rq, &mut self.rf) };
    }
}

/// Prints a per-CPU counter table: a header `cpu NAME...`, one line per online CPU with the
/// counts `read` takes under that CPU's runqueue lock (printed after dropping it), and a
/// line `all` with the sums. The format of the `stats` and `verify` files.
pub fn show_per_cpu<const N: usize>(
    m: &mut super::api::Text,
    names: &[&str],
    read: impl Fn(&RqGuard) -> [u64; N],
) -> Result {
    use super::api::text;
    text!(m, "cpu")?;
    for n in names {
        text!(m, " {n}")?;
    }
    text!(m, "\n")?;
    let mut all = [0u64; N];
    for cpu in online_cpus() {
        let counts = read(&RqGuard::lock(cpu)?);
        text!(m, "{cpu}")?;
        for (a, c) in all.iter_mut().zip(counts) {
            *a = a.wrapping_add(c);
            text!(m, " {c}")?;
        }
        text!(m, "\n")?;
    }
    text!(m, "all")?;
    for a in all {
        text!(m, " {a}")?;
    }
    text!(m, "\n")
}
