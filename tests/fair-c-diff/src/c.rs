// SPDX-License-Identifier: GPL-2.0

//! fair.c's side: the C that build.rs compiled from the pristine tarball, driven through
//! `c/driver.c`.
//!
//! Three layers, as in the kernel glue: the raw `extern "C"` declarations ([`ffi`]), and
//! [`CSide`], the safe handle that owns the C's one global runqueue for its lifetime (a
//! process-wide lock makes it exclusive) and checks every index it passes.

use std::sync::{Mutex, MutexGuard};

/// The raw bindings of `c/driver.c` (tools/pick-cost.sh's program calls them directly, to
/// time fair.c's pick with nothing around it).
pub mod ffi {
    use std::ffi::{c_char, c_int, c_uint, c_ulong};

    /// `struct fcd_entity`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct FcdEntity {
        pub vruntime: u64,
        pub deadline: u64,
        pub slice: u64,
        pub min_vruntime: u64,
        pub min_slice: u64,
        pub vlag: i64,
        pub weight: u64,
        pub inv_weight: u32,
        pub on_rq: u8,
        pub sched_delayed: u8,
        pub rel_deadline: u8,
        pub custom_slice: u8,
    }

    /// `struct fcd_cfs_rq`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct FcdCfsRq {
        pub zero_vruntime: u64,
        pub avg_vruntime: i64,
        pub avg_load: u64,
        pub load_weight: u64,
        pub clock_task: u64,
        pub warnings: c_ulong,
        pub nr_running: u32,
        pub curr: i32,
        pub next: i32,
        pub need_resched: i32,
        pub warn_line: i32,
    }

    /// `struct fcd_flags`: sched.h's values.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct FcdFlags {
        pub enqueue_wakeup: c_int,
        pub enqueue_restore: c_int,
        pub enqueue_migrated: c_int,
        pub enqueue_initial: c_int,
        pub dequeue_sleep: c_int,
        pub dequeue_save: c_int,
        pub dequeue_special: c_int,
        pub dequeue_delayed: c_int,
        pub wf_ttwu: c_int,
        pub wf_fork: c_int,
        pub wf_sync: c_int,
        pub wf_rq_selected: c_int,
    }

    unsafe extern "C" {
        pub static fcd_flags: FcdFlags;
        pub fn fcd_max_tasks() -> c_int;
        pub fn fcd_feature_bit(name: *const c_char) -> c_int;
        pub fn fcd_reset(features: u64, base_slice: c_uint, tick_nsec: u64, zero: u64);
        pub fn fcd_set_features(features: u64);
        pub fn fcd_new_task(i: c_int, weight: c_ulong, inv: u32, slice: u64, custom: c_int);
        pub fn fcd_tick(delta_ns: u64);
        pub fn fcd_wakeup_preempt(i: c_int, wake_flags: c_int);
        pub fn fcd_enqueue(i: c_int, flags: c_int);
        pub fn fcd_requeue_delayed(i: c_int);
        pub fn fcd_dequeue(i: c_int, flags: c_int) -> c_int;
        pub fn fcd_pick(blocked: *mut c_int) -> c_int;
        pub fn fcd_switch(i: c_int);
        pub fn fcd_reweight(i: c_int, weight: c_ulong);
        pub fn fcd_renice(i: c_int, weight: c_ulong, inv: u32);
        pub fn fcd_setattr(i: c_int, sched_runtime: u64);
        pub fn fcd_yield();
        pub fn fcd_pick_eevdf() -> c_int;
        pub fn fcd_eligible(i: c_int) -> c_int;
        pub fn fcd_protected(i: c_int) -> c_int;
        pub fn fcd_avg_vruntime() -> u64;
        pub fn fcd_min_slice() -> u64;
        pub fn fcd_entity(i: c_int, out: *mut FcdEntity);
        pub fn fcd_cfs_rq(out: *mut FcdCfsRq);
        pub fn fcd_tree_position(i: c_int) -> c_int;
    }
}

pub use ffi::{FcdCfsRq as CfsRqState, FcdEntity as EntityState, FcdFlags as Flags};

/// The C keeps one runqueue in globals: one [`CSide`] at a time.
static C_LOCK: Mutex<()> = Mutex::new(());

/// What `pick_task_fair()` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CPick {
    /// Nothing queued.
    Idle,
    /// `pick_next_entity()` returned this task.
    Run(usize),
    /// It picked this delayed task and finished its dequeue.
    Blocked(usize),
}

/// fair.c's runqueue and tasks.
///
/// # Invariants
///
/// While a `CSide` exists it holds `C_LOCK`, so no other thread calls into the C; every
/// index passed to the C is below [`CSide::tasks`], which is at most `fcd_max_tasks()`.
pub(crate) struct CSide {
    tasks: usize,
    _lock: MutexGuard<'static, ()>,
}

impl CSide {
    /// An empty runqueue at `zero_vruntime` with `tasks` task slots, the feature word
    /// `features` (features.h's bits), base slice and tick.
    pub(crate) fn new(
        tasks: usize,
        features: u64,
        base_slice_ns: u32,
        tick_nsec: u64,
        zero_vruntime: u64,
    ) -> anyhow::Result<CSide> {
        let lock = C_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: reads a constant; the lock is held.
        let max = usize::try_from(unsafe { ffi::fcd_max_tasks() })?;
        anyhow::ensure!(tasks <= max, "{tasks} tasks: the C side has room for {max}");
        // SAFETY: the lock is held; fcd_reset() initializes every global it uses.
        unsafe { ffi::fcd_reset(features, base_slice_ns, tick_nsec, zero_vruntime) };
        Ok(CSide { tasks, _lock: lock })
    }

    /// sched.h's flag values.
    pub(crate) fn flags() -> Flags {
        // SAFETY: a constant initialized at load time.
        unsafe { ffi::fcd_flags }
    }

    /// The bit of features.h's flag `name`, if the tarball's features.h has it.
    pub(crate) fn feature_bit(name: &str) -> Option<u32> {
        let c = std::ffi::CString::new(name).ok()?;
        // SAFETY: `c` is a NUL-terminated string that outlives the call; the C only reads it.
        let bit = unsafe { ffi::fcd_feature_bit(c.as_ptr()) };
        u32::try_from(bit).ok()
    }

    fn idx(&self, i: usize) -> i32 {
        assert!(i < self.tasks, "task {i} of {}", self.tasks);
        i as i32
    }

    pub(crate) fn set_features(&mut self, features: u64) {
        // SAFETY: the lock is held (type invariant).
        unsafe { ffi::fcd_set_features(features) }
    }

    pub(crate) fn new_task(&mut self, i: usize, weight: u64, inv: u32, slice: u64, custom: bool) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_new_task(i, weight, inv, slice, custom.into()) }
    }

    pub(crate) fn tick(&mut self, delta_ns: u64) {
        // SAFETY: the lock is held (type invariant).
        unsafe { ffi::fcd_tick(delta_ns) }
    }

    pub(crate) fn wakeup_preempt(&mut self, i: usize, wake_flags: i32) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_wakeup_preempt(i, wake_flags) }
    }

    pub(crate) fn enqueue(&mut self, i: usize, flags: i32) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_enqueue(i, flags) }
    }

    pub(crate) fn requeue_delayed(&mut self, i: usize) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_requeue_delayed(i) }
    }

    /// Whether the task left (false: its dequeue was delayed).
    pub(crate) fn dequeue(&mut self, i: usize, flags: i32) -> bool {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_dequeue(i, flags) != 0 }
    }

    pub(crate) fn pick(&mut self) -> CPick {
        let mut blocked = -1;
        // SAFETY: the lock is held; `blocked` is a valid out pointer for the call.
        let r = unsafe { ffi::fcd_pick(&mut blocked) };
        match (r, usize::try_from(r), usize::try_from(blocked)) {
            (_, Ok(i), _) => CPick::Run(i),
            (-2, _, Ok(b)) => CPick::Blocked(b),
            _ => CPick::Idle,
        }
    }

    /// Switch to task `to`, or to idle with `None`.
    pub(crate) fn switch(&mut self, to: Option<usize>) {
        let i = to.map_or(-1, |i| self.idx(i));
        // SAFETY: the lock is held and `i` is in range or -1 (type invariant).
        unsafe { ffi::fcd_switch(i) }
    }

    pub(crate) fn reweight(&mut self, i: usize, weight: u64) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_reweight(i, weight) }
    }

    pub(crate) fn renice(&mut self, i: usize, weight: u64, inv: u32) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_renice(i, weight, inv) }
    }

    pub(crate) fn setattr(&mut self, i: usize, sched_runtime: u64) {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant).
        unsafe { ffi::fcd_setattr(i, sched_runtime) }
    }

    /// `yield_task_fair()`; current must exist.
    pub(crate) fn yield_curr(&mut self) {
        assert!(self.cfs_rq().curr >= 0, "yield without current");
        // SAFETY: the lock is held and cfs_rq->curr is set (checked above).
        unsafe { ffi::fcd_yield() }
    }

    pub(crate) fn pick_eevdf(&self) -> Option<usize> {
        // SAFETY: the lock is held (type invariant); the call reads only.
        usize::try_from(unsafe { ffi::fcd_pick_eevdf() }).ok()
    }

    pub(crate) fn eligible(&self, i: usize) -> bool {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant); reads only.
        unsafe { ffi::fcd_eligible(i) != 0 }
    }

    pub(crate) fn protected(&self, i: usize) -> bool {
        let i = self.idx(i);
        // SAFETY: the lock is held and `i` is in range (type invariant); reads only.
        unsafe { ffi::fcd_protected(i) != 0 }
    }

    /// V, without moving the runqueue's zero point.
    pub(crate) fn avg_vruntime(&self) -> u64 {
        // SAFETY: the lock is held (type invariant); the C restores what it moved.
        unsafe { ffi::fcd_avg_vruntime() }
    }

    pub(crate) fn min_slice(&self) -> u64 {
        // SAFETY: the lock is held (type invariant); reads only.
        unsafe { ffi::fcd_min_slice() }
    }

    pub(crate) fn entity(&self, i: usize) -> EntityState {
        let i = self.idx(i);
        let mut out = EntityState::default();
        // SAFETY: the lock is held, `i` is in range, `out` is a valid out pointer.
        unsafe { ffi::fcd_entity(i, &mut out) };
        out
    }

    pub(crate) fn cfs_rq(&self) -> CfsRqState {
        let mut out = CfsRqState::default();
        // SAFETY: the lock is held and `out` is a valid out pointer.
        unsafe { ffi::fcd_cfs_rq(&mut out) };
        out
    }
}
