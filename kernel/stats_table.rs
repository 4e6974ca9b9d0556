// SPDX-License-Identifier: GPL-2.0

// The counters of the EEVDF core's decisions: the one table that kernel/stats.rs (the
// enum, the names) and the host (`eevdf_guest::debugfs::COUNTERS`, and from it the counter
// table in Documentation/debugfs.md) generate from. Included with `include!`, so it holds
// nothing but the macro.

/// The counter table: one line per counter, its name in the file and what it counts.
/// Everything else (the enum, the names, the count) is generated from it.
macro_rules! eevdf_stats_table {
    ($m:ident) => {
        $m! {
            /// `pick_eevdf()` returned an entity: the total. Counted as the picks of no
            /// other pick counter and summed with `picks_parity`,
            /// `picks_ineligible_earliest` and `picks_buddy` when read, so that each pick
            /// costs one increment.
            (Picks, "picks"),
            /// The pick was current, kept by `RUN_TO_PARITY` (eligible, slice protected).
            (PicksParity, "picks_parity"),
            /// The earliest virtual deadline belonged to an entity that was not eligible, so
            /// a later one was picked: the picks where `ELIGIBLE` changed the outcome. Costs
            /// one comparison: the earliest deadline of all runnable entities is min(root's
            /// `min_deadline`, current's deadline).
            (PicksIneligibleEarliest, "picks_ineligible_earliest"),
            /// Wakeup-preemption decisions the core took (`check_preempt_wakeup_fair()` after
            /// fair.c's early exits). Not counted: the file shows the sum of the wakeup
            /// outcomes (the five below, and with `NEXT_BUDDY_EEVDF` `preempt_buddy`,
            /// `wakeup_sync_resched`, `wakeup_sync_none` and `wakeup_fork_delayed`),
            /// computed when read.
            (Wakeups, "wakeups"),
            /// `RUN_TO_PARITY` kept current although the wakee was eligible and its deadline
            /// not later than current's: the deadline order asked for a switch that the
            /// protection held back. O(1): no second pick.
            (WakeupParityHeld, "wakeup_parity_held"),
            /// Preemptions by `PREEMPT_SHORT`: an eligible wakee with a shorter slice
            /// cancelled current's slice protection.
            (PreemptShort, "preempt_short"),
            /// Preemptions because current was not eligible (often: a wakee with positive lag
            /// pulled V below current) or not runnable.
            (PreemptIneligible, "preempt_ineligible"),
            /// Preemptions because the wakee had the earliest eligible deadline.
            (PreemptDeadline, "preempt_deadline"),
            /// Wakeups that did not preempt for any other reason (current's deadline earlier,
            /// wakee not eligible, current is the wakee).
            (WakeupNoPreempt, "wakeup_no_preempt"),
            /// `update_deadline()` gave current a new deadline: its request was used up.
            (SliceExpired, "slice_expired"),
            /// Placements (`place_entity()`) that applied a non-zero lag (`PLACE_LAG`).
            (PlaceLag, "place_lag"),
            /// Placements of new tasks (`ENQUEUE_INITIAL`; `PLACE_DEADLINE_INITIAL` halves
            /// their first slice).
            (PlaceInitial, "place_initial"),
            /// Weight changes of queued or sleeping entities (`reweight_entity()`): nice
            /// changes, group share updates.
            (Reweights, "reweights"),
            /// `update_entity_lag()` clamped a positive lag (`V - v > limit`: the entity was
            /// owed more service than the limit keeps) to `+limit`. The limit is
            /// `calc_delta_fair(max(2 r, tick))`, or with `LAG_CLAMP_MAX_SLICE`
            /// `calc_delta_fair(r_max + tick)` (`r_max`: the largest queued slice). Counted
            /// whatever the features.
            (LagClampedPos, "lag_clamped_pos"),
            /// `update_entity_lag()` clamped a negative lag (the entity had run ahead of V by
            /// more than the limit) to `-limit`.
            (LagClampedNeg, "lag_clamped_neg"),
            /// A dequeue saved a lag that, before the clamp, was outside Vincent Guittot's
            /// bound: `±calc_delta_fair(r + tick)`, or `±calc_delta_fair(max(r, normalized
            /// base slice + tick))` with `NO_RUN_TO_PARITY` (his metric for
            /// `RUN_TO_PARITY_MIN_SLICE`; counted whatever the features). Costs `V` again,
            /// a division, per dequeue that leaves.
            (LagError, "lag_error"),
            /// `RUN_TO_PARITY_MIN_SLICE`: `update_curr()` asked for a resched because
            /// current's protected window had ended while current was still eligible (6.12
            /// would have let it run on to the end of its slice).
            (ProtectExpired, "protect_expired"),
            /// `RUN_TO_PARITY_MIN_SLICE`: a wakee with a shorter slice did not preempt, and
            /// limited what was left of current's window to the smallest queued slice.
            (ProtectShrunk, "protect_shrunk"),
            /// `PROTECT_AT_PICK`: a sched_change (setattr, renice, a cgroup or class move)
            /// set a running task again whose protected window had ended or been
            /// cancelled, and kept it ended: 6.12 would have protected it anew.
            (ProtectRestored, "protect_restored"),
            /// `NEXT_BUDDY_EEVDF` with `PICK_BUDDY`: the pick returned the next buddy, which
            /// was eligible, before slice protection and deadlines (a part of `picks`).
            (PicksBuddy, "picks_buddy"),
            /// `NEXT_BUDDY_EEVDF`: preemptions because the wakee was the eligible next buddy
            /// (usually just made one by `NEXT_BUDDY`), which the pick returns first, through
            /// current's slice protection.
            (PreemptBuddy, "preempt_buddy"),
            /// `NEXT_BUDDY_EEVDF`: a `WF_SYNC` wakeup made the wakee the buddy and
            /// `preempt_sync()` preempted: an earlier deadline, and the waker ran for
            /// `migration_cost_ns` (a quarter with `WF_RQ_SELECTED`). As 6.19 measures
            /// the waker's run right after `update_curr()`, only a cost of 0 gets here.
            (WakeupSyncResched, "wakeup_sync_resched"),
            /// `NEXT_BUDDY_EEVDF`: a `WF_SYNC` wakeup made the wakee the buddy and did not
            /// preempt: the wakee waits for the waker to sleep.
            (WakeupSyncNone, "wakeup_sync_none"),
            /// `NEXT_BUDDY_EEVDF`: the wakeup of a new task (`WF_FORK`) or of a delayed
            /// entity, which never preempts nor makes a buddy.
            (WakeupForkDelayed, "wakeup_fork_delayed"),
            /// `NEXT_BUDDY_EEVDF` with `NEXT_BUDDY`: a wakee became the next buddy (not
            /// a wakeup outcome: counted besides one).
            (BuddySet, "buddy_set"),
            /// `NEXT_BUDDY_EEVDF` with `NEXT_BUDDY`: a wakee did not become the buddy, as
            /// the buddy's deadline was earlier (counted besides the wakeup's outcome).
            (BuddyKept, "buddy_kept"),
            /// The picks that `pick_eevdf()` made in O(1), before the tree: one queued
            /// entity, an eligible buddy, current kept by its slice protection, the
            /// remembered holder of the tree's earliest deadline, or the leftmost entity
            /// holding it (6.12's O(1) case is its leftmost, the earliest deadline, being
            /// eligible). Not counted: `picks`
            /// minus `pick_shortcut` and `pick_descent`, computed when read, so that the
            /// common pick costs no second increment.
            (PickFast, "pick_fast"),
            /// The picks that followed `min_deadline` down to the tree's earliest
            /// deadline because that deadline, read as a vruntime, was eligible (the
            /// descent's shortcut): O(log n), one path, no eligibility test on the way.
            (PickShortcut, "pick_shortcut"),
            /// The picks that searched the tree's eligibility boundary: the full descent,
            /// taken whenever the shortcut's test fails, also where the earliest deadline
            /// turns out eligible (its holder's vruntime below V, its deadline above).
            /// 6.12 leaves its O(1) case only when its earliest deadline is not eligible,
            /// which `picks_ineligible_earliest` approximates.
            (PickDescent, "pick_descent"),
        }
    };
}
