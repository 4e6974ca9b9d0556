// SPDX-License-Identifier: GPL-2.0

//! The one EEVDF feature table.
//!
//! Like kernel/sched/features.h this is an X-macro: one line per flag with its bit, its
//! default (Linux 6.12 defaults for the existing flags) and a one-line reason. The bits are
//! the kernel's `__SCHED_FEAT_*` numbers (features.h with patch 0002: ELIGIBLE and
//! BIAS_ELIGIBLE follow PREEMPT_SHORT), so that the kernel's feature word is the core's
//! with the other flags masked off; the kernel build checks each bit. Every other
//! view (the `Features` constants, the name list, the defaults, `NO_<FEAT>` parsing, the
//! debugfs file) is generated from it by passing a macro name: `eevdf_feature_table!(m)`
//! expands to `m! { (NAME, bit, default, "doc"), ... }`.

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
            /// Keep a sleeping but ineligible task queued until it is picked (it burns off
            /// its negative lag) or woken. Default on.
            (DELAY_DEQUEUE, 10, true),
            /// Clip positive lag to 0 when a delayed entity finally leaves or is requeued.
            /// Default on.
            (DELAY_ZERO, 11, true),
            /// New. The eligibility test (lag >= 0). Off makes every entity eligible, so the
            /// earliest virtual deadline wins: EVDF (LKML 2023-10, "Toggle eligibility").
            /// Default on.
            (ELIGIBLE, 5, true),
            /// New. Move the eligibility threshold right by one average request:
            /// eligible iff Sum_j w_j (v_j - v_i) + NICE_0_LOAD * Sum_j r_j >= 0.
            /// Default off.
            (BIAS_ELIGIBLE, 6, false),
        }
    };
}
