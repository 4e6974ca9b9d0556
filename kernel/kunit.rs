// SPDX-License-Identifier: GPL-2.0

//! A KUnit suite registered from Rust, for built-in code.
//!
//! 6.12's `kernel::kunit` only serves doctests, so this module provides what a
//! suite needs, in three layers: the raw `kernel::bindings::kunit_*` types,
//! [`case`], [`end_of_cases`] and [`suite`] (const constructors for the C
//! structures, placed by [`kunit_suite!`](crate::kunit_suite) in the
//! `.kunit_test_suites` section that KUnit walks at boot), and [`Test`], the safe
//! handle a test function gets.
//!
//! It also holds what the core's suites share: [`Rng`], [`weight`], [`check`],
//! [`mixed_workload`], the seeded workload that `kunit_core.rs` runs on the core's
//! own tree and `kunit_bindings.rs` on a private `cfs_rq` through the bindings, and
//! [`slice_workload`], its variant with mixed slices for `max_slice` and the lag clamp.

use core::ffi::CStr;
use core::fmt;
use kernel::bindings;

/// The handle a test body gets: it can log and mark the test failed.
///
/// # Invariants
///
/// `ptr` points to the `struct kunit` of the test that is running, for as long
/// as the handle lives (KUnit passes it to the case and keeps it alive until the
/// case returns; the handle does not outlive the case function).
pub struct Test {
    ptr: *mut bindings::kunit,
    failed: bool,
}

impl Test {
    /// Wrap the test pointer KUnit passed to a case.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `struct kunit *` passed to the running case, and the
    /// returned handle must be dropped before the case returns.
    pub unsafe fn from_raw(ptr: *mut bindings::kunit) -> Self {
        // INVARIANT: the caller guarantees `ptr` is the running test's.
        Test { ptr, failed: false }
    }

    /// Log an informational line under the test.
    pub fn info(&self, args: fmt::Arguments<'_>) {
        kernel::kunit::info(format_args!("    # {}\n", args));
    }

    /// Mark the test failed and say why.
    pub fn fail(&mut self, args: fmt::Arguments<'_>) {
        kernel::kunit::err(format_args!("    # {}\n", args));
        self.failed = true;
        // SAFETY: by the type invariant `ptr` is the running test, which KUnit
        // does not touch concurrently while the case runs; this is what the C
        // `kunit_set_failure()` does.
        unsafe { (*self.ptr).status = bindings::kunit_status_KUNIT_FAILURE };
    }

    /// Whether [`Test::fail`] was called.
    pub fn failed(&self) -> bool {
        self.failed
    }
}

/// A small xorshift PRNG: a suite's workload is the same at every boot.
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Run the core's invariant checker on `rq`; on a violation, fail `t` with the
/// step and the operation that preceded it.
pub fn check<R: crate::sched_eevdf::Runqueue>(t: &mut Test, rq: &R, step: u32, what: &str) -> bool {
    match crate::sched_eevdf::check_invariants(rq) {
        Ok(_) => true,
        Err(e) => {
            t.fail(format_args!("step {step} ({what}): {e}"));
            false
        }
    }
}

/// A random nice level's load weight, scaled as the kernel's `scale_load()` does
/// on 64-bit.
pub fn weight(rng: &mut Rng) -> crate::sched_eevdf::LoadWeight {
    let nice = rng.below(40) as usize;
    let w = crate::sched_eevdf::load::SCHED_PRIO_TO_WEIGHT
        .get(nice)
        .copied()
        .unwrap_or(1024);
    crate::sched_eevdf::LoadWeight::from_weight(u64::from(w) << 10)
}

/// The pick is the one the core's O(n) reference scan makes (`oracle::pick`, the
/// definition the host tests and the live VERIFY oracle judge by).
fn check_pick<R: crate::sched_eevdf::Runqueue>(
    t: &mut Test,
    rq: &R,
    cfg: crate::sched_eevdf::Config,
    step: u32,
) -> bool {
    use crate::sched_eevdf::{oracle, pick_eevdf};
    if pick_eevdf(rq, cfg) != oracle::pick(rq, cfg.features) {
        t.fail(format_args!(
            "step {step}: the pick differs from the O(n) reference's"
        ));
        return false;
    }
    true
}

/// The model's `check_preempt_wakeup_fair()` for the enqueued `se`, with random `WF_*`
/// flags (and sometimes a migration cost of 0, which lets `preempt_sync()` preempt), must
/// decide as the core's O(n) reference. `None` when it does not (and `t` says so).
fn wakeup<R: crate::sched_eevdf::Runqueue>(
    t: &mut Test,
    rq: &mut R,
    se: R::Se,
    initial: bool,
    rng: &mut Rng,
    cfg: crate::sched_eevdf::Config,
    step: u32,
) -> Option<bool> {
    use crate::sched_eevdf::{check_preempt_wakeup_fair, oracle, Features, Wake, WakeFlags};
    let mut flags = WakeFlags::NONE;
    if initial {
        flags = flags | WakeFlags::FORK;
    }
    if rng.below(2) == 0 {
        flags = flags | WakeFlags::SYNC;
    }
    let wake = Wake {
        flags,
        wakee_idle: false,
        waker_ran_ns: 0,
        migration_cost_ns: if rng.below(4) == 0 { 0 } else { 500_000 },
    };
    // The reference reads the state before the decision; 6.12's NEXT_BUDDY (without
    // NEXT_BUDDY_EEVDF) marks the buddy first, which its decision ignores.
    let want = if cfg.features.contains(Features::NEXT_BUDDY_EEVDF) {
        oracle::wakeup_preempt_buddy(rq, se, wake, cfg.features).0
    } else {
        oracle::wakeup_preempt(rq, se, cfg.features)
    };
    let got = check_preempt_wakeup_fair(rq, se, wake, false, cfg);
    if got != want {
        t.fail(format_args!(
            "step {step}: wakeup preempt={got}, the O(n) reference {want}"
        ));
        return None;
    }
    Some(got)
}

/// What [`mixed_workload`] did.
pub struct WorkloadCounts {
    /// Enqueues.
    pub enq: u32,
    /// Dequeue calls (a delayed dequeue may be called again).
    pub deq: u32,
    /// Reweights.
    pub rew: u32,
    /// sched_changes: setattr of the slice, renice.
    pub changes: u32,
    /// Picks that chose an entity to run.
    pub picks: u32,
    /// Wakeups that preempted current.
    pub preempts: u32,
    /// Picks of the next buddy (`cfs_rq->next`).
    pub buddy_picks: u32,
}

/// A seeded mixed workload of enqueue (a wakeup: its preemption decision too, with random
/// `WF_*` flags), dequeue, reweight, sched_change (setattr of the slice, renice),
/// run-and-pick on `rq` over the entities `ses`, with the invariant checker after every
/// mutation, each pick and each wakeup decision checked against the O(n) reference, and
/// the flags of `toggles` flipped every 97 steps. `None` when a check failed (and `t` says
/// which).
pub fn mixed_workload<R: crate::sched_eevdf::Runqueue>(
    t: &mut Test,
    rq: &mut R,
    ses: &[R::Se],
    rng: &mut Rng,
    mut cfg: crate::sched_eevdf::Config,
    toggles: crate::sched_eevdf::Features,
    steps: u32,
) -> Option<WorkloadCounts> {
    use crate::sched_eevdf::{
        dequeue_entity, enqueue_entity, renice, reweight_entity, sched_setattr_slice, schedule,
        update_curr, DequeueFlags, EnqueueFlags, Entity, Features, Pick,
    };
    let mut n = WorkloadCounts {
        enq: 0,
        deq: 0,
        rew: 0,
        changes: 0,
        picks: 0,
        preempts: 0,
        buddy_picks: 0,
    };
    for step in 0..steps {
        if step % 97 == 96 {
            for info in Features::TABLE {
                if toggles.contains(info.flag) {
                    cfg.features = cfg
                        .features
                        .with(info.flag, !cfg.features.contains(info.flag));
                }
            }
        }
        let &se = ses.get(rng.below(ses.len() as u64) as usize)?;
        let ok = match rng.below(10) {
            0 | 1 if !se.on_rq() => {
                let initial = (step as usize) < ses.len();
                let flags = if initial {
                    EnqueueFlags::INITIAL
                } else {
                    EnqueueFlags::WAKEUP
                };
                update_curr(rq, rng.below(200_000), cfg);
                enqueue_entity(rq, se, flags, cfg);
                n.enq += 1;
                check(t, rq, step, "enqueue") && {
                    let preempt = wakeup(t, rq, se, initial, rng, cfg, step)?;
                    n.preempts += u32::from(preempt);
                    check(t, rq, step, "wakeup")
                }
            }
            2 if se.on_rq() && rq.curr() != Some(se) => {
                dequeue_entity(rq, se, DequeueFlags::SLEEP, cfg);
                n.deq += 1;
                check(t, rq, step, "dequeue")
            }
            3 if se.on_rq() => {
                reweight_entity(rq, se, weight(rng), cfg);
                n.rew += 1;
                check(t, rq, step, "reweight")
            }
            4 => {
                // A slice of 0.1 to 6.4 ms (or the base slice), or a new nice level.
                match rng.below(3) {
                    0 => renice(rq, se, weight(rng), cfg),
                    _ => sched_setattr_slice(rq, se, rng.below(64) * 100_000, cfg),
                }
                n.changes += 1;
                check(t, rq, step, "sched_change")
            }
            _ => {
                update_curr(rq, 100_000 + rng.below(3_000_000), cfg);
                check_pick(t, rq, cfg, step) && {
                    let next = rq.next_buddy();
                    if let Pick::Run(se) = schedule(rq, cfg) {
                        n.picks += 1;
                        n.buddy_picks += u32::from(next == Some(se));
                    }
                    check(t, rq, step, "schedule")
                }
            }
        };
        if !ok {
            return None;
        }
    }
    Some(n)
}

/// What [`slice_workload`] did.
pub struct SliceCounts {
    /// Slice changes (`sched_setattr()`'s), queued entities' included.
    pub slices: u32,
    /// Lags saved by a dequeue and checked against the reference's limit.
    pub lags: u32,
    /// Of those, the ones the limit clamped while LAG_CLAMP_MAX_SLICE was off, and on.
    pub clamped: [u32; 2],
}

/// [`mixed_workload`]'s variant for the third augmented value and LAG_CLAMP_MAX_SLICE: a
/// seeded workload of enqueue, dequeue (sleep, or non-sleep: the lag saved), slice change
/// (`sched_setattr()`'s, 0.1 ms to 100 ms, of queued entities too), run-and-pick, with
/// LAG_CLAMP_MAX_SLICE turned over every 256 steps from `cfg`'s state. After every mutation:
/// the invariant checker (each node's `max_slice` included) and `cfs_rq_max_slice()`
/// against the reference's scan; after every dequeue that saved a lag: the lag against
/// `V - v` clamped to the reference's limit. `None` when a check failed (and `t` says
/// which).
pub fn slice_workload<R: crate::sched_eevdf::Runqueue>(
    t: &mut Test,
    rq: &mut R,
    ses: &[R::Se],
    rng: &mut Rng,
    mut cfg: crate::sched_eevdf::Config,
    steps: u32,
) -> Option<SliceCounts> {
    use crate::sched_eevdf::{
        avg_vruntime_peek, cfs_rq_max_slice, dequeue_entity, enqueue_entity, oracle,
        sched_setattr_slice, schedule, update_curr, vtime::vdelta, DequeueFlags, EnqueueFlags,
        Entity, Features, Pick,
    };
    let mut n = SliceCounts {
        slices: 0,
        lags: 0,
        clamped: [0; 2],
    };
    for step in 0..steps {
        if step % 256 == 255 {
            let on = cfg.features.contains(Features::LAG_CLAMP_MAX_SLICE);
            cfg.features = cfg.features.with(Features::LAG_CLAMP_MAX_SLICE, !on);
        }
        let &se = ses.get(rng.below(ses.len() as u64) as usize)?;
        let ok = match rng.below(8) {
            0 | 1 if !se.on_rq() => {
                let flags = if (step as usize) < ses.len() {
                    EnqueueFlags::INITIAL
                } else {
                    EnqueueFlags::WAKEUP
                };
                enqueue_entity(rq, se, flags, cfg);
                check(t, rq, step, "enqueue")
            }
            2 | 3 if se.on_rq() && rq.curr() != Some(se) => {
                let sleep = rng.below(2) == 0;
                let flags = if sleep {
                    DequeueFlags::SLEEP
                } else {
                    DequeueFlags::SAVE
                };
                let limit = oracle::lag_limit(rq, se, cfg);
                let lag = vdelta(avg_vruntime_peek(rq), se.vruntime());
                let left = dequeue_entity(rq, se, flags, cfg);
                if left {
                    n.lags += 1;
                    let on = cfg.features.contains(Features::LAG_CLAMP_MAX_SLICE);
                    if lag.unsigned_abs() > limit.unsigned_abs() {
                        n.clamped[usize::from(on)] += 1;
                    }
                    if se.vlag() != lag.clamp(-limit, limit) {
                        t.fail(format_args!(
                            "step {step}: saved lag {}, want {lag} clamped to +-{limit}",
                            se.vlag()
                        ));
                        return None;
                    }
                }
                check(t, rq, step, "dequeue")
            }
            4 => {
                let runtime = match rng.below(3) {
                    0 => 0,
                    1 => 100_000 + rng.below(900_000),
                    _ => 1_000_000 + rng.below(99_000_000),
                };
                sched_setattr_slice(rq, se, runtime, cfg);
                n.slices += 1;
                check(t, rq, step, "setattr slice")
            }
            _ => {
                update_curr(rq, 100_000 + rng.below(20_000_000), cfg);
                check_pick(t, rq, cfg, step) && {
                    let _: Pick<R::Se> = schedule(rq, cfg);
                    check(t, rq, step, "schedule")
                }
            }
        };
        if !ok {
            return None;
        }
        if cfs_rq_max_slice(rq) != oracle::max_slice(rq) {
            t.fail(format_args!(
                "step {step}: cfs_rq_max_slice() {}, the reference's {}",
                cfs_rq_max_slice(rq),
                oracle::max_slice(rq)
            ));
            return None;
        }
    }
    Some(n)
}

/// A `struct kunit_case` that runs `run`.
pub const fn case(
    name: &'static CStr,
    run: unsafe extern "C" fn(*mut bindings::kunit),
) -> bindings::kunit_case {
    // SAFETY: `kunit_case` is plain data (pointers, integers, enums whose 0 is
    // a valid value); all-zero is the C designated-initializer default.
    let mut c: bindings::kunit_case = unsafe { core::mem::zeroed() };
    c.run_case = Some(run);
    c.name = name.as_ptr().cast();
    c
}

/// The zeroed `struct kunit_case` that ends a case array.
pub const fn end_of_cases() -> bindings::kunit_case {
    // SAFETY: as in `case`; KUnit stops at the entry whose `run_case` is NULL.
    unsafe { core::mem::zeroed() }
}

/// A `struct kunit_suite` named `name` over the case array at `cases`.
pub const fn suite(name: &CStr, cases: *mut bindings::kunit_case) -> bindings::kunit_suite {
    // SAFETY: `kunit_suite` is plain data; all-zero is its C default.
    let mut s: bindings::kunit_suite = unsafe { core::mem::zeroed() };
    let bytes = name.to_bytes();
    let mut i = 0;
    // The C field is `char name[256]`; leave room for the NUL.
    while i < bytes.len() && i < 255 {
        s.name[i] = bytes[i] as _;
        i += 1;
    }
    s.test_cases = cases;
    s
}

/// Register a suite with KUnit: `kunit_suite!(NAME, c"name", [c"case" => fn, ...])`.
///
/// Each `fn` is a safe `fn(&mut Test)`. The macro wraps it in the
/// `extern "C"` entry point KUnit calls.
#[macro_export]
macro_rules! kunit_suite {
    ($id:ident, $name:expr, [$($case:expr => $f:path),+ $(,)?]) => {
        mod $id {
            use kernel::bindings;
            use $crate::kunit::{case, end_of_cases, suite};

            static mut CASES: [bindings::kunit_case; [$(stringify!($f)),+].len() + 1] = [
                $(case($case, {
                    unsafe extern "C" fn run(test: *mut bindings::kunit) {
                        // SAFETY: KUnit passes the running test, and the handle is
                        // dropped before this function returns.
                        let mut t = unsafe { $crate::kunit::Test::from_raw(test) };
                        $f(&mut t);
                    }
                    run
                }),)+
                end_of_cases(),
            ];

            // KUnit is the only user of CASES and SUITE: nothing here takes a
            // reference to them, only their addresses.
            static mut SUITE: bindings::kunit_suite = suite($name, (&raw mut CASES).cast());

            #[used]
            #[link_section = ".kunit_test_suites"]
            static mut SUITES: [*mut bindings::kunit_suite; 1] = [&raw mut SUITE];
        }
    };
}
