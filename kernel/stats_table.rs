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
            /// other pick counter and summed with `picks_parity` and
            /// `picks_ineligible_earliest` when read, so that each pick costs one increment.
            (Picks, "picks"),
            /// The pick was current, kept by `RUN_TO_PARITY` (eligible, slice protected).
            (PicksParity, "picks_parity"),
            /// The earliest virtual deadline belonged to an entity that was not eligible, so
            /// a later one was picked: the picks where `ELIGIBLE` changed the outcome. Costs
            /// one comparison: the earliest deadline of all runnable entities is min(root's
            /// `min_deadline`, current's deadline).
            (PicksIneligibleEarliest, "picks_ineligible_earliest"),
            /// Wakeup-preemption decisions the core took (`check_preempt_wakeup_fair()` after
            /// fair.c's early exits). Not counted: the file shows the sum of the five wakeup
            /// outcomes below, computed when read.
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
        }
    };
}
