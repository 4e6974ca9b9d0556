// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/sched/eevdf/timeline`: every CPU's `cfs_rq`s (the root and, with
//! FAIR_GROUP_SCHED, each runnable group's) with V, the sums and every queued entity in
//! tree order.
//!
//! Per CPU: the snapshot buffer is allocated first; then, under the runqueue lock, the
//! `cfs_rq`s are walked breadth first from the root (a group entity's own `cfs_rq` follows
//! its parent's) and their values copied into the buffer; the lock is dropped, and only
//! then is anything formatted or a cgroup path looked up. Reading changes no scheduler
//! state: V comes from [`avg_vruntime_peek`], which does not move the zero point.
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
use super::runqueue::{online_cpus, RqGuard};
use crate::fair::{config, CfsRq, Se};
use crate::sched_eevdf::{
    avg_vruntime_peek, cfs_rq_min_slice, vtime::vdelta, Config, Eligibility, Entity, Runqueue,
    Timeline,
};
use kernel::{
    alloc::{flags::GFP_KERNEL, VVec},
    bindings,
    error::Result,
};

/// Most rows a CPU's snapshot holds; a longer timeline is cut and says `truncated`.
const MAX_ROWS: usize = 32768;

/// A `cfs_rq`'s line.
#[derive(Clone, Copy)]
struct RqRow {
    /// kernfs id of the group's cgroup; `None` for the root.
    cgroup: Option<u64>,
    v: u64,
    zero: u64,
    sum_w: u64,
    nr_queued: u32,
    min_slice: u64,
}

/// An entity's line.
#[derive(Clone, Copy)]
struct SeRow {
    running: bool,
    /// The task's pid, or the group's cgroup kernfs id.
    who: Who,
    weight: u64,
    vrt_v: i64,
    dl_v: i64,
    slice: u64,
    custom: bool,
    eligible: bool,
    delayed: bool,
}

#[derive(Clone, Copy)]
enum Who {
    Task {
        pid: i32,
        comm: [u8; 16],
    },
    #[cfg(CONFIG_FAIR_GROUP_SCHED)]
    Group {
        cgroup: u64,
    },
}

#[derive(Clone, Copy)]
enum Row {
    Rq(RqRow),
    Se(SeRow),
}

/// A vector that is filled without allocating: `try_push` fails when it is full.
struct Bounded<T: Copy> {
    /// vmalloc'ed, page by page with preemption points, as a large [`Text`] is; one
    /// timeline open allocates it once.
    v: VVec<T>,
}

impl<T: Copy> Bounded<T> {
    fn with_capacity(n: usize) -> Result<Self> {
        Ok(Bounded {
            v: VVec::with_capacity(n, GFP_KERNEL)?,
        })
    }

    /// Appends `x` if there is room; never allocates.
    /// (It runs under a runqueue lock, so it has no panic path: no `spare_capacity_mut()`,
    /// whose `capacity - len` is overflow-checked.)
    fn try_push(&mut self, x: T) -> bool {
        let len = self.v.len();
        if len >= self.v.capacity() {
            return false;
        }
        // SAFETY: `len < capacity`: the slot at `len` is allocated and not initialised;
        // writing it and then counting it in the length keeps the vector valid (`len + 1
        // <= capacity`, and `capacity <= isize::MAX` so the sum does not wrap).
        unsafe {
            self.v.as_mut_ptr().add(len).write(x);
            self.v.set_len(len.wrapping_add(1));
        }
        true
    }

    fn clear(&mut self) {
        // SAFETY: `T: Copy` has no destructor; shrinking the length is always sound.
        unsafe { self.v.set_len(0) };
    }
}

/// One CPU's snapshot.
struct Snapshot {
    rows: Bounded<Row>,
    /// Breadth-first work list of `cfs_rq`s, valid only under the lock.
    queue: Bounded<(*mut bindings::cfs_rq, Option<u64>)>,
    truncated: bool,
}

/// The kernfs id of a group entity's cgroup.
///
/// # Safety
///
/// `se` is a queued group entity under the held runqueue lock: its `my_q`, task group and
/// cgroup are alive.
#[cfg(CONFIG_FAIR_GROUP_SCHED)]
unsafe fn group_cgroup(se: Se) -> Option<u64> {
    // SAFETY: guaranteed by the caller; each pointer is checked before use.
    unsafe {
        let my_q = (*se.as_ptr()).my_q;
        let tg = my_q.as_ref()?.tg;
        let cgrp = tg.as_ref()?.css.cgroup;
        let kn = cgrp.as_ref()?.kn;
        Some(kn.as_ref()?.id)
    }
}

impl Snapshot {
    fn new(cap: usize) -> Result<Snapshot> {
        Ok(Snapshot {
            rows: Bounded::with_capacity(cap)?,
            queue: Bounded::with_capacity(cap)?,
            truncated: false,
        })
    }

    /// Copies the runqueue's `cfs_rq`s; does not allocate.
    fn take(&mut self, g: &RqGuard) {
        self.rows.clear();
        self.queue.clear();
        self.truncated = false;
        let cfg = config();
        if !self.queue.try_push((g.cfs(), None)) {
            self.truncated = true;
            return;
        }
        let mut next = 0;
        while let Some(&(cfs, cgroup)) = self.queue.v.get(next) {
            next = next.wrapping_add(1);
            // SAFETY: `cfs` is the runqueue's root cfs_rq or the `my_q` of one of its
            // queued group entities, and `g` holds the lock.
            let rq = unsafe { CfsRq::from_raw(cfs) };
            if !self.take_cfs_rq(rq, cgroup, cfg) {
                self.truncated = true;
                return;
            }
        }
    }

    fn take_cfs_rq(&mut self, rq: &CfsRq, cgroup: Option<u64>, cfg: Config) -> bool {
        let v = avg_vruntime_peek(rq);
        let curr = rq.curr().filter(|c| c.on_rq());
        let sum_w = rq
            .avg_load()
            .wrapping_add(curr.map_or(0, |c| c.load().weight_down()));
        let el = Eligibility::new(rq, cfg);
        let row = RqRow {
            cgroup,
            v,
            zero: rq.zero_vruntime(),
            sum_w,
            nr_queued: rq.nr_queued(),
            min_slice: cfs_rq_min_slice(rq),
        };
        if !self.rows.try_push(Row::Rq(row)) {
            return false;
        }
        let mut se = curr;
        let mut running = true;
        if se.is_none() {
            se = rq.first();
            running = false;
        }
        while let Some(s) = se {
            if !self.take_se(s, running, v, &el) {
                return false;
            }
            se = if running { rq.first() } else { rq.rb_next(s) };
            running = false;
        }
        true
    }

    /// Who `se` is: a task, or a group, whose own `cfs_rq` goes on the work list. `None`
    /// when the work list is full.
    fn who(&mut self, se: Se) -> Option<Who> {
        let p = se.as_ptr();
        #[cfg(CONFIG_FAIR_GROUP_SCHED)]
        {
            // SAFETY: `se` is queued on a cfs_rq whose lock is held: the entity is alive.
            let my_q = unsafe { (*p).my_q };
            if !my_q.is_null() {
                // SAFETY: `se` is a queued group entity (as above).
                let cgroup = unsafe { group_cgroup(se) }.unwrap_or(0);
                if !self.queue.try_push((my_q, Some(cgroup))) {
                    return None;
                }
                return Some(Who::Group { cgroup });
            }
        }
        // `task_of()`: a task's entity (every entity, without group scheduling). The name
        // is copied as one 16-byte value: `comm` is `[c_char; 16]`, which has the size and
        // alignment of `[u8; 16]`, and a concurrent rename can at worst tear it (as for
        // C's `%s` of `p->comm`), which `print_name` masks.
        let off = core::mem::offset_of!(bindings::task_struct, se);
        // SAFETY: `se` is queued on a cfs_rq whose lock is held, so the entity and its
        // task are alive and the entity is the task's `se`: `task` points to a live
        // `task_struct`, whose `pid` and `comm` are plain integers, valid in any bit pattern.
        unsafe {
            let task = p.byte_sub(off).cast::<bindings::task_struct>();
            let comm = core::ptr::addr_of!((*task).comm).cast::<[u8; 16]>().read();
            Some(Who::Task {
                pid: (*task).pid,
                comm,
            })
        }
    }

    fn take_se(&mut self, se: Se, running: bool, v: u64, el: &Eligibility) -> bool {
        let Some(who) = self.who(se) else {
            return false;
        };
        self.rows.try_push(Row::Se(SeRow {
            running,
            who,
            weight: se.load().weight_down(),
            vrt_v: vdelta(se.vruntime(), v),
            dl_v: vdelta(se.deadline(), v),
            slice: se.slice(),
            custom: se.custom_slice(),
            eligible: el.vruntime(se.vruntime()),
            delayed: se.sched_delayed(),
        }))
    }
}

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

impl Snapshot {
    fn print(&self, m: &mut Text) -> Result {
        for row in self.rows.v.iter() {
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
        if self.truncated {
            text!(m, "truncated\n")?;
        }
        Ok(())
    }
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
            let want = super::runqueue::nr_running(cpu)
                .saturating_mul(3)
                .saturating_add(32)
                .clamp(64, MAX_ROWS);
            if snap.as_ref().is_none_or(|s| s.rows.v.capacity() < want) {
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
            s.print(m)?;
        }
        Ok(())
    }
}
