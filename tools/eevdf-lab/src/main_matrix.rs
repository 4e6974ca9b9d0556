//! The main study's cells: the latency (seed 000), throughput, fairness and scale
//! experiments, rust against stock, in the smoke, quick, full and `bar` matrices, and the
//! `bar` run's shape (its boots, runs and pooled wakeups).

use crate::plan::{Cell, Experiment, FeatureSet, Hogs, MatrixKind, ShareKind, Workload};

/// Wakeups the `bar` matrix pools a kernel and latency cell, at the least.
pub const BAR_WAKEUPS: u64 = 50_000;

/// `bar`'s boots a kernel and runs a boot: 12 runs a cell.
pub const BAR_BOOTS: u32 = 6;
pub const BAR_INNER_REPS: u32 = 2;

/// How long each `bar` in-share latency run lasts, ms: the waker wakes once a millisecond,
/// so 12 runs pool 62,400 wakeups.
pub const BAR_RUN_MS: u64 = 5200;
/// hackbench's loops in the `bar` latency cells. Over its share the waker misses most
/// periods: `-l 220` ran about 4.6 s and gave 1618-1808 wakeups a run, and a whole `bar`
/// run at `-l 600` pooled 48,194 (10x, the fewest) to 54,057 (0.1x) over 12 runs, 80 a loop
/// at 10x. So -l 700: 56,000 at the fewest.
const BAR_HB_LOOPS: u32 = 700;
/// Wakeups a hackbench loop gave the `bar` waker over 12 runs, at the fewest (the
/// measurement above: 48,194 / 600).
#[cfg(test)]
const BAR_WAKEUPS_PER_HB_LOOP_12: f64 = 48194.0 / 600.0;

/// The cells of one of the main matrices (smoke, quick, full, bar), in run order, limited
/// to `only` experiments (all when empty). The `next` and `seeds` matrices are their
/// studies' (`crate::studies::matrix` chooses); asked for one of those, this has no cells.
pub fn cells(kind: MatrixKind, only: &[Experiment]) -> Vec<Cell> {
    use Experiment as E;
    use FeatureSet as F;
    if kind.is_next() || kind.is_seeds() {
        return Vec::new();
    }
    let mut cells = Vec::new();
    // A cell of experiment `e` under EEVDF, the defaults (every cell but some latency and
    // share cells).
    let eevdf = |e, w| Cell::new(e, F::eevdf(), w);
    let hackbench = |threads, pipe, groups, loops| Workload::Hackbench {
        threads,
        pipe,
        groups,
        loops,
    };
    let (lat_sets, slices, hb): (Vec<F>, &[f64], (u32, u32)) = match kind {
        MatrixKind::Smoke => (vec![F::eevdf()], &[1.0], (1, 20)),
        MatrixKind::Bar => (vec![F::eevdf()], &[10.0, 1.0, 0.1], (2, BAR_HB_LOOPS)),
        MatrixKind::Quick => (
            vec![F::eevdf(), F::evdf(), F::bias()],
            &[10.0, 1.0, 0.1],
            (2, 70),
        ),
        _ => (F::seeds().to_vec(), &[10.0, 1.0, 0.1], (4, 60)),
    };
    // The waker at `slice_x` against hackbench (`hb`: groups, loops) or beside `hogs`, its
    // load's tasks at the base slice.
    let waker = |slice_x, (hb_groups, hb_loops), hogs| Workload::Latency {
        slice_x,
        load_slice_x: Some(1.0),
        hb_groups,
        hb_loops,
        hogs,
    };
    let against_hb = |slice_x| waker(slice_x, hb, None);
    for &slice_x in slices {
        for f in &lat_sets {
            cells.push(Cell::new(E::Latency, f.clone(), against_hb(slice_x)));
        }
    }
    // The waker inside its share: pinned beside two hogs, EEVDF only; the
    // hackbench cells above are the overloaded contrast. --quick runs the two ends of the
    // slices for half a second (its ten-minute budget), --full all three for a second.
    let (in_share, hog_ms): (&[f64], u64) = match kind {
        MatrixKind::Quick => (&[10.0, 0.1], 500),
        MatrixKind::Smoke => (&[], 0),
        MatrixKind::Bar => (slices, BAR_RUN_MS),
        _ => (slices, 1000),
    };
    let duration_ms = hog_ms;
    for &slice_x in in_share {
        let hogs = Hogs { n: 2, duration_ms };
        cells.push(eevdf(E::Latency, waker(slice_x, (0, 0), Some(hogs))));
    }
    let hb_cells: Vec<(bool, bool, u32, u32)> = match kind {
        MatrixKind::Smoke => vec![(false, true, 1, 20)],
        MatrixKind::Quick | MatrixKind::Bar => vec![(false, true, 2, 70), (true, false, 2, 70)],
        // Threads and processes, each over pipes and sockets, at 1 to 8 groups.
        _ => [false, true]
            .into_iter()
            .flat_map(|threads| [(threads, true), (threads, false)])
            .flat_map(|(threads, pipe)| [1, 2, 4, 8].map(|g| (threads, pipe, g, 200 / g)))
            .collect(),
    };
    for (t, p, g, l) in hb_cells {
        cells.push(eevdf(E::Throughput, hackbench(t, p, g, l)));
    }
    // --full: the latency and throughput experiments again at 2 and 4 vCPUs, where wakeups
    // migrate and the load balancer runs (the same C code in both kernels); each shape
    // boots on its own.
    if kind == MatrixKind::Full {
        for cpus in [2, 4] {
            for &slice_x in slices {
                cells.push(eevdf(E::Latency, against_hb(slice_x)).on_cpus(cpus));
            }
            for threads in [false, true] {
                cells.push(eevdf(E::Throughput, hackbench(threads, !threads, 4, 50)).on_cpus(cpus));
            }
        }
    }
    let (pp_ms, share_ms, scale_ms) = match kind {
        MatrixKind::Smoke => (300, 300, 300),
        MatrixKind::Quick | MatrixKind::Bar => (600, 600, 600),
        _ => (2000, 2000, 1000),
    };
    let duration_ms = pp_ms;
    cells.push(eevdf(E::Throughput, Workload::PingPong { duration_ms }));
    let shares: Vec<(ShareKind, F)> = match kind {
        // Shares have an ideal, not a bar.
        MatrixKind::Bar => vec![],
        MatrixKind::Smoke => vec![(ShareKind::NiceSplit, F::eevdf())],
        MatrixKind::Quick => vec![
            (ShareKind::NiceSplit, F::eevdf()),
            (ShareKind::Equal(3), F::eevdf()),
            (ShareKind::Cgroups, F::eevdf()),
        ],
        _ => vec![
            (ShareKind::NiceSplit, F::eevdf()),
            (ShareKind::NiceSplit, F::evdf()),
            (ShareKind::Equal(4), F::eevdf()),
            (ShareKind::Cgroups, F::eevdf()),
        ],
    };
    let duration_ms = share_ms;
    for (kind, f) in shares {
        let share = Workload::Share { kind, duration_ms };
        cells.push(Cell::new(E::Fairness, f, share));
    }
    let tasks: &[u32] = match kind {
        MatrixKind::Smoke => &[10],
        MatrixKind::Quick | MatrixKind::Bar => &[10, 100],
        _ => &[10, 100, 1000],
    };
    let duration_ms = scale_ms;
    for &tasks in tasks {
        cells.push(eevdf(E::Scale, Workload::Scale { tasks, duration_ms }));
    }
    cells.retain(|c| only.is_empty() || only.contains(&c.experiment));
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan_boots, Kernel};
    use clap::ValueEnum;

    /// Every latency cell of the main matrices runs its load at the base slice and is named
    /// by both slices.
    #[test]
    fn latency_cells_name_both_slices() {
        // The `next` and `seeds` kinds have no cells here.
        for &kind in MatrixKind::value_variants() {
            for c in cells(kind, &[Experiment::Latency]) {
                let Workload::Latency {
                    slice_x,
                    load_slice_x,
                    ..
                } = c.workload
                else {
                    panic!("{}", c.id());
                };
                let (label, id, cmd) = (c.label(), c.id(), c.command());
                assert_eq!(load_slice_x, Some(1.0), "{id}: the load at the base slice");
                assert!(
                    label.starts_with(&format!("waker {slice_x}x, load 1x (")),
                    "{label}"
                );
                assert!(id.contains(&format!("-w{slice_x}x-l1x")), "{id}");
                assert!(
                    cmd.contains(&format!("--slice-base-x {slice_x} --load-slice-base-x 1 ")),
                    "{cmd}"
                );
            }
        }
        let quick = cells(MatrixKind::Quick, &[Experiment::Latency]);
        let labels: Vec<String> = quick.iter().map(Cell::label).collect();
        assert!(labels.contains(&"waker 0.1x, load 1x (hackbench -g 2 -l 70)".to_string()));
        assert!(labels.contains(&"waker 10x, load 1x (pinned beside 2 hogs on CPU 0)".to_string()));
        let ids: Vec<String> = quick.iter().map(Cell::id).collect();
        assert!(ids.contains(&"lat-w0.1x-l1x/EEVDF".to_string()));
        assert!(ids.contains(&"lat-hogs2-w10x-l1x/EEVDF".to_string()));
    }

    #[test]
    fn matrices_cover_the_issue() {
        let full = cells(MatrixKind::Full, &[]);
        let lat = full
            .iter()
            .filter(|c| c.experiment == Experiment::Latency)
            .count();
        assert_eq!(
            lat,
            5 * 3 + 3 + 2 * 3,
            "5 feature sets x 3 slices, 3 slices inside the share, 3 slices at 2 and 4 vCPUs"
        );
        assert!(full.iter().any(|c| matches!(
            c.workload,
            Workload::Latency {
                hogs: Some(Hogs { n: 2, .. }),
                ..
            }
        )));
        assert!(full
            .iter()
            .any(|c| matches!(c.workload, Workload::Scale { tasks: 1000, .. })));
        let hb = full
            .iter()
            .filter(|c| matches!(c.workload, Workload::Hackbench { .. }))
            .count();
        assert_eq!(hb, 2 * 2 * 4 + 2 * 2, "and two at 2 and 4 vCPUs");
        let quick = cells(MatrixKind::Quick, &[]);
        for e in Experiment::ALL {
            assert!(quick.iter().any(|c| c.experiment == e), "{e:?}");
        }
        let only = cells(MatrixKind::Quick, &[Experiment::Scale]);
        assert!(only.iter().all(|c| c.experiment == Experiment::Scale) && !only.is_empty());
        // --full's multi-CPU cells (studies::tests::ids_are_unique_and_spaceless checks that
        // their IDs differ); --quick has none.
        for n in [2, 4] {
            for e in [Experiment::Latency, Experiment::Throughput] {
                let found = full.iter().any(|c| c.cpus == Some(n) && c.experiment == e);
                assert!(found, "{e:?} at {n} vCPUs");
            }
        }
        assert!(quick.iter().all(|c| c.cpus.is_none()));
        // Under 10 minutes: 10 boots x (cells x reps + ~15 s boot) with the rust kernel
        // running every latency cell (once ELIGIBLE and BIAS_ELIGIBLE exist).
        let per_boot: f64 = quick.iter().map(Cell::estimate_s).sum::<f64>() * 2.0 + 15.0;
        assert!(per_boot * 10.0 < 600.0, "{per_boot}");
    }

    /// `bar` pools at least BAR_WAKEUPS wakeups a kernel in every latency cell: the hog
    /// cells run BAR_RUN_MS, the hackbench cells BAR_HB_LOOPS loops (the waker measured
    /// there gets a wakeup in about a third of its periods).
    #[test]
    fn bar_pools_enough_wakeups() {
        let cells = cells(MatrixKind::Bar, &[]);
        let runs = u64::from(BAR_BOOTS * BAR_INNER_REPS);
        let mut n = 0;
        for c in &cells {
            let ms = match c.workload {
                Workload::Latency { hogs: Some(h), .. } => h.duration_ms,
                Workload::Latency { hb_loops, .. } => {
                    (f64::from(hb_loops) * BAR_WAKEUPS_PER_HB_LOOP_12) as u64 / runs
                }
                _ => continue,
            };
            n += 1;
            assert!(
                runs * ms >= BAR_WAKEUPS,
                "{}: {} wakeups",
                c.id(),
                runs * ms
            );
        }
        assert_eq!(n, 6, "two regimes x three slices");
        assert!(cells.iter().all(|c| c.features == FeatureSet::eevdf()));
        assert!(!cells.iter().any(|c| c.experiment == Experiment::Fairness));
        assert!(cells
            .iter()
            .any(|c| matches!(c.workload, Workload::PingPong { .. })));
    }

    #[test]
    fn boots_alternate_kernels_and_respect_the_budget() {
        let cells = cells(MatrixKind::Full, &[]);
        let boots = plan_boots(&cells, &[Kernel::Rust, Kernel::Stock], 3, 2, 120.0);
        let batches = boots.iter().map(|b| b.batch).max().unwrap() + 1;
        assert!(batches > 1);
        assert_eq!(boots.len(), batches * 3 * 2);
        for pair in boots.chunks(2) {
            assert_eq!(pair[0].kernel, Kernel::Rust);
            assert_eq!(pair[1].kernel, Kernel::Stock);
            assert_eq!(pair[0].cells, pair[1].cells);
        }
        // Every cell runs in exactly one batch.
        let mut seen = vec![0; cells.len()];
        for b in boots
            .iter()
            .filter(|b| b.rep == 0 && b.kernel == Kernel::Rust)
        {
            let t: f64 = b.cells.iter().map(|&i| cells[i].estimate_s() * 2.0).sum();
            let biggest = b
                .cells
                .iter()
                .map(|&i| cells[i].estimate_s() * 2.0)
                .fold(0.0, f64::max);
            assert!(t <= 120.0 + biggest, "{t}");
            // A shape that fits one batch is as small as it is (the multi-CPU cells).
            if b.cpus.is_none() {
                assert!(t >= 30.0, "batches are balanced, not greedy: {t}");
            }
            for &i in &b.cells {
                seen[i] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }
}
