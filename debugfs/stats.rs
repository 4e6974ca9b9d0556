// SPDX-License-Identifier: GPL-2.0

//! The per-CPU counters of the EEVDF core's decisions, and the file that shows them,
//! `/sys/kernel/debug/sched/eevdf/stats`.
//!
//! The counters are `struct rq::eevdf_stats`, one array per CPU, indexed by [`Stat`]. The
//! entry points count under the runqueue lock they run under; the file reads and resets
//! each CPU's array under that CPU's lock, so a CPU's row is one consistent snapshot.
//! Counting is one increment of a word in the runqueue, a cache line the scheduler is
//! writing anyway, and happens only while schedstats are enabled ([`counting`]).
//!
//! Format (Documentation/debugfs.md): a header line `cpu NAME...`, one line per online CPU
//! with its counts, and a line `all` with the sums. Writing `0` resets every CPU's counts;
//! any other write fails with EINVAL and changes nothing.

use kernel::bindings;

/// The counter table: one line per counter, its name in the file and what it counts.
/// Everything else (the enum, the names, the count) is generated from it.
macro_rules! eevdf_stats_table {
    ($m:ident) => {
        $m! {
            /// `pick_eevdf()` returned an entity. Counted as the picks of no other pick
            /// counter; the file shows the total (every event costs one increment).
            (Picks, "picks"),
            /// The pick was current, kept by RUN_TO_PARITY (eligible, slice protected).
            (PicksParity, "picks_parity"),
            /// The earliest virtual deadline belonged to an entity that was not eligible:
            /// a later deadline was picked. The picks that ELIGIBLE changed.
            (PicksIneligibleEarliest, "picks_ineligible_earliest"),
            /// Wakeup-preemption decisions taken by the core (`check_preempt_wakeup_fair()`).
            /// Not counted: the file shows the sum of the five wakeup outcomes below.
            (Wakeups, "wakeups"),
            /// RUN_TO_PARITY kept current although the wakee was eligible with a deadline
            /// not later than current's.
            (WakeupParityHeld, "wakeup_parity_held"),
            /// Preemptions by PREEMPT_SHORT: a shorter-slice eligible wakee cancelled
            /// current's slice protection.
            (PreemptShort, "preempt_short"),
            /// Preemptions because current was not eligible (or not runnable).
            (PreemptIneligible, "preempt_ineligible"),
            /// Preemptions because the wakee had the earliest eligible deadline.
            (PreemptDeadline, "preempt_deadline"),
            /// Wakeups that did not preempt for any other reason (current's deadline earlier,
            /// wakee not eligible, current is the wakee).
            (WakeupNoPreempt, "wakeup_no_preempt"),
            /// `update_deadline()` gave current a new deadline: its request was used up.
            (SliceExpired, "slice_expired"),
            /// Placements (`place_entity()`) that applied a non-zero lag (PLACE_LAG).
            (PlaceLag, "place_lag"),
            /// Placements of new tasks (`ENQUEUE_INITIAL`).
            (PlaceInitial, "place_initial"),
            /// Weight changes of queued or sleeping entities (`reweight_entity()`).
            (Reweights, "reweights"),
            /// `update_entity_lag()` clamped the lag to `±max(2 slice, tick)`: V and the
            /// entity were further apart than EEVDF's bound.
            (LagClamped, "lag_clamped"),
        }
    };
}

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

/// Counts one event in `rq`'s counters. Callers count only while [`counting`].
///
/// # Safety
///
/// `rq` must be valid and its lock held by the caller.
#[inline(always)]
pub unsafe fn count(rq: *mut bindings::rq, s: Stat) {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    {
        // SAFETY: guaranteed by the caller; the counters are only written under the lock.
        let c = unsafe { &mut (*rq).eevdf_stats };
        if let Some(c) = c.get_mut(s as usize) {
            *c = c.wrapping_add(1);
        }
    }
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_STATS))]
    let _ = (rq, s);
}

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
pub use file::StatsFile;

/// Reading and resetting the counters, and the file (only with the counters).
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
mod file {
    use super::{Counts, Stat, NAMES, NR};
    use crate::debugfs::api::{parse_u64, DebugFile, Text};
    use crate::debugfs::runqueue::{possible_cpus, show_per_cpu, RqGuard};
    use kernel::{
        bindings,
        error::{code::EINVAL, Result},
    };

    impl RqGuard {
        /// This CPU's counts, with the totals `picks` and `wakeups` summed from their parts.
        pub fn counts(&self) -> Counts {
            let mut out = [0; NR];
            // SAFETY: the guard holds the runqueue lock, under which the counters are written.
            let c = unsafe { &(*self.as_ptr()).eevdf_stats };
            for (o, c) in out.iter_mut().zip(c.iter()) {
                *o = *c;
            }
            let sum = |out: &Counts, parts: &[Stat]| {
                parts.iter().fold(0u64, |a, &p| {
                    a.wrapping_add(out.get(p as usize).copied().unwrap_or(0))
                })
            };
            let picks = sum(
                &out,
                &[
                    Stat::Picks,
                    Stat::PicksParity,
                    Stat::PicksIneligibleEarliest,
                ],
            );
            let wakeups = sum(
                &out,
                &[
                    Stat::WakeupParityHeld,
                    Stat::PreemptShort,
                    Stat::PreemptIneligible,
                    Stat::PreemptDeadline,
                    Stat::WakeupNoPreempt,
                ],
            );
            if let Some(p) = out.get_mut(Stat::Picks as usize) {
                *p = picks;
            }
            if let Some(w) = out.get_mut(Stat::Wakeups as usize) {
                *w = wakeups;
            }
            out
        }

        /// Resets this CPU's counts.
        pub fn reset_counts(&mut self) {
            // SAFETY: as in `counts`.
            unsafe { (*self.as_ptr()).eevdf_stats = [0; bindings::SCHED_EEVDF_NR_STATS as usize] };
        }
    }

    /// `/sys/kernel/debug/sched/eevdf/stats`.
    pub struct StatsFile;

    impl DebugFile for StatsFile {
        const WRITABLE: bool = true;

        fn show(&self, m: &mut Text) -> Result {
            show_per_cpu(m, NAMES, RqGuard::counts)
        }

        /// `0` resets every CPU's counts (possible CPUs, so an offline CPU does not come back
        /// with old counts). Anything else is EINVAL.
        fn write(&self, input: &[u8]) -> Result {
            if parse_u64(input)? != 0 {
                return Err(EINVAL);
            }
            for cpu in possible_cpus() {
                RqGuard::lock(cpu)?.reset_counts();
            }
            Ok(())
        }
    }
}
