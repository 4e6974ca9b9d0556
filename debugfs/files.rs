// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/sched/eevdf/`: made by `sched_init_debug()` (patch 0005) through
//! [`sched_eevdf_debugfs_init`].

use super::api::{Dir, DirRef};
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
use super::place::PlaceFile;
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
use super::stats::StatsFile;
use super::timeline::TimelineFile;
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
use super::verify::VerifyFile;
use kernel::{bindings, c_str, error::Result};

static TIMELINE: TimelineFile = TimelineFile;
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
static STATS: StatsFile = StatsFile;
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
static VERIFY: VerifyFile = VerifyFile;
#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
static PLACE: PlaceFile = PlaceFile;

fn create(parent: DirRef) -> Result {
    let dir = Dir::new(c_str!("eevdf"), Some(parent))?;
    dir.create_file(c_str!("timeline"), &TIMELINE)?;
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    dir.create_file(c_str!("stats"), &STATS)?;
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    dir.create_file(c_str!("place"), &PLACE)?;
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    dir.create_file(c_str!("verify"), &VERIFY)?;
    // Built in: the files stay for the kernel's lifetime. On an error above, dropping
    // `dir` removed what had been made.
    dir.keep();
    Ok(())
}

/// Makes `eevdf/` under `parent`, the `sched` debugfs directory. Without debugfs, or on
/// an allocation failure, there is no directory and the scheduler is unaffected.
///
/// # Safety
///
/// `parent` must be null, an error pointer, or the `sched` debugfs directory, which is
/// never removed.
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_debugfs_init(parent: *mut bindings::dentry) {
    if kernel::error::from_err_ptr(parent).is_err() {
        return;
    }
    // SAFETY: `parent` is null or the `sched` debugfs directory, never removed (caller),
    // and not an error pointer (checked above): `DirRef::from_raw`'s obligations.
    if let Some(parent) = unsafe { DirRef::from_raw(parent) } {
        if let Err(e) = create(parent) {
            kernel::pr_warn!("no /sys/kernel/debug/sched/eevdf: {:?}\n", e);
        }
    }
}

// debug.c's entry point (patch 0005), checked as kernel/entry.rs checks fair.c's: the
// prototype that bindgen read from sched.h has this signature.
const _: unsafe extern "C" fn(*mut bindings::dentry) = bindings::sched_eevdf_debugfs_init;
