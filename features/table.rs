// SPDX-License-Identifier: GPL-2.0

//! The one EEVDF feature table.
//!
//! Like kernel/sched/features.h this is an X-macro: one row per flag the core reads, in bit
//! order, each with its doc comment (why the flag exists, its default) and
//! `(NAME, bit, default)`. The defaults are Linux 6.12's for its flags. The bits are the
//! kernel's `__SCHED_FEAT_*` numbers, the flag's position in features.h as patches 0002
//! and 0007 extend it (ELIGIBLE and BIAS_ELIGIBLE right after PREEMPT_SHORT, bits 5 and 6,
//! then upstream's post-6.12 changes, bits 7 to 10, all before the first flag whose
//! presence depends on the configuration; 6.12's own NEXT_BUDDY and PICK_BUDDY, bits 11
//! and 12, which the core reads for NEXT_BUDDY_EEVDF only; CACHE_HOT_BUDDY, bit 13, is
//! not a row), so the kernel's feature word is the core's with the other flags masked
//! off. features.h has 34 flags, so patch 0007 makes the kernel's word an `unsigned
//! long`.
//!
//! `eevdf_feature_table!(m)` expands to `m! { $(#[doc = "..."])* (NAME, bit, default), ... }`.
//! The views generated from it:
//! - `sched_eevdf::Features` (sched_eevdf/src/features.rs): a constant per flag, `ALL`,
//!   `DEFAULT`, and `TABLE` (name, flag, default, doc in row order), which gives the name
//!   lookup, `NO_<FEAT>` parsing and the debugfs-style `Debug` listing;
//! - kernel/fair.rs: a build-time check of each bit against bindgen's `__SCHED_FEAT_*`;
//! - the feature table in Documentation/debugfs.md (`tools/eevdf-guest/tests/docs.rs`).
//!
//! `sched_eevdf/tests/features_h.rs` checks the rows against patch 0002's additions to
//! features.h (and, with the 6.12 source tarball, against the whole patched file).

/// Expands the callback macro `$m` with the feature table.
macro_rules! eevdf_feature_table {
    ($m:ident) => {
        $m! {
            /// Preserve lag across sleep and wakeup through avg_vruntime (EEVDF placement
            /// strategy #1; #2, place at V, when off). Default on.
            (PLACE_LAG, 0, true),
            /// Give new tasks half a slice (virtual deadline at V + vslice/2) to ease into
            /// the competition. Default on.
            (PLACE_DEADLINE_INITIAL, 1, true),
            /// Preserve the relative virtual deadline across a non-sleep dequeue/enqueue
            /// (migration, setattr, reweight by the core). Default on.
            (PLACE_REL_DEADLINE, 2, true),
            /// Inhibit wakeup preemption until current has reached the 0-lag point or used
            /// its slice (the vlag == deadline stash set at pick). Default on.
            (RUN_TO_PARITY, 3, true),
            /// Let an eligible waking task with a shorter slice cancel current's
            /// RUN_TO_PARITY protection. Default on.
            (PREEMPT_SHORT, 4, true),
            /// Added by patch 0002. The eligibility test (lag >= 0). Off makes every entity
            /// eligible, so the earliest virtual deadline wins: EVDF (LKML 2023-10, "Toggle
            /// eligibility"). Default on.
            (ELIGIBLE, 5, true),
            /// Added by patch 0002. Move the eligibility threshold right by one average
            /// request: eligible iff Sum_j w_j (v_j - v_i) + NICE_0_LOAD * Sum_j r_j >= 0.
            /// Default off.
            (BIAS_ELIGIBLE, 6, false),
            /// Added by patch 0007, upstream 6.17 ("sched/fair: Limit run to parity to the
            /// min slice of enqueued entities" and its series). Protect current for
            /// min(its slice, the smallest queued slice) instead of its whole slice; with
            /// NO_RUN_TO_PARITY still for min(base slice, its slice). Default off.
            (RUN_TO_PARITY_MIN_SLICE, 7, false),
            /// Added by patch 0007, upstream 7.0 ("sched/eevdf: Fix lag clamp"). Clamp lag
            /// to the runqueue's largest slice plus a tick, not max(2 * own slice, tick).
            /// Default off.
            (LAG_CLAMP_MAX_SLICE, 8, false),
            /// Added by patch 0007, upstream 6.19 ("sched/fair: Reimplement NEXT_BUDDY to
            /// align with EEVDF goals", after "Revert force wakeup preemption"). The wakeup
            /// of a forked or delayed task never preempts; a shorter-slice wakee
            /// (PREEMPT_SHORT) skips the buddy; with NEXT_BUDDY the wakee becomes the next
            /// buddy unless the buddy's deadline is earlier, and a WF_SYNC wakeup that made
            /// it the buddy preempts only by the preempt_sync() rule; with PICK_BUDDY the
            /// pick itself returns an eligible buddy, before slice protection. Default off.
            (NEXT_BUDDY_EEVDF, 9, false),
            /// Added by patch 0007, upstream 7.0 ("sched/fair: Only set slice protection at
            /// pick time"). A sched_change (setattr, renice) of current keeps its protected
            /// window, scaled by a reweight, instead of setting it again. Default off.
            (PROTECT_AT_PICK, 10, false),
            /// 6.12's: make a woken task the next buddy (cfs_rq->next), which the pick
            /// prefers while it is eligible. The core reads it with NEXT_BUDDY_EEVDF only;
            /// without it fair.c sets the buddy itself, as 6.12. Default off.
            (NEXT_BUDDY, 11, false),
            /// 6.12's: pick an eligible next buddy before EEVDF's pick. The core reads it
            /// with NEXT_BUDDY_EEVDF only, inside its pick; without it fair.c's
            /// pick_next_entity() tests it, as 6.12. Default on.
            (PICK_BUDDY, 12, true),
            /// Keep a sleeping but ineligible task queued until it is picked (it burns off
            /// its negative lag) or woken. Default on.
            (DELAY_DEQUEUE, 14, true),
            /// Clip positive lag to 0 when a delayed entity finally leaves or is requeued.
            /// Default on.
            (DELAY_ZERO, 15, true),
        }
    };
}
