// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/sched/eevdf/place` (`CONFIG_SCHED_EEVDF_RUST_STATS`): the recent
//! placements of every CPU (kernel/place.rs), as `place_entity()` saw them.
//!
//! Format (Documentation/debugfs.md): a line `enabled 0|1`, a header, and one row per kept
//! placement, CPU by CPU, oldest first (`seq` counts a CPU's placements since the last
//! clear, so a gap before the first row is what the ring overwrote):
//!
//! ```text
//! cpu seq pid flags weight load vlag lag limit V vruntime deadline
//! ```
//!
//! Writes: `on` starts recording, `off` stops it (what is kept stays), `0` clears every
//! CPU's ring. Anything else fails with EINVAL and changes nothing.

use super::api::{text, DebugFile, Text};
use super::per_cpu::reset_on_zero;
use crate::place::{recording, set_recording, Placement, NR};
use crate::rq::{online_cpus, RqGuard};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox},
    error::Result,
};

/// `/sys/kernel/debug/sched/eevdf/place`.
pub struct PlaceFile;

/// The column names, after `cpu`.
pub const HEADER: &str = "cpu seq pid flags weight load vlag lag limit V vruntime deadline";

impl DebugFile for PlaceFile {
    const WRITABLE: bool = true;

    fn show(&self, m: &mut Text) -> Result {
        // SAFETY: all-zero is a valid `struct sched_eevdf_place` (integers): an empty slot.
        let empty: Placement = unsafe { core::mem::zeroed() };
        // One CPU's ring, allocated before any lock is taken and refilled per CPU.
        let mut ring = KBox::new([empty; NR], GFP_KERNEL)?;
        text!(m, "enabled {}\n{HEADER}\n", u8::from(recording()))?;
        for cpu in online_cpus() {
            // Copied under the lock, printed after dropping it.
            RqGuard::lock(cpu)?.placements(&mut ring);
            for p in ring.iter().filter(|p| p.seq != 0) {
                text!(
                    m,
                    "{cpu} {} {} {:#x} {} {} {} {} {} {} {} {}\n",
                    p.seq,
                    p.pid,
                    p.flags,
                    p.weight,
                    p.load,
                    p.vlag,
                    p.lag,
                    p.limit,
                    p.avruntime,
                    p.vruntime,
                    p.deadline
                )?;
            }
        }
        Ok(())
    }

    fn write(&self, input: &[u8]) -> Result {
        let word = input.strip_suffix(b"\n").unwrap_or(input);
        match word {
            b"on" => set_recording(true),
            b"off" => set_recording(false),
            _ => return reset_on_zero(input, RqGuard::clear_placements),
        }
        Ok(())
    }
}
