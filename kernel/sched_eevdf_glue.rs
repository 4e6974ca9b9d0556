// SPDX-License-Identifier: GPL-2.0

//! The kernel side of sched_eevdf: the crate that Kbuild compiles into vmlinux
//! when `CONFIG_SCHED_EEVDF_RUST=y`.
//!
//! The EEVDF core is not in this crate: [`sched_eevdf`] is the repository's
//! `sched_eevdf/src/lib.rs`, compiled here as a module with
//! `--cfg sched_eevdf_in_kernel`, so the kernel runs the very source that the
//! host tests, the simulator and the benchmarks run. This crate adds only what
//! touches the kernel.

#[path = "../sched_eevdf/src/lib.rs"]
#[macro_use]
pub mod sched_eevdf;

pub mod fair;
pub mod rbtree_augmented;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
pub mod kunit;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
mod kunit_core;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
mod kunit_bindings;
