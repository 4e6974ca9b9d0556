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
//! | `dequeue_picked`                   | [`dequeue_picked`]                          |
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
use super::math::{avg_vruntime_add, avg_vruntime_delta, avg_vruntime_sub, entity_lag};
use super::math::{update_zero_vruntime, Eligibility};
use super::tree::{
    entity_less, keeps_slice_sums, min_deadline_update, rebuild_slice_sums, Entity, Runqueue,
    Timeline, SLICE_SUM_READERS,
};
use super::vtime::{vdelta, vruntime_before};

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

/// Which way [`pick_eevdf`] reached its answer ([`pick_path`]; the debugfs `pick_fast`,
/// `pick_shortcut` and `pick_descent` counters): what the pick's cost depends on, where
/// [`PickReason`] says what decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PickPath {
    /// In O(1), before the tree: one queued entity, an eligible next buddy, current kept
    /// by its slice protection, an empty tree, or the leftmost entity holding the tree's
    /// earliest deadline (6.12's counterpart: its leftmost, the earliest deadline,
    /// eligible).
    Fast,
    /// The descent's shortcut (E): the tree's earliest deadline, read as a vruntime, is
    /// eligible, so its holder is, and is found by following `min_deadline` down with no
    /// eligibility test on the way: O(log n), one path.
    Shortcut,
    /// The descent (A)-(D): (E)'s test failed, so the eligibility boundary is searched.
    /// The earliest deadline may still be eligible (its holder's vruntime below V, its
    /// deadline above): the descent then follows it down, testing the nodes where it
    /// turns right. 6.12 searches its heap only when its leftmost, the earliest deadline,
    /// is not eligible, which `picks_ineligible_earliest` approximates.
    Descent,
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
///
/// `vl_i = V - v_i` with V freshly computed, clamped by [`entity_lag`] to
/// `±calc_delta_fair(span, w_i)` ([`lag_span`](super::math::lag_span): the span, and why
/// EEVDF's lag bound lies inside it). The clamp is reported by side whatever the features
/// (the debugfs counters `lag_clamped_pos` and `lag_clamped_neg`).
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

/// `entity_eligible()`, without folding current in when `se` is current
/// ([`Eligibility::for_entity`]: the same answer). It reads the feature bits alone: a
/// [`Config`] converts.
#[inline(always)]
pub fn entity_eligible<R: Runqueue>(rq: &R, se: R::Se, features: impl Into<Features>) -> bool {
    Eligibility::for_entity(rq, se, features.into()).vruntime(se.vruntime())
}

/// `__enqueue_entity()`: into the sums and the timeline. `max_slice` and `sum_slice` are
/// kept only under the features that read them ([`timeline_keeps_slice_sums`]): one test
/// of the feature word chooses between two copies of the insertion, the default one
/// keeping neither, so that neither copy tests it again.
#[inline(always)]
pub fn __enqueue_entity<R: Runqueue>(rq: &mut R, se: R::Se, features: Features) {
    if keeps_slice_sums(features) {
        enqueue_keeping_slice_sums(rq, se);
    } else {
        rq.set_slice_sums_stale(true);
        enqueue_into::<R, false>(rq, se);
    }
}

/// [`__enqueue_entity`] under a feature that reads the slice sums: rebuilt first if an
/// earlier update left them stale (from the timeline as it is before `se` joins it), then
/// kept. Out of line in the kernel: the default features never come here.
#[cfg_attr(sched_eevdf_in_kernel, inline(never), cold)]
fn enqueue_keeping_slice_sums<R: Runqueue>(rq: &mut R, se: R::Se) {
    if rq.slice_sums_stale() {
        rebuild_slice_sums(rq);
    }
    enqueue_into::<R, true>(rq, se);
}

/// The insertion itself, keeping the slice sums with `KEEP`.
#[inline(always)]
fn enqueue_into<R: Runqueue, const KEEP: bool>(rq: &mut R, se: R::Se) {
    avg_vruntime_add(rq, se, KEEP);
    // Initialise the augmented values of a leaf (straight-line: the `None` arms fold away).
    // A leaf's `max_slice` is its slice whatever the features: one store.
    min_deadline_update::<_, true>(se, None, None);
    // Whether `se` becomes the holder is asked of the timeline before `se` joins it, once
    // the insertion is known to go ahead: a refused one (`se` already in a tree: a
    // caller's bug) names no holder that is not in this timeline (the pick would return
    // it). The insertion is the last step, so that the kernel's rebalancing is a tail
    // call and neither path keeps anything across a call.
    rq.insert(se, KEEP, |rq| becomes_earliest(rq, se));
}

/// `__dequeue_entity()`: out of the timeline and the sums, with one test of the feature
/// word, as [`__enqueue_entity`].
#[inline(always)]
pub fn __dequeue_entity<R: Runqueue>(rq: &mut R, se: R::Se, features: Features) {
    if rq.earliest() == Some(se) {
        rq.set_earliest(None);
    }
    if keeps_slice_sums(features) {
        dequeue_keeping_slice_sums(rq, se);
    } else {
        dequeue_into_stale(rq, se);
    }
}

/// The erase itself with neither slice sum kept: they are marked stale. The sums do not
/// depend on the tree's shape, so `se` leaves them first and the tree last: the kernel's
/// rebalancing is then a tail call.
#[inline(always)]
fn dequeue_into_stale<R: Runqueue>(rq: &mut R, se: R::Se) {
    rq.set_slice_sums_stale(true);
    avg_vruntime_sub(rq, se, false);
    rq.erase(se, false);
}

/// `set_next_entity()`'s two steps for an entity that the pick chose (`first`): out of
/// the timeline ([`__dequeue_entity`]), then its slice protection set
/// ([`set_protect_slice`], which reads the timeline without it), under one test of the
/// feature word. With neither a reader of the slice sums nor RUN_TO_PARITY_MIN_SLICE on
/// (the default) they are the erase that keeps neither sum and 6.12's stash of the
/// deadline (`vprot = d`); otherwise the two steps themselves, out of line, with the
/// configuration asked of `ctx`. fair.c's `update_load_avg()`, which sits between them in
/// `set_next_entity()`, reads neither the timeline nor the protection.
#[inline(always)]
pub fn dequeue_picked<R: Runqueue, C: Context<R>>(
    rq: &mut R,
    se: R::Se,
    features: Features,
    ctx: C,
) {
    if features.intersects(SLICE_SUM_READERS.with(Features::RUN_TO_PARITY_MIN_SLICE, true)) {
        return dequeue_picked_configured(rq, se, ctx);
    }
    // 6.12's protection reads `se` alone: set first, so that the erase is the last step.
    se.set_vprot(se.deadline());
    if rq.earliest() == Some(se) {
        rq.set_earliest(None);
    }
    dequeue_into_stale(rq, se);
}

/// [`dequeue_picked`] under a feature that either step reads: the two steps as
/// `set_next_entity()` takes them. Out of line in the kernel: the default features never
/// come here.
#[cfg_attr(sched_eevdf_in_kernel, inline(never), cold)]
fn dequeue_picked_configured<R: Runqueue, C: Context<R>>(rq: &mut R, se: R::Se, ctx: C) {
    let cfg = ctx.config();
    __dequeue_entity(rq, se, cfg.features);
    set_protect_slice(rq, se, true, cfg);
}

/// [`__dequeue_entity`] under a feature that reads the slice sums, as
/// [`enqueue_keeping_slice_sums`]: rebuilt first (with `se` still in the timeline), then
/// kept.
#[cfg_attr(sched_eevdf_in_kernel, inline(never), cold)]
fn dequeue_keeping_slice_sums<R: Runqueue>(rq: &mut R, se: R::Se) {
    if rq.slice_sums_stale() {
        rebuild_slice_sums(rq);
    }
    avg_vruntime_sub(rq, se, true);
    rq.erase(se, true);
}

/// Whether `se`, about to be inserted, becomes the holder of the earliest deadline
/// ([`Runqueue::earliest`]); otherwise the holder stays what it is.
///
/// The holder `h` is the first entity in tree order whose deadline is the root's
/// `min_deadline` `md`. Inserting `se` (deadline `d`) changes `md` only to `d`, and the
/// order of the others not at all, so, with `md` and `h` read before the insertion:
///
/// ```text
///   empty timeline:  h' = se
///   d < md:          h' = se              (the only entity with the new md)
///   d == md:         h' = se if se comes before h in tree order, else h
///                    (unknown stays unknown: the first with md may be se or not)
///   d > md:          h' = h               (md and its entities unchanged)
/// ```
///
/// Tree order is [`entity_less`]: an insertion goes right of entities with an equal
/// vruntime, so `se` comes before `h` only with a strictly smaller vruntime. The erase
/// forgets the holder when it takes it out ([`__dequeue_entity`]): who holds the earliest
/// deadline then is not known without a descent, and the pick, which needs it only when
/// the holder is eligible, falls back to the leftmost test and the descent until an
/// insertion names one again. A deadline does not change in the tree (an entity is
/// taken out to be given a new one), so nothing else moves the holder.
///
/// Cost: a load of the root and a comparison an insertion, a store where the holder
/// changes; a comparison an erase (6 to 9 instructions a switch in the kernel where the
/// holder never answers: Documentation/pick-cost.md). What it buys: the pick's O(1)
/// answer for a queued entity with the earliest deadline that becomes eligible while
/// others run (a short-slice waker beside a busy load: seed 000's case), where the
/// leftmost by vruntime is another entity and the pick would otherwise descend.
#[inline(always)]
fn becomes_earliest<R: Runqueue>(rq: &R, se: R::Se) -> bool {
    let Some(root) = rq.root() else {
        return true;
    };
    let (d, md) = (se.deadline(), root.min_deadline());
    vruntime_before(d, md) || (d == md && rq.earliest().is_some_and(|h| entity_less(se, h)))
}

/// Whether the next tree update keeps `max_slice` and `sum_slice` ([`keeps_slice_sums`]),
/// and what that asks first: without LAG_CLAMP_MAX_SLICE and BIAS_ELIGIBLE the update
/// leaves them stale and says so (one store); with either, values left stale by earlier
/// updates are rebuilt first ([`rebuild_slice_sums`], O(n) once per runqueue after the
/// feature is turned on), so that the update's incremental upkeep starts from right values.
#[inline(always)]
pub fn timeline_keeps_slice_sums<R: Runqueue>(rq: &mut R, features: Features) -> bool {
    if !keeps_slice_sums(features) {
        rq.set_slice_sums_stale(true);
        return false;
    }
    if rq.slice_sums_stale() {
        rebuild_slice_sums(rq);
    }
    true
}

mod pick;
mod place;
mod protect;
mod reweight;
mod wakeup;

pub use pick::*;
pub use place::*;
pub use protect::*;
pub use reweight::*;
pub use wakeup::*;
