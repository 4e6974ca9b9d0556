// SPDX-License-Identifier: GPL-2.0

//! The boundary: the functions that fair.c calls in the Rust EEVDF core, in one table.
//!
//! fair.c (patch 0003) calls these where it called the C functions they replace, and
//! kernel/sched/sched.h declares them. Two `extern "C"` functions live elsewhere because
//! their contracts differ, with the same signature check: fair.c's
//! `sched_eevdf_verify()` (kernel/verify.rs) and debug.c's `sched_eevdf_debugfs_init()`
//! (debugfs/files.rs). [`entry_points!`] makes each line of the table into
//!
//! - the `#[no_mangle] extern "C"` function, with the one safety contract below, which
//!   turns its pointers into the glue's lock-bounded references ([`with_locked`],
//!   [`CfsRq::entity`]) once and runs the line's body, safe code, on them;
//! - a check that its signature is the prototype that bindgen read from sched.h: a
//!   mismatch (an argument's type, one too many or too few, the return type) is a type
//!   error, and the kernel does not build.
//!
//! # The contract of every entry point
//!
//! fair.c calls each one with:
//!
//! - `cfs_rq` a valid `struct cfs_rq`, whose runqueue's lock (`rq_of(cfs_rq)->__lock`) it
//!   holds for the whole call, with no other user of `cfs_rq` meanwhile;
//! - `se`, where there is one, a valid `struct sched_entity` of that `cfs_rq`: queued on
//!   it, about to be, or its current (the C functions these replace dereference it, so
//!   it is never null);
//! - what a line's doc adds under "Requires".
//!
//! The first two are what memory safety rests on: in particular `se` being an entity of
//! *this* `cfs_rq`, which [`CfsRq::entity`] turns into a handle branded with it. The
//! "Requires" lines are not: they keep the decisions right. Those about the timeline (`se`
//! in no timeline, in this `cfs_rq`'s, queued, delayed) are checked where lib/rbtree's
//! links depend on them: the glue's `Timeline` impl for `CfsRq` (kernel/fair.rs) inserts
//! only an entity whose `run_node` is empty (`RB_EMPTY_NODE()`) and erases only one whose
//! node is not, and refuses the rest with one WARN (patch 0011 empties the node at fork,
//! at a group entity's creation and after each erase). fair.c meets all of them, as it met
//! the C functions' own.
//!
//! Nothing here allocates, sleeps or panics, so the calls are fine in atomic context.

use crate::fair::{config, features, with_config, with_features, CfsRq, Live, Se};
use crate::place;
use crate::rq::with_locked;
use crate::sched_eevdf::{
    self as eevdf, Config, EnqueueFlags, Entity, Features, LoadWeight, PickPath, PickReason,
    Runqueue, Timeline, Wake, WakeFlags, WakeupAction, WakeupPreempt,
};
use crate::stats::{self, Stat};
use crate::verify;
use core::ptr;
use kernel::{
    bindings,
    ffi::{c_int, c_ulong},
};

/// Makes the table's entry points. A line is
///
/// ```text
/// /// doc
/// fn name(rq, se; arg: Type, ...) -> Ret { body }
/// ```
///
/// where `rq` (always) names the `&mut CfsRq` of the `cfs_rq` argument, `se` (optional)
/// the [`Se`] of the `sched_entity` argument that follows it, and the arguments after `;`
/// (optional) are plain C values, passed on unchanged. The C signature is
/// `(struct cfs_rq *, [struct sched_entity *,] args...)`.
macro_rules! entry_points {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident($rq:ident $(, $se:ident)? $(; $($a:ident: $t:ty),*)?) $(-> $ret:ty)?
        $body:block
    )*) => {$(
        $(#[doc = $doc])*
        ///
        /// # Safety
        ///
        /// The contract of every entry point ([module docs](self)).
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            cfs_rq: *mut bindings::cfs_rq,
            $($se: *mut bindings::sched_entity,)?
            $($($a: $t),*)?
        ) $(-> $ret)? {
            #[inline(always)]
            fn body<'rq>(
                $rq: &'rq mut CfsRq<'rq>,
                $($se: Se<'rq>,)?
                $($($a: $t),*)?
            ) $(-> $ret)? $body
            // SAFETY: the entry points' contract: `cfs_rq` is valid and its runqueue lock
            // held by fair.c for the call, with no other user (`with_locked`'s
            // obligations), and `se` is a valid entity of it (`CfsRq::entity`'s).
            unsafe {
                with_locked(cfs_rq, |rq| {
                    $(let $se = rq.entity($se);)?
                    body(rq, $($se,)? $($($a),*)?)
                })
            }
        }

        // The prototype that bindgen read from sched.h has this signature.
        const _: unsafe extern "C" fn(
            *mut bindings::cfs_rq,
            $(entity_arg!($se),)?
            $($($t),*)?
        ) $(-> $ret)? = bindings::$name;
    )*};
}

/// The C type of an entry point's `se` argument (a type in [`entry_points!`]'s output).
macro_rules! entity_arg {
    ($se:ident) => {
        *mut bindings::sched_entity
    };
}

// The core reads ENQUEUE_INITIAL and the WF_* flags with fair.c's values.
const _: () = assert!(EnqueueFlags::INITIAL.0 == bindings::ENQUEUE_INITIAL);
const _: () = assert!(WakeFlags::FORK.0 == bindings::WF_FORK);
const _: () = assert!(WakeFlags::SYNC.0 == bindings::WF_SYNC);
const _: () = assert!(WakeFlags::RQ_SELECTED.0 == bindings::WF_RQ_SELECTED);

entry_points! {
    /// `avg_vruntime()`.
    fn sched_eevdf_avg_vruntime(rq) -> u64 {
        eevdf::avg_vruntime(rq)
    }

    /// `entity_eligible()`.
    fn sched_eevdf_entity_eligible(rq, se) -> c_int {
        // update_curr()'s did_preempt_short() asks this once its current lost slice
        // protection: specialised as the pick is.
        let eligible = with_features!(f, (rq: &CfsRq<'r>, se: Se<'r>) -> bool => {
            eevdf::entity_eligible(rq, se, f)
        });
        eligible.into()
    }

    /// `__enqueue_entity()`: into the sums and the timeline.
    ///
    /// Requires: `se` in no timeline.
    fn sched_eevdf_enqueue_entity(rq, se) {
        eevdf::__enqueue_entity(rq, se, features());
    }

    /// `__dequeue_entity()`: out of the timeline and the sums.
    ///
    /// Requires: `se` in this `cfs_rq`'s timeline.
    fn sched_eevdf_dequeue_entity(rq, se) {
        eevdf::__dequeue_entity(rq, se, features());
    }

    /// `set_next_entity()`'s erase and slice protection of a picked entity
    /// (`__dequeue_entity()`, `set_protect_slice()`), under one test of the feature word.
    ///
    /// Requires: `se` in this `cfs_rq`'s timeline, not yet current.
    fn sched_eevdf_dequeue_picked(rq, se) {
        eevdf::dequeue_picked(rq, se, features(), Live);
    }

    /// `__pick_first_entity()`: the leftmost (smallest vruntime) entity.
    fn sched_eevdf_pick_first_entity(rq) -> *mut bindings::sched_entity {
        rq.first().map_or(ptr::null_mut(), Se::as_ptr)
    }

    /// `pick_eevdf()`, with RUN_TO_PARITY slice protection.
    fn sched_eevdf_pick_eevdf(rq) -> *mut bindings::sched_entity {
        if stats::counting() {
            return pick_counted(rq);
        }
        let se = with_features!(f, (rq: &CfsRq<'r>) -> Option<Se<'r>> => {
            let se = eevdf::pick_eevdf(rq, f);
            verify::pick(rq, se, f);
            se
        });
        se.map_or(ptr::null_mut(), Se::as_ptr)
    }

    /// `place_entity()` of current, which stays out of the timeline; its slice protection
    /// ends. Recorded, as every placement, while the placement record is on.
    fn sched_eevdf_place_entity(rq, se; flags: c_int) {
        let flags = EnqueueFlags(flags as u32);
        let lag = if place::recording() {
            place::logged(rq, se, flags, eevdf::place_curr_entity)
        } else {
            with_config!(
                cfg,
                (rq: &mut CfsRq<'r>, se: Se<'r>, flags: EnqueueFlags) -> i64 => {
                    eevdf::place_curr_entity(rq, se, flags, cfg)
                }
            )
        };
        count_place(rq, lag, flags);
    }

    /// `place_entity()` then `__enqueue_entity()`: `enqueue_entity()` of an entity that is
    /// not current, in one call.
    ///
    /// Requires: `se` in no timeline.
    fn sched_eevdf_place_enqueue_entity(rq, se; flags: c_int) {
        place(rq, se, flags);
        eevdf::__enqueue_entity(rq, se, features());
    }

    /// `update_deadline()`: true when current used up its request.
    fn sched_eevdf_update_deadline(rq, se) -> bool {
        // Most calls (every update_curr()) end at the core's first comparison, before it
        // asks for the configuration. No feature on this path: one copy, unlike the entry
        // points that use `with_config!`.
        let expired = eevdf::update_deadline(rq, se, Live);
        if expired && stats::counting() {
            rq.count(Stat::SliceExpired);
        }
        expired
    }

    /// The start of `dequeue_entity()`: DELAY_DEQUEUE's decision for a sleep that may be
    /// delayed (`delay`) and, when the entity leaves, its lag saved
    /// (`update_entity_lag()`). Returns true when the dequeue is delayed (nothing changed).
    ///
    /// Requires: `se` queued (`on_rq`).
    fn sched_eevdf_dequeue_start(rq, se; delay: bool) -> bool {
        with_features!(f, (rq: &mut CfsRq<'r>, se: Se<'r>, delay: bool) -> bool => {
            eevdf::dequeue_start(rq, se, delay, f, Live)
        })
    }

    /// The EEVDF part of `requeue_delayed_entity()`: with DELAY_ZERO, the lag saved and,
    /// when positive, dropped by placing the entity at V again.
    ///
    /// Requires: `se` queued and delayed.
    fn sched_eevdf_requeue_delayed(rq, se) {
        with_config!(cfg, (rq: &mut CfsRq<'r>, se: Se<'r>) -> () => {
            eevdf::requeue_delayed(rq, se, cfg, Live)
        })
    }

    /// The EEVDF part of `reweight_entity()`: lag-preserving rescaling of vruntime and
    /// deadline (queued, out of the timeline meanwhile) or of vlag, then
    /// `update_load_set()` (weight set, inverse left to be computed lazily).
    ///
    /// Requires: current's runtime accounted (`update_curr()`).
    fn sched_eevdf_reweight_entity(rq, se; weight: c_ulong) {
        // The kernel's `c_ulong` is `usize`: 64 bits on the 64-bit targets this builds for.
        let lw = LoadWeight {
            weight: weight as u64,
            inv_weight: 0,
        };
        eevdf::reweight_entity(rq, se, lw, config());
        if stats::counting() {
            rq.count(Stat::Reweights);
        }
    }

    /// The wakeup-preemption decision of `check_preempt_wakeup_fair()` for `pse`, already
    /// enqueued, against `cfs_rq->curr` (PREEMPT_SHORT included). With NEXT_BUDDY_EEVDF it
    /// decides nothing and returns false: fair.c then asks
    /// [`sched_eevdf_wakeup_preempt_buddy`], with what only it has (the wakeup's flags, the
    /// waker's runtime). Answering here, where the default feature set's copy knows the
    /// flag is off, keeps a feature test off fair.c's path of a preempting wakeup.
    ///
    /// Requires: current's runtime accounted (`update_curr()`).
    fn sched_eevdf_wakeup_preempt(rq, pse) -> bool {
        if stats::counting() {
            return wakeup_counted(rq, pse);
        }
        // The decision alone (the same core code), without classifying it.
        with_features!(f, (rq: &mut CfsRq<'r>, pse: Se<'r>) -> bool => {
            !f.contains(Features::NEXT_BUDDY_EEVDF) && {
                let want = verify::wakeup_before(rq, pse, f);
                let got = eevdf::wakeup_preempt(rq, pse, f);
                verify::wakeup_after(rq, want, got);
                got
            }
        })
    }

    /// The wakeup-preemption decision of `check_preempt_wakeup_fair()` with
    /// NEXT_BUDDY_EEVDF (upstream 6.19's), for `pse`, already enqueued, against
    /// `cfs_rq->curr`: the wakeup's `WF_*` flags, whether `pse` is idle (`se_is_idle()`:
    /// `set_next_buddy()` marks nothing then), the waker's runtime as `preempt_sync()`
    /// measures it (`rq_clock_task() - se->exec_start`, at least 0) and
    /// `sysctl_sched_migration_cost`. Returns the bits `SCHED_EEVDF_WAKEUP_PREEMPT`
    /// (reschedule current) and `SCHED_EEVDF_WAKEUP_BUDDY` (call `set_next_buddy(pse)`,
    /// for the levels above: this `cfs_rq`'s buddy is set already).
    ///
    /// Requires: current's runtime accounted (`update_curr()`).
    fn sched_eevdf_wakeup_preempt_buddy(
        rq, pse; wake_flags: c_int, wakee_idle: bool, waker_ran_ns: u64, migration_cost_ns: u64
    ) -> c_int {
        let read = WakeFlags::FORK | WakeFlags::SYNC | WakeFlags::RQ_SELECTED;
        let wake = Wake {
            flags: WakeFlags(wake_flags as u32 & read.0),
            wakee_idle,
            waker_ran_ns,
            migration_cost_ns,
        };
        // Never the default feature set (the flag is off there): no specialised copy.
        let cfg = config();
        let want = verify::wakeup_buddy_before(rq, pse, wake, cfg.features);
        let act = eevdf::wakeup_preempt_buddy(rq, pse, wake, cfg);
        verify::wakeup_buddy_after(rq, want, (act.preempt, act.set_buddy));
        if stats::counting() {
            wakeup_buddy_counted(rq, pse, act, cfg);
        }
        let mut bits = 0;
        if act.preempt {
            bits |= bindings::SCHED_EEVDF_WAKEUP_PREEMPT;
        }
        if act.set_buddy {
            bits |= bindings::SCHED_EEVDF_WAKEUP_BUDDY;
        }
        bits as c_int
    }

    /// A group entity takes its queue's minimum slice, possibly while queued.
    fn sched_eevdf_set_slice(rq, se; slice: u64) {
        eevdf::set_queued_slice(rq, se, slice, features());
    }

    /// `set_protect_slice()` of `set_next_entity()` when the core decides it:
    /// RUN_TO_PARITY_MIN_SLICE's window, or PROTECT_AT_PICK's sched_change (`!first`), which
    /// keeps the window `se` had.
    ///
    /// Requires: `se` out of the timeline and not yet current.
    fn sched_eevdf_set_protect_slice(rq, se; first: bool) {
        let kept = eevdf::set_protect_slice(rq, se, first, config());
        if kept && stats::counting() {
            rq.count(Stat::ProtectRestored);
        }
    }

    /// `cancel_protect_slice()`: check_preempt_wakeup_fair() does not let an idle-policy
    /// current keep its slice protection against a non-idle wakee.
    fn sched_eevdf_cancel_protect_slice(rq, se) {
        let _ = rq;
        eevdf::cancel_protect_slice(se, config().features);
    }

    /// `update_curr()`'s reason to reschedule current `se` besides a used-up request, which
    /// fair.c asks the core with RUN_TO_PARITY_MIN_SLICE: its protected window has ended.
    fn sched_eevdf_update_curr_resched(rq, se) -> bool {
        let cfg = config();
        let resched = eevdf::update_curr_resched(rq, se, cfg);
        if resched
            && stats::counting()
            && cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE)
            && eevdf::entity_eligible(rq, se, cfg)
        {
            rq.count(Stat::ProtectExpired);
        }
        resched
    }
}

/// [`sched_eevdf_pick_eevdf`] while counting: the same pick, and its reason counted. Out of
/// line (a tail call, `rq` in the same register), so that the pick without counting keeps
/// its own, shorter code.
#[inline(never)]
fn pick_counted(rq: &CfsRq<'_>) -> *mut bindings::sched_entity {
    let cfg = config();
    let se = eevdf::pick_eevdf(rq, cfg);
    let why = eevdf::pick_reason(rq, se, cfg);
    verify::pick(rq, se, cfg.features);
    // One increment a pick, and one more for a pick through the tree: `picks` is summed
    // from the four when the file is read, and `pick_fast` is what the paths leave.
    match why {
        PickReason::Idle => return ptr::null_mut(),
        PickReason::Only | PickReason::Earliest => rq.count(Stat::Picks),
        PickReason::Parity => rq.count(Stat::PicksParity),
        PickReason::EarliestIneligible => rq.count(Stat::PicksIneligibleEarliest),
        PickReason::Buddy => rq.count(Stat::PicksBuddy),
    }
    match eevdf::pick_path(rq, cfg) {
        PickPath::Fast => {}
        PickPath::Shortcut => rq.count(Stat::PickShortcut),
        PickPath::Descent => rq.count(Stat::PickDescent),
    }
    se.map_or(ptr::null_mut(), Se::as_ptr)
}

/// `place_entity()` on `rq`, counted, and recorded while the placement record is on
/// (kernel/place.rs: one load and a branch when it is off).
#[inline(always)]
fn place<'rq>(rq: &mut CfsRq<'rq>, se: Se<'rq>, flags: c_int) {
    let flags = EnqueueFlags(flags as u32);
    let lag = if place::recording() {
        place::logged(rq, se, flags, eevdf::place_entity)
    } else {
        with_config!(cfg, (rq: &mut CfsRq<'r>, se: Se<'r>, flags: EnqueueFlags) -> i64 => {
            eevdf::place_entity(rq, se, flags, cfg)
        })
    };
    count_place(rq, lag, flags);
}

/// Counts a placement that applied `lag`.
#[inline(always)]
fn count_place(rq: &CfsRq<'_>, lag: i64, flags: EnqueueFlags) {
    if stats::counting() {
        if lag != 0 {
            rq.count(Stat::PlaceLag);
        }
        if flags.contains(EnqueueFlags::INITIAL) {
            rq.count(Stat::PlaceInitial);
        }
    }
}

/// [`sched_eevdf_wakeup_preempt`] while counting: the same decision, classified and counted
/// (out of line, as [`pick_counted`]).
#[inline(never)]
fn wakeup_counted<'rq>(rq: &mut CfsRq<'rq>, pse: Se<'rq>) -> bool {
    let cfg = config();
    if cfg.feat(Features::NEXT_BUDDY_EEVDF) {
        // Counted by sched_eevdf_wakeup_preempt_buddy(), which decides.
        return false;
    }
    let want = verify::wakeup_before(rq, pse, cfg.features);
    let vprot = rq.curr().map(|c| c.vprot());
    let preempts = eevdf::wakeup_preempt(rq, pse, cfg);
    let why = eevdf::wakeup_reason(rq, pse, preempts, cfg);
    verify::wakeup_after(rq, want, preempts);
    // RUN_TO_PARITY_MIN_SLICE's other decision: a short wakee shrank current's window
    // (otherwise the wakeup writes `vprot` only to cancel it, when it preempts).
    if !preempts
        && cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE)
        && rq.curr().map(|c| c.vprot()) != vprot
    {
        rq.count(Stat::ProtectShrunk);
    }
    // One increment a wakeup: `wakeups` is the sum of the outcomes.
    rq.count(wakeup_stat(why));
    preempts
}

/// The counter of a wakeup outcome.
fn wakeup_stat(why: WakeupPreempt) -> Stat {
    match why {
        WakeupPreempt::ShortSlice => Stat::PreemptShort,
        WakeupPreempt::CurrIneligible | WakeupPreempt::Idle => Stat::PreemptIneligible,
        WakeupPreempt::EarlierDeadline => Stat::PreemptDeadline,
        WakeupPreempt::RunToParity => Stat::WakeupParityHeld,
        WakeupPreempt::None => Stat::WakeupNoPreempt,
        WakeupPreempt::Buddy => Stat::PreemptBuddy,
        WakeupPreempt::SyncResched => Stat::WakeupSyncResched,
        WakeupPreempt::SyncNone => Stat::WakeupSyncNone,
        WakeupPreempt::ForkOrDelayed => Stat::WakeupForkDelayed,
    }
}

/// [`sched_eevdf_wakeup_preempt_buddy`]'s counting: the outcome (one of the `wakeups`),
/// and whether NEXT_BUDDY made or kept a buddy. Out of line, asked of the state the
/// decision left.
#[inline(never)]
fn wakeup_buddy_counted<'rq>(rq: &CfsRq<'rq>, pse: Se<'rq>, act: WakeupAction, cfg: Config) {
    let why = eevdf::wakeup_buddy_reason(rq, pse, act, cfg);
    rq.count(wakeup_stat(why));
    if act.set_buddy {
        rq.count(Stat::BuddySet);
    }
    if act.kept_buddy {
        rq.count(Stat::BuddyKept);
    }
}
