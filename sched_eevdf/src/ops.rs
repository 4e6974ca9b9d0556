// SPDX-License-Identifier: GPL-2.0

//! The operations fair.c calls: one function each, which the kernel's entry points
//! (kernel/entry.rs) and the host (the model of fair.c's outer logic, the simulator, the
//! tests) call alike. Names follow the C. Generic over [`Runqueue`].
//!
//! | entry point (`sched_eevdf_*`)      | operation                                   |
//! |------------------------------------|---------------------------------------------|
//! | `avg_vruntime`                     | [`avg_vruntime`]                            |
//! | `entity_eligible`                  | [`entity_eligible`]                         |
//! | `enqueue_entity`, `dequeue_entity` | [`__enqueue_entity`], [`__dequeue_entity`]  |
//! | `pick_eevdf`                       | [`pick_eevdf`] (counted: [`pick_reason`])   |
//! | `place_entity`                     | [`place_entity`]                            |
//! | `place_enqueue_entity`             | [`place_entity`], [`__enqueue_entity`]      |
//! | `update_deadline`                  | [`update_deadline`]                         |
//! | `dequeue_start`                    | [`dequeue_start`]                           |
//! | `requeue_delayed`                  | [`requeue_delayed`]                         |
//! | `reweight_entity`                  | [`reweight_entity`]                         |
//! | `wakeup_preempt`                   | [`wakeup_preempt`] (counted: [`wakeup_reason`]) |
//! | `wakeup_preempt_buddy`             | [`wakeup_preempt_buddy`] ([`wakeup_buddy_reason`]) |
//! | `set_slice`                        | [`set_queued_slice`]                        |
//! | `set_protect_slice`                | [`set_protect_slice`]                       |
//! | `cancel_protect_slice`             | [`cancel_protect_slice`]                    |
//! | `update_curr_resched`              | [`update_curr_resched`]                     |
//! | `place_entity` (current)           | [`place_curr_entity`]                       |
//!
//! Time is an input: where fair.c reads the clock (`update_curr()`), the caller passes the
//! executed real time. Every operation takes the [`Config`] to use, features included.
//!
//! How an operation is compiled is its own business: the kernel's common cases are
//! straight-line code and the rest is reached by tail calls to private, out-of-line steps
//! (`#[cfg_attr(sched_eevdf_in_kernel, inline(never))]`); none of that shows in the names.

use super::features::{Config, Features};
use super::load::{calc_delta_fair, div_s64, LoadWeight};
use super::math::{avg_vruntime_add, avg_vruntime_delta, avg_vruntime_sub, entity_lag};
use super::math::{update_zero_vruntime, vruntime_eligible, Eligibility};
use super::tree::{cfs_rq_min_slice, min_deadline_update, Entity, Runqueue, Timeline};
use super::vtime::{vadd, vdelta, vruntime_after, vruntime_before, vruntime_min};

macro_rules! flags {
    ($(#[$m:meta])* $t:ident { $($(#[$fm:meta])* $f:ident = $v:expr,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub struct $t(pub u32);
        impl $t {
            /// No flag.
            pub const NONE: $t = $t(0);
            $($(#[$fm])* pub const $f: $t = $t($v);)*
            /// Whether all flags of `o` are set.
            #[inline]
            pub const fn contains(self, o: $t) -> bool { self.0 & o.0 == o.0 }
            /// Whether any flag of `o` is set.
            #[inline]
            pub const fn intersects(self, o: $t) -> bool { self.0 & o.0 != 0 }
        }
        impl core::ops::BitOr for $t {
            type Output = $t;
            fn bitor(self, o: $t) -> $t { $t(self.0 | o.0) }
        }
    };
}
// The model declares its `DequeueFlags` with it too.
#[cfg(any(not(sched_eevdf_in_kernel), CONFIG_SCHED_EEVDF_RUST_KUNIT_TEST))]
pub(crate) use flags;

flags!(
    /// `ENQUEUE_*` flags the core reads.
    EnqueueFlags {
        /// Wakeup (informational).
        WAKEUP = 0x01,
        /// Undo of a `DEQUEUE_SAVE` (informational).
        RESTORE = 0x02,
        /// A new task: PLACE_DEADLINE_INITIAL gives it half a slice.
        INITIAL = 0x80,
    }
);

/// Why `check_preempt_wakeup_fair()` did or did not preempt ([`wakeup_reason`]; the debugfs
/// counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WakeupPreempt {
    /// No preemption: current stays.
    None,
    /// Nothing runs: the wakee runs.
    Idle,
    /// Preempt: PREEMPT_SHORT cancelled current's slice protection for a shorter-slice
    /// eligible wakee, which is now the pick.
    ShortSlice,
    /// Preempt: current is not eligible (or not runnable), the wakee is the pick.
    CurrIneligible,
    /// Preempt: the wakee has the earliest eligible virtual deadline.
    EarlierDeadline,
    /// No preemption because RUN_TO_PARITY kept current, although the wakee is eligible
    /// and its deadline is not later than current's (the deadline order asked for a switch).
    RunToParity,
    /// Preempt (NEXT_BUDDY_EEVDF): the wakee is the next buddy and eligible, so the pick
    /// returned it before anything else, slice protection included.
    Buddy,
    /// Preempt (NEXT_BUDDY_EEVDF): a WF_SYNC wakeup made the wakee the next buddy and
    /// `preempt_sync()` asked for a reschedule (earlier deadline, the waker ran long enough).
    SyncResched,
    /// No preemption (NEXT_BUDDY_EEVDF): a WF_SYNC wakeup made the wakee the next buddy and
    /// `preempt_sync()` said no; the wakee waits for the waker to sleep.
    SyncNone,
    /// No preemption (NEXT_BUDDY_EEVDF): the wakeup of a new task (WF_FORK) or of a delayed
    /// one never preempts, nor makes a buddy.
    ForkOrDelayed,
}

impl WakeupPreempt {
    /// Whether current must be rescheduled.
    pub const fn preempts(self) -> bool {
        matches!(
            self,
            WakeupPreempt::Idle
                | WakeupPreempt::ShortSlice
                | WakeupPreempt::CurrIneligible
                | WakeupPreempt::EarlierDeadline
                | WakeupPreempt::Buddy
                | WakeupPreempt::SyncResched
        )
    }
}

flags!(
    /// `WF_*` wakeup flags the core reads (the kernel's values: kernel/entry.rs checks them
    /// against sched.h's).
    WakeFlags {
        /// A new task's first wakeup (`wake_up_new_task()`).
        FORK = 0x04,
        /// The waker says it goes to sleep soon (pipes, `wake_up_interruptible_sync()`).
        SYNC = 0x10,
        /// `select_task_rq()` chose the runqueue: tasks are stacking on a CPU.
        RQ_SELECTED = 0x80,
    }
);

/// A wakeup as `check_preempt_wakeup_fair()` sees it: what NEXT_BUDDY_EEVDF's decision,
/// [`wakeup_preempt_buddy`], reads beyond the runqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Wake {
    /// The wakeup's flags.
    pub flags: WakeFlags,
    /// `se_is_idle(pse)` (a SCHED_IDLE group): `set_next_buddy()` marks nothing for it.
    pub wakee_idle: bool,
    /// How long the waker has run, as 6.19's `preempt_sync()` measures it:
    /// `rq_clock_task(rq) - se->exec_start`, negative taken as 0. fair.c reads it after
    /// `update_curr()`, which has just set `exec_start` to that clock: 0 (see
    /// [`wakeup_preempt_buddy`]).
    pub waker_ran_ns: u64,
    /// `sysctl_sched_migration_cost` (0.5 ms; debugfs `migration_cost_ns`).
    pub migration_cost_ns: u64,
}

/// Which rule of [`wakeup_preempt_buddy`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WakeupRule {
    /// Nothing runs: preempt.
    Idle,
    /// The wakee is current: nothing to do.
    Curr,
    /// PREEMPT_SHORT's case, a wakee with a shorter slice: the buddy is left alone.
    Short,
    /// A new or a delayed wakee: no preemption at all.
    ForkOrDelayed,
    /// A WF_SYNC wakeup that made the wakee the buddy: `preempt_sync()` decided.
    Sync,
    /// The pick decided: preempt if it returns the wakee.
    Pick,
}

/// What [`wakeup_preempt_buddy`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeupAction {
    /// Current must be rescheduled.
    pub preempt: bool,
    /// fair.c must call `set_next_buddy(pse)`, which marks the wakee at every level of the
    /// hierarchy (the core has set this runqueue's buddy already, unless the wakee is idle).
    pub set_buddy: bool,
    /// NEXT_BUDDY kept the older buddy: its deadline is earlier than the wakee's.
    pub kept_buddy: bool,
    /// The rule that decided.
    pub rule: WakeupRule,
}

impl WakeupAction {
    const fn by(rule: WakeupRule, preempt: bool) -> WakeupAction {
        WakeupAction {
            preempt,
            set_buddy: false,
            kept_buddy: false,
            rule,
        }
    }
}

/// Why [`pick_eevdf`] chose its entity ([`pick_reason`]; the debugfs pick counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PickReason {
    /// Nothing is runnable: no pick.
    Idle,
    /// A single runnable entity: no choice, eligibility not tested.
    Only,
    /// RUN_TO_PARITY kept current (eligible, slice protected).
    Parity,
    /// The pick has the earliest deadline of all runnable entities.
    Earliest,
    /// The earliest deadline belongs to an entity that is not eligible: the pick is a
    /// later deadline. These are the picks that ELIGIBLE changed.
    EarliestIneligible,
    /// NEXT_BUDDY_EEVDF with PICK_BUDDY: the next buddy is eligible, so it is the pick,
    /// before slice protection and deadlines are looked at.
    Buddy,
}

/// The caller's side of an operation's out-of-line steps (the kernel's rare paths, reached
/// by tail calls so that the common path needs few registers): the configuration they read
/// and the counter they count into. A step asks for the configuration again rather than
/// have the operation carry it across the call, which would cost the common path a spill.
///
/// A [`Config`] is its own context, the host's: the same configuration, nothing counted.
/// The kernel's reads the live configuration again and counts into the debugfs `stats`.
pub trait Context<R: ?Sized>: Copy {
    /// The configuration, for a step compiled once for every feature set.
    fn config(self) -> Config;

    /// `update_entity_lag()` clamped the lag (the counters `lag_clamped_pos` and
    /// `lag_clamped_neg`).
    #[inline(always)]
    fn lag_clamped(self, _rq: &R, _clamp: LagClamp) {}

    /// A dequeue saved `se`'s lag; `se` is still counted in `V` (the `lag_error` counter,
    /// [`lag_error`]).
    #[inline(always)]
    fn lag_saved(self, _rq: &R, _se: R::Se)
    where
        R: Timeline,
    {
    }
}

impl<R: ?Sized> Context<R> for Config {
    #[inline(always)]
    fn config(self) -> Config {
        self
    }
}

/// `avg_vruntime()`: `V`, the weighted average vruntime of the queued entities (current
/// included), and move `zero_vruntime` there.
///
/// `V = v0 + floor(Σ (v_i - v0) w_i / W)`: the division rounds toward minus infinity ("sign
/// flips effective floor / ceiling"), so `V` has a left bias and the entity at `v_i = V`
/// is always eligible. With one entity (only current), `V` is its vruntime.
///
/// This writes the runqueue (the zero point follows V, which keeps keys small). A reader
/// that must not change scheduler state, such as a debugfs file, uses
/// [`avg_vruntime_peek`](super::math::avg_vruntime_peek): the upstream fix
/// "sched/debug: Fix avg_vruntime() usage" is about exactly that.
#[inline(always)]
pub fn avg_vruntime<R: Runqueue>(rq: &mut R) -> u64 {
    let delta = avg_vruntime_delta(rq);
    update_zero_vruntime(rq, delta);
    rq.zero_vruntime()
}

/// Which side of its limit [`entity_lag`] clamped a lag to (the debugfs counters
/// `lag_clamped_pos` and `lag_clamped_neg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LagClamp {
    /// `V - v_i` was above `+limit`: owed more service than the limit keeps.
    Positive,
    /// `V - v_i` was below `-limit`: ahead by more than the limit keeps.
    Negative,
}

/// `update_entity_lag()`: saves `vl_i` before a dequeue (`se` still queued: in the tree or
/// current). Returns how the lag was clamped, if it was.
#[inline(always)]
fn update_entity_lag<R: Runqueue>(rq: &mut R, se: R::Se, cfg: Config) -> Option<LagClamp> {
    let v = avg_vruntime(rq);
    let vlag = entity_lag(rq, v, se, cfg);
    save_vlag(rq, se, vlag, cfg.features);
    let raw = vdelta(v, se.vruntime());
    if vlag == raw {
        None
    } else if raw > 0 {
        Some(LagClamp::Positive)
    } else {
        Some(LagClamp::Negative)
    }
}

/// Sets `se`'s saved lag. 6.12 keeps current's slice protection in that same field
/// (`vlag`, see [`set_protect_slice`]), so with 6.12's protection ([`protect_6_12`]) a lag
/// written for current overwrites the stash too: current is no longer protected (unless
/// the lag happens to equal its deadline, as in 6.12). tests/fair-c-diff found the core
/// keeping the protection of a current dequeued or requeued before the pick put it away.
#[inline(always)]
fn save_vlag<R: Runqueue>(rq: &R, se: R::Se, vlag: i64, features: Features) {
    se.set_vlag(vlag);
    if protect_6_12(features) && rq.curr() == Some(se) {
        se.set_vprot(vlag as u64);
    }
}

/// `entity_eligible()`.
#[inline(always)]
pub fn entity_eligible<R: Runqueue>(rq: &R, se: R::Se, cfg: Config) -> bool {
    vruntime_eligible(rq, se.vruntime(), cfg)
}

/// `__enqueue_entity()`: into the sums and the timeline.
#[inline(always)]
pub fn __enqueue_entity<R: Runqueue>(rq: &mut R, se: R::Se) {
    avg_vruntime_add(rq, se);
    // Initialise the augmented values of a leaf (straight-line: the `None` arms fold away).
    min_deadline_update(se, None, None);
    rq.insert(se);
}

/// `__dequeue_entity()`: out of the timeline and the sums.
#[inline]
pub fn __dequeue_entity<R: Runqueue>(rq: &mut R, se: R::Se) {
    rq.erase(se);
    avg_vruntime_sub(rq, se);
}

/// `protect_slice()`: whether current's slice is protected (RUN_TO_PARITY keeps an
/// eligible, protected current at the pick), read from `vprot` as the features say.
///
/// - 6.12: `vprot` is a copy of the deadline stashed at the pick ([`set_protect_slice`];
///   6.12 stashes it in `vlag`, which is not used until the dequeue), and current is
///   protected while it still matches: `vprot == deadline`. A new deadline (the request
///   used up) or a cancel ends the protection.
/// - RUN_TO_PARITY_MIN_SLICE (6.17): `vprot` is the virtual time at which the protection
///   ends, `v < vprot` (wrap-safe).
///
/// 6.17's reading is guarded, `v < vprot <= d`: a window never outlasts the request,
/// whichever way the flag is read, so a toggle in the middle of a window is sound in both
/// directions. A 6.12 stash reads as protected until the deadline (what 6.12 gave it); a
/// stash left past a deadline that a reweight moved back, or 6.12's cancel value
/// `d + 1`, reads as ended; a 6.17 window shorter than the request reads as unprotected
/// under 6.12's test, and an ended window as ended under both ([`cancel_protect_slice`]).
/// With the new flags off `vprot` takes exactly the values 6.12's stash takes (the
/// deadline at the pick, `d + 1` at a cancel, untouched by a reweight), so that 6.12's
/// decisions, coincidences of a later deadline with a stale stash included, are kept.
#[inline(always)]
pub fn protect_slice<S: Entity>(se: S, features: Features) -> bool {
    if features.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
        vruntime_before(se.vruntime(), se.vprot()) && !vruntime_after(se.vprot(), se.deadline())
    } else {
        se.vprot() == se.deadline()
    }
}

/// The `vprot` of a window that RUN_TO_PARITY_MIN_SLICE ends: unprotected under both
/// readings of [`protect_slice`], and not past the deadline:
///
/// ```text
///   vprot' = min(v, d - 1)                  (wrap-safe)
///   vprot' <= v         =>  not v < vprot'   (6.17's test)
///   vprot' <= d - 1     =>  vprot' != d      (6.12's test)
/// ```
///
/// 6.17 cancels to `vruntime`, which 6.12's test reads as protected when `v == d` (no
/// `update_curr()` since the deadline was reached). Where `v < d`, which `update_curr()`
/// leaves, this is 6.17's value.
#[inline]
fn ended_vprot<S: Entity>(se: S) -> u64 {
    vruntime_min(se.vruntime(), se.deadline().wrapping_sub(1))
}

/// Whether slice protection is 6.12's: neither RUN_TO_PARITY_MIN_SLICE nor
/// PROTECT_AT_PICK. `vprot` then takes exactly the values of 6.12's stash.
#[inline(always)]
fn protect_6_12(features: Features) -> bool {
    !features.contains(Features::RUN_TO_PARITY_MIN_SLICE)
        && !features.contains(Features::PROTECT_AT_PICK)
}

/// `cancel_protect_slice()`: current loses what is left of its protected window
/// (PREEMPT_SHORT's wakee preempts; the kernel's idle-policy rule). 6.12's value,
/// `deadline + 1`, with 6.12's protection ([`protect_6_12`]); [`ended_vprot`] otherwise.
#[inline]
pub fn cancel_protect_slice<S: Entity>(se: S, features: Features) {
    if protect_slice(se, features) {
        if protect_6_12(features) {
            se.set_vprot(se.deadline().wrapping_add(1));
        } else {
            se.set_vprot(ended_vprot(se));
        }
    }
}

/// Ends a window that reaches past the deadline: a reweight or a sched_change of current
/// can move the deadline before the window's end. [`protect_slice`] already reads such a
/// window as ended; ending it keeps a later, renewed deadline from bringing it back.
#[inline]
fn protect_within_deadline<S: Entity>(se: S) {
    if vruntime_before(se.vruntime(), se.vprot()) && vruntime_after(se.vprot(), se.deadline()) {
        se.set_vprot(ended_vprot(se));
    }
}

/// `set_protect_slice()`, the protection step of `set_next_entity()`: `se` becomes
/// current, picked (`first`) or set again by a sched_change (`!first`: setattr, renice, a
/// move between groups or classes while it runs). Call it with `se` out of the timeline
/// and not yet `rq`'s current, as set_next_entity() does, so that `cfs_rq_min_slice()` is
/// the smallest slice of the others. Returns whether PROTECT_AT_PICK kept an ended window
/// that 6.12 would have set again (the `protect_restored` counter).
///
/// 6.12 stashes the deadline, `vprot = d`: protected until the request is used up. With
/// RUN_TO_PARITY_MIN_SLICE (6.17) current is protected for the quantum
///
/// ```text
///   q     = min(RUN_TO_PARITY ? cfs_rq_min_slice : normalized base slice, r_i)
///   vprot = q == r_i ? d : min(d, v + q / w_i)            (min wrap-safe)
/// ```
///
/// so never past the deadline (`v + q / w_i` may be, after part of the request ran).
///
/// PROTECT_AT_PICK (7.0, "Only set slice protection at pick time"): a sched_change keeps
/// the window current had, so that it cannot restore a cancelled window or restart a
/// 6.17 window. `dequeue_entity()` and [`place_entity`] carry `vprot` relative to the
/// vruntime across it, as they carry the deadline with PLACE_REL_DEADLINE; a window that
/// no longer ends by the deadline (the deadline was made anew) is ended.
#[inline]
pub fn set_protect_slice<R: Runqueue>(rq: &R, se: R::Se, first: bool, cfg: Config) -> bool {
    if !first && cfg.feat(Features::PROTECT_AT_PICK) {
        protect_within_deadline(se);
        return !protect_slice(se, cfg.features);
    }
    let deadline = se.deadline();
    if !cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
        se.set_vprot(deadline);
        return false;
    }
    let quantum = if cfg.feat(Features::RUN_TO_PARITY) {
        cfs_rq_min_slice(rq)
    } else {
        cfg.normalized_base_slice_ns
    };
    let slice = se.slice();
    let mut vprot = deadline;
    if quantum < slice {
        let end = se
            .vruntime()
            .wrapping_add(calc_delta_fair(quantum, se.load()));
        vprot = vruntime_min(vprot, end);
    }
    se.set_vprot(vprot);
    false
}

/// `update_protect_slice()` (6.17): a shorter-slice wakee that did not preempt current
/// limits what is left of current's window to the smallest queued slice (the wakee's
/// included):
///
/// ```text
///   vprot' = min(vprot, v + cfs_rq_min_slice / w)          (wrap-safe)
/// ```
///
/// It only shrinks, so the window still ends by the deadline, and an ended one stays
/// ended. Returns whether it shrank (the `protect_shrunk` counter).
#[inline]
fn update_protect_slice<R: Runqueue>(rq: &R, se: R::Se) -> bool {
    let end = se
        .vruntime()
        .wrapping_add(calc_delta_fair(cfs_rq_min_slice(rq), se.load()));
    let vprot = vruntime_min(se.vprot(), end);
    let shrunk = vprot != se.vprot();
    se.set_vprot(vprot);
    shrunk
}

/// `update_curr()`'s reason to reschedule besides a used-up request. 6.12's
/// `did_preempt_short()`: with PREEMPT_SHORT, current is neither protected nor eligible.
/// With RUN_TO_PARITY_MIN_SLICE, 6.17's "always trigger resched at the end of a
/// protected period": current's window has ended, eligible or not.
#[inline]
pub fn update_curr_resched<R: Runqueue>(rq: &R, curr: R::Se, cfg: Config) -> bool {
    if cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
        return !protect_slice(curr, cfg.features);
    }
    if !cfg.feat(Features::PREEMPT_SHORT) || protect_slice(curr, cfg.features) {
        return false;
    }
    !entity_eligible(rq, curr, cfg)
}

/// The features of a pick that ignores current's slice protection (6.17's
/// `__pick_eevdf(cfs_rq, protect = false)`, for a shorter-slice wakee): the pick reads
/// the protection only through RUN_TO_PARITY and RUN_TO_PARITY_MIN_SLICE.
#[inline]
const fn without_protection(features: Features) -> Features {
    features
        .with(Features::RUN_TO_PARITY, false)
        .with(Features::RUN_TO_PARITY_MIN_SLICE, false)
}

/// `pick_eevdf()`: Earliest Eligible Virtual Deadline First.
///
/// In order to provide latency guarantees for different request sizes EEVDF selects the
/// best runnable entity from two criteria:
///
///  1. the entity must be eligible (must be owed service, [`Eligibility`]);
///  2. from those that meet 1), the one with the earliest virtual deadline.
///
/// Rule, deterministic: with one queued entity, it (current if runnable). Otherwise, with
/// NEXT_BUDDY_EEVDF and PICK_BUDDY, an eligible next buddy (`cfs_rq->next`) is the pick
/// (6.19 tests the buddy here, before slice protection; 6.12 and this core without the
/// flag leave it to fair.c's `pick_next_entity()`). Then current competes only if
/// runnable and eligible; with RUN_TO_PARITY (or RUN_TO_PARITY_MIN_SLICE) an eligible
/// current whose slice is protected ([`protect_slice`]) is kept. Else the earliest
/// deadline wins among the eligible tree entities (ties: tree order, i.e. smaller
/// vruntime, then FIFO) and current, which wins only with a strictly earlier deadline.
/// O(log n).
///
/// O(1) shortcut before the descent (6.12's pick has the same one for its layout): when
/// the leftmost entity holds the tree's earliest deadline (the root's `min_deadline`) and
/// is eligible, it is the tree's answer, since it comes first in tree order among all
/// entities with that deadline; when it holds it and is not eligible, no tree entity is
/// (the leftmost has the smallest vruntime, and eligibility is monotone in vruntime), and
/// the tree has no answer. Equal slices and weights make this the common case, and
/// everything up to here is straight-line code; the descent is a separate function
/// (`pick_eevdf_general`, out of line in the kernel), so that the common picks do not
/// pay for the registers it needs.
#[inline(always)]
pub fn pick_eevdf<R: Runqueue>(rq: &R, cfg: Config) -> Option<R::Se> {
    pick_features(rq, cfg.features)
}

/// [`pick_eevdf`] from the feature bits alone (the only part of the [`Config`] it reads).
#[inline(always)]
fn pick_features<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    match pick_eevdf_fast(rq, features) {
        Fast::Pick(pick) => pick,
        Fast::Tree { curr, avg, load } => pick_eevdf_tree(rq, curr, avg, load),
        Fast::General => pick_eevdf_general(rq, features),
    }
}

/// What [`pick_eevdf_fast`] decided, or left to the descent.
enum Fast<S> {
    /// The pick.
    Pick(Option<S>),
    /// The tree decides, against `curr` (current if it competes: runnable, eligible and
    /// not kept by its slice protection): [`pick_eevdf_tree`], with the eligibility sums
    /// already computed (current folded in, [`Eligibility::sums`]). Only with the
    /// common features ([`PICK_COMMON`]).
    Tree {
        curr: Option<S>,
        avg: i64,
        load: u64,
    },
    /// Current's eligibility needs 128 bits: [`pick_eevdf_general`].
    General,
}

/// The feature bits [`pick_eevdf_fast`] is specialized on: the project's ELIGIBLE,
/// BIAS_ELIGIBLE and NEXT_BUDDY_EEVDF (6.12 has none of them).
const PICK_SPECIALIZED: Features = Features::ELIGIBLE
    .with(Features::BIAS_ELIGIBLE, true)
    .with(Features::NEXT_BUDDY_EEVDF, true);

/// Their values in the common configuration, 6.12's behaviour: eligibility tested, no
/// bias, no buddy in the pick.
const PICK_COMMON: Features = Features::ELIGIBLE;

/// The O(1) cases of [`pick_eevdf`], with 64-bit eligibility tests only; what they leave
/// undecided goes to the descent ([`Fast::Tree`]) or, when current's eligibility test
/// needs 128 bits, to [`pick_eevdf_general`].
///
/// Specialized on the common values of [`PICK_SPECIALIZED`]: with them, the body below
/// runs with those bits as constants (the same values as `features`), so that the common
/// pick tests none of them (one test of the three, instead of a test each where they are
/// read: about ten instructions); any other combination takes [`pick_eevdf_uncommon`],
/// the same body reading every bit.
#[inline(always)]
fn pick_eevdf_fast<R: Runqueue>(rq: &R, features: Features) -> Fast<R::Se> {
    if features.bits() & PICK_SPECIALIZED.bits() != PICK_COMMON.bits() {
        return Fast::Pick(pick_eevdf_uncommon(rq, features));
    }
    let features = features
        .with(PICK_SPECIALIZED, false)
        .with(PICK_COMMON, true);
    pick_eevdf_fast_body(rq, features)
}

/// [`pick_eevdf`] for feature sets that [`pick_eevdf_fast`] is not specialized on (the
/// project's ELIGIBLE off, BIAS_ELIGIBLE or NEXT_BUDDY_EEVDF on): out of line.
#[inline(never)]
fn pick_eevdf_uncommon<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    match pick_eevdf_fast_body(rq, features) {
        Fast::Pick(pick) => pick,
        Fast::Tree { .. } | Fast::General => pick_eevdf_general(rq, features),
    }
}

/// The body of [`pick_eevdf_fast`], for any features.
#[inline(always)]
fn pick_eevdf_fast_body<R: Runqueue>(rq: &R, features: Features) -> Fast<R::Se> {
    let runnable = rq.curr().filter(|c| c.on_rq());
    // We can safely skip the eligibility test with one queued entity.
    if rq.nr_queued() == 1 {
        return Fast::Pick(runnable.or_else(|| rq.first()));
    }
    let el = Eligibility::with_features(rq, features);
    if let Some(b) = pick_buddy(rq, features) {
        match el.vruntime_narrow(b.vruntime()) {
            Some(true) => return Fast::Pick(Some(b)),
            Some(false) => {}
            None => return Fast::Pick(pick_buddy_wide(rq, features, b)),
        }
    }
    let curr = match runnable.map(|c| (c, el.vruntime_narrow(c.vruntime()))) {
        None | Some((_, Some(false))) => None,
        Some((c, Some(true))) => Some(c),
        Some((_, None)) => return Fast::General,
    };
    if let Some(c) = curr {
        if keeps_slice(c, features) {
            return Fast::Pick(Some(c));
        }
    }
    let Some(root) = rq.root() else {
        return Fast::Pick(curr);
    };
    if let Some(first) = rq.first() {
        if first.deadline() == root.min_deadline() {
            match el.vruntime_narrow(first.vruntime()) {
                Some(true) => return Fast::Pick(earlier(curr, Some(first))),
                // The leftmost has the smallest vruntime: if it is not eligible, no tree
                // entity is (the tree has no answer: the descent would find none).
                Some(false) => return Fast::Pick(curr),
                None => {}
            }
        }
    }
    let (avg, load) = el.sums();
    Fast::Tree { curr, avg, load }
}

/// [`pick_eevdf`]'s descent when [`pick_eevdf_fast`], with the common features
/// ([`PICK_COMMON`]: no bias, so `avg` is the whole left side of the test), has settled
/// current (`curr`, if it competes) and computed the eligibility sums (`avg`, `load`): it
/// takes them as arguments, in registers, instead of computing them again as
/// [`pick_eevdf_general`] does, and is reached by a tail call. Out of line on the host
/// too, so that the host's measurements (Documentation/pick-cost.md) have the kernel's
/// structure.
#[inline(never)]
fn pick_eevdf_tree<R: Runqueue>(rq: &R, curr: Option<R::Se>, avg: i64, load: u64) -> Option<R::Se> {
    let el = Eligibility::from_sums(rq, PICK_COMMON, avg, load);
    earlier(curr, rq.root().and_then(|root| pick_tree(rq, &el, root)))
}

/// Whether [`pick_eevdf_tree`] picks `pse`: out of line, so that [`wakeup_preempt`]
/// reaches it by a tail call.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn pick_eevdf_tree_is<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    curr: Option<R::Se>,
    avg: i64,
    load: u64,
) -> bool {
    pick_eevdf_tree(rq, curr, avg, load) == Some(pse)
}

/// The next buddy the pick tests first: `cfs_rq->next` with NEXT_BUDDY_EEVDF and
/// PICK_BUDDY ("picking the ->next buddy will affect latency but not fairness", fair.c),
/// else none. The pick returns it if it is eligible. fair.c never makes a delayed entity
/// the buddy and clears the buddy when it dequeues it ([`check_invariants`] checks both).
///
/// [`check_invariants`]: super::check::check_invariants
#[inline(always)]
fn pick_buddy<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    if features.contains(BUDDY_PICKS) {
        rq.next_buddy()
    } else {
        None
    }
}

/// The flags under which the core's pick tests the next buddy.
const BUDDY_PICKS: Features = Features::NEXT_BUDDY_EEVDF.with(Features::PICK_BUDDY, true);

/// RUN_TO_PARITY: once selected, an eligible current runs until it either becomes
/// non-eligible or its protected window ends (see [`set_protect_slice`]). 6.17 reads
/// the window without RUN_TO_PARITY too: NO_RUN_TO_PARITY only makes it shorter.
#[inline(always)]
fn keeps_slice<S: Entity>(curr: S, features: Features) -> bool {
    (features.contains(Features::RUN_TO_PARITY)
        || features.contains(Features::RUN_TO_PARITY_MIN_SLICE))
        && protect_slice(curr, features)
}

/// [`pick_eevdf`] for more than one queued entity, in general: eligibility in 128 bits
/// where needed, and the descent of the tree. It prepares its own [`Eligibility`] (a few
/// instructions, on the rare path) so that [`pick_eevdf`] reaches it by a tail call and
/// its own common path needs few registers.
///
/// The next buddy ([`pick_buddy`]) is settled before: [`pick_eevdf_fast`] returns an
/// eligible one, and hands one whose eligibility needs 128 bits to [`pick_buddy_wide`].
/// So this is reached only without an eligible buddy, and its common path (the default
/// features' too) tests none.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn pick_eevdf_general<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    let el = Eligibility::with_features(rq, features);
    let curr = rq.curr().filter(|c| c.on_rq() && el.vruntime(c.vruntime()));
    if let Some(c) = curr {
        if keeps_slice(c, features) {
            return Some(c);
        }
    }
    earlier(curr, rq.root().and_then(|root| pick_tree(rq, &el, root)))
}

/// [`pick_eevdf`] with a next buddy whose eligibility the 64-bit test could not decide:
/// the buddy if it is eligible (in 128 bits), else [`pick_eevdf_general`]. Rare: out of
/// line.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn pick_buddy_wide<R: Runqueue>(rq: &R, features: Features, buddy: R::Se) -> Option<R::Se> {
    if Eligibility::with_features(rq, features).vruntime(buddy.vruntime()) {
        Some(buddy)
    } else {
        pick_eevdf_general(rq, features)
    }
}

/// The tree part of `pick_eevdf()`: the eligible tree entity with the earliest virtual
/// deadline, ties broken by tree order (smaller vruntime, then earlier insertion).
///
/// Cost O(log n), one descent, with an eligibility test only where the descent needs one.
/// The timeline is sorted by vruntime and eligibility is monotone in vruntime, so the
/// eligible nodes are a prefix of the in-order sequence. Write `A(T)` for the answer
/// restricted to a subtree `T` (the leftmost eligible node of `T` with the earliest
/// deadline among its eligible nodes), `md` for `T`'s augmented `min_deadline`, `L` and
/// `R` for the subtrees left and right of its root `n`, and `m` for the leftmost node of
/// `T` whose deadline is `md`. Each step replaces `A(T)` by something smaller:
///
/// ```text
///   (A) L.min_deadline == md:  A(T) = A(L)
///       m is in L. If m is eligible, it is A(T) (no deadline in T is earlier, and m
///       comes first among the equal ones), and A(L) = m. If not, n and R, which follow
///       m, are not eligible either, and A(T) = A(L). No eligibility test.
///   (B) otherwise, n not eligible:  A(T) = A(L)          (n and R follow n)
///   (C) otherwise, n.deadline == md:  A(T) = n
///       L's earliest deadline is later than md, and n, eligible, precedes R.
///   (D) otherwise (md is in R, n eligible): A(T) = first minimum of (L, n, A(R))
///       L is wholly eligible (it precedes n), so its piece's earliest deadline is
///       L.min_deadline.
/// ```
///
/// The descent keeps the best piece met so far in in-order sequence (a node, or a
/// wholly eligible subtree with its `min_deadline`), replacing it only on a strictly
/// earlier deadline, and stops at a subtree whose `md` is not strictly earlier (nothing
/// in it can win). (A) follows the earliest deadline down without testing eligibility,
/// so when the earliest deadline of the tree is eligible the descent tests only the nodes
/// where the path turns right and the one that holds it, and returns it by (C) without a
/// second descent. A second descent, inside a winning subtree piece, finds its leftmost
/// node with deadline == its `min_deadline`.
///
/// Before the descent, one test decides whether to try the tree's earliest deadline
/// first (E): eligibility is monotone in vruntime, and an entity's vruntime is at most
/// its deadline (a queued entity's request is not used up: `update_deadline()` gives a
/// new one once `v >= d`), so
///
/// ```text
///   (E) md eligible as a vruntime  =>  v_m <= md is eligible  =>  A(tree) = m
/// ```
///
/// found by following `min_deadline` down with no eligibility test. The shortcut tests
/// m itself before returning it, so the decision never rests on `v_m <= d_m`; that only
/// makes the shortcut likely to succeed. It costs one test where the earliest deadline
/// is not eligible (hackbench's common case: about 5 instructions a pick on the host)
/// and saves the tests and the bookkeeping of every right turn where it is (mixed
/// weights: Documentation/pick-cost.md).
///
/// [`pick_eevdf`] tries an O(1) shortcut before this (see there).
#[inline(always)]
fn pick_tree<R: Runqueue>(rq: &R, el: &Eligibility, root: R::Se) -> Option<R::Se> {
    // The best piece so far, its earliest deadline, and whether it is a whole subtree.
    let mut best: Option<R::Se> = None;
    let mut best_d = 0;
    let mut subtree = false;
    let mut n = root;
    // Invariant at the top of the loop: md == n.min_deadline(), and md is strictly
    // earlier than best_d if there is a best piece. (A) and (D) keep md (the subtree
    // they move into holds it); only (B) moves to a subtree with a later one.
    let mut md = n.min_deadline();

    // (E): md as a vruntime is eligible. Its holder m has v_m <= d_m = md (a queued
    // entity's request is not used up), so m is eligible too, and is the answer: find it
    // without testing anything on the way, and test it (exactly: the bound only decides
    // whether to try).
    if el.vruntime(md) {
        let m = leftmost_with(rq, n, md);
        if el.vruntime(m.vruntime()) {
            return Some(m);
        }
    }

    loop {
        let left = rq.left(n);
        let ld = left.map(|l| l.min_deadline());
        // (A): the earliest deadline is on the left.
        if ld == Some(md) {
            if let Some(l) = left {
                n = l;
                continue;
            }
        }
        // (B): n and its right subtree are not eligible.
        if !el.vruntime(n.vruntime()) {
            let Some(l) = left else { break };
            n = l;
            md = l.min_deadline();
            // Nothing in the left subtree can beat the best piece (later pieces lose ties).
            if best.is_some() && !vruntime_before(md, best_d) {
                break;
            }
            continue;
        }
        // (C): n holds its subtree's earliest deadline, and md < best_d.
        let d = n.deadline();
        if d == md {
            return Some(n);
        }
        // (D): the left subtree and n are eligible; md is on the right. Their first
        // minimum (the left subtree on a tie: it comes first) against the best so far.
        let (c, cd, c_subtree) = match (left, ld) {
            (Some(l), Some(ld)) if !vruntime_before(d, ld) => (l, ld, true),
            _ => (n, d, false),
        };
        if best.is_none() || vruntime_before(cd, best_d) {
            best = Some(c);
            best_d = cd;
            subtree = c_subtree;
        }
        match rq.right(n) {
            Some(r) => n = r,
            // Only with a corrupted augmentation (the checker reports it).
            None => break,
        }
    }

    let n = best?;
    if !subtree {
        return Some(n);
    }
    Some(leftmost_with(rq, n, best_d))
}

/// The leftmost node of the subtree at `n` whose deadline is `d`, the subtree's
/// `min_deadline`.
#[inline(always)]
fn leftmost_with<R: Runqueue>(rq: &R, mut n: R::Se, d: u64) -> R::Se {
    loop {
        if let Some(l) = rq.left(n) {
            if l.min_deadline() == d {
                n = l;
                continue;
            }
        }
        if n.deadline() == d {
            return n;
        }
        match rq.right(n) {
            Some(r) => n = r,
            // Only with a corrupted augmentation (the checker reports it).
            None => return n,
        }
    }
}

/// The final step of [`pick_eevdf`]: an eligible current (`curr`) against the tree's
/// best; current wins only with a strictly earlier deadline.
#[inline(always)]
fn earlier<S: Entity>(curr: Option<S>, best: Option<S>) -> Option<S> {
    match (best, curr) {
        (Some(b), Some(c)) if vruntime_before(c.deadline(), b.deadline()) => Some(c),
        (None, c) => c,
        (b, _) => b,
    }
}

/// Why [`pick_eevdf`] returned `se` (in the state it picked from).
///
/// [`PickReason::Buddy`]: the pick tests the next buddy first (NEXT_BUDDY_EEVDF with
/// PICK_BUDDY), and it is eligible: the pick is the buddy, whatever `se` is (asked of
/// another entity, as [`wakeup_reason`] asks of current, the answer is that the buddy test
/// decided). [`PickReason::Parity`]: `se` is current, eligible and slice-protected under
/// RUN_TO_PARITY, which is exactly when the pick keeps current without comparing
/// deadlines. [`PickReason::EarliestIneligible`] costs one comparison: the earliest
/// deadline of all runnable entities is `min(root.min_deadline, curr.deadline)`, and the
/// pick is the earliest among the eligible ones, so some runnable entity has a strictly
/// earlier deadline than the pick iff that entity is not eligible.
pub fn pick_reason<R: Runqueue>(rq: &R, se: Option<R::Se>, cfg: Config) -> PickReason {
    let Some(se) = se else {
        return PickReason::Idle;
    };
    if rq.nr_queued() == 1 {
        return PickReason::Only;
    }
    if let Some(b) = pick_buddy(rq, cfg.features) {
        if Eligibility::new(rq, cfg).vruntime(b.vruntime()) {
            return PickReason::Buddy;
        }
    }
    let runnable = rq.curr().filter(|c| c.on_rq());
    if runnable == Some(se)
        && keeps_slice(se, cfg.features)
        && Eligibility::new(rq, cfg).vruntime(se.vruntime())
    {
        return PickReason::Parity;
    }
    let earliest = match (rq.root().map(|r| r.min_deadline()), runnable) {
        (Some(d), Some(c)) if vruntime_before(c.deadline(), d) => c.deadline(),
        (Some(d), _) => d,
        (None, Some(c)) => c.deadline(),
        (None, None) => se.deadline(),
    };
    if vruntime_before(earliest, se.deadline()) {
        PickReason::EarliestIneligible
    } else {
        PickReason::Earliest
    }
}

/// `update_deadline()`: when current has consumed its request, give it a new one.
///
/// EEVDF: `vd_i = ve_i + r_i / w_i`; the virtual slice is `calc_delta_fair(r_i)`. An
/// entity without a custom slice takes the current base slice. XXX (as fair.c): strictly
/// `vd_i += N * r_i / w_i` such that `vd_i > ve_i`; one request is good enough. Returns
/// whether a new deadline was set (current should be rescheduled).
///
/// The configuration is asked of `ctx` only once the request is used up: most calls (the
/// kernel's every `update_curr()`) end at the first comparison, without reading it.
#[inline(always)]
pub fn update_deadline<R: Runqueue>(rq: &mut R, se: R::Se, ctx: impl Context<R>) -> bool {
    if vruntime_before(se.vruntime(), se.deadline()) {
        return false;
    }
    let cfg = ctx.config();
    if !se.custom_slice() {
        se.set_slice(cfg.base_slice_ns);
    }
    se.set_deadline(
        se.vruntime()
            .wrapping_add(calc_delta_fair(se.slice(), se.load())),
    );
    avg_vruntime(rq);
    true
}

/// `place_entity()`: set the vruntime and deadline of an entity about to be enqueued.
///
/// Placement strategy #1 (PLACE_LAG): preserve the lag saved at dequeue. Adding entity i
/// with virtual lag `vl_i` (`v_i = V - vl_i`) moves the average:
///
/// ```text
///   V' = (W*V + w_i*(V - vl_i)) / (W + w_i) = V - w_i*vl_i / (W + w_i)
///   vl'_i = V' - v_i = vl_i - w_i*vl_i / (W + w_i)          (< vl_i)
/// ```
///
/// so the lag is inflated beforehand such that it comes out right:
///
/// ```text
///   vl_i = (W + w_i) * vl'_i / W  =  vl'_i + vl'_i * w_i / W
/// ```
///
/// computed in the second form (identical under truncating division, since both terms
/// have the sign of `vl'_i`), whose product is bounded by `|vl'_i| * w_i <= NICE_0_LOAD *
/// 2 max(r_max, TICK)` ≈ 2^37.6 for 100 ms slices (either lag limit),
/// where the first form's `vl*(W + w)` could exceed 2^63 at 100k entities. W includes
/// current. Without PLACE_LAG (strategy #2) the entity is placed at V.
///
/// Deadline: `vd_i = v_i + r_i / w_i`, half of it for a new task with
/// PLACE_DEADLINE_INITIAL (existing tasks are on average halfway through their slice);
/// with PLACE_REL_DEADLINE a deadline saved relative at dequeue is made absolute again.
///
/// Returns the (inflated) virtual lag it applied: 0 without PLACE_LAG or on an empty queue.
#[inline(always)]
pub fn place_entity<R: Runqueue>(rq: &mut R, se: R::Se, flags: EnqueueFlags, cfg: Config) -> i64 {
    let vruntime = avg_vruntime(rq);
    let mut lag = 0i64;

    if !se.custom_slice() {
        se.set_slice(cfg.base_slice_ns);
    }
    let mut vslice = calc_delta_fair(se.slice(), se.load());

    if cfg.feat(Features::PLACE_LAG) && rq.nr_queued() != 0 {
        lag = se.vlag();
        let mut load = rq.avg_load();
        if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
            load = load.wrapping_add(c.load().weight_down());
        }
        // load == 0 with queued entities would be a bookkeeping bug (the kernel WARNs and
        // divides by 1); keep the lag uninflated then.
        if load != 0 {
            let w = se.load().weight_down() as i64;
            lag = lag.wrapping_add(div_s64(
                lag.wrapping_mul(w),
                load.min(i64::MAX as u64) as i64,
            ));
        }
    }

    se.set_vruntime(vruntime.wrapping_sub(lag as u64));

    // Unlike fair.c, the relative-deadline flag is consumed even when PLACE_REL_DEADLINE
    // was turned off since the dequeue: a stale flag would later make a fresh absolute
    // deadline be read as relative (and land ~2^63 away from V). The dequeue made the
    // slice protection relative too (PROTECT_AT_PICK keeps it across a sched_change, see
    // `set_protect_slice()`); it is absolute again either way.
    if se.rel_deadline() {
        se.set_rel_deadline(false);
        se.set_vprot(se.vprot().wrapping_add(se.vruntime()));
        if cfg.feat(Features::PLACE_REL_DEADLINE) {
            se.set_deadline(se.deadline().wrapping_add(se.vruntime()));
            return lag;
        }
    }

    if cfg.feat(Features::PLACE_DEADLINE_INITIAL) && flags.contains(EnqueueFlags::INITIAL) {
        vslice /= 2;
    }

    se.set_deadline(se.vruntime().wrapping_add(vslice));
    lag
}

/// [`place_entity`] of current: dequeued while it ran and queued again before it was put
/// (woken while its CPU balanced a newidle runqueue; a group entity). Its slice
/// protection ends: in 6.12 the dequeue overwrote the stash with the lag it saved, and
/// a window would be read against the new vruntime and deadline. With 6.12's protection
/// ([`protect_6_12`]) `vprot` becomes that saved lag, as 6.12's stash does; otherwise an
/// ended window. Returns the lag applied.
#[inline]
pub fn place_curr_entity<R: Runqueue>(
    rq: &mut R,
    se: R::Se,
    flags: EnqueueFlags,
    cfg: Config,
) -> i64 {
    let lag = place_entity(rq, se, flags, cfg);
    if protect_6_12(cfg.features) {
        se.set_vprot(se.vlag() as u64);
    } else {
        se.set_vprot(ended_vprot(se));
    }
    lag
}

/// The EEVDF start of `dequeue_entity()`: DELAY_DEQUEUE's decision and, when the entity
/// leaves, its lag saved. Returns true when the dequeue is delayed (nothing changed).
///
/// With `delay` (a sleep that DELAY_DEQUEUE may delay) an entity that is not eligible stays
/// queued to burn off its negative lag: delayed. Otherwise its lag is saved
/// (`update_entity_lag()`), and a clamp counted by `ctx`. fair.c asks this at the start
/// of its dequeue (the load tracking it does next neither reads nor moves V or the entity).
///
/// The lag is saved by a separate step, out of line in the kernel and reached by a tail
/// call, so that the decision (a delayed sleep: the common end in a ping-pong) needs few
/// registers.
#[inline(always)]
pub fn dequeue_start<R: Runqueue, C: Context<R>>(
    rq: &mut R,
    se: R::Se,
    delay: bool,
    cfg: Config,
    ctx: C,
) -> bool {
    (delay && cfg.feat(Features::DELAY_DEQUEUE) && !entity_eligible(rq, se, cfg))
        || dequeue_save_lag(rq, se, ctx)
}

/// The second step of [`dequeue_start`]: the lag saved, a clamp counted, the saved lag
/// shown to `ctx` (`lag_error`). Returns false (not delayed), for the tail call. The lag
/// reads no feature: one copy for every feature set.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn dequeue_save_lag<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, ctx: C) -> bool {
    if let Some(clamp) = update_entity_lag(rq, se, ctx.config()) {
        ctx.lag_clamped(rq, clamp);
    }
    ctx.lag_saved(rq, se);
    false
}

/// Vincent Guittot's lag error, the metric of his 6.17 series ("sched/fair: Manage lag
/// and run to parity with different slices"): the lag `vlag = V - v_i`, before the
/// clamp, lies outside the bound EEVDF gives an entity with request `r_i`:
///
/// ```text
///   |V - v_i| > (r_i + TICK_NSEC) / w_i                                RUN_TO_PARITY
///   |V - v_i| > max(r_i, normalized base slice + TICK_NSEC) / w_i   NO_RUN_TO_PARITY
/// ```
///
/// (his cover letter: outside ±(slice + tick), or ±max(slice, 0.7 ms + tick); without
/// RUN_TO_PARITY current may run a base slice past a tick before it is preempted).
/// RUN_TO_PARITY_MIN_SLICE does not enter, so that runs with it off and on count the same
/// thing. The kernel counts it where a dequeue saves the lag (`lag_error`).
pub fn lag_error<S: Entity>(vlag: i64, se: S, cfg: Config) -> bool {
    let span = if cfg.feat(Features::RUN_TO_PARITY) {
        se.slice().saturating_add(cfg.tick_nsec)
    } else {
        se.slice()
            .max(cfg.normalized_base_slice_ns.saturating_add(cfg.tick_nsec))
    };
    vlag.unsigned_abs() > calc_delta_fair(span, se.load())
}

/// The EEVDF part of `requeue_delayed_entity()` (fair.c keeps the delayed flag and its
/// accounting): with DELAY_ZERO the lag is saved (a clamp counted by `ctx`) and, when
/// positive, dropped by placing the entity again at V (lag 0).
///
/// The placement, rare, is a separate step, out of line in the kernel and reached by a tail
/// call, so that the common requeue needs few registers.
#[inline(always)]
pub fn requeue_delayed<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, cfg: Config, ctx: C) {
    if !cfg.feat(Features::DELAY_ZERO) {
        return;
    }
    let clamped = update_entity_lag(rq, se, cfg);
    let place = se.vlag() > 0;
    if let Some(clamp) = clamped {
        ctx.lag_clamped(rq, clamp);
    }
    if place {
        requeue_delayed_place(rq, se, ctx);
    }
}

/// The second step of [`requeue_delayed`], for positive lag: the entity placed again at V
/// (lag 0), in the tree (unless current) and in the count. Rare: one copy for every feature
/// set, which asks `ctx` for the configuration.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn requeue_delayed_place<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, ctx: C) {
    let cfg = ctx.config();
    let is_curr = rq.curr() == Some(se);
    rq.set_nr_queued(rq.nr_queued().saturating_sub(1));
    if !is_curr {
        __dequeue_entity(rq, se);
    }
    save_vlag(rq, se, 0, cfg.features);
    place_entity(rq, se, EnqueueFlags::NONE, cfg);
    if !is_curr {
        __enqueue_entity(rq, se);
    }
    rq.set_nr_queued(rq.nr_queued().wrapping_add(1));
}

/// `check_preempt_wakeup_fair()`'s EEVDF decision for the woken, already enqueued `pse`:
/// whether current must be rescheduled. Call `update_curr()` first; [`wakeup_reason`] says
/// why.
///
/// With PREEMPT_SHORT, a wakee with a shorter slice that is eligible and either has an
/// earlier deadline than current or finds current ineligible cancels current's slice
/// protection (even if it does not get picked). Then current is preempted iff
/// [`pick_eevdf`] now returns the wakee. With RUN_TO_PARITY_MIN_SLICE, 6.17's decision
/// ([`wakeup_preempt_min_slice`]'s docs). In the kernel the common case (equal slices,
/// the pick's O(1) cases) is straight-line code, and the rest is reached by tail calls.
#[inline(always)]
pub fn wakeup_preempt<R: Runqueue>(rq: &mut R, pse: R::Se, cfg: Config) -> bool {
    let Some(curr) = rq.curr() else {
        return true;
    };
    if curr == pse {
        return false;
    }
    if cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
        return wakeup_preempt_min_slice(rq, pse, curr, cfg);
    }
    if cfg.feat(Features::PREEMPT_SHORT) && pse.slice() < curr.slice() {
        return wakeup_preempt_shorter(rq, pse, curr, cfg.features);
    }
    match pick_eevdf_fast(rq, cfg.features) {
        Fast::Pick(pick) => pick == Some(pse),
        Fast::Tree { curr, avg, load } => pick_eevdf_tree_is(rq, pse, curr, avg, load),
        Fast::General => pick_eevdf_general_is(rq, pse, cfg.features),
    }
}

/// [`wakeup_preempt`] for a wakee with a shorter slice than current's (PREEMPT_SHORT on).
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn wakeup_preempt_shorter<R: Runqueue>(rq: &R, pse: R::Se, curr: R::Se, f: Features) -> bool {
    if shorter_preempts(rq, pse, curr, f) {
        cancel_protect_slice(curr, f);
    }
    pick_features(rq, f) == Some(pse)
}

/// [`wakeup_preempt`] with RUN_TO_PARITY_MIN_SLICE (6.17's "Remove spurious shorter slice
/// preemption" and "Fix entity's lag with run to parity"):
///
/// - the wakee is short when PREEMPT_SHORT is on and its slice is shorter than
///   current's: no eligibility or deadline test;
/// - current is preempted iff the pick returns the wakee, a pick that ignores current's
///   protection for a short wakee; only then does a short wakee cancel the protection;
/// - a short wakee that does not preempt (RUN_TO_PARITY) limits what is left of current's
///   window to the smallest queued slice ([`update_protect_slice`]).
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn wakeup_preempt_min_slice<R: Runqueue>(rq: &R, pse: R::Se, curr: R::Se, cfg: Config) -> bool {
    let short = cfg.feat(Features::PREEMPT_SHORT) && pse.slice() < curr.slice();
    let pick = if short {
        pick_features(rq, without_protection(cfg.features))
    } else {
        pick_features(rq, cfg.features)
    };
    if pick == Some(pse) {
        if short {
            cancel_protect_slice(curr, cfg.features);
        }
        return true;
    }
    if short && cfg.feat(Features::RUN_TO_PARITY) {
        update_protect_slice(rq, curr);
    }
    false
}

/// Whether [`pick_eevdf_general`] picks `pse`: out of line, so that [`wakeup_preempt`]
/// reaches it by a tail call.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn pick_eevdf_general_is<R: Runqueue>(rq: &R, pse: R::Se, features: Features) -> bool {
    pick_eevdf_general(rq, features) == Some(pse)
}

/// Why [`wakeup_preempt`] decided `preempts` (what it returned) for the woken `pse`: the
/// debugfs counters' classification of `check_preempt_wakeup_fair()`'s decision. Asked
/// after the decision, of the state it left: cancelling or shrinking the slice
/// protection writes only current's `vprot`, which neither `do_preempt_short()` nor the
/// eligibility tests read.
pub fn wakeup_reason<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    preempts: bool,
    cfg: Config,
) -> WakeupPreempt {
    let Some(curr) = rq.curr() else {
        return WakeupPreempt::Idle;
    };
    if curr == pse {
        return WakeupPreempt::None;
    }
    let min_slice = cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE);
    let short = if min_slice {
        cfg.feat(Features::PREEMPT_SHORT) && pse.slice() < curr.slice()
    } else {
        do_preempt_short(rq, pse, curr, cfg)
    };
    let el = Eligibility::new(rq, cfg);
    if preempts {
        return if short {
            WakeupPreempt::ShortSlice
        } else if !curr.on_rq() || !el.vruntime(curr.vruntime()) {
            WakeupPreempt::CurrIneligible
        } else {
            WakeupPreempt::EarlierDeadline
        };
    }
    // RUN_TO_PARITY kept current against an eligible wakee whose deadline does not lose to
    // current's: without the protection the deadline order would have let the wakee (or
    // another earlier deadline) run. O(1): no second pick. The reason is asked of current:
    // Parity holds exactly when the pick kept current by its slice protection, and the
    // other reasons are not Parity whatever was picked. With RUN_TO_PARITY_MIN_SLICE a
    // short wakee's pick ignored the protection, so it did not hold current.
    if !(min_slice && short)
        && pick_reason(rq, Some(curr), cfg) == PickReason::Parity
        && el.vruntime(pse.vruntime())
        && !vruntime_before(curr.deadline(), pse.deadline())
    {
        return WakeupPreempt::RunToParity;
    }
    WakeupPreempt::None
}

/// `check_preempt_wakeup_fair()`'s decision with NEXT_BUDDY_EEVDF: upstream 6.19's
/// (e837456fdca8 "sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals", as left by
/// 15257cc2f905 "Revert force wakeup preemption"), for the woken, already enqueued `pse`,
/// after `update_curr()`. fair.c calls it instead of [`wakeup_preempt`] while the flag is
/// on, past the same early exits (need-resched set, WAKEUP_PREEMPTION off, the idle-policy
/// rules). The rules, in order:
///
/// ```text
///   no current: preempt;  pse is current: nothing
///   PREEMPT_SHORT && r_pse < r_curr:  PREEMPT_SHORT's rule, buddy untouched   (Short)
///   WF_FORK || pse delayed:           no preemption, no buddy                 (ForkOrDelayed)
///   NEXT_BUDDY:
///       next && d_next < d_pse:       keep the older buddy
///       else:                         next = pse (set_next_buddy)
///                                     WF_SYNC: preempt_sync() decides         (Sync)
///   preempt iff pick_eevdf() == pse                                           (Pick)
/// ```
///
/// The pick tests an eligible next buddy first (PICK_BUDDY, [`pick_eevdf`]), so with
/// NEXT_BUDDY an eligible wakee that became the buddy preempts through current's slice
/// protection. `preempt_sync()`, for a sync wakeup that made a new buddy:
///
/// ```text
///   threshold = sysctl_sched_migration_cost  (/ 4 with WF_RQ_SELECTED)
///   resched iff d_pse < d_curr && waker_ran >= threshold,  else no preemption
/// ```
///
/// `waker_ran` is 6.19's `rq_clock_task(rq) - se->exec_start` (negative: 0). Checked
/// against mainline (the v5 patch as applied, e837456fdca8, and its later Rust and C
/// copies): `preempt_sync()` reads it in `check_preempt_wakeup_fair()` right after
/// `update_curr(cfs_rq)`, whose `update_se()` has just set `se->exec_start = now =
/// rq_clock_task(rq)` (or left a later one when no time passed), with the runqueue clock
/// not updated in between. So `waker_ran` is 0, and a sync wakeup reschedules only with a
/// threshold of 0 (`migration_cost_ns` = 0, or < 4 with WF_RQ_SELECTED); otherwise it only
/// makes the buddy, which runs when the waker sleeps. fair.c passes the value it computes
/// the same way, and this tests it literally.
///
/// Against the stash (6.12's slice protection), the Short rule is 6.12's PREEMPT_SHORT
/// ([`wakeup_preempt`]): 6.19's pick without protection becomes the cancel by
/// `do_preempt_short()`. With RUN_TO_PARITY_MIN_SLICE it is 6.17's (and 6.19's): the pick
/// ignores the protection for the short wakee. Where 6.19 does not preempt after the pick
/// it calls `update_protect_slice()` with RUN_TO_PARITY, a shrink that only
/// RUN_TO_PARITY_MIN_SLICE's protection has; the stash has none.
pub fn wakeup_preempt_buddy<R: Runqueue>(
    rq: &mut R,
    pse: R::Se,
    wake: Wake,
    cfg: Config,
) -> WakeupAction {
    let Some(curr) = rq.curr() else {
        return WakeupAction::by(WakeupRule::Idle, true);
    };
    if curr == pse {
        return WakeupAction::by(WakeupRule::Curr, false);
    }
    let f = cfg.features;
    if f.contains(Features::PREEMPT_SHORT) && pse.slice() < curr.slice() {
        let preempt = if f.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
            wakeup_preempt_min_slice(rq, pse, curr, cfg)
        } else {
            wakeup_preempt_shorter(rq, pse, curr, f)
        };
        return WakeupAction::by(WakeupRule::Short, preempt);
    }
    // Fork: less likely to share data, as exec often follows. Delayed: preempting for it
    // would queue an ineligible task by force.
    if wake.flags.contains(WakeFlags::FORK) || pse.sched_delayed() {
        return WakeupAction::by(WakeupRule::ForkOrDelayed, false);
    }
    let mut act = WakeupAction::by(WakeupRule::Pick, false);
    if f.contains(Features::NEXT_BUDDY) {
        // set_preempt_buddy(): keep an older buddy whose deadline is earlier (entity_before()
        // compares deadlines), as obeying the deadline is what EEVDF wants.
        if rq
            .next_buddy()
            .is_some_and(|n| vruntime_before(n.deadline(), pse.deadline()))
        {
            act.kept_buddy = true;
        } else {
            act.set_buddy = true;
            if !wake.wakee_idle {
                rq.set_next_buddy(Some(pse));
            }
            if wake.flags.contains(WakeFlags::SYNC) {
                act.rule = WakeupRule::Sync;
                act.preempt = preempt_sync(pse, curr, wake);
                return act;
            }
        }
    }
    act.preempt = pick_features(rq, f) == Some(pse);
    // 6.19 shrinks current's window at every wakeup that does not preempt (6.17: only for
    // a short wakee), with RUN_TO_PARITY; only RUN_TO_PARITY_MIN_SLICE's window shrinks.
    if !act.preempt
        && f.contains(Features::RUN_TO_PARITY_MIN_SLICE)
        && f.contains(Features::RUN_TO_PARITY)
    {
        update_protect_slice(rq, curr);
    }
    act
}

/// `preempt_sync()`: see [`wakeup_preempt_buddy`]. `entity_before()` is 6.19's deadline
/// order, wrap-safe.
#[inline]
fn preempt_sync<S: Entity>(pse: S, se: S, wake: Wake) -> bool {
    let mut threshold = wake.migration_cost_ns;
    if wake.flags.contains(WakeFlags::RQ_SELECTED) {
        threshold >>= 2;
    }
    vruntime_before(pse.deadline(), se.deadline()) && wake.waker_ran_ns >= threshold
}

/// Why [`wakeup_preempt_buddy`] decided `action` for the woken `pse`: the debugfs counters'
/// classification, asked of the state the decision left (the buddy set, a protection
/// cancelled), as [`wakeup_reason`] is. The pick's rules classify as [`wakeup_reason`]
/// does, except that a preemption by the buddy test is [`WakeupPreempt::Buddy`].
pub fn wakeup_buddy_reason<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    action: WakeupAction,
    cfg: Config,
) -> WakeupPreempt {
    match action.rule {
        WakeupRule::Idle => WakeupPreempt::Idle,
        WakeupRule::Curr => WakeupPreempt::None,
        WakeupRule::ForkOrDelayed => WakeupPreempt::ForkOrDelayed,
        WakeupRule::Sync if action.preempt => WakeupPreempt::SyncResched,
        WakeupRule::Sync => WakeupPreempt::SyncNone,
        WakeupRule::Short | WakeupRule::Pick => {
            if action.preempt && pick_reason(rq, Some(pse), cfg) == PickReason::Buddy {
                WakeupPreempt::Buddy
            } else {
                wakeup_reason(rq, pse, action.preempt, cfg)
            }
        }
    }
}

/// `do_preempt_short()`: may the waking `pse` (shorter slice, eligible) override the slice
/// protection of `se`? The slice comparison, which settles the common case of equal
/// slices, is inlined into the wakeup; the eligibility tests are not.
#[inline(always)]
fn do_preempt_short<R: Runqueue>(rq: &R, pse: R::Se, se: R::Se, cfg: Config) -> bool {
    if !cfg.feat(Features::PREEMPT_SHORT) || pse.slice() >= se.slice() {
        return false;
    }
    shorter_preempts(rq, pse, se, cfg.features)
}

/// [`do_preempt_short`] for a wakee with a shorter slice: it must be eligible, and have an
/// earlier deadline than `se` or find `se` ineligible.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn shorter_preempts<R: Runqueue>(rq: &R, pse: R::Se, se: R::Se, features: Features) -> bool {
    let el = Eligibility::with_features(rq, features);
    if !el.vruntime(pse.vruntime()) {
        return false;
    }
    if vruntime_before(pse.deadline(), se.deadline()) {
        return true;
    }
    !el.vruntime(se.vruntime())
}

/// `reweight_eevdf()`: new weight for a queued entity, preserving its lag.
///
/// Lag is preserved, `(V - v)*w = (V' - v')*w'`, and reweight does not move V (fair.c's
/// corollaries #1 and #2), so
///
/// ```text
///   v' = V - (V - v)*w/w' = V - vl*w/w'
///   d' = V + (d - V)*w/w'            (the relative deadline scales the same way)
/// ```
///
/// with the kernel's lag clamp on `vl` ([`entity_lag`]; `se` is out of the tree here, which
/// [`lag_span`](super::math::lag_span) makes up for) and high-resolution weights, as
/// fair.c. Bounds: `|vl| * w <= 2^20 * 2 max(r_max, TICK) < 2^48`; `(d - V) * w` is below
/// `2^20 * r` plus the lag term for an entity placed by the core.
fn reweight_eevdf<R: Runqueue>(rq: &R, se: R::Se, avruntime: u64, weight: u64, cfg: Config) {
    let old_weight = se.load().weight.min(i64::MAX as u64) as i64;
    let new_weight = weight.min(i64::MAX as u64) as i64;

    if avruntime != se.vruntime() {
        let vlag = entity_lag(rq, avruntime, se, cfg);
        let vlag = div_s64(vlag.wrapping_mul(old_weight), new_weight);
        se.set_vruntime(avruntime.wrapping_sub(vlag as u64));
    }

    let vslice = vdelta(se.deadline(), avruntime);
    let vslice = div_s64(vslice.wrapping_mul(old_weight), new_weight);
    se.set_deadline(vadd(avruntime, vslice));
}

/// Current's slice protection across [`reweight_eevdf`], which moves its vruntime and
/// deadline but not `vprot`. With PROTECT_AT_PICK (7.0, "sched/eevdf: Update se->vprot
/// in reweight_entity()"), a window current had (`window` = `vprot - v` before) scales
/// like the deadline's distance:
///
/// ```text
///   vprot' = min(v' + (vprot - v) * w / w', d')      RUN_TO_PARITY_MIN_SLICE
///   vprot' = d'                                      6.12's stash: protected until d
/// ```
///
/// (the `min`: two truncating divisions may put `vprot'` one past `d'`). Without it, 6.12's
/// stash no longer matches the new deadline, so its protection ends as in 6.12 (the stash
/// stays, as 6.12's does), and a 6.17 window stays where it was, ended if the deadline
/// moved before it. Bound:
/// `(vprot - v) * w <= (d - v) * w`, the deadline's product.
#[inline]
fn reweight_protect<S: Entity>(se: S, window: Option<i64>, weight: u64, cfg: Config) {
    if let Some(rel) = window {
        if cfg.feat(Features::RUN_TO_PARITY_MIN_SLICE) {
            let old = se.load().weight.min(i64::MAX as u64) as i64;
            let new = weight.min(i64::MAX as u64) as i64;
            let vprot = vadd(se.vruntime(), div_s64(rel.wrapping_mul(old), new));
            se.set_vprot(vruntime_min(vprot, se.deadline()));
        } else {
            se.set_vprot(se.deadline());
        }
    }
    // 6.12 leaves its stash where it was.
    if !protect_6_12(cfg.features) {
        protect_within_deadline(se);
    }
}

/// `reweight_entity()`: change an entity's weight (nice or group share).
///
/// Queued: `reweight_eevdf()` around V, out of the tree and the sums meanwhile; current
/// keeps its slice protection as [`reweight_protect`] says. Not queued: the saved virtual
/// lag is rescaled, `vl' = vl * w / w'`, since lag_i = w_i * vl_i is what is preserved.
/// Call `update_curr()` first. A zero weight is ignored.
#[inline(always)]
pub fn reweight_entity<R: Runqueue>(rq: &mut R, se: R::Se, lw: LoadWeight, cfg: Config) {
    if lw.weight == 0 {
        return;
    }
    let is_curr = rq.curr() == Some(se);
    if se.on_rq() {
        let avruntime = avg_vruntime(rq);
        if !is_curr {
            __dequeue_entity(rq, se);
        }
        let window =
            (is_curr && cfg.feat(Features::PROTECT_AT_PICK) && protect_slice(se, cfg.features))
                .then(|| vdelta(se.vprot(), se.vruntime()));
        reweight_eevdf(rq, se, avruntime, lw.weight, cfg);
        if is_curr {
            reweight_protect(se, window, lw.weight, cfg);
        }
    } else {
        let old = se.load().weight.min(i64::MAX as u64) as i64;
        let new = lw.weight.min(i64::MAX as u64) as i64;
        save_vlag(
            rq,
            se,
            div_s64(se.vlag().wrapping_mul(old), new),
            cfg.features,
        );
    }
    se.set_load(lw);
    if se.on_rq() && !is_curr {
        __enqueue_entity(rq, se);
    }
}

/// Sets the slice of an entity that may be queued, keeping `Σ r_i` and the augmented
/// `min_slice` and `max_slice` right: what `enqueue_task_fair()` / `dequeue_entities()` do
/// when a group entity takes its queue's minimum slice (`se->slice = slice` followed by
/// `min_vruntime_cb_propagate()` in fair.c). An entity in the timeline (queued, not
/// current) has its share of `sum_slice` replaced and the augmented values recomputed up
/// the tree, stopping early where none of them changed. O(log n).
#[inline]
pub fn set_queued_slice<R: Runqueue>(rq: &mut R, se: R::Se, slice: u64) {
    let in_tree = se.on_rq() && rq.curr() != Some(se);
    if in_tree {
        rq.set_sum_slice(rq.sum_slice().wrapping_sub(se.slice()).wrapping_add(slice));
    }
    se.set_slice(slice);
    if in_tree {
        let mut node = Some(se);
        while let Some(n) = node {
            if min_deadline_update(n, rq.left(n), rq.right(n)) {
                break;
            }
            node = rq.parent(n);
        }
    }
}
