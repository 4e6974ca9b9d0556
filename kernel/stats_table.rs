// SPDX-License-Identifier: GPL-2.0

// The counters of the EEVDF core's decisions: the one table that kernel/stats.rs (the
// enum, the names) and the host (Documentation/debugfs.md's counter list, the guest tools)
// generate from. Included with `include!`, so it holds nothing but the macro.

/// The counter table: one line per counter, its name in the file and what it counts.
/// Everything else (the enum, the names, the count) is generated from it.
macro_rules! eevdf_stats_table {
    ($m:ident) => {
        $m! {
            /// `pick_eevdf()` returned an entity. Counted as the picks of no other pick
            /// counter; the file shows the total (every event costs one increment).
            (Picks, "picks"),
            /// The pick was current, kept by RUN_TO_PARITY (eligible, slice protected).
            (PicksParity, "picks_parity"),
            /// The earliest virtual deadline belonged to an entity that was not eligible:
            /// a later deadline was picked. The picks that ELIGIBLE changed.
            (PicksIneligibleEarliest, "picks_ineligible_earliest"),
            /// Wakeup-preemption decisions taken by the core (`check_preempt_wakeup_fair()`).
            /// Not counted: the file shows the sum of the five wakeup outcomes below.
            (Wakeups, "wakeups"),
            /// RUN_TO_PARITY kept current although the wakee was eligible with a deadline
            /// not later than current's.
            (WakeupParityHeld, "wakeup_parity_held"),
            /// Preemptions by PREEMPT_SHORT: a shorter-slice eligible wakee cancelled
            /// current's slice protection.
            (PreemptShort, "preempt_short"),
            /// Preemptions because current was not eligible (or not runnable).
            (PreemptIneligible, "preempt_ineligible"),
            /// Preemptions because the wakee had the earliest eligible deadline.
            (PreemptDeadline, "preempt_deadline"),
            /// Wakeups that did not preempt for any other reason (current's deadline earlier,
            /// wakee not eligible, current is the wakee).
            (WakeupNoPreempt, "wakeup_no_preempt"),
            /// `update_deadline()` gave current a new deadline: its request was used up.
            (SliceExpired, "slice_expired"),
            /// Placements (`place_entity()`) that applied a non-zero lag (PLACE_LAG).
            (PlaceLag, "place_lag"),
            /// Placements of new tasks (`ENQUEUE_INITIAL`).
            (PlaceInitial, "place_initial"),
            /// Weight changes of queued or sleeping entities (`reweight_entity()`).
            (Reweights, "reweights"),
            /// `update_entity_lag()` clamped the lag to `±max(2 slice, tick)`: V and the
            /// entity were further apart than EEVDF's bound.
            (LagClamped, "lag_clamped"),
        }
    };
}
