//! `next`: upstream's post-6.12 EEVDF changes as sched_feat toggles of the rust kernel
//! (Documentation/upstream-next-research.md), each measured off against on.
//!
//! One table row a feature ([`NextFeature`]): its name and bit, what it does, the upstream
//! patches it comes from, upstream's claim, the counters and metrics that show it. The
//! cells ([`matrix`]) come in pairs that differ only in the feature ([`Ab`]); the report
//! (`next_report.rs`) compares each pair and says where our numbers agree with upstream's.

pub use crate::feature::NextFeature;
use crate::plan::{Ab, Cell, Experiment, FeatureSet, StormChange, Workload};

/// The off and on cells of `workload` for `feature`: `base` writes (the context, e.g.
/// RUN_TO_PARITY) first, then the feature's own. `context` names the base for the tables
/// and the cell IDs (`RTP` in `RTP/on`).
fn pair(
    feature: NextFeature,
    context: (&str, &str),
    base: &[&str],
    workload: &Workload,
) -> [Cell; 2] {
    let name = feature.name();
    let no = format!("NO_{name}");
    let (ctx_long, ctx_short) = context;
    [false, true].map(|on| {
        let mut writes: Vec<&str> = base.to_vec();
        writes.push(if on { name } else { &no });
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

/// NEXT_BUDDY_EEVDF's pairs (context, short name): with 6.12's NEXT_BUDDY off, the pair is
/// 6.12's default against 6.19's as released (NEXT_BUDDY off, its restructured wakeup
/// path); with it on, 6.12's NEXT_BUDDY against both on (6.19-rc1's default).
pub const NB_OFF: (&str, &str) = ("NEXT_BUDDY off", "NB0");
pub const NB_ON: (&str, &str) = ("NEXT_BUDDY on", "NB1");
/// NEXT_BUDDY on and `migration_cost_ns` 0: 6.19's `preempt_sync()` reschedules for a
/// WF_SYNC wakee with the earlier deadline once the waker has run for the migration cost,
/// which the waker always has when that is 0 (see `wakeup_preempt_buddy` in the core).
pub const NB_SYNC: (&str, &str) = ("NEXT_BUDDY on, migration_cost_ns 0", "NB1-mc0");
/// The vCPUs of NEXT_BUDDY_EEVDF's cells.
pub const NB_CPUS: u32 = 4;

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

/// The cells of `next` (or `next --smoke`), limited to the features in `only` (all
/// when it holds none).
pub fn matrix(smoke: bool, only: &[Experiment]) -> Vec<Cell> {
    use NextFeature as N;
    let wanted = |f: NextFeature| {
        !only.iter().any(|e| matches!(e, Experiment::Next(_)))
            || only.contains(&Experiment::Next(f))
    };
    let mut cells = Vec::new();
    // Smoke runs a feature's first context alone.
    let n_ctx = if smoke { 1 } else { 2 };
    if wanted(N::RunToParityMinSlice) {
        for w in lag_cases(smoke) {
            // The context is the write itself.
            let ctxs = [("RUN_TO_PARITY", "RTP"), ("NO_RUN_TO_PARITY", "NO_RTP")];
            for (ctx, short) in &ctxs[..n_ctx] {
                cells.extend(pair(N::RunToParityMinSlice, (ctx, short), &[ctx], &w));
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
        cells.extend(pair(N::LagClampMaxSlice, ("", ""), &[], &w));
    }
    if wanted(N::NextBuddyEevdf) {
        // 4 vCPUs: a woken worker can find an idle CPU, as on upstream's machines, and the
        // buddy decides only where it does not.
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
        let hb: Vec<Workload> = groups
            .iter()
            .map(|&g| Workload::Hackbench {
                threads: false,
                pipe: true,
                groups: g,
                loops: if smoke { 20 } else { 200 / g },
            })
            .collect();
        ws.extend(hb.iter().cloned());
        // The matrix is two by two, each pair one write apart: NEXT_BUDDY_EEVDF toggled
        // with 6.12's NEXT_BUDDY off (6.12's default against 6.19's as released) and on
        // (6.12's NEXT_BUDDY against 6.19-rc1's default, both on). The report derives
        // NEXT_BUDDY's own pairs and upstream's comparison (both off against both on).
        for w in &ws {
            for (ctx, base) in [(NB_OFF, "NO_NEXT_BUDDY"), (NB_ON, "NEXT_BUDDY")] {
                let cells_of = pair(N::NextBuddyEevdf, ctx, &[base], w);
                cells.extend(cells_of.map(|c| c.on_cpus(NB_CPUS)));
            }
        }
        // Pipes wake with WF_SYNC: with migration_cost_ns 0 the reschedule of 6.19's
        // preempt_sync() can fire (the waker has always run at least 0 ns).
        for w in hb.iter().take(if smoke { 1 } else { 2 }) {
            let cells_of = pair(N::NextBuddyEevdf, NB_SYNC, &["NEXT_BUDDY"], w);
            cells.extend(cells_of.map(|mut c| {
                let name = c.features.name().to_string();
                c.features = c.features.with_tunable(&name, "migration_cost_ns", 0);
                c.on_cpus(NB_CPUS)
            }));
        }
    }
    if wanted(N::ProtectAtPick) {
        let changes: &[StormChange] = if smoke {
            &[StormChange::Slice]
        } else {
            &[StormChange::Slice, StormChange::Nice, StormChange::Cgroup]
        };
        for &change in changes {
            let w = Workload::Storm {
                change,
                duration_ms: if smoke { 500 } else { 2000 },
            };
            // RUN_TO_PARITY_MIN_SLICE on (`MS`) and off (`NO_MS`).
            for (side, no) in &[("on", ""), ("off", "NO_")][..n_ctx] {
                let ms = N::RunToParityMinSlice.name();
                let (ctx, short) = (format!("{ms} {side}"), format!("{no}MS"));
                cells.extend(pair(
                    N::ProtectAtPick,
                    (&ctx, &short),
                    &[&format!("{no}{ms}")],
                    &w,
                ));
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

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
                let want = format!("{}{}", if ab.on { "" } else { "NO_" }, f.name());
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
        // Feature 3: two by two, each pair one write apart (NEXT_BUDDY_EEVDF last), on 4
        // vCPUs; msgr and hackbench process pipes at three group counts; the WF_SYNC pairs
        // (hackbench -g 1 and -g 2) also write migration_cost_ns 0.
        let f3 = of(NextFeature::NextBuddyEevdf);
        let writes = |ctx: &str, on: bool| -> Vec<Vec<String>> {
            f3.iter()
                .filter(|c| {
                    c.ab.as_ref()
                        .is_some_and(|a| a.context == ctx && a.on == on)
                })
                .map(|c| c.features.writes().to_vec())
                .collect()
        };
        for (ctx, on, want) in [
            (NB_OFF.0, false, ["NO_NEXT_BUDDY", "NO_NEXT_BUDDY_EEVDF"]),
            (NB_OFF.0, true, ["NO_NEXT_BUDDY", "NEXT_BUDDY_EEVDF"]),
            (NB_ON.0, false, ["NEXT_BUDDY", "NO_NEXT_BUDDY_EEVDF"]),
            (NB_ON.0, true, ["NEXT_BUDDY", "NEXT_BUDDY_EEVDF"]),
        ] {
            assert!(writes(ctx, on).iter().all(|w| w == &want), "{ctx} {on}");
        }
        assert_eq!(writes(NB_OFF.0, true).len(), 5);
        assert!(f3.iter().all(|c| c.cpus == Some(NB_CPUS)));
        let ctx = |c: &Cell| c.ab.as_ref().unwrap().context.clone();
        let (sync, others): (Vec<&Cell>, Vec<&Cell>) = f3.iter().partition(|c| ctx(c) == NB_SYNC.0);
        assert_eq!(sync.len(), 4);
        assert!(sync.iter().all(
            |c| c.features.tunables()[0].write() == "migration_cost_ns=0"
                && c.command().starts_with("hackbench")
        ));
        assert!(others.iter().all(|c| c.features.tunables().is_empty()));
        let hb: Vec<u32> = f3
            .iter()
            .filter(|c| ctx(c) == NB_ON.0)
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
        assert_eq!(
            f4.len(),
            3 * 2 * 2,
            "slice, nice and cgroup storms, MIN_SLICE off and on"
        );
        // --only keeps the classic experiments' meaning and selects features.
        let only = matrix(false, &[Experiment::Next(NextFeature::ProtectAtPick)]);
        assert_eq!(only.len(), f4.len());
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
