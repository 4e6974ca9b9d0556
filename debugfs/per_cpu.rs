// SPDX-License-Identifier: GPL-2.0

//! The per-CPU tables of the `stats`, `verify` and `place` files: printed per online CPU,
//! reset by a write of `0` on every possible CPU.

use super::api::{parse_u64, text, Text};
use crate::rq::{online_cpus, possible_cpus, RqGuard};
use kernel::error::{code::EINVAL, Result};

/// A write of `0` to a per-CPU file: runs `reset` under each possible CPU's runqueue lock
/// (possible CPUs, so an offline CPU does not come back with old values). Anything else is
/// EINVAL and changes nothing.
pub fn reset_on_zero(input: &[u8], reset: impl Fn(&mut RqGuard)) -> Result {
    if parse_u64(input)? != 0 {
        return Err(EINVAL);
    }
    for cpu in possible_cpus() {
        reset(&mut RqGuard::lock(cpu)?);
    }
    Ok(())
}

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
