//! sched_feat names: upstream's post-6.12 EEVDF features the lab toggles (`next`), what a
//! write to the features file may be, and a feature written as another (a stand-in). A leaf
//! of the module graph, so that the plan names them without depending on `next`'s cells.

use sched_eevdf::Features;
use serde::{Deserialize, Serialize};

/// One of upstream's four post-6.12 features, all default off.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum NextFeature {
    RunToParityMinSlice,
    LagClampMaxSlice,
    NextBuddyEevdf,
    ProtectAtPick,
}

impl NextFeature {
    pub const ALL: [NextFeature; 4] = [
        NextFeature::RunToParityMinSlice,
        NextFeature::LagClampMaxSlice,
        NextFeature::NextBuddyEevdf,
        NextFeature::ProtectAtPick,
    ];

    /// The sched_feat name.
    pub fn name(self) -> &'static str {
        INFO[self as usize].name
    }

    /// Its bit in the kernel's feature word: the feature table's (features/table.rs, through
    /// the core's [`Features`]).
    pub fn bit(self) -> u32 {
        INFO[self as usize].flag.bits().trailing_zeros()
    }

    /// What turning it on changes, relative to 6.12.117.
    pub fn what(self) -> &'static str {
        INFO[self as usize].what
    }

    /// Where it comes from: the patches, their authors and dates, and their fate.
    pub fn origin(self) -> &'static str {
        INFO[self as usize].origin
    }

    /// Upstream's claim, as published.
    pub fn claim(self) -> &'static str {
        INFO[self as usize].claim
    }

    /// The sched_eevdf counters that show the feature at work, by name: the kernel side
    /// names them, so a name the booted kernel lacks shows as `-`. The report adds any
    /// other counter the feature moved.
    pub fn counters(self) -> &'static [&'static str] {
        INFO[self as usize].counters
    }

    /// The workloads' own metrics the report shows for the feature (per-task metrics of the
    /// rt-app cells are added by the report).
    pub fn metrics(self) -> &'static [&'static str] {
        INFO[self as usize].metrics
    }

    /// The feature named `s` (its sched_feat name, any case, `-` for `_`).
    pub fn parse(s: &str) -> Option<NextFeature> {
        let s = s.replace('-', "_");
        NextFeature::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(&s))
    }
}

/// What the lab knows of each feature, in [`NextFeature`]'s order (its accessors say what
/// each field is).
struct Info {
    name: &'static str,
    flag: Features,
    what: &'static str,
    origin: &'static str,
    claim: &'static str,
    counters: &'static [&'static str],
    metrics: &'static [&'static str],
}

const INFO: [Info; 4] = [
    Info {
        name: "RUN_TO_PARITY_MIN_SLICE",
        flag: Features::RUN_TO_PARITY_MIN_SLICE,
        what: "With `RUN_TO_PARITY`, the running task is protected from wakeup preemption \
                 only for the smallest slice queued on its runqueue (at most its own), not \
                 for the rest of its own slice; when the protected window ends, every \
                 `update_curr()` asks for a reschedule; `PREEMPT_SHORT` cancels the \
                 protection only when the short-slice wakee then wins the pick, and a wakeup \
                 that does not win shrinks the window to the smallest slice. With \
                 `NO_RUN_TO_PARITY` the pick still protects min(normalized base slice, \
                 slice), where 6.12 protects nothing.",
        origin: "Vincent Guittot, \"sched/fair: Limit run to parity to the min slice of \
                 enqueued entities\" (tip 052c3d87c82e), with \"sched/fair: Fix entity's lag \
                 with run to parity\" (3a0baa8e6c57) and \"sched/fair: Always trigger resched \
                 at the end of a protected period\" (0b9ca2dcabc3), patches 4-6 of \"[PATCH v3 \
                 0/6] sched/fair: Manage lag and run to parity with different slices\" \
                 (2025-07-08, applied to tip sched/core 2025-07-09, Linux 6.17), on top of \
                 patches 2-3 (\"Fix NO_RUN_TO_PARITY case\", 74eec63661d4; \"Remove spurious \
                 shorter slice preemption\", 9de74a9850b9). The feature is the series' end \
                 state.",
        claim: "rt-app, 37 use cases on a Dragonboard RB5 (affinity to the biggest cores); \
                 the lag checked at every dequeue and every eligibility test; a \"lag error\" \
                 is a lag outside [-(slice + tick), slice + tick] (with NO_RUN_TO_PARITY \
                 outside ±max(slice, 0.7 ms + tick)). Use cases with lag errors: **14/37 → \
                 0/37** with RUN_TO_PARITY, **14/37 → 0/37** with NO_RUN_TO_PARITY (the \
                 series' cover letter).",
        counters: &[
            "lag_error",
            "lag_clamped_pos",
            "lag_clamped_neg",
            "protect_expired",
            "protect_shrunk",
        ],
        metrics: &["wake_p99_us", "missed_pct", "share_err_pp"],
    },
    Info {
        name: "LAG_CLAMP_MAX_SLICE",
        flag: Features::LAG_CLAMP_MAX_SLICE,
        what: "`update_entity_lag()` clamps a dequeued entity's lag to ±(the largest slice \
                 queued + one tick) instead of ±max(2 × its own slice, one tick): an entity \
                 with a short slice keeps more of its lag across a sleep, one with a long \
                 slice less. The runqueue's largest slice is a third augmented value of the \
                 tree, kept up to date whether the feature is on or off.",
        origin: "Peter Zijlstra, \"sched/fair: Fix lag clamp\" (written 2025-04-22 in reply \
                 to Vincent Guittot's report of undue lag clamping in a mixed-slice workload; \
                 tip sched/urgent 2026-02-23, mainline 6e3c0a4e1ad1, Linux 7.0; a 6.12-stable \
                 backport was reviewed 2026-03-12 but is not in 6.12.117), with Vincent \
                 Guittot's fixes \"sched/eevdf: Fix augmented max_slice\" (2026-09-07) and \
                 \"sched/eevdf: Fix rb augmented with multi fields\" (2026-09-10, \
                 51b0e68cfa0a).",
        claim: "Qualitative: the old clamp caused \"undue lag clamping in a mixed slice \
                 workload\" (Vincent Guittot's report); no numbers were given.",
        counters: &["lag_clamped_pos", "lag_clamped_neg", "lag_error"],
        metrics: &["wake_p50_us", "wake_p99_us", "share_err_pp"],
    },
    Info {
        name: "NEXT_BUDDY_EEVDF",
        flag: Features::NEXT_BUDDY_EEVDF,
        what: "6.19's wakeup path for `NEXT_BUDDY`: a waking task that is not a fork and \
                 not delayed becomes the next buddy unless the current buddy's deadline is \
                 earlier, and, being eligible, wins the pick at once (`PICK_BUDDY` is tested \
                 in the pick, before `RUN_TO_PARITY`'s protection); a `WF_SYNC` wakeup only \
                 becomes the buddy unless the waker has run for the migration cost. Without \
                 6.12's own `NEXT_BUDDY` only the restructure applies (6.19 as released); \
                 the lab measures it two by two with `NEXT_BUDDY`.",
        origin: "Mel Gorman, \"sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals\" \
                 (\"[PATCH 0/2 v5] Reintroduce NEXT_BUDDY for EEVDF\", 2025-11-12; tip \
                 e837456fdca8, Linux 6.19-rc1), with \"sched/fair: Enable scheduler feature \
                 NEXT_BUDDY\" (aceccac58ad7). Turned off again in 6.19-rc7 by \"sched/fair: \
                 Disable scheduler feature NEXT_BUDDY\" (4f70f106bca1, 2026-01-23) for \
                 regressions in mysql, specjbb and daytrader; \"sched/fair: Revert force \
                 wakeup preemption\" (15257cc2f905, same day) removed the branch that \
                 preempted an ineligible waker, which the published numbers included. The \
                 feature is 6.19's code after the revert.",
        claim: "schbench wakeup latency, 6.18-rc1 against the v5 series (a 2-socket \
                 machine): p50 **7.17 → 6.00 µs**, p90 **46.56 → 19.78**, p99 **119.61 → \
                 89.94** (24.8% better), p99.9 **3193.78 → 328.22**; requests per second \
                 **+1.2% to +3.1%**. hackbench-process-pipes: regressions up to **11.92%** \
                 (48 groups, 3.5023 → 3.9197 s). Default off again in 6.19-rc7 for mysql, \
                 specjbb and daytrader regressions (no numbers published).",
        counters: &[
            "preempt_buddy",
            "picks_buddy",
            "buddy_set",
            "buddy_kept",
            "wakeup_sync_none",
            "wakeup_sync_resched",
        ],
        metrics: &[
            "msgr_p50_us",
            "msgr_p90_us",
            "msgr_p99_us",
            "msgr_p999_us",
            "msgr_rps",
            "hackbench_s",
        ],
    },
    Info {
        name: "PROTECT_AT_PICK",
        flag: Features::PROTECT_AT_PICK,
        what: "Slice protection is set only when the pick chooses the task, not again by \
                 the `put_prev_task()`/`set_next_task()` pair of a sched_change of the \
                 running task (`sched_setattr()`, renice, a cgroup move), which in 6.12 \
                 restores a cancelled protection and, with `RUN_TO_PARITY_MIN_SLICE`, \
                 restarts the window; `reweight_entity()` rescales the running task's \
                 protected span as it rescales its deadline.",
        origin: "Peter Zijlstra, \"sched/fair: Only set slice protection at pick time\" \
                 (written 2026-01-23; tip sched/urgent 2026-02-23, bcd74b2ffdd0) and Wang Tao, \
                 \"sched/eevdf: Update se->vprot in reweight_entity()\" (2026-01-20, \
                 ff38424030f9), both Linux 7.0 and 6.18/6.19-stable, both fixing 63304558ba5d \
                 (\"sched/eevdf: Curb wakeup-preemption\", 6.6).",
        claim: "None numeric: correctness fixes. A sched_change of the running task \
                 (sched_setattr, renice) must not restart or restore its protected window.",
        counters: &["protect_restored", "picks_parity", "reweights"],
        metrics: &[
            "t_run_max_us",
            "t_run_p99_us",
            "c_wait_p99_us",
            "c_wait_max_us",
            "t_share",
            "changes_per_s",
        ],
    },
];

/// Whether `w` is a write the features file takes: `NAME` or `NO_NAME`, NAME of `A-Z0-9_`.
pub fn valid_write(w: &str) -> bool {
    let name = w.strip_prefix("NO_").unwrap_or(w);
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A feature written as another one for a run (`--feature-stand-in NAME=OTHER`), so that
/// the pipeline can run on a kernel without NAME. The numbers are then OTHER's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandIn {
    /// The feature the cells name.
    pub feature: String,
    /// What was written instead (`OTHER` or `NO_OTHER`, which inverts).
    pub written_as: String,
}

impl StandIn {
    /// Parse `NAME=OTHER`; both must be feature writes (OTHER may be `NO_X`).
    pub fn parse(s: &str) -> Result<StandIn, String> {
        let (f, w) = s
            .split_once('=')
            .ok_or_else(|| format!("bad stand-in '{s}': want NAME=OTHER"))?;
        if !valid_write(f) || f.starts_with("NO_") || !valid_write(w) {
            return Err(format!(
                "bad stand-in '{s}': NAME and OTHER are sched_feat names (OTHER may be NO_X)"
            ));
        }
        Ok(StandIn {
            feature: f.into(),
            written_as: w.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_stand_ins_are_checked() {
        for bad in ["", "NO_", "lower", "A B", "A;B", "NO_a"] {
            assert!(!valid_write(bad), "{bad:?}");
        }
        assert!(valid_write("NO_RUN_TO_PARITY") && valid_write("HRTICK_DL"));
        for bad in ["X", "A=", "=B", "NO_A=B", "a=B", "A=B C"] {
            assert!(StandIn::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            StandIn::parse("PROTECT_AT_PICK=NO_PLACE_LAG").unwrap(),
            StandIn {
                feature: "PROTECT_AT_PICK".into(),
                written_as: "NO_PLACE_LAG".into()
            }
        );
    }
}
