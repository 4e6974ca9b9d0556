//! The library behind the `eevdf-sim` binary: the seed model ([`seed`]), the
//! kernel-faithful simulator ([`sim`]) and what they share. The binary's `--help` is
//! `src/help.txt`; Documentation/simulator.md is the user's page.
//!
//! Every EEVDF decision is made by the `sched_eevdf` crate, reached only through
//! [`coreglue`]; nothing in this crate computes eligibility, a pick, a deadline, a
//! placement or a lag by itself.

#![deny(missing_docs)]

pub mod coreglue;
pub mod render;
pub mod scenario;
pub mod seed;
pub mod sim;
pub mod stats;
pub mod workload;
