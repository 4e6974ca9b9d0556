// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/sched/eevdf/stats`: the counters of kernel/stats.rs.
//!
//! Format (Documentation/debugfs.md): a header line `cpu NAME...`, one line per online CPU
//! with its counts, and a line `all` with the sums. Writing `0` resets every CPU's counts;
//! any other write fails with EINVAL and changes nothing.

use super::api::{DebugFile, Text};
use super::per_cpu::{reset_on_zero, show_per_cpu};
use crate::rq::RqGuard;
use crate::stats::NAMES;
use kernel::error::Result;

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
        reset_on_zero(input, RqGuard::reset_counts)
    }
}
