//! A host-side stand-in for `kernel/sched_eevdf_glue.rs`.
//!
//! The kernel compiles `sched_eevdf/src/lib.rs` as a module of the glue crate,
//! not as a crate of its own, with `--cfg sched_eevdf_in_kernel`, edition 2021,
//! overflow checks on, and lints that include `missing_docs` and
//! `unreachable_pub`. Building this crate does the same on the host in seconds,
//! so a `crate::` path, a missing doc or an unreachable `pub` item in the core
//! fails here (cargo build / clippy with `-D warnings`) before a kernel build
//! would.
#![no_std]
#![deny(missing_docs, unreachable_pub, rust_2018_idioms, non_ascii_idents)]

#[path = "../../../sched_eevdf/src/lib.rs"]
pub mod sched_eevdf;
