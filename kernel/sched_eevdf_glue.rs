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

// The core's modules name each other as `crate::<module>` (it is a crate of its
// own on the host); here it is a module, so its modules are also visible at
// this crate's root under the same names.
#[allow(unused_imports)]
use sched_eevdf::{check, eevdf, entity, features, load, user, vtime};

pub mod fair;
pub mod rbtree_augmented;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
pub mod kunit;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
mod kunit_core;

#[cfg(CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST)]
mod kunit_bindings;
