//! `--next`: upstream's post-6.12 EEVDF changes as sched_feat toggles of the rust kernel
//! (Documentation/upstream-next-research.md), each measured off against on.
//!
//! One table row a feature ([`NextFeature`]): its name and bit, what it does, the upstream
//! patches it comes from, upstream's claim, the counters and metrics that show it. The
//! cells ([`matrix`]) come in pairs that differ only in the feature ([`Ab`]); the report
//! (`next_report.rs`) compares each pair and says where our numbers agree with upstream's.

use crate::plan::{Ab, Cell, Experiment, FeatureSet, StormChange, Workload};
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
        match self {
            NextFeature::RunToParityMinSlice => "RUN_TO_PARITY_MIN_SLICE",
            NextFeature::LagClampMaxSlice => "LAG_CLAMP_MAX_SLICE",
            NextFeature::NextBuddyEevdf => "NEXT_BUDDY_EEVDF",
            NextFeature::ProtectAtPick => "PROTECT_AT_PICK",
        }
    }

    /// Its bit in the kernel's feature word: the feature table's (features/table.rs, through
    /// the core's [`Features`]).
    pub fn bit(self) -> u32 {
        let f = match self {
            NextFeature::RunToParityMinSlice => Features::RUN_TO_PARITY_MIN_SLICE,
            NextFeature::LagClampMaxSlice => Features::LAG_CLAMP_MAX_SLICE,
            NextFeature::NextBuddyEevdf => Features::NEXT_BUDDY_EEVDF,
            NextFeature::ProtectAtPick => Features::PROTECT_AT_PICK,
        };
        f.bits().trailing_zeros()
    }

    /// What turning it on changes, relative to 6.12.117.
    pub fn what(self) -> &'static str {
        match self {
            NextFeature::RunToParityMinSlice => {
                "With `RUN_TO_PARITY`, the running task is protected from wakeup preemption \
                 only for the smallest slice queued on its runqueue (at most its own), not \
                 for the rest of its own slice; when the protected window ends, every \
                 `update_curr()` asks for a reschedule; `PREEMPT_SHORT` cancels the \
                 protection only when the short-slice wakee then wins the pick, and a wakeup \
                 that does not win shrinks the window to the smallest slice. With \
                 `NO_RUN_TO_PARITY` the pick still protects min(normalized base slice, \
                 slice), where 6.12 protects nothing."
            }
            NextFeature::LagClampMaxSlice => {
                "`update_entity_lag()` clamps a dequeued entity's lag to ±(the largest slice \
                 queued + one tick) instead of ±max(2 × its own slice, one tick): an entity \
                 with a short slice keeps more of its lag across a sleep, one with a long \
                 slice less. The runqueue's largest slice is a third augmented value of the \
                 tree, kept up to date whether the feature is on or off."
            }
            NextFeature::NextBuddyEevdf => {
                "6.19's wakeup path for `NEXT_BUDDY`: a waking task that is not a fork and \
                 not delayed becomes the next buddy unless the current buddy's deadline is \
                 earlier, and, being eligible, wins the pick at once (`PICK_BUDDY` is tested \
                 in the pick, before `RUN_TO_PARITY`'s protection); a `WF_SYNC` wakeup only \
                 becomes the buddy unless the waker has run for the migration cost. Used \
                 with 6.12's own `NEXT_BUDDY` on: the \"on\" cells set both."
            }
            NextFeature::ProtectAtPick => {
                "Slice protection is set only when the pick chooses the task, not again by \
                 the `put_prev_task()`/`set_next_task()` pair of a sched_change of the \
                 running task (`sched_setattr()`, renice, a cgroup move), which in 6.12 \
                 restores a cancelled protection and, with `RUN_TO_PARITY_MIN_SLICE`, \
                 restarts the window; `reweight_entity()` rescales the running task's \
                 protected span as it rescales its deadline."
            }
        }
    }

    /// Where it comes from: the patches, their authors and dates, and their fate.
    pub fn origin(self) -> &'static str {
        match self {
            NextFeature::RunToParityMinSlice => {
                "Vincent Guittot, \"sched/fair: Limit run to parity to the min slice of \
                 enqueued entities\" (tip 052c3d87c82e), with \"sched/fair: Fix entity's lag \
                 with run to parity\" (3a0baa8e6c57) and \"sched/fair: Always trigger resched \
                 at the end of a protected period\" (0b9ca2dcabc3), patches 4-6 of \"[PATCH v3 \
                 0/6] sched/fair: Manage lag and run to parity with different slices\" \
                 (2025-07-08, applied to tip sched/core 2025-07-09, Linux 6.17), on top of \
                 patches 2-3 (\"Fix NO_RUN_TO_PARITY case\", 74eec63661d4; \"Remove spurious \
                 shorter slice preemption\", 9de74a9850b9). The feature is the series' end \
                 state."
            }
            NextFeature::LagClampMaxSlice => {
                "Peter Zijlstra, \"sched/fair: Fix lag clamp\" (written 2025-04-22 in reply \
                 to Vincent Guittot's report of undue lag clamping in a mixed-slice workload; \
                 tip sched/urgent 2026-02-23, mainline 6e3c0a4e1ad1, Linux 7.0; a 6.12-stable \
                 backport was reviewed 2026-03-12 but is not in 6.12.117), with Vincent \
                 Guittot's fixes \"sched/eevdf: Fix augmented max_slice\" (2026-09-07) and \
                 \"sched/eevdf: Fix rb augmented with multi fields\" (2026-09-10, \
                 51b0e68cfa0a)."
            }
            NextFeature::NextBuddyEevdf => {
                "Mel Gorman, \"sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals\" \
                 (\"[PATCH 0/2 v5] Reintroduce NEXT_BUDDY for EEVDF\", 2025-11-12; tip \
                 e837456fdca8, Linux 6.19-rc1), with \"sched/fair: Enable scheduler feature \
                 NEXT_BUDDY\" (aceccac58ad7). Turned off again in 6.19-rc7 by \"sched/fair: \
                 Disable scheduler feature NEXT_BUDDY\" (4f70f106bca1, 2026-01-23) for \
                 regressions in mysql, specjbb and daytrader; \"sched/fair: Revert force \
                 wakeup preemption\" (15257cc2f905, same day) removed the branch that \
                 preempted an ineligible waker, which the published numbers included. The \
                 feature is 6.19's code after the revert."
            }
            NextFeature::ProtectAtPick => {
                "Peter Zijlstra, \"sched/fair: Only set slice protection at pick time\" \
                 (written 2026-01-23; tip sched/urgent 2026-02-23, bcd74b2ffdd0) and Wang Tao, \
                 \"sched/eevdf: Update se->vprot in reweight_entity()\" (2026-01-20, \
                 ff38424030f9), both Linux 7.0 and 6.18/6.19-stable, both fixing 63304558ba5d \
                 (\"sched/eevdf: Curb wakeup-preemption\", 6.6)."
            }
        }
    }

    /// Upstream's claim, as published.
    pub fn claim(self) -> &'static str {
        match self {
            NextFeature::RunToParityMinSlice => {
                "rt-app, 37 use cases on a Dragonboard RB5 (affinity to the biggest cores); \
                 the lag checked at every dequeue and every eligibility test; a \"lag error\" \
                 is a lag outside [-(slice + tick), slice + tick] (with NO_RUN_TO_PARITY \
                 outside ±max(slice, 0.7 ms + tick)). Use cases with lag errors: **14/37 → \
                 0/37** with RUN_TO_PARITY, **14/37 → 0/37** with NO_RUN_TO_PARITY (the \
                 series' cover letter)."
            }
            NextFeature::LagClampMaxSlice => {
                "Qualitative: the old clamp caused \"undue lag clamping in a mixed slice \
                 workload\" (Vincent Guittot's report); no numbers were given."
            }
            NextFeature::NextBuddyEevdf => {
                "schbench wakeup latency, 6.18-rc1 against the v5 series (a 2-socket \
                 machine): p50 **7.17 → 6.00 µs**, p90 **46.56 → 19.78**, p99 **119.61 → \
                 89.94** (24.8% better), p99.9 **3193.78 → 328.22**; requests per second \
                 **+1.2% to +3.1%**. hackbench-process-pipes: regressions up to **11.92%** \
                 (48 groups, 3.5023 → 3.9197 s). Default off again in 6.19-rc7 for mysql, \
                 specjbb and daytrader regressions (no numbers published)."
            }
            NextFeature::ProtectAtPick => {
                "None numeric: correctness fixes. A sched_change of the running task \
                 (sched_setattr, renice) must not restart or restore its protected window."
            }
        }
    }

    /// The sched_eevdf counters that show the feature at work, by name: the kernel side
    /// names them, so a name the booted kernel lacks shows as `-`. The report adds any
    /// other counter the feature moved.
    pub fn counters(self) -> &'static [&'static str] {
        match self {
            NextFeature::RunToParityMinSlice => &[
                "lag_error",
                "lag_clamped_pos",
                "lag_clamped_neg",
                "protect_expired",
                "protect_shrunk",
            ],
            NextFeature::LagClampMaxSlice => &["lag_clamped_pos", "lag_clamped_neg", "lag_error"],
            NextFeature::NextBuddyEevdf => &[
                "preempt_buddy",
                "picks_buddy",
                "buddy_set",
                "buddy_kept",
                "wakeup_sync_none",
                "wakeup_sync_resched",
            ],
            NextFeature::ProtectAtPick => &["protect_restored", "picks_parity", "reweights"],
        }
    }

    /// The workloads' own metrics the report shows for the feature (per-task metrics of the
    /// rt-app cells are added by the report).
    pub fn metrics(self) -> &'static [&'static str] {
        match self {
            NextFeature::RunToParityMinSlice => &["wake_p99_us", "missed_pct", "share_err_pp"],
            NextFeature::LagClampMaxSlice => &["wake_p50_us", "wake_p99_us", "share_err_pp"],
            NextFeature::NextBuddyEevdf => &[
                "msgr_p50_us",
                "msgr_p90_us",
                "msgr_p99_us",
                "msgr_p999_us",
                "msgr_rps",
                "hackbench_s",
            ],
            NextFeature::ProtectAtPick => &[
                "t_run_max_us",
                "t_run_p99_us",
                "c_wait_p99_us",
                "c_wait_max_us",
                "t_share",
                "changes_per_s",
            ],
        }
    }

    /// The feature named `s` (its sched_feat name, any case, `-` for `_`).
    pub fn parse(s: &str) -> Option<NextFeature> {
        let s = s.replace('-', "_");
        NextFeature::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(&s))
    }
}

/// The off and on cells of `workload` for `feature`: `base` writes (the context, e.g.
/// RUN_TO_PARITY) first, then the feature's own. `context` names the base for the tables
/// and the cell IDs (`RTP` in `RTP/on`).
fn pair(
    feature: NextFeature,
    context: (&str, &str),
    base: &[&str],
    on_extra: &[&str],
    off_extra: &[&str],
    workload: &Workload,
) -> [Cell; 2] {
    let name = feature.name();
    let no = format!("NO_{name}");
    let (ctx_long, ctx_short) = context;
    [false, true].map(|on| {
        let mut writes: Vec<&str> = base.to_vec();
        if on {
            writes.extend_from_slice(on_extra);
            writes.push(name);
        } else {
            writes.extend_from_slice(off_extra);
            writes.push(&no);
        }
        let side = if on { "on" } else { "off" };
        let set_name = if ctx_short.is_empty() {
            side.to_string()
        } else {
            format!("{ctx_short}/{side}")
        };
        let mut c = Cell::new(
            Experiment::Next(feature),
            FeatureSet::new(&set_name, &writes),
            workload.clone(),
        );
        c.ab = Some(Ab {
            context: ctx_long.to_string(),
            on,
        });
        c
    })
}

/// An eevdf-rtapp workload.
fn rtapp(case: &str, what: &str, tasks: &[&str], hogs: &[&str], duration_ms: u64) -> Workload {
    Workload::RtApp {
        case: case.into(),
        what: what.into(),
        tasks: tasks.iter().map(|t| t.to_string()).collect(),
        hogs: hogs.iter().map(|h| h.to_string()).collect(),
        duration_ms,
    }
}

/// The rt-app cases of the lag check (feature 1): slice mixes on one CPU, after research
/// §5's list. Vincent's 37 files are not public; these cover the shapes his cover letter
/// names (different slices, periodic tasks among always-running ones, nice values).
fn lag_cases(smoke: bool) -> Vec<Workload> {
    let d = if smoke { 500 } else { 3000 };
    let mut v = vec![rtapp(
        "short-among-long",
        "one 0.1 ms-slice periodic task (1 ms period, 0.3 ms run) among two 3 ms-slice hogs",
        &["period_us=1000,run_us=300,slice_us=100,name=short"],
        &["slice_us=3000,count=2,name=long"],
        d,
    )];
    if smoke {
        return v;
    }
    v.push(rtapp(
        "long-among-base",
        "one 10 ms-slice hog among three base-slice periodic tasks (16 ms period, 2 ms run)",
        &["period_us=16000,run_us=2000,count=3,name=p"],
        &["slice_us=10000,name=long"],
        d,
    ));
    v.push(rtapp(
        "nice-mix",
        "periodic tasks at nice -5, 0, +5 with 1 ms, base and 3 ms slices (10 ms period, \
         2 ms run) and a base-slice hog",
        &[
            "period_us=10000,run_us=2000,nice=-5,slice_us=1000,name=hi",
            "period_us=10000,run_us=2000,name=mid",
            "period_us=10000,run_us=2000,nice=5,slice_us=3000,name=lo",
        ],
        &["name=hog"],
        d,
    ));
    v.push(rtapp(
        "eight-mixed",
        "eight periodic tasks (5 ms period, 0.5 ms run) with 0.1 ms, base and 6 ms slices and \
         a base-slice hog",
        &[
            "period_us=5000,run_us=500,slice_us=100,count=2,name=a",
            "period_us=5000,run_us=500,count=3,name=b",
            "period_us=5000,run_us=500,slice_us=6000,count=3,name=c",
        ],
        &["name=hog"],
        d,
    ));
    v.push(rtapp(
        "all-base",
        "four base-slice periodic tasks (16 ms period, 3 ms run) and a base-slice hog: one \
         slice, the control",
        &["period_us=16000,run_us=3000,count=4,name=p"],
        &["name=hog"],
        d,
    ));
    v
}

/// The cells of `--next` (or `--next --smoke`), limited to the features in `only` (all
/// when it holds none).
pub fn matrix(smoke: bool, only: &[Experiment]) -> Vec<Cell> {
    use NextFeature as N;
    let wanted = |f: NextFeature| {
        !only.iter().any(|e| matches!(e, Experiment::Next(_)))
            || only.contains(&Experiment::Next(f))
    };
    let mut cells = Vec::new();
    if wanted(N::RunToParityMinSlice) {
        for w in lag_cases(smoke) {
            for (ctx, short, base) in [
                ("RUN_TO_PARITY", "RTP", "RUN_TO_PARITY"),
                ("NO_RUN_TO_PARITY", "NO_RTP", "NO_RUN_TO_PARITY"),
            ] {
                if smoke && base == "NO_RUN_TO_PARITY" {
                    continue;
                }
                cells.extend(pair(
                    N::RunToParityMinSlice,
                    (ctx, short),
                    &[base],
                    &[],
                    &[],
                    &w,
                ));
            }
        }
    }
    if wanted(N::LagClampMaxSlice) {
        let w = rtapp(
            "long-sleepers",
            "a 100 ms-slice hog, a base-slice hog and four sleepers (5-20 ms runs, 50-200 ms \
             sleeps; two with 0.1 ms slices, two with the base slice)",
            &[
                "sleep_us=50000,run_us=5000,slice_us=100,name=s_short_a",
                "sleep_us=200000,run_us=20000,slice_us=100,name=s_short_b",
                "sleep_us=100000,run_us=10000,name=s_base_a",
                "sleep_us=150000,run_us=15000,name=s_base_b",
            ],
            &["slice_us=100000,name=hog_long", "name=hog_base"],
            if smoke { 600 } else { 5000 },
        );
        cells.extend(pair(N::LagClampMaxSlice, ("", ""), &[], &[], &[], &w));
    }
    if wanted(N::NextBuddyEevdf) {
        let (shapes, d): (&[(u32, u32)], u64) = if smoke {
            (&[(1, 4)], 500)
        } else {
            (&[(1, 4), (2, 4)], 3000)
        };
        let mut ws: Vec<Workload> = shapes
            .iter()
            .map(|&(m, w)| Workload::Msgr {
                messengers: m,
                workers: w,
                work_us: 50,
                duration_ms: d,
            })
            .collect();
        let groups: &[u32] = if smoke { &[1] } else { &[1, 2, 4] };
        ws.extend(groups.iter().map(|&g| Workload::Hackbench {
            threads: false,
            pipe: true,
            groups: g,
            loops: if smoke { 20 } else { 200 / g },
        }));
        for w in &ws {
            cells.extend(pair(
                N::NextBuddyEevdf,
                ("", ""),
                &[],
                &["NEXT_BUDDY"],
                &["NO_NEXT_BUDDY"],
                w,
            ));
        }
    }
    if wanted(N::ProtectAtPick) {
        let changes: &[StormChange] = if smoke {
            &[StormChange::Slice]
        } else {
            &[StormChange::Slice, StormChange::Nice]
        };
        for &change in changes {
            let w = Workload::Storm {
                change,
                duration_ms: if smoke { 500 } else { 2000 },
            };
            for (ctx, short, base) in [
                (
                    "RUN_TO_PARITY_MIN_SLICE on",
                    "MS",
                    "RUN_TO_PARITY_MIN_SLICE",
                ),
                (
                    "RUN_TO_PARITY_MIN_SLICE off",
                    "NO_MS",
                    "NO_RUN_TO_PARITY_MIN_SLICE",
                ),
            ] {
                if smoke && short == "NO_MS" {
                    continue;
                }
                cells.extend(pair(N::ProtectAtPick, (ctx, short), &[base], &[], &[], &w));
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{matrix as plan_matrix, MatrixKind};

    #[test]
    fn features_are_the_issues() {
        let names: Vec<&str> = NextFeature::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(
            names,
            [
                "RUN_TO_PARITY_MIN_SLICE",
                "LAG_CLAMP_MAX_SLICE",
                "NEXT_BUDDY_EEVDF",
                "PROTECT_AT_PICK"
            ]
        );
        let bits: Vec<u32> = NextFeature::ALL.iter().map(|f| f.bit()).collect();
        // Patch 0007 puts them after BIAS_ELIGIBLE (bit 6), before the first flag that
        // depends on the configuration.
        assert_eq!(bits, [7, 8, 9, 10]);
        assert_eq!(
            NextFeature::parse("next-buddy-eevdf"),
            Some(NextFeature::NextBuddyEevdf)
        );
        assert_eq!(NextFeature::parse("NEXT_BUDDY"), None);
        for f in NextFeature::ALL {
            assert!(!f.counters().is_empty() && !f.metrics().is_empty());
            assert!(f.claim().len() > 50 && f.origin().contains(", ") && f.what().len() > 50);
        }
    }

    #[test]
    fn every_cell_has_its_twin() {
        for smoke in [false, true] {
            let cells = matrix(smoke, &[]);
            assert!(!cells.is_empty());
            for c in &cells {
                let ab = c.ab.as_ref().expect("a --next cell has a side");
                let Experiment::Next(f) = c.experiment else {
                    panic!("{c:?}")
                };
                let twins: Vec<&Cell> = cells
                    .iter()
                    .filter(|o| {
                        o.experiment == c.experiment
                            && o.workload == c.workload
                            && o.ab.as_ref().is_some_and(|x| x.context == ab.context)
                    })
                    .collect();
                assert_eq!(twins.len(), 2, "{}", c.id());
                assert!(twins.iter().any(|t| t.ab.as_ref().unwrap().on != ab.on));
                // The feature's own write is last: on sets it, off clears it.
                let last = c.features.writes().last().unwrap();
                let want = if ab.on {
                    f.name().to_string()
                } else {
                    format!("NO_{}", f.name())
                };
                assert_eq!(last, &want, "{}", c.id());
                assert!(c.schedstats(), "counters count only with schedstats");
            }
            // Every feature is in the matrix, smoke included.
            for f in NextFeature::ALL {
                assert!(cells.iter().any(|c| c.experiment == Experiment::Next(f)));
            }
        }
    }

    #[test]
    fn cells_say_what_the_research_asks() {
        let cells = matrix(false, &[]);
        let of = |f: NextFeature| -> Vec<&Cell> {
            cells
                .iter()
                .filter(|c| c.experiment == Experiment::Next(f))
                .collect()
        };
        // Feature 1: each rt-app case under RUN_TO_PARITY and NO_RUN_TO_PARITY.
        let f1 = of(NextFeature::RunToParityMinSlice);
        assert_eq!(f1.len(), 5 * 2 * 2);
        assert!(f1
            .iter()
            .all(|c| matches!(c.workload, Workload::RtApp { .. })));
        assert!(f1
            .iter()
            .any(|c| c.features.writes() == ["NO_RUN_TO_PARITY", "RUN_TO_PARITY_MIN_SLICE"]));
        // Feature 3: the on cell writes both NEXT_BUDDY and NEXT_BUDDY_EEVDF; msgr and
        // hackbench process pipes at three group counts.
        let f3 = of(NextFeature::NextBuddyEevdf);
        let on = f3.iter().find(|c| c.ab.as_ref().unwrap().on).unwrap();
        assert_eq!(on.features.writes(), ["NEXT_BUDDY", "NEXT_BUDDY_EEVDF"]);
        let hb: Vec<u32> = f3
            .iter()
            .filter_map(|c| match c.workload {
                Workload::Hackbench {
                    groups,
                    threads: false,
                    pipe: true,
                    ..
                } => Some(groups),
                _ => None,
            })
            .collect();
        assert_eq!(hb, [1, 1, 2, 2, 4, 4]);
        assert!(f3.iter().any(|c| c.command().starts_with("eevdf-msgr")));
        // Feature 4: the storm with RUN_TO_PARITY_MIN_SLICE on in both cells, and off.
        let f4 = of(NextFeature::ProtectAtPick);
        assert!(f4
            .iter()
            .any(|c| c.features.writes() == ["RUN_TO_PARITY_MIN_SLICE", "PROTECT_AT_PICK"]));
        assert!(f4
            .iter()
            .any(|c| c.features.writes() == ["NO_RUN_TO_PARITY_MIN_SLICE", "NO_PROTECT_AT_PICK"]));
        assert_eq!(f4.len(), 2 * 2 * 2);
        // --only keeps the classic experiments' meaning and selects features.
        let only = matrix(false, &[Experiment::Next(NextFeature::ProtectAtPick)]);
        assert_eq!(only.len(), f4.len());
        assert_eq!(plan_matrix(MatrixKind::Next, &[]).len(), cells.len());
    }

    #[test]
    fn next_fits_its_budget() {
        // The default --next: 6 boots x 2 runs of every cell, one kernel, batches of 240 s
        // with about 15 s of boot each: under 25 minutes by the cells' own estimates.
        let cells = matrix(false, &[]);
        let per_rep: f64 = cells.iter().map(Cell::estimate_s).sum();
        let boots = 6.0 * (per_rep * 2.0 / 240.0).ceil();
        let total = per_rep * 2.0 * 6.0 + boots * 15.0;
        assert!(total < 25.0 * 60.0, "{total} s");
        let smoke: f64 = matrix(true, &[]).iter().map(Cell::estimate_s).sum();
        assert!(smoke < 20.0, "{smoke} s");
    }
}
