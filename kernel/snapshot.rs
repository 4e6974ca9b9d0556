// SPDX-License-Identifier: GPL-2.0

//! A runqueue's snapshot: the values of its `cfs_rq`s (the root and, with
//! FAIR_GROUP_SCHED, each runnable group's) and of every queued entity in tree order,
//! copied under the runqueue lock into a buffer allocated before it, for a reader that
//! formats them after the lock is dropped (`/sys/kernel/debug/sched/eevdf/timeline`).
//!
//! The `cfs_rq`s are walked breadth first from the root (a group entity's own `cfs_rq`
//! follows its parent's). Taking a snapshot changes no scheduler state: V comes from
//! [`avg_vruntime_peek`], which does not move the zero point. The time the copy holds the
//! lock, with interrupts off, is bounded by [`MAX_ROWS`] rows.

use crate::fair::{config, CfsRq, Se};
use crate::rq::RqGuard;
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
pub const MAX_ROWS: usize = 32768;

/// A `cfs_rq`'s line.
#[derive(Clone, Copy)]
pub struct RqRow {
    /// kernfs id of the group's cgroup; `None` for the root.
    pub cgroup: Option<u64>,
    /// V, the load-weighted average vruntime (without moving the zero point).
    pub v: u64,
    /// `zero_vruntime`, the sums' zero point.
    pub zero: u64,
    /// The queue's load, current included when runnable.
    pub sum_w: u64,
    /// `nr_running`: queued entities, current included.
    pub nr_queued: u32,
    /// The shortest slice queued (`u64::MAX` when none).
    pub min_slice: u64,
}

/// An entity's line.
#[derive(Clone, Copy)]
pub struct SeRow {
    /// The queue's current (first row of its queue).
    pub running: bool,
    /// The task's pid, or the group's cgroup kernfs id.
    pub who: Who,
    /// Load weight, scaled down to the nice-0 = 1024 scale.
    pub weight: u64,
    /// vruntime - V: the negated lag, in virtual ns.
    pub vrt_v: i64,
    /// Virtual deadline - V.
    pub dl_v: i64,
    /// Slice (request), in ns.
    pub slice: u64,
    /// The slice came from `sched_setattr()`.
    pub custom: bool,
    /// Eligible under the live features.
    pub eligible: bool,
    /// Sleeping but kept queued (DELAY_DEQUEUE).
    pub delayed: bool,
}

/// Whose entity a row is.
#[derive(Clone, Copy)]
pub enum Who {
    /// A task: its pid and name (`comm`, NUL-padded; a concurrent rename may tear it).
    Task {
        /// The task's pid.
        pid: i32,
        /// The task's name.
        comm: [u8; 16],
    },
    /// A group: its cgroup, whose own queue follows in the snapshot.
    #[cfg(CONFIG_FAIR_GROUP_SCHED)]
    Group {
        /// The kernfs id of the group's cgroup.
        cgroup: u64,
    },
}

/// A line of the snapshot.
#[derive(Clone, Copy)]
pub enum Row {
    /// A `cfs_rq`, followed by its entities' rows.
    Rq(RqRow),
    /// An entity of the last `cfs_rq` row.
    Se(SeRow),
}

/// A vector that is filled without allocating: `try_push` fails when it is full.
struct Bounded<T: Copy> {
    /// vmalloc'ed, page by page with preemption points, as a large debugfs text is; one
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
pub struct Snapshot {
    rows: Bounded<Row>,
    /// Breadth-first work list of `cfs_rq`s: the root and queued groups' own, each with
    /// its cgroup's id. Filled and read during one [`Snapshot::take`], under one hold of
    /// the lock, and cleared at the start of the next: its pointers are never used after
    /// the lock is dropped.
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
unsafe fn group_cgroup(se: Se<'_>) -> Option<u64> {
    // SAFETY: `se` is valid and locked (`Se`'s invariant): a plain read of a field that
    // changes only when the group is made or freed.
    let my_q = unsafe { (*se.as_ptr()).my_q };
    // SAFETY: `my_q`, when not null, is the group's queue, alive while `se` is queued
    // (caller); `as_ref` checks null.
    let tg = unsafe { my_q.as_ref() }?.tg;
    // SAFETY: the queue's task group, alive with it (caller); `as_ref` checks null.
    let cgrp = unsafe { tg.as_ref() }?.css.cgroup;
    // SAFETY: the task group's cgroup, alive with it (caller); `as_ref` checks null.
    let kn = unsafe { cgrp.as_ref() }?.kn;
    // SAFETY: the cgroup's kernfs node, alive with it (caller); `as_ref` checks null.
    Some(unsafe { kn.as_ref() }?.id)
}

impl Snapshot {
    /// A snapshot buffer for up to `cap` rows (allocated now, never under the lock).
    pub fn new(cap: usize) -> Result<Snapshot> {
        Ok(Snapshot {
            rows: Bounded::with_capacity(cap)?,
            queue: Bounded::with_capacity(cap)?,
            truncated: false,
        })
    }

    /// The rows of the last [`Snapshot::take`], in order.
    pub fn rows(&self) -> &[Row] {
        &self.rows.v
    }

    /// Whether the last [`Snapshot::take`] ran out of room and cut the timeline.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// How many rows the buffer holds.
    pub fn capacity(&self) -> usize {
        self.rows.v.capacity()
    }

    /// Copies the locked runqueue's `cfs_rq`s; does not allocate.
    pub fn take(&mut self, g: &RqGuard) {
        self.rows.clear();
        self.queue.clear();
        self.truncated = false;
        let cfg = config();
        if !self.queue.try_push((g.root().raw(), None)) {
            self.truncated = true;
            return;
        }
        let mut next = 0;
        while let Some(&(cfs, cgroup)) = self.queue.v.get(next) {
            next = next.wrapping_add(1);
            // SAFETY: `cfs` is `g`'s root `cfs_rq` or the `my_q` of a group entity queued
            // on one of its `cfs_rq`s, pushed during this call (the queue was cleared
            // above): a valid `cfs_rq` of `g`'s runqueue. The reference lives as long as
            // this borrow of `g`, whose lock makes it valid.
            let rq = unsafe { g.cfs_rq(cfs) };
            if !self.take_cfs_rq(rq, cgroup, cfg) {
                self.truncated = true;
                return;
            }
        }
    }

    fn take_cfs_rq(&mut self, rq: &CfsRq<'_>, cgroup: Option<u64>, cfg: Config) -> bool {
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
    fn who(&mut self, se: Se<'_>) -> Option<Who> {
        let p = se.as_ptr();
        #[cfg(CONFIG_FAIR_GROUP_SCHED)]
        {
            // SAFETY: `se` is queued on a cfs_rq whose lock is held: the entity is alive.
            let my_q = unsafe { (*p).my_q };
            if !my_q.is_null() {
                // SAFETY: `se` is queued under the lock `g` holds (`Se`'s invariant), and a
                // group entity (its `my_q` is not null): `group_cgroup`'s obligations.
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

    fn take_se(&mut self, se: Se<'_>, running: bool, v: u64, el: &Eligibility) -> bool {
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
