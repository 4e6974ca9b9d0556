// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/sched/eevdf/verify` (`CONFIG_SCHED_EEVDF_RUST_VERIFY`): the live
//! oracle's counters per CPU, and the test-only switch that plants a corruption.
//!
//! Format (Documentation/debugfs.md): a header `cpu checks picks wakeups divergences ties`, one
//! line per online CPU, and `all` with the sums. Each CPU's row is read under its runqueue
//! lock. Writes:
//!
//! - `0` resets every CPU's counts;
//! - `off` stops the checks (every hook returns at once) and `on` restarts them: the two
//!   measure what the checks cost within one boot; the file shows `enabled 0|1` last;
//! - `corrupt min_deadline`, `corrupt min_slice` or `corrupt max_slice` makes the next
//!   check of a non-empty timeline find its root's augmented value off by one (restored
//!   after that check): the check must report it, with a WARN naming the invariant.
//!
//! Anything else fails with EINVAL and changes nothing.

use super::api::{text, DebugFile, Text};
use super::per_cpu::{reset_on_zero, show_per_cpu};
use crate::rq::RqGuard;
use crate::verify::{enabled, plant, set_enabled, Plant, NAMES};
use kernel::error::Result;

/// `/sys/kernel/debug/sched/eevdf/verify`.
pub struct VerifyFile;

impl DebugFile for VerifyFile {
    const WRITABLE: bool = true;

    fn show(&self, m: &mut Text) -> Result {
        show_per_cpu(m, &NAMES, RqGuard::verify_counts)?;
        text!(m, "enabled {}\n", u8::from(enabled()))
    }

    fn write(&self, input: &[u8]) -> Result {
        let word = input.strip_suffix(b"\n").unwrap_or(input);
        match word {
            b"corrupt min_deadline" => plant(Plant::MinDeadline),
            b"corrupt min_slice" => plant(Plant::MinSlice),
            b"corrupt max_slice" => plant(Plant::MaxSlice),
            b"off" => set_enabled(false),
            b"on" => set_enabled(true),
            _ => return reset_on_zero(input, RqGuard::reset_verify_counts),
        }
        Ok(())
    }
}
