// SPDX-License-Identifier: GPL-2.0

//! The kernel side of sched_eevdf: the crate that Kbuild compiles into vmlinux
//! when `CONFIG_SCHED_EEVDF_RUST=y`.
//!
//! The EEVDF core is not in this crate: [`sched_eevdf`] is the repository's
//! `sched_eevdf/src/lib.rs`, compiled here as a module with
//! `--cfg sched_eevdf_in_kernel`, so the kernel runs the very source that the
//! host tests, the simulator and the benchmarks run. This crate adds only what
//! touches the kernel.
//!
//! No code of this crate may panic outside the KUnit suites: the lints below reject
//! what can (`unwrap()`, `expect()`, `panic!()`, indexing and slicing, arithmetic that
//! can overflow), as the core's own lints do on the host, and tools/no-panic.sh checks
//! the object code for any panic path left. `tools/kernel-clippy.sh KERNEL` runs clippy
//! with the kernel's flags; tools/test.sh runs it.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

#[path = "../sched_eevdf/src/lib.rs"]
#[macro_use]
pub mod sched_eevdf;

pub mod entry;
pub mod fair;
pub mod place;
pub mod rbtree_augmented;
pub mod rq;
#[cfg(CONFIG_SCHED_DEBUG)]
pub mod snapshot;
pub mod stats;
pub mod verify;

/// `/sys/kernel/debug/sched/eevdf/`: the repository's debugfs/ directory.
///
/// The directory exists with SCHED_DEBUG, which makes `/sys/kernel/debug/sched/`
/// (kernel/sched/debug.c, where patch 0005 puts the runqueue accessors too). Its files
/// read the scheduler through the glue ([`rq`], [`snapshot`], [`stats`], [`verify`]);
/// nothing of the glue uses them.
#[cfg(CONFIG_SCHED_DEBUG)]
#[path = "../debugfs"]
pub mod debugfs {
    pub mod api;
    pub mod files;
    pub mod per_cpu;
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    pub mod place;
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    pub mod stats;
    pub mod timeline;
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    pub mod verify;
}

/// The prefix of this crate's kernel log lines (`pr_*!`).
const __LOG_PREFIX: &[u8] = b"sched_eevdf\0";

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
#[expect(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    reason = "test code: a panic fails the KUnit case, not the scheduler"
)]
pub mod kunit;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
#[expect(
    clippy::indexing_slicing,
    reason = "test code: a panic fails the KUnit case, not the scheduler"
)]
mod kunit_core;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
mod kunit_bindings;

#[cfg(all(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST, CONFIG_SCHED_DEBUG))]
#[expect(
    clippy::arithmetic_side_effects,
    reason = "test code: a panic fails the KUnit case, not the scheduler"
)]
mod kunit_debugfs;
