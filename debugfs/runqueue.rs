// SPDX-License-Identifier: GPL-2.0

//! CPUs and their runqueue locks, for the debugfs files: they take each CPU's snapshot
//! under its runqueue lock and format it after dropping the lock.

use kernel::{
    bindings,
    error::{code::EINVAL, Result},
};

/// The CPU ids below `nr_cpu_ids`.
pub fn cpu_possible_ids() -> core::ops::Range<u32> {
    // As cpumask.h: `nr_cpu_ids` is the constant `NR_CPUS` (a macro, which bindgen does
    // not see) with one CPU or a forced count (FORCE_NR_CPUS, which !SMP sets).
    #[cfg(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS))]
    let n = bindings::NR_CPUS;
    #[cfg(not(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS)))]
    // SAFETY: `nr_cpu_ids` is set once during early boot, long before debugfs exists.
    let n = unsafe { bindings::nr_cpu_ids };
    0..n
}

/// Whether `cpu` is online now (`cpu_online()`). A CPU may go offline right after; its
/// runqueue stays valid, so callers only get an out-of-date answer.
pub fn cpu_online(cpu: u32) -> bool {
    const BITS: u32 = u64::BITS;
    let word = (cpu / BITS) as usize;
    // SAFETY: `__cpu_online_mask` is a static bitmap; this reads one word of it with a
    // single load (`READ_ONCE()`, as `cpumask_test_cpu()` does in effect); hotplug
    // updates it with atomic bit operations.
    unsafe {
        let bits = &raw const bindings::__cpu_online_mask.bits;
        if word >= (*bits).len() {
            return false;
        }
        let w = core::ptr::read_volatile((bits as *const u64).add(word));
        w & (1u64 << (cpu % BITS)) != 0
    }
}

/// The online CPUs, in order.
pub fn online_cpus() -> impl Iterator<Item = u32> {
    cpu_possible_ids().filter(|&c| cpu_online(c))
}

/// `cpu`'s `rq->nr_running`, read without the lock (a hint that may be stale at once);
/// 0 for a CPU id that does not exist.
pub fn nr_running(cpu: u32) -> usize {
    if !cpu_possible_ids().contains(&cpu) {
        return 0;
    }
    // SAFETY: `cpu` is below `nr_cpu_ids`, so its runqueue exists; a single racy load of
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
    /// Locks `cpu`'s runqueue, with interrupts off. EINVAL for a CPU id that does not
    /// exist. Do not allocate or touch user memory while holding it.
    pub fn lock(cpu: u32) -> Result<RqGuard> {
        if !cpu_possible_ids().contains(&cpu) {
            return Err(EINVAL);
        }
        // SAFETY: `cpu` is below `nr_cpu_ids`, so its per-CPU runqueue exists for the
        // kernel's lifetime.
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
    m: &mut super::api::SeqBuf<'_>,
    names: &[&str],
    read: impl Fn(&RqGuard) -> [u64; N],
) -> Result {
    use super::api::seq_print;
    seq_print!(m, "cpu")?;
    for n in names {
        seq_print!(m, " {n}")?;
    }
    seq_print!(m, "\n")?;
    let mut all = [0u64; N];
    for cpu in online_cpus() {
        let counts = read(&RqGuard::lock(cpu)?);
        seq_print!(m, "{cpu}")?;
        for (a, c) in all.iter_mut().zip(counts) {
            *a = a.wrapping_add(c);
            seq_print!(m, " {c}")?;
        }
        seq_print!(m, "\n")?;
    }
    seq_print!(m, "all")?;
    for a in all {
        seq_print!(m, " {a}")?;
    }
    seq_print!(m, "\n")
}
