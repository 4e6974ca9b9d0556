// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/sched/eevdf/timeline`: every CPU's `cfs_rq`s (the root and, with
//! FAIR_GROUP_SCHED, each runnable group's) with V, the sums and every queued entity in
//! tree order.
//!
//! Per CPU: the snapshot buffer is allocated first; then, under the runqueue lock, the
//! glue copies the runqueue into it ([`Snapshot::take`], kernel/snapshot.rs); the lock is
//! dropped, and only then is anything formatted or a cgroup path looked up. This file
//! reads the scheduler only through that snapshot.
//!
//! The file is rendered once per open (debugfs/api.rs), so each CPU's runqueue is walked
//! once per open. The time a walk holds the lock, with interrupts off, is bounded by
//! [`MAX_ROWS`] rows; what it costs a latency-sensitive task on that CPU is measured in
//! Documentation/reliability.md.
//!
//! Format (Documentation/debugfs.md):
//!
//! ```text
//! cpu 0
//! cfs_rq V=81234567890 zero=81234560000 sum_w=3072 nr_queued=3 min_slice_ns=3000000 path=/
//!   S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
//!   R      412     1024        -1234      2998766    3000000 - y - hackbench
//!   Q        -      512       -20000      5980000    3000000 - y - /a
//! ```

use super::api::{text, DebugFile, Text};
use crate::rq::{nr_running, online_cpus, RqGuard};
use crate::snapshot::{Row, Snapshot, Who, MAX_ROWS};
use kernel::{bindings, error::Result};

/// Prints `bytes` up to the first NUL, with anything but printable ASCII as `?`, so that
/// a task name cannot break the line format.
fn print_name(m: &mut Text, bytes: &[u8]) -> Result {
    let mut out = [0u8; 256];
    let mut n: usize = 0;
    for (&b, o) in bytes.iter().take_while(|&&b| b != 0).zip(out.iter_mut()) {
        *o = if (0x20..0x7f).contains(&b) { b } else { b'?' };
        n = n.wrapping_add(1);
    }
    // Printable ASCII is UTF-8.
    let s = core::str::from_utf8(out.get(..n).unwrap_or(&[])).unwrap_or("?");
    text!(m, "{s}")
}

/// Prints a `cfs_rq`'s cgroup: `/` for the root, a group's cgroup path otherwise.
fn print_cgroup(m: &mut Text, cgroup: Option<u64>) -> Result {
    match cgroup {
        None => text!(m, "/"),
        Some(id) => print_cgroup_path(m, id),
    }
}

/// Prints the path of the cgroup whose kernfs id is `id` (cgroup v2; the id when the
/// lookup fails, e.g. for a cgroup v1 hierarchy or a group removed since the snapshot).
#[cfg(CONFIG_FAIR_GROUP_SCHED)]
fn print_cgroup_path(m: &mut Text, id: u64) -> Result {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its length; the lookup takes its own references and
    // may sleep, which is fine here (no lock held, process context).
    unsafe { bindings::cgroup_path_from_kernfs_id(id, buf.as_mut_ptr().cast(), buf.len()) };
    if buf.first() == Some(&0) {
        return text!(m, "cgroup-id:{id}");
    }
    print_name(m, &buf)
}

/// Without group scheduling only the root `cfs_rq` is walked, so no row has a cgroup
/// (and the kernel may have no cgroups to look one up in).
#[cfg(not(CONFIG_FAIR_GROUP_SCHED))]
fn print_cgroup_path(m: &mut Text, id: u64) -> Result {
    text!(m, "cgroup-id:{id}")
}

fn flag(b: bool) -> char {
    if b {
        'y'
    } else {
        '-'
    }
}

/// Prints a snapshot's rows (after the lock is dropped).
fn print(snap: &Snapshot, m: &mut Text) -> Result {
    for row in snap.rows() {
        match row {
            Row::Rq(r) => {
                text!(
                    m,
                    "cfs_rq V={} zero={} sum_w={} nr_queued={} min_slice_ns=",
                    r.v,
                    r.zero,
                    r.sum_w,
                    r.nr_queued
                )?;
                if r.min_slice == u64::MAX {
                    text!(m, "-")?;
                } else {
                    text!(m, "{}", r.min_slice)?;
                }
                text!(m, " path=")?;
                print_cgroup(m, r.cgroup)?;
                text!(
                    m,
                    "\n  S {:>8} {:>8} {:>12} {:>12} {:>10} C E D NAME\n",
                    "PID",
                    "WEIGHT",
                    "VRT-V",
                    "DL-V",
                    "SLICE_NS"
                )?;
            }
            Row::Se(s) => {
                let state = if s.running { 'R' } else { 'Q' };
                text!(m, "  {state} ")?;
                match s.who {
                    Who::Task { pid, .. } => text!(m, "{pid:>8}")?,
                    #[cfg(CONFIG_FAIR_GROUP_SCHED)]
                    Who::Group { .. } => text!(m, "{:>8}", "-")?,
                }
                text!(
                    m,
                    " {:>8} {:>12} {:>12} {:>10} {} {} {} ",
                    s.weight,
                    s.vrt_v,
                    s.dl_v,
                    s.slice,
                    flag(s.custom),
                    flag(s.eligible),
                    flag(s.delayed)
                )?;
                match s.who {
                    Who::Task { comm, .. } => print_name(m, &comm)?,
                    #[cfg(CONFIG_FAIR_GROUP_SCHED)]
                    Who::Group { cgroup } => print_cgroup(m, Some(cgroup))?,
                }
                text!(m, "\n")?;
            }
        }
    }
    if snap.truncated() {
        text!(m, "truncated\n")?;
    }
    Ok(())
}

/// `/sys/kernel/debug/sched/eevdf/timeline`.
pub struct TimelineFile;

impl DebugFile for TimelineFile {
    fn show(&self, m: &mut Text) -> Result {
        text!(
            m,
            "# sched_eevdf timeline (vns = virtual ns; VRT-V = vruntime - V; lag = -(VRT-V))\n"
        )?;
        let mut snap: Option<Snapshot> = None;
        for cpu in online_cpus() {
            // Size the buffer from an unlocked look at the CPU's task count; a timeline
            // that grew meanwhile is cut (and says so) rather than allocated for under
            // the lock.
            let want = nr_running(cpu)
                .saturating_mul(3)
                .saturating_add(32)
                .clamp(64, MAX_ROWS);
            if snap.as_ref().is_none_or(|s| s.capacity() < want) {
                // Free the smaller buffer before allocating the larger one.
                drop(snap.take());
                snap = Some(Snapshot::new(want)?);
            }
            let Some(s) = snap.as_mut() else {
                continue;
            };
            {
                let g = RqGuard::lock(cpu)?;
                s.take(&g);
            }
            text!(m, "cpu {cpu}\n")?;
            print(s, m)?;
        }
        Ok(())
    }
}
