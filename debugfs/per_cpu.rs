// SPDX-License-Identifier: GPL-2.0

//! The per-CPU counter tables of the `stats` and `verify` files.

use super::api::{text, Text};
use crate::rq::{online_cpus, RqGuard};
use kernel::error::Result;

/// Prints a per-CPU counter table: a header `cpu NAME...`, one line per online CPU with the
/// counts `read` takes under that CPU's runqueue lock (printed after dropping it), and a
/// line `all` with the sums. The format of the `stats` and `verify` files.
pub fn show_per_cpu<const N: usize>(
    m: &mut Text,
    names: &[&str],
    read: impl Fn(&RqGuard) -> [u64; N],
) -> Result {
    text!(m, "cpu")?;
    for n in names {
        text!(m, " {n}")?;
    }
    text!(m, "\n")?;
    let mut all = [0u64; N];
    for cpu in online_cpus() {
        let counts = read(&RqGuard::lock(cpu)?);
        text!(m, "{cpu}")?;
        for (a, c) in all.iter_mut().zip(counts) {
            *a = a.wrapping_add(c);
            text!(m, " {c}")?;
        }
        text!(m, "\n")?;
    }
    text!(m, "all")?;
    for a in all {
        text!(m, " {a}")?;
    }
    text!(m, "\n")
}
