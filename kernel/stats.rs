// SPDX-License-Identifier: GPL-2.0

//! The per-CPU counters of the EEVDF core's decisions (shown by
//! `/sys/kernel/debug/sched/eevdf/stats`, debugfs/stats.rs).
//!
//! The counters are `struct rq::eevdf_stats`, one array per CPU, indexed by [`Stat`]. The
//! entry points count under the runqueue lock they run under; a reader reads and resets
//! each CPU's array under that CPU's lock ([`RqGuard::counts`]), so a CPU's row is one consistent
//! snapshot. Counting is one increment of a word in the runqueue, a cache line the
//! scheduler is writing anyway, and happens only while schedstats are enabled
//! ([`counting`]).
//!
//! [`RqGuard::counts`]: crate::rq::RqGuard::counts

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
use kernel::bindings;

include!("stats_table.rs");

macro_rules! stats_enum {
    ($( $(#[doc = $doc:expr])* ($v:ident, $name:literal) ),* $(,)?) => {
        /// A counter of [`struct rq::eevdf_stats`](bindings::rq), its index there.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Stat {
            $( $(#[doc = $doc])* $v, )*
        }

        /// The counters' names in the file, in index order.
        pub const NAMES: &[&str] = &[$($name),*];
    };
}
eevdf_stats_table!(stats_enum);

/// Number of counters.
pub const NR: usize = NAMES.len();

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
const _: () = assert!(NR <= bindings::SCHED_EEVDF_NR_STATS as usize);

/// One CPU's counts.
pub type Counts = [u64; NR];

/// Whether the counters count: while schedstats are enabled (`schedstat_enabled()`, i.e.
/// `schedstats=enable` on the command line or `sysctl kernel.sched_schedstats=1`), like the
/// scheduler's other statistics. Off (Debian's default), the entry points take the
/// decision-only paths: no classification, no increment, one load and a branch per entry
/// point. Always false without `CONFIG_SCHED_EEVDF_RUST_STATS`.
#[inline(always)]
pub fn counting() -> bool {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    {
        // SAFETY: `sched_schedstats` is a static key defined by the scheduler; this reads its
        // `enabled` count, an `atomic_t`, with one load (`static_key_enabled()`:
        // `atomic_read(&key->enabled) > 0`). A racing toggle is seen before or after.
        unsafe {
            core::ptr::read_volatile(&raw const bindings::sched_schedstats.key.enabled.counter) > 0
        }
    }
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_STATS))]
    false
}
