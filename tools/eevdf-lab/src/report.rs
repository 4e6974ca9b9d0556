//! The raw results of a run, the summary rows computed from them (one struct that feeds the
//! terminal tables, the Markdown report and summary.json alike), and the plots.

use crate::feature::StandIn;
use crate::insnprof::{self, InsnProf};
use crate::main_matrix::BAR_WAKEUPS;
use crate::metrics::{self, Better};
use crate::parse::{self, BootInfo, Outcome, Status};
use crate::plan::{
    slices_name, Cell, Experiment, FeatureSet, Kernel, MatrixKind, Pair, Workload, WAKER_PERIOD_US,
};
use crate::plot;
use crate::stats::{self, Estimate};
use crate::verdict;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// What a kernel was, as the run found it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelInfo {
    pub kernel: Kernel,
    pub image: String,
    /// CONFIG_SCHED_EEVDF_RUST in the build's .config (None: no .config found).
    pub config_sched_eevdf_rust: Option<bool>,
    /// The image was built from the repository's current config fragments and patch series
    /// (None: unknown, e.g. a raw.json from before this field).
    #[serde(default)]
    pub build_current: Option<bool>,
}

/// One boot as it ran.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BootRun {
    pub kernel: Kernel,
    pub rep: u32,
    pub batch: usize,
    pub wall_s: f64,
    /// eevdf-vm's exit status (0: the script ran and the kernel reported nothing).
    pub exit: Option<i32>,
    pub info: BootInfo,
    pub outcomes: Vec<Outcome>,
}

/// Everything a run measured: raw.json. The report is a pure function of it
/// (`eevdf-lab report raw.json` regenerates it).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Raw {
    pub started_utc: String,
    pub command: String,
    pub matrix: MatrixKind,
    pub boots_per_kernel: u32,
    pub inner_reps: u32,
    pub cpus: u32,
    /// How guest time ran (absent in runs from before the option: realtime).
    #[serde(default)]
    pub timing: Option<TimingInfo>,
    pub confidence: f64,
    pub bootstrap_resamples: usize,
    pub seed: u64,
    pub cells: Vec<Cell>,
    /// Which pair of builds played the rust and stock roles (absent in runs from before
    /// `--kernels distro`: the tiny pair, the only one there was).
    #[serde(default)]
    pub pair: Pair,
    pub kernels: Vec<KernelInfo>,
    pub boots: Vec<BootRun>,
    /// Features written as others in this run (`--feature-stand-in`; absent in runs from
    /// before it).
    #[serde(default)]
    pub stand_ins: Vec<StandIn>,
    /// The scheduler's instructions per switch by kernel, from tools/insnprof after the
    /// boots (`bar`; absent otherwise and in runs from before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insnprof: Vec<InsnProf>,
    /// The runs this record merges (`eevdf-lab report RAW RAW ...`, [`crate::merge`]),
    /// oldest first; empty for one run's record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<MergedRun>,
    /// The `report` command that merged them (empty for one run's record).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub merge_command: String,
}

/// One run of a merged record: what the page's header and Kernels table say of it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MergedRun {
    /// Its raw.json, as named to `report`.
    pub raw: String,
    pub started_utc: String,
    pub command: String,
    pub boots_per_kernel: u32,
    pub inner_reps: u32,
    pub kernels: Vec<KernelInfo>,
    /// Its boots in the merged record's `boots`: `first_boot..first_boot + n_boots`.
    pub first_boot: usize,
    pub n_boots: usize,
    /// The cells it ran.
    pub n_cells: usize,
    /// The IDs of the cells whose outcomes the page takes from it (the others a later run
    /// replaced).
    pub cells: Vec<String>,
}

#[cfg(test)]
impl Raw {
    /// A run of `matrix` over `cells` with no boots yet, for the tests' fixtures: one vCPU,
    /// the tiny pair, 95% intervals from 200 resamples; struct update syntax sets the rest.
    pub(crate) fn for_test(matrix: MatrixKind, cells: Vec<Cell>) -> Raw {
        Raw {
            started_utc: "2026-01-01 00:00:00".into(),
            command: "eevdf-lab".into(),
            matrix,
            boots_per_kernel: 1,
            inner_reps: 1,
            cpus: 1,
            timing: None,
            confidence: 0.95,
            bootstrap_resamples: 200,
            seed: 1,
            cells,
            pair: Pair::Tiny,
            kernels: vec![],
            boots: vec![],
            stand_ins: vec![],
            insnprof: vec![],
            merged: vec![],
            merge_command: String::new(),
        }
    }
}

#[cfg(test)]
impl BootRun {
    /// A boot of `kernel` (rep 0, batch 0, exit 0, no boot info) that ran `outcomes`, for the
    /// tests' fixtures; struct update syntax sets the rest.
    pub(crate) fn for_test(kernel: Kernel, outcomes: Vec<Outcome>) -> BootRun {
        BootRun {
            kernel,
            rep: 0,
            batch: 0,
            wall_s: 1.0,
            exit: Some(0),
            info: BootInfo::default(),
            outcomes,
        }
    }
}

/// How guest time runs (`--timing`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Timing {
    /// `-icount shift=N,sleep=off`: guest time counts instructions.
    Icount,
    /// Plain multi-threaded TCG: guest time is wall-clock time.
    Realtime,
}

/// The timing a run used, as recorded in raw.json.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimingInfo {
    /// Guest time advanced 2^shift ns per instruction.
    Icount {
        /// The icount shift.
        shift: u32,
    },
    /// Wall-clock guest time.
    Realtime,
}

impl TimingInfo {
    pub(crate) fn describe(timing: Option<TimingInfo>) -> String {
        match timing {
            Some(TimingInfo::Icount { shift }) => format!(
                "QEMU TCG with -icount shift={shift}: guest time counts instructions, \
                 {} ns each, a {} MIPS virtual CPU",
                1u64 << shift,
                1000 >> shift
            ),
            Some(TimingInfo::Realtime) | None => "QEMU TCG, wall-clock guest time".to_string(),
        }
    }
}

/// One table row: a cell's metric on each kernel, and the Rust/stock ratio.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub cell: usize,
    pub cell_id: String,
    pub metric: String,
    pub unit: String,
    /// Median and interval per kernel.
    pub kernels: BTreeMap<Kernel, Estimate>,
    /// Kernels on which the cell could not run, with the missing feature.
    pub unavailable: BTreeMap<Kernel, String>,
    /// Failed runs per kernel.
    pub failed: BTreeMap<Kernel, usize>,
    /// median(rust) / median(stock), bootstrap interval.
    pub ratio: Option<Estimate>,
    /// The issue's performance bar, where it applies: None when it does not apply or a
    /// kernel is missing.
    pub bar_pass: Option<bool>,
    /// The weight-ideal value (share rows).
    pub ideal: Option<f64>,
}

impl Row {
    /// The row of `metric` in cell `cell` of a run of `kind`, with nothing unavailable or
    /// failed and no ideal: its unit, and the bar judged on its `ratio`.
    fn new(
        kind: MatrixKind,
        (cell, cell_id): (usize, String),
        metric: &str,
        kernels: BTreeMap<Kernel, Estimate>,
        ratio: Option<Estimate>,
    ) -> Row {
        Row {
            cell,
            cell_id,
            metric: metric.to_string(),
            unit: metrics::meta(metric).0.to_string(),
            kernels,
            unavailable: BTreeMap::new(),
            failed: BTreeMap::new(),
            bar_pass: ratio.as_ref().and_then(|r| bar_for(kind, metric, r)),
            ratio,
            ideal: None,
        }
    }
}

/// The row of `metric` in cell `ci` among `rows`.
pub fn row<'a, R: Borrow<Row>>(rows: &'a [R], ci: usize, metric: &str) -> Option<&'a Row> {
    rows.iter()
        .map(Borrow::borrow)
        .find(|r| r.cell == ci && r.metric == metric)
}

/// Kernel `k`'s estimate of `metric` in cell `ci`.
pub fn est_of<R: Borrow<Row>>(rows: &[R], ci: usize, metric: &str, k: Kernel) -> Option<Estimate> {
    row(rows, ci, metric)
        .and_then(|r| r.kernels.get(&k))
        .copied()
}

/// Its median.
pub fn med<R: Borrow<Row>>(rows: &[R], ci: usize, metric: &str, k: Kernel) -> Option<f64> {
    est_of(rows, ci, metric, k).map(|e| e.value)
}

/// How far past parity the interval of a mean or a time may reach and pass the bar.
const BAR_TOLERANCE: f64 = 0.02;

/// The same for the p99 of the pooled wakeups, in `bar` (at least 50,000 a kernel and cell).
const BAR_P99_TOLERANCE: f64 = 0.05;

/// The issue's bar: Rust/stock <= 1.00 with the interval's upper end <= 1 + `tolerance`
/// ([`BAR_TOLERANCE`] but for pooled tails; mirrored for higher-is-better metrics).
fn bar_pass(better: Better, r: &Estimate, tolerance: f64) -> Option<bool> {
    match better {
        Better::Lower => Some(r.value <= 1.0 && r.hi <= 1.0 + tolerance),
        Better::Higher => Some(r.value >= 1.0 && r.lo >= 1.0 - tolerance),
        Better::Neither => None,
    }
}

/// How the bar judges `metric` in a run of matrix `kind`, or `None` where it does
/// not apply: the means and times (hackbench, ping-pong, the waker's average latency and run
/// delay) pass at rust/stock <= 1.00 with the interval's upper end <= 1.02; the tail (the
/// p99 of the pooled wakeups) only in `bar`, which pools at least 50,000 wakeups a kernel
/// and cell, with the upper end <= 1.05 (the median of the runs' p99s is descriptive); the
/// deterministic rows (instructions a switch) at rust <= stock.
pub fn bar_for(kind: MatrixKind, metric: &str, r: &Estimate) -> Option<bool> {
    let (_, better, bar) = metrics::meta(metric);
    // The bar is the main matrix's; the seeds' cells say how the seeds' experiments come
    // out, with their intervals.
    if !bar || kind.is_seeds() {
        return None;
    }
    if INSTRUCTION_METRICS.contains(&metric) {
        // Instructions under icount repeat to a few in thousands: the bar is the medians'
        // order itself.
        return Some(r.value <= 1.0);
    }
    match (metric, kind) {
        ("lat_p99_pooled_us", MatrixKind::Bar) => bar_pass(better, r, BAR_P99_TOLERANCE),
        ("lat_p99_pooled_us" | "lat_p99_us", _) => None,
        _ => bar_pass(better, r, BAR_TOLERANCE),
    }
}

/// Every outcome of `raw` whose cell is in its matrix, with its boot and its cell's index,
/// in the boots' order.
pub(crate) fn cell_outcomes(raw: &Raw) -> impl Iterator<Item = (&BootRun, usize, &Outcome)> {
    // Each cell's index by its ID: the guest's outcomes name cells by ID.
    let index: BTreeMap<String, usize> = raw
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id(), i))
        .collect();
    raw.boots
        .iter()
        .flat_map(|b| b.outcomes.iter().map(move |o| (b, o)))
        .filter_map(move |(b, o)| Some((b, *index.get(&o.id)?, o)))
}

pub fn summarise(raw: &Raw) -> Vec<Row> {
    // (cell, metric) -> kernel -> samples, keeping first-seen metric order.
    let mut order: Vec<(usize, String)> = Vec::new();
    let mut samples: BTreeMap<(usize, String), BTreeMap<Kernel, Vec<f64>>> = BTreeMap::new();
    let mut unavailable: BTreeMap<usize, BTreeMap<Kernel, String>> = BTreeMap::new();
    let mut failed: BTreeMap<usize, BTreeMap<Kernel, usize>> = BTreeMap::new();
    let mut outcomes_of: BTreeMap<usize, Vec<&Outcome>> = BTreeMap::new();
    let pools = waker_pools(raw);
    let (conf, resamples) = (raw.confidence, raw.bootstrap_resamples);
    for (b, ci, o) in cell_outcomes(raw) {
        match &o.status {
            Status::Unavailable(f) => {
                unavailable
                    .entry(ci)
                    .or_default()
                    .insert(b.kernel, f.clone());
            }
            Status::Failed(_) => *failed.entry(ci).or_default().entry(b.kernel).or_default() += 1,
            Status::Ok => {
                outcomes_of.entry(ci).or_default().push(o);
                let ms = parse::metrics(&raw.cells[ci], o);
                for (m, v) in with_instructions(raw, &raw.cells[ci], ms) {
                    let key = (ci, m);
                    if !samples.contains_key(&key) {
                        order.push(key.clone());
                    }
                    samples
                        .entry(key)
                        .or_default()
                        .entry(b.kernel)
                        .or_default()
                        .push(v);
                }
            }
        }
    }
    // Cells with no successful run still get a row, so that "unavailable" shows.
    for ci in unavailable.keys().chain(failed.keys()) {
        if !order.iter().any(|(c, _)| c == ci) {
            order.push((*ci, "-".into()));
        }
    }
    order.sort_by_key(|(c, _)| *c);
    order
        .into_iter()
        .enumerate()
        .map(|(n, (ci, metric))| {
            let per = samples.remove(&(ci, metric.clone())).unwrap_or_default();
            let kernels: BTreeMap<Kernel, Estimate> = per
                .iter()
                .map(|(k, v)| (*k, stats::median_ci(v, conf)))
                .collect();
            let seed = raw.seed.wrapping_add(n as u64);
            let ratio = match (per.get(&Kernel::Rust), per.get(&Kernel::Stock)) {
                (Some(r), Some(s)) => Some(stats::ratio_ci(r, s, conf, resamples, seed)),
                _ => None,
            };
            let ideal = parse::ideal_shares(outcomes_of.get(&ci).map(Vec::as_slice).unwrap_or(&[]))
                .get(&metric)
                .copied();
            Row {
                unavailable: unavailable.get(&ci).cloned().unwrap_or_default(),
                failed: failed.get(&ci).cloned().unwrap_or_default(),
                ideal,
                ..Row::new(
                    raw.matrix,
                    (ci, raw.cells[ci].id()),
                    &metric,
                    kernels,
                    ratio,
                )
            }
        })
        .flat_map(|row| {
            // After each cell's p99 of the runs, the p99 of all its wakeups pooled.
            let pooled = pooled_p99_row(raw, &row, &pools);
            // After the ping-pong's guest instructions, the scheduler's own (insnprof).
            let sched = insnprof_row(raw, &row);
            std::iter::once(row).chain(pooled).chain(sched)
        })
        .collect()
}

/// The fair class's instructions per switch of the ping-pong, as tools/insnprof counted
/// them after the run's boots (`bar`), beside `pp_row` if that is the ping-pong's guest
/// instructions: one deterministic count a kernel (its interval is the count itself), and
/// their ratio, whose bar is rust <= stock.
fn insnprof_row(raw: &Raw, pp_row: &Row) -> Option<Row> {
    if raw.insnprof.is_empty() || pp_row.metric != "pingpong_insns_per_switch" {
        return None;
    }
    let kernels: BTreeMap<Kernel, Estimate> = raw
        .insnprof
        .iter()
        .map(|p| (p.kernel, Estimate::point(p.sched())))
        .collect();
    let ratio = match (kernels.get(&Kernel::Rust), kernels.get(&Kernel::Stock)) {
        (Some(r), Some(s)) if s.value > 0.0 => Some(Estimate::point(r.value / s.value)),
        _ => None,
    };
    let cell = (pp_row.cell, pp_row.cell_id.clone());
    Some(Row::new(raw.matrix, cell, insnprof::METRIC, kernels, ratio))
}

/// The p99 of all the wakeups of a latency cell's runs pooled (`lat_p99_pooled_us`), from
/// the waker's histograms, beside `p99_row` if it is the median of the runs' p99s: each
/// kernel's value with a bootstrap interval over its runs, and their ratio. A tail is judged
/// on a pool of [`BAR_WAKEUPS`] wakeups a kernel, or not at all.
fn pooled_p99_row(raw: &Raw, p99_row: &Row, pools: &WakerPools) -> Option<Row> {
    if p99_row.metric != "lat_p99_us" {
        return None;
    }
    let ci = p99_row.cell;
    let runs = |k| pools.get(&(ci, k)).map_or(&[][..], |p| p.hists.as_slice());
    let seed = raw.seed.wrapping_add(0x9001).wrapping_add(ci as u64);
    let (conf, resamples) = (raw.confidence, raw.bootstrap_resamples);
    let pooled = |k| stats::pooled_quantile_ci(runs(k), 99.0, conf, resamples, seed);
    let kernels: BTreeMap<Kernel, Estimate> = [Kernel::Rust, Kernel::Stock]
        .into_iter()
        .filter(|&k| !runs(k).is_empty())
        .map(|k| (k, pooled(k)))
        .collect();
    if kernels.is_empty() {
        return None;
    }
    let (rust, stock) = (runs(Kernel::Rust), runs(Kernel::Stock));
    let ratio = (kernels.len() == 2)
        .then(|| stats::pooled_ratio_ci(rust, stock, 99.0, conf, resamples, seed));
    let metric = "lat_p99_pooled_us";
    let pooled_enough = [Kernel::Rust, Kernel::Stock]
        .iter()
        .all(|&k| pools.get(&(ci, k)).map_or(0, |p| p.wakeups) >= BAR_WAKEUPS);
    let row = Row::new(
        raw.matrix,
        (ci, p99_row.cell_id.clone()),
        metric,
        kernels,
        ratio,
    );
    Some(Row {
        unavailable: p99_row.unavailable.clone(),
        failed: p99_row.failed.clone(),
        bar_pass: row.bar_pass.filter(|_| pooled_enough),
        ..row
    })
}

/// The deterministic rows: guest instructions per switch, derived under icount on one vCPU
/// (guest time counts instructions, 2^shift ns each, and no other vCPU spends any). They
/// carry the performance bar as rust <= stock. Both run with schedstats off
/// ([`Cell::schedstats`]), so the Rust kernel's counters do not count.
pub const INSTRUCTION_METRICS: [&str; 3] = [
    "pingpong_insns_per_switch",
    "yield_insns_per_switch",
    insnprof::METRIC,
];

/// `ms` with the deterministic rows added where the run allows them (icount, one vCPU): the
/// ping-pong's `1e9 / (2^shift * switches/s)` and the yielding tasks' `ns per switch /
/// 2^shift`, instructions a switch of the whole guest (kernel and user).
fn with_instructions(raw: &Raw, cell: &Cell, mut ms: Vec<(String, f64)>) -> Vec<(String, f64)> {
    let Some(TimingInfo::Icount { shift }) = raw.timing else {
        return ms;
    };
    if cell.cpus_in(raw.cpus) != 1 {
        return ms;
    }
    let ns = (1u64 << shift) as f64;
    let derived: Vec<(String, f64)> = ms
        .iter()
        .filter_map(|(m, v)| match m.as_str() {
            "pingpong_switches_per_s" if *v > 0.0 => {
                Some(("pingpong_insns_per_switch".to_string(), 1e9 / (ns * v)))
            }
            "ns_per_switch" => Some(("yield_insns_per_switch".to_string(), v / ns)),
            _ => None,
        })
        .collect();
    ms.extend(derived);
    ms
}

/// `v` with fewer decimals the larger it is (1234, 12.3, 1.23, 0.123), `-` when not finite.
pub(crate) fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let decimals = [1000.0, 10.0, 1.0].iter().position(|&at| v.abs() >= at);
    format!("{v:.d$}", d = decimals.unwrap_or(3))
}

pub(crate) fn fmt_est(e: &Estimate) -> String {
    format!(
        "{} [{}, {}]{}",
        fmt_num(e.value),
        fmt_num(e.lo),
        fmt_num(e.hi),
        if e.coverage < 0.95 { "†" } else { "" }
    )
}

/// A row's rust/stock ratio with its interval, `-` without one.
pub(crate) fn fmt_ratio(r: &Row) -> String {
    r.ratio.as_ref().map_or("-".into(), |x| {
        format!("{:.3} [{:.3}, {:.3}]", x.value, x.lo, x.hi)
    })
}

/// `name (unit)`, or `name` without a unit.
pub(crate) fn with_unit(name: &str, unit: &str) -> String {
    if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({unit})")
    }
}

fn kernel_cell(row: &Row, k: Kernel) -> String {
    if let Some(e) = row.kernels.get(&k) {
        let f = row.failed.get(&k).copied().unwrap_or(0);
        if f > 0 {
            format!("{} ({f} failed)", fmt_est(e))
        } else {
            fmt_est(e)
        }
    } else if let Some(f) = row.unavailable.get(&k) {
        format!("not available on this kernel (no {f})")
    } else if let Some(f) = row.failed.get(&k) {
        format!("{f} runs failed")
    } else {
        "-".into()
    }
}

/// One Markdown table per experiment.
pub fn tables(raw: &Raw, rows: &[Row]) -> String {
    let mut s = String::new();
    // The experiments in the matrix's order (the seeds' too).
    for e in stats::first_seen(raw.cells.iter().map(|c| c.experiment)) {
        let rs: Vec<&Row> = rows
            .iter()
            .filter(|r| raw.cells[r.cell].experiment == e)
            .collect();
        if rs.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {}\n", e.title());
        let ideal_col = e == Experiment::Fairness;
        let (ideal, rule) = if ideal_col {
            (" ideal |", "---|")
        } else {
            ("", "")
        };
        let _ = writeln!(
            s,
            "| workload | features | metric | stock | rust | rust/stock | bar |{ideal}\n\
             |---|---|---|---|---|---|---|{rule}"
        );
        for r in &rs {
            let c = &raw.cells[r.cell];
            let metric = with_unit(&r.metric, &r.unit);
            let _ = write!(
                s,
                "| {} | {} | {metric} | {} | {} | {} | {} |",
                c.label(),
                c.features.name(),
                kernel_cell(r, Kernel::Stock),
                kernel_cell(r, Kernel::Rust),
                fmt_ratio(r),
                bar_word(r)
            );
            if ideal_col {
                let _ = write!(s, " {} |", r.ideal.map_or(String::new(), fmt_num));
            }
            s.push('\n');
        }
        s.push('\n');
        if e == Experiment::Latency {
            let boots = raw
                .boots
                .iter()
                .map(|b| (b.kernel, &b.info, b.outcomes.as_slice()));
            s.push_str(&crate::readback::table(&raw.cells, raw.cpus, boots));
            s.push_str(&regimes(raw, &rs));
            if raw.matrix == MatrixKind::Bar {
                s.push_str(&pools(raw));
            }
            s.push_str(&simulated(raw, &rs));
        }
    }
    s
}

/// hackbench as the simulator models it in the latency cells: 40 tasks a group, each
/// running exponential bursts (mean [`SIM_HB_RUN_US`]) between exponential sleeps (mean
/// [`SIM_HB_SLEEP_US`]), the shape of tests/scenarios/hackbench_waker_*.toml. A model of
/// the load's regime (a long runqueue and constant wakeups), not of its pipes.
const SIM_HB_RUN_US: u64 = 40;
const SIM_HB_SLEEP_US: u64 = 200;
/// How long the simulator runs a lab's cell: 5 s.
pub(crate) const SIM_DURATION_NS: f64 = 5e9;

/// `eevdf-sim`'s kernel-faithful run of the lab's cell `id` for [`SIM_DURATION_NS`] at `hz`
/// and a base slice of `base_us`, with `tasks` (its `[[task]]` tables) as the scenario.
pub(crate) fn simulate(
    id: &str,
    hz: u64,
    base_us: u64,
    tasks: &str,
) -> anyhow::Result<eevdf_sim::sim::RunResult> {
    let toml = format!(
        "name = \"{id}\"\ndescription = \"the lab's cell {id}\"\nduration_ms = 5000\n\
         hz = {hz}\nbase_slice_us = {base_us}\nseed = 1\n\n{tasks}"
    );
    let sc = eevdf_sim::scenario::Scenario::parse(&toml)?;
    eevdf_sim::sim::Sim::run(&sc, &eevdf_sim::sim::RunOptions::default())
}

/// The simulator against the kernel, for every one-vCPU latency cell: the same
/// waker (its measured CPU per wakeup, `need_pct`, every 1 ms, its slice) beside the same
/// hogs, or beside hackbench as [`SIM_HB_RUN_US`] models it, run in `eevdf-sim`'s
/// kernel-faithful mode for 5 s at the pair's HZ and the boot's base slice. The
/// simulator's wakeup latency is the wait for the CPU alone, so it stands beside the
/// kernel's run delay per wakeup (schedstat), not its timer-to-run latency; its share is
/// the waker's CPU time over the run, beside the kernel's `share_pct`.
fn simulated(raw: &Raw, rs: &[&Row]) -> String {
    let base_us = raw
        .boots
        .iter()
        .map(|b| b.info.base_slice_ns / 1000)
        .find(|&b| b > 0)
        .unwrap_or(700);
    let hz = raw.pair.hz();
    let median = |ci: usize, metric: &str, k: Kernel| med(rs, ci, metric, k);
    // A slice of `x` times the base slice, µs (at least 1).
    let slice_us = |x: f64| ((x * base_us as f64).round() as u64).max(1);
    let mut body = String::new();
    // In-share cells whose simulated wait is 0 (the waker preempts at once), and the count
    // of cells over their share.
    let mut zero_wait: Vec<usize> = Vec::new();
    let mut over_cells = 0;
    for (ci, c) in raw.cells.iter().enumerate() {
        let Workload::Latency {
            slice_x,
            load_slice_x,
            hogs,
            hb_groups,
            ..
        } = c.workload
        else {
            continue;
        };
        // The hogs' cells are pinned to CPU 0 whatever the vCPUs; hackbench spreads over
        // them, and the simulator models one runqueue.
        if hogs.is_none() && c.cpus_in(raw.cpus) != 1 {
            continue;
        }
        let Some(need) =
            median(ci, "need_pct", Kernel::Rust).or(median(ci, "need_pct", Kernel::Stock))
        else {
            continue;
        };
        // The load's slice as the cell ran it: the base slice at 1x, its own multiple
        // otherwise, the waker's in runs from before the load-slice fix (inherited across fork).
        let load_x = load_slice_x.unwrap_or(slice_x);
        let load_slice = if load_x == 1.0 {
            String::new()
        } else {
            format!("slice_us = {}\n", slice_us(load_x))
        };
        let others = match hogs {
            Some(h) => format!(
                "[[task]]\nname = \"hog\"\ncount = {}\n{load_slice}behaviour = {{ kind = \
                 \"hog\" }}\n",
                h.n
            ),
            None => format!(
                "[[task]]\nname = \"hackbench\"\ncount = {}\n{load_slice}behaviour = {{ kind \
                 = \"bursty\", run = {{ dist = \"exp\", mean_us = {SIM_HB_RUN_US} }}, sleep = \
                 {{ dist = \"exp\", mean_us = {SIM_HB_SLEEP_US} }} }}\n",
                40 * hb_groups
            ),
        };
        let tasks = format!(
            "[[task]]\nname = \"waker\"\nslice_us = {slice}\nbehaviour = {{ kind = \
             \"periodic\", period_us = {WAKER_PERIOD_US}, run_us = {run}, offset_us = 250 \
             }}\n\n{others}",
            slice = slice_us(slice_x),
            run = ((need / 100.0 * WAKER_PERIOD_US as f64).round() as u64).max(1),
        );
        let sim = simulate(&c.id(), hz, base_us, &tasks);
        let w = sim.as_ref().ok().and_then(|o| o.report.task("waker"));
        let k = |m: &str, k| median(ci, m, k).map_or("-".into(), fmt_num);
        let rd_rust = median(ci, "run_delay_avg_us", Kernel::Rust);
        let over = need_against_share(raw, rs, ci) == Some(verdict::Verdict::Above);
        if over {
            over_cells += 1;
        } else if w.is_some_and(|w| w.wakeup_latency_avg_ns == 0.0) {
            zero_wait.push(ci);
        }
        let share = w.map_or("-".into(), |w| {
            format!("{:.1}%", w.runtime_ns as f64 / SIM_DURATION_NS * 100.0)
        });
        let dash = || "-".to_string();
        let (avg, ratio, max) = match w {
            // Over its share the simulator's periodic task runs its overruns back to back
            // and counts each late from its due time: its waits are a backlog, not the
            // kernel's run delay. Only the shares compare.
            Some(_) if over => ("not compared (over its share)".into(), dash(), dash()),
            Some(w) => {
                let avg_us = w.wakeup_latency_avg_ns / 1e3;
                let ratio = rd_rust
                    .filter(|_| avg_us > 0.0)
                    .map(|r| format!("{:.2}", r / avg_us));
                let max = fmt_num(w.wakeup_latency_max_ns as f64 / 1e3);
                (fmt_num(avg_us), ratio.unwrap_or_else(dash), max)
            }
            None => (dash(), dash(), dash()),
        };
        let _ = writeln!(
            body,
            "| {} | {} | {} | {avg} | {ratio} | {} | {share} | {} | {max} |",
            c.label(),
            k("run_delay_avg_us", Kernel::Stock),
            k("run_delay_avg_us", Kernel::Rust),
            median(ci, "waker_share_pct", Kernel::Rust).map_or("-".into(), |v| format!("{v:.1}%")),
            k("lat_max_us", Kernel::Rust),
        );
    }
    if body.is_empty() {
        return body;
    }
    format!(
        "The simulator against the kernel (`eevdf-sim`, kernel-faithful, HZ={hz}, base slice \
         {base_us} µs, 5 s), for the latency cells: the same waker (its CPU per \
         wakeup as the kernel measured it, every 1 ms, its slice) beside the same hogs, or \
         beside hackbench modelled as 40 tasks a group running exponential {SIM_HB_RUN_US} µs \
         bursts between {SIM_HB_SLEEP_US} µs sleeps (one-vCPU runs only). The kernel's run delay per wakeup \
         (median over runs, rust) against the simulator's average wait, with their ratio; \
         the waker's share of the CPU; the kernel's largest timer-to-run latency against the \
         simulator's largest wait.\n\n| workload | run delay, stock (µs) | run delay, rust \
         (µs) | simulator's wait, avg (µs) | rust/simulator | share, rust | simulator's share \
         | max latency, rust (µs) | simulator's max wait (µs) |\n\
         |---|---|---|---|---|---|---|---|---|\n{body}{}",
        simulator_differences(raw, rs, &zero_wait, over_cells)
    )
}

/// Where the kernel and the simulator differ, from the rows: the kernel's run delay in the
/// in-share cells whose simulated wait is 0 (the wakeup path, which the simulator does not
/// model, and whatever else the kernel adds), with its intervals; and what the simulator
/// does not compare.
fn simulator_differences(raw: &Raw, rs: &[&Row], zero_wait: &[usize], over: usize) -> String {
    let mut t = String::from("\nWhere they differ:");
    let est = |ci: usize, k: Kernel| est_of(rs, ci, "run_delay_avg_us", k);
    for &ci in zero_wait {
        let show = |k| est(ci, k).map_or("-".into(), |e| verdict::show(&e, 2));
        let _ = write!(
            t,
            " in {}, where the simulated waker preempts at once (wait 0), the kernel's run \
             delay was {} µs on stock and {} µs on rust: the wakeup path (timer interrupt, \
             `try_to_wake_up()`, the switch), which the simulator does not model, and any \
             wait the kernel adds;",
            raw.cells[ci].label(),
            show(Kernel::Stock),
            show(Kernel::Rust),
        );
        if let (Some(a), Some(b)) = (est(ci, Kernel::Stock), est(ci, Kernel::Rust)) {
            if a.hi / a.lo.max(1e-9) > 10.0 || b.hi / b.lo.max(1e-9) > 10.0 {
                t.push_str(
                    " an interval spanning more than ten times its low end says the runs \
                     fall in two groups (some wakeups preempt at once, some wait): the median \
                     stands for neither;",
                );
            }
        }
    }
    if over > 0 {
        let _ = write!(
            t,
            " in the {over} cell(s) where the waker is over its share, the simulator's \
             periodic task runs its overruns back to back and counts each late from its due \
             time, so its waits are a backlog and are not compared; the shares are;"
        );
    }
    t.push_str(" and hackbench is a model in the simulator (bursty tasks without pipes).\n\n");
    t
}

/// What a latency cell's waker reported over a kernel's successful runs: its wakeups, and
/// their histograms, a run each (runs from before the histogram was kept have none).
#[derive(Default)]
struct WakerPool {
    wakeups: u64,
    hists: Vec<stats::Hist>,
}

/// The waker's pools by (cell, kernel).
type WakerPools = BTreeMap<(usize, Kernel), WakerPool>;

/// [`WakerPools`] of `raw`: the one pass over the waker's records that the pooled p99 and
/// the `bar` table of pools read.
fn waker_pools(raw: &Raw) -> WakerPools {
    let mut pools = WakerPools::new();
    for (b, ci, o) in cell_outcomes(raw).filter(|(_, _, o)| o.status == Status::Ok) {
        for r in &o.records {
            if let eevdf_guest::Record::Waker(w) = r {
                let p = pools.entry((ci, b.kernel)).or_default();
                p.wakeups += w.samples;
                if !w.hist.is_empty() {
                    p.hists.push(w.hist.clone());
                }
            }
        }
    }
    pools
}

/// The wakeups a latency cell's waker pooled over a kernel's successful runs.
pub(crate) fn wakeups_pooled(raw: &Raw, ci: usize, k: Kernel) -> u64 {
    waker_pools(raw).get(&(ci, k)).map_or(0, |p| p.wakeups)
}

/// `bar`: the wakeups each latency cell pooled a kernel, against the [`BAR_WAKEUPS`] that
/// its p99 row needs to be judged.
fn pools(raw: &Raw) -> String {
    let n = waker_pools(raw);
    let mut t = format!(
        "Wakeups pooled over the runs: a p99 row is judged on at least {BAR_WAKEUPS} a \
         kernel.\n\n| workload | stock | rust | p99 judged |\n|---|---|---|---|\n"
    );
    for (ci, c) in raw.cells.iter().enumerate() {
        if !matches!(c.workload, Workload::Latency { .. }) {
            continue;
        }
        let get = |k| n.get(&(ci, k)).map_or(0, |p| p.wakeups);
        let (s, r) = (get(Kernel::Stock), get(Kernel::Rust));
        let judged = if s.min(r) >= BAR_WAKEUPS {
            "yes"
        } else {
            "no: too few"
        };
        let _ = writeln!(t, "| {} | {s} | {r} | {judged} |", c.label());
    }
    t.push('\n');
    t
}

/// The waker's fair share of a CPU in latency cell `c`, %: 1/(n + 1) of CPU 0 beside `n`
/// hogs; against hackbench a nominal `cpus / (cpus + 40 g)`, hackbench's 40 tasks a group
/// spread over the vCPUs (they also sleep, so the waker's real share is somewhat larger).
fn waker_share_pct(c: &Cell, cpus: u32) -> Option<f64> {
    match &c.workload {
        Workload::Latency { hogs: Some(h), .. } => Some(100.0 / (h.n as f64 + 1.0)),
        Workload::Latency { hb_groups, .. } if cpus > 0 => {
            Some(100.0 * cpus as f64 / (cpus as f64 + 40.0 * *hb_groups as f64))
        }
        _ => None,
    }
}

/// The regime of a waker whose need (CPU % a period, its interval) stands against its fair
/// share as `v` ([`need_against_share`]): decided where the whole interval is on one side.
fn regime_said(v: verdict::Verdict) -> String {
    v.say("inside its share", "over its share")
}

/// The waker of cell `ci`'s need (rust's, or stock's) against its fair share; `None` where
/// either is unknown.
fn need_against_share(raw: &Raw, rs: &[&Row], ci: usize) -> Option<verdict::Verdict> {
    let c = &raw.cells[ci];
    let share = waker_share_pct(c, c.cpus_in(raw.cpus))?;
    est_of(rs, ci, "need_pct", Kernel::Rust)
        .or(est_of(rs, ci, "need_pct", Kernel::Stock))
        .map(|n| verdict::against(&n, share))
}

/// Per latency cell, which regime the waker is in: its need (CPU per wakeup over its
/// period) against its share. Over its share it leaves every sleep with negative lag and
/// waits for V to catch up; inside it, the slice decides how soon a wakeup preempts. Then
/// [`slice_moves`]: whether the waker's latency moved with its slice, load by load.
fn regimes(raw: &Raw, rs: &[&Row]) -> String {
    let mut t = String::new();
    for r in rs.iter().filter(|r| r.metric == "need_pct") {
        let c = &raw.cells[r.cell];
        let Some(share) = waker_share_pct(c, c.cpus_in(raw.cpus)) else {
            continue;
        };
        let need = |k| r.kernels.get(&k).map(|e: &Estimate| e.value);
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}%"));
        let ratio = need(Kernel::Rust)
            .or(need(Kernel::Stock))
            .map_or("-".into(), |n| format!("{:.2}", n / share));
        let regime = need_against_share(raw, rs, r.cell).map_or("-".into(), regime_said);
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {share:.1}% | {ratio} | {regime} |",
            c.label(),
            c.features.name(),
            pct(need(Kernel::Stock)),
            pct(need(Kernel::Rust)),
        );
    }
    if t.is_empty() {
        return t;
    }
    format!(
        "Which regime each latency cell is in: the waker's need (its CPU time per wakeup over \
         its 1 ms period, median) against its fair share of a CPU. Over its share, the waker \
         leaves each sleep with negative lag and waits for V to catch up; inside it, its \
         slice decides how soon its wakeup preempts. Whether the slice still moved its \
         latency is in the sentences below the table, from the rows.\n\n| workload | \
         features | need, stock | need, rust | share | need/share (rust) | regime |\n\
         |---|---|---|---|---|---|---|\n{t}\n{}",
        slice_moves(raw, rs)
    )
}

/// For each load beside which the waker ran at several slices (same load, features and
/// vCPUs): whether its average latency at the longest slice and at the shortest differ, by
/// interval, on each kernel, and on which side of its share the waker was.
fn slice_moves(raw: &Raw, rs: &[&Row]) -> String {
    // The load a latency cell names, without the waker's slice.
    let load_of = |ci: usize| -> Option<(String, f64)> {
        let c = &raw.cells[ci];
        let Workload::Latency {
            slice_x,
            load_slice_x,
            hb_groups,
            hb_loops,
            hogs,
        } = c.workload
        else {
            return None;
        };
        let key = format!(
            "{load_slice_x:?} {hb_groups} {hb_loops} {hogs:?} {} {}",
            c.cpus_in(raw.cpus),
            c.features.name()
        );
        Some((key, slice_x))
    };
    let cells = stats::first_seen(rs.iter().map(|r| r.cell));
    let loads = stats::first_seen(cells.iter().filter_map(|&ci| load_of(ci).map(|l| l.0)));
    let mut s = String::new();
    for load in loads {
        let mut at: Vec<(f64, usize)> = cells
            .iter()
            .filter_map(|&ci| load_of(ci).filter(|l| l.0 == load).map(|l| (l.1, ci)))
            .collect();
        at.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (Some(&(long_x, long)), Some(&(short_x, short))) = (at.first(), at.last()) else {
            continue;
        };
        if at.len() < 2 || long_x == short_x {
            continue;
        }
        let c = &raw.cells[long];
        let mut parts = Vec::new();
        for k in [Kernel::Stock, Kernel::Rust] {
            let (Some(a), Some(b)) = (
                est_of(rs, long, "lat_avg_us", k),
                est_of(rs, short, "lat_avg_us", k),
            ) else {
                continue;
            };
            let moved = verdict::between(&b, &a).say(
                "lower at the short slice: the slice moved it",
                "higher at the short slice: the slice moved it",
            );
            parts.push(format!(
                "on {}, {} µs at {long_x}x against {} µs at {short_x}x ({moved})",
                k.name(),
                verdict::show(&a, 0),
                verdict::show(&b, 0),
            ));
        }
        if parts.is_empty() {
            continue;
        }
        let side = |ci: usize| need_against_share(raw, rs, ci).map_or("-".into(), regime_said);
        let _ = writeln!(
            s,
            "- Beside {} ({}; the waker {} at {long_x}x, {} at {short_x}x), the waker's average \
             latency {}.",
            c.label()
                .split_once(", ")
                .map_or(c.label(), |(_, load)| load.to_string()),
            c.features.name(),
            side(long),
            side(short),
            parts.join("; ")
        );
    }
    if s.is_empty() {
        s
    } else {
        s + "\n"
    }
}

/// Whether the booted "rust" kernel had the project's core in its fair class, judged by the
/// ELIGIBLE sched_feat that the in-kernel integration adds (stock 6.12 has none).
fn integration_note(raw: &Raw) -> String {
    let rust_features = raw
        .boots
        .iter()
        .find(|b| b.kernel == Kernel::Rust && !b.info.features.is_empty())
        .map(|b| b.info.features.clone());
    match rust_features {
        Some(f)
            if f.split_whitespace()
                .any(|t| t == "ELIGIBLE" || t == "NO_ELIGIBLE") =>
        {
            "The rust kernel's features include ELIGIBLE: its fair class runs the Rust EEVDF core."
                .into()
        }
        Some(_) => "**The rust kernel's features lack ELIGIBLE: the in-kernel integration \
                    has not landed in this tree, so both kernels run 6.12's C EEVDF and the \
                    Rust/stock ratios measure the run-to-run noise of this set-up, not the Rust \
                    core.** EVDF and BIAS_ELIGIBLE cells are reported as not available."
            .into(),
        None => "No rust kernel boot in this run.".into(),
    }
}

pub struct ReportPaths<'a> {
    /// Prefix of image links in the Markdown (e.g. "" or "results/").
    pub img_prefix: &'a str,
}

impl ReportPaths<'_> {
    /// The report's `## Plots` section: each of `images` linked under this prefix; nothing
    /// without images.
    pub fn plots(&self, images: &[String]) -> String {
        let mut s = String::new();
        if !images.is_empty() {
            let _ = writeln!(s, "## Plots\n");
            for i in images {
                let _ = writeln!(s, "![{i}]({}{i})\n", self.img_prefix);
            }
        }
        s
    }
}

/// The whole Markdown report.
pub fn markdown(raw: &Raw, rows: &[Row], p: &ReportPaths<'_>, images: &[String]) -> String {
    let mut s = preamble(raw, "eevdf-lab results");
    // The rule as bar_for() applies it, from the same constants.
    let p99 = if raw.matrix == MatrixKind::Bar {
        format!(
            ", ≤ 1.00 with the upper end ≤ {:.2} for the p99 of the pooled wakeups",
            1.0 + BAR_P99_TOLERANCE
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "\n## Results\n\nEach entry is the median with its 95% interval `[lo, hi]` over all runs of \
         the cell on that kernel (boots × repetitions); † marks an interval whose coverage is \
         below 95% because there are fewer than 6 runs. rust/stock is the ratio of medians with \
         a bootstrap 95% interval. The bar column applies the project's goal: ≤ 1.00 with the \
         upper end ≤ {hi:.2} for times and latencies{p99}, ≥ 1.00 with the lower end ≥ \
         {lo:.2} for ping-pong switches/s, and the medians' order itself (rust ≤ stock) for \
         the instruction counts, which repeat under icount: pass; FAIL when the whole \
         interval is on the wrong side of 1.00 (for the instruction counts, when rust is \
         above stock); open when the interval is too wide to decide. Documentation/lab.md \
         explains each metric.\n",
        hi = 1.0 + BAR_TOLERANCE,
        lo = 1.0 - BAR_TOLERANCE,
    );
    s.push_str(&bar_summary(raw, rows));
    s.push_str(&tables(raw, rows));
    s.push_str(&p.plots(images));
    s
}

/// A row's bar column: pass; FAIL only when the interval excludes parity on the wrong
/// side (deterministic rows: the medians' order); otherwise a miss is "open", the
/// interval too wide to decide; empty where the bar does not apply.
fn bar_word(r: &Row) -> &'static str {
    let better = metrics::meta(&r.metric).1;
    match (r.bar_pass, r.ratio.as_ref()) {
        (Some(true), _) => "pass",
        (Some(false), _) if INSTRUCTION_METRICS.contains(&r.metric.as_str()) => "FAIL",
        (Some(false), Some(x)) if better == Better::Lower && x.lo > 1.0 => "FAIL",
        (Some(false), Some(x)) if better == Better::Higher && x.hi < 1.0 => "FAIL",
        (Some(false), _) => "open",
        (None, _) => "",
    }
}

/// The bar's verdict, computed from the rows: how many pass, fail and are open, and each
/// row that fails or is open, with its ratio's interval; an open row also says about how
/// many runs a side would decide it ([`verdict::against`] parity).
pub fn bar_summary(raw: &Raw, rows: &[Row]) -> String {
    let judged: Vec<(&Row, &str)> = rows
        .iter()
        .map(|r| (r, bar_word(r)))
        .filter(|(_, w)| !w.is_empty())
        .collect();
    if judged.is_empty() {
        return String::new();
    }
    let count = |w: &str| judged.iter().filter(|(_, x)| *x == w).count();
    let mut s = format!(
        "**The bar, computed from the rows below:** {} rows pass, {} FAIL, {} are open \
         (of the {} it applies to).\n",
        count("pass"),
        count("FAIL"),
        count("open"),
        judged.len()
    );
    for (r, w) in judged.iter().filter(|(_, w)| *w != "pass") {
        let c = &raw.cells[r.cell];
        let ratio = r.ratio.as_ref();
        let more = match (w, ratio) {
            (&"open", Some(x)) => format!(": {}", verdict::against(x, 1.0)),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "- {w}: {} ({}), `{}`, rust/stock {}{more}",
            c.label(),
            c.features.name(),
            r.metric,
            ratio.map_or("-".into(), |x| verdict::show(x, 3)),
        );
    }
    s.push('\n');
    s
}

/// The command that reproduces `raw`'s run: as recorded, or, for a run recorded before the
/// lab had subcommands (`eevdf-lab --bar ...`), the same run in today's form (`eevdf-lab
/// bar ...`); for a page that `report` made again from the run's raw.json
/// (`merge_command` of a single run), that command too.
pub fn reproduce(raw: &Raw) -> String {
    let run = reproduce_command(&raw.command, raw.matrix);
    if raw.merge_command.is_empty() || !raw.merged.is_empty() {
        return run;
    }
    format!(
        "{run}\n# this page, made again from that run's raw.json:\n{}",
        raw.merge_command
    )
}

/// [`reproduce`] of a run's recorded `command` of `matrix`.
fn reproduce_command(command: &str, matrix: MatrixKind) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let studies = ["run", "bar", "next", "seeds", "report"];
    if words.len() < 2 || studies.contains(&words[1]) {
        return command.to_string();
    }
    let study = match matrix {
        MatrixKind::Bar => "bar",
        MatrixKind::Next | MatrixKind::NextSmoke => "next",
        MatrixKind::Seeds | MatrixKind::SeedsSmoke => "seeds",
        MatrixKind::Quick | MatrixKind::Full | MatrixKind::Smoke => "run",
    };
    let mut out = vec![words[0], study];
    out.extend(
        words[1..]
            .iter()
            .copied()
            .filter(|w| !matches!(*w, "--bar" | "--next" | "--seeds")),
    );
    out.join(" ")
}

/// The report's start: its title, the run (when, which matrix, how to reproduce it), the
/// kernel pair and the kernels, and the boots that failed.
pub fn preamble(raw: &Raw, title: &str) -> String {
    let mut s = format!("# {title}\n\n");
    // Cells with their own vCPU count (`@Ncpu` in their IDs) ran on guests of that size.
    let own: BTreeSet<u32> = raw.cells.iter().filter_map(|c| c.cpus).collect();
    let own: Vec<String> = own.iter().map(u32::to_string).collect();
    let mut cpus = format!("{} vCPUs", raw.cpus);
    if !own.is_empty() {
        let _ = write!(
            cpus,
            " ({} for the cells marked `@Ncpu`)",
            own.join(" and ")
        );
    }
    if raw.merged.is_empty() {
        let _ = writeln!(
            s,
            "Run {} UTC, matrix `{:?}`, {} boots per kernel × {} repetitions per boot, {cpus} \
             ({}). Reproduce with:\n\n```sh\n{}\n```\n",
            raw.started_utc,
            raw.matrix,
            raw.boots_per_kernel,
            raw.inner_reps,
            TimingInfo::describe(raw.timing),
            reproduce(raw)
        );
    } else {
        s.push_str(&merged_runs(raw, &cpus));
    }
    let _ = writeln!(
        s,
        "Kernel pair: **{}** ({}).\n",
        raw.pair.name(),
        raw.pair.describe()
    );
    let _ = writeln!(s, "{}\n", integration_note(raw));
    if raw.merged.is_empty() {
        let _ = writeln!(s, "## Kernels\n\n{KERNELS_HEAD}|\n{KERNELS_RULE}|");
        for k in &raw.kernels {
            let b = raw.boots.iter().find(|b| b.kernel == k.kernel);
            let _ = writeln!(s, "{}|", kernel_row(raw, k, b));
        }
    } else {
        s.push_str(&merged_kernels(raw));
    }
    let failed_boots: Vec<String> = (raw.boots.iter().filter(|b| b.exit != Some(0)))
        .map(|b| {
            let build = raw.pair.build(b.kernel);
            format!(
                "{build} rep {} batch {} (exit {:?})",
                b.rep, b.batch, b.exit
            )
        })
        .collect();
    if !failed_boots.is_empty() {
        let _ = writeln!(s, "\n**Failed boots:** {}", failed_boots.join(", "));
    }
    s
}

/// The Kernels table's head and rule, without their closing `|`.
const KERNELS_HEAD: &str = "| kernel | build | CONFIG_SCHED_EEVDF_RUST | built from the current \
                            series | uname -r | sched features at boot ";
const KERNELS_RULE: &str = "|---|---|---|---|---|---";

/// A row of the Kernels table, without its closing `|`: kernel `k` as its run found it,
/// `uname -r` and the features from boot `b` of it.
fn kernel_row(raw: &Raw, k: &KernelInfo, b: Option<&BootRun>) -> String {
    format!(
        "| {} | `{}` | {} | {} | {} | `{}` ",
        k.kernel.name(),
        raw.pair.build(k.kernel),
        match k.config_sched_eevdf_rust {
            Some(true) => "y",
            Some(false) => "n",
            None => "?",
        },
        match k.build_current {
            Some(true) => "yes",
            Some(false) => "**no** (built from an older series or config)",
            None => "unknown",
        },
        b.map_or("-", |b| b.info.uname.as_str()),
        b.map_or("-", |b| b.info.features.as_str())
    )
}

/// A merged record's runs, for the page's header: each run (its start, command, boots and
/// the cells the page takes from it), how they merge, and every command to reproduce the
/// page.
fn merged_runs(raw: &Raw, cpus: &str) -> String {
    let mut s = format!(
        "Merged from {} runs of matrix `{:?}`, {cpus} ({}). A later run's cells replace an \
         earlier run's outcomes of the same cell IDs, cell by cell, on every kernel; every other \
         cell keeps its run's:\n\n",
        raw.merged.len(),
        raw.matrix,
        TimingInfo::describe(raw.timing)
    );
    for (n, m) in raw.merged.iter().enumerate() {
        let (kept, of) = (m.cells.len(), m.n_cells);
        let cells = if kept == of {
            format!("all {of} of its cells")
        } else if kept == 0 {
            format!("none of its {of} cells (later runs replaced them all)")
        } else {
            format!("{kept} of its {of} cells (a later run replaced the others)")
        };
        let ids = if n > 0 && !m.cells.is_empty() && m.cells.len() <= 12 {
            let ids: Vec<String> = m.cells.iter().map(|c| format!("`{c}`")).collect();
            format!(": {}", ids.join(", "))
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "{}. Run {} UTC (`{}`), {} boots per kernel × {} repetitions per boot; the page \
             takes {cells}{ids}.",
            n + 1,
            m.started_utc,
            m.raw,
            m.boots_per_kernel,
            m.inner_reps
        );
    }
    let mut cmds: Vec<String> = raw
        .merged
        .iter()
        .map(|m| reproduce_command(&m.command, raw.matrix))
        .collect();
    cmds.push(raw.merge_command.clone());
    let _ = writeln!(
        s,
        "\nReproduce with (the runs, then the report that merges their raw.json files):\n\n\
         ```sh\n{}\n```\n",
        cmds.join("\n")
    );
    s
}

/// A merged record's Kernels table: a row for each distinct kernel build as the table shows
/// it, with the runs that booted it, and a warning when a kernel's builds differ.
fn merged_kernels(raw: &Raw) -> String {
    let mut rows: Vec<(Kernel, String, Vec<usize>)> = Vec::new();
    for (n, m) in raw.merged.iter().enumerate() {
        let boots = &raw.boots[m.first_boot..m.first_boot + m.n_boots];
        for k in &m.kernels {
            let b = boots.iter().find(|b| b.kernel == k.kernel);
            let row = kernel_row(raw, k, b);
            match rows.iter_mut().find(|(_, r, _)| *r == row) {
                Some((_, _, runs)) => runs.push(n + 1),
                None => rows.push((k.kernel, row, vec![n + 1])),
            }
        }
    }
    let mut s = format!("## Kernels\n\n{KERNELS_HEAD}| runs |\n{KERNELS_RULE}|---|\n");
    for (_, row, runs) in &rows {
        let runs: Vec<String> = runs.iter().map(usize::to_string).collect();
        let _ = writeln!(s, "{row}| {} |", runs.join(", "));
    }
    let builds = |k: Kernel| rows.iter().filter(|r| r.0 == k).count();
    let differ = stats::first_seen(rows.iter().filter(|r| builds(r.0) > 1).map(|r| r.0.name()));
    if !differ.is_empty() {
        let _ = writeln!(
            s,
            "\n**The merged runs booted different builds of the {} kernel** (the rows above): \
             each cell's numbers come from the run that ran it, on that run's build, so a \
             comparison across cells of different runs compares the builds too.",
            differ.join(" and ")
        );
    }
    s
}

/// A kernel's successful runs of cell `id`.
pub(crate) fn ok_runs<'a>(
    raw: &'a Raw,
    id: &'a str,
    k: Kernel,
) -> impl Iterator<Item = &'a Outcome> {
    raw.boots
        .iter()
        .filter(move |b| b.kernel == k)
        .flat_map(|b| &b.outcomes)
        .filter(move |o| o.id == id && o.status == Status::Ok)
}

/// Median of each quantile over every waker record of a cell on a kernel.
fn median_quantiles(raw: &Raw, cell: usize, k: Kernel) -> Vec<(f64, f64)> {
    let id = raw.cells[cell].id();
    let mut per_p: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for o in ok_runs(raw, &id, k) {
        for r in &o.records {
            if let eevdf_guest::Record::Waker(w) = r {
                for &(p, v) in &w.quantiles {
                    per_p.entry((p * 1000.0) as u64).or_default().push(v);
                }
            }
        }
    }
    per_p
        .into_iter()
        .map(|(p, v)| (p as f64 / 1000.0, stats::median(&v)))
        .collect()
}

/// Write the PNGs into `dir`; returns their file names.
pub fn plots(raw: &Raw, rows: &[Row], dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut latency_png = |name: String, title: &str, panels: &[(String, Vec<plot::Curve>)]| {
        plot::latency_panels(title, panels, &dir.join(&name))?;
        names.push(name);
        anyhow::Ok(())
    };
    // Kernel `k`'s curve `i`, `name`, of latency cell `ci`: none where it has no quantiles.
    let curve = |i, name: String, ci, k| {
        let points = median_quantiles(raw, ci, k);
        (!points.is_empty()).then(|| plot::Curve::nth(i, name, points))
    };
    // The latency cells: index, slices (the waker's, the load's) and whether beside hogs.
    let lat: Vec<(usize, (f64, Option<f64>), bool)> = (raw.cells.iter().enumerate())
        .filter_map(|(i, c)| match c.workload {
            Workload::Latency {
                slice_x,
                load_slice_x,
                hogs,
                ..
            } => Some((i, (slice_x, load_slice_x), hogs.is_some())),
            _ => None,
        })
        .collect();
    let booted = |k: Kernel| raw.boots.iter().any(|b| b.kernel == k);
    // A panel a pair of slices, a curve a feature set.
    let slices = stats::first_seen(lat.iter().filter(|l| !l.2).map(|l| l.1));
    for k in [Kernel::Rust, Kernel::Stock] {
        if slices.is_empty() || !booted(k) {
            continue;
        }
        let panels: Vec<(String, Vec<plot::Curve>)> = (slices.iter())
            .map(|&(x, l)| {
                let curves = (FeatureSet::seeds().iter().enumerate())
                    .filter_map(|(fi, f)| {
                        let at = |c: &&(usize, _, bool)| {
                            !c.2 && c.1 == (x, l) && &raw.cells[c.0].features == f
                        };
                        curve(fi, f.name().to_string(), lat.iter().find(at)?.0, k)
                    })
                    .collect();
                (format!("{} (x the base slice)", slices_name(x, l)), curves)
            })
            .collect();
        let title = format!(
            "{} kernel ({}): waker wakeup latency under hackbench (median of runs)",
            k.name(),
            raw.pair.build(k)
        );
        latency_png(format!("latency_{}.png", k.name()), &title, &panels)?;
    }
    // The in-share cells (the waker pinned beside hogs): one panel a kernel, a curve a slice.
    let panels: Vec<(String, Vec<plot::Curve>)> = [Kernel::Stock, Kernel::Rust]
        .into_iter()
        .filter(|&k| booted(k))
        .map(|k| {
            let in_share = lat.iter().filter(|l| l.2).enumerate();
            let curves: Vec<plot::Curve> = in_share
                .filter_map(|(j, &(ci, (x, l), _))| curve(j, slices_name(x, l), ci, k))
                .collect();
            (
                format!("{} kernel ({})", k.name(), raw.pair.build(k)),
                curves,
            )
        })
        .filter(|(_, curves)| !curves.is_empty())
        .collect();
    if !panels.is_empty() {
        let title = "the waker inside its share, beside 2 hogs on CPU 0: wakeup latency by slices";
        latency_png("latency_in_share.png".into(), title, &panels)?;
    }
    // Quantile-quantile: every latency cell both kernels ran, stock's quantiles against
    // rust's (medians over the runs at each percentile).
    let qq: Vec<plot::QqPanel> = lat
        .iter()
        .filter_map(|&(ci, _, _)| {
            let rust = median_quantiles(raw, ci, Kernel::Rust);
            let pts: Vec<(f64, f64, f64)> = median_quantiles(raw, ci, Kernel::Stock)
                .into_iter()
                .filter_map(|(p, s)| Some((p, s, rust.iter().find(|q| (q.0 - p).abs() < 1e-9)?.1)))
                .collect();
            let c = &raw.cells[ci];
            (!pts.is_empty()).then(|| (format!("{} {}", c.label(), c.features.name()), pts))
        })
        .collect();
    if !qq.is_empty() {
        let name = "qq.png".to_string();
        plot::qq_panels(
            &format!(
                "wakeup latency, rust against stock, quantile by quantile ({} pair; median of \
                 runs)",
                raw.pair.name()
            ),
            &qq,
            &dir.join(&name),
        )?;
        names.push(name);
    }
    // Ratios of performance metrics only: a ratio of two small share errors or of two
    // latency extremes says little.
    let perf_rows = rows.iter().filter(|r| {
        metrics::meta(&r.metric).1 != Better::Neither
            && !["max_err_pp", "lat_min_us", "lat_max_us"].contains(&r.metric.as_str())
    });
    names.extend(ratio_png(
        perf_rows,
        &format!(
            "rust/stock ({} pair): ratio of medians, 95% bootstrap interval",
            raw.pair.name()
        ),
        dir,
        "ratios.png",
    )?);
    Ok(names)
}

/// The rust/stock ratios of `rows` (those that have one) as a ratio plot `name` in `dir`;
/// its name, or None when no row has a ratio.
pub fn ratio_png<'a>(
    rows: impl Iterator<Item = &'a Row>,
    title: &str,
    dir: &Path,
    name: &str,
) -> Result<Option<String>> {
    let ratio_rows: Vec<plot::RatioRow> = rows
        .filter_map(|r| {
            let x = r.ratio.as_ref()?;
            Some(plot::RatioRow {
                label: format!("{} {}", r.cell_id, r.metric),
                value: x.value,
                lo: x.lo,
                hi: x.hi,
            })
        })
        .collect();
    if ratio_rows.is_empty() {
        return Ok(None);
    }
    plot::ratio_plot(title, &ratio_rows, &dir.join(name))?;
    Ok(Some(name.to_string()))
}

/// The report.md, summary.json, plots and (if asked) the results page of a run of the main
/// matrix or the bar; its tables and the bar's summary are printed.
pub fn finish(raw: &Raw, dir: &Path, results_page: Option<&Path>) -> Result<()> {
    let rows = summarise(raw);
    let images = plots(raw, &rows, dir)?;
    write_report(
        dir,
        &rows,
        &images,
        results_page,
        "<!-- Generated by eevdf-lab (run or bar) --results-page from a real run: do not \
         edit. -->\n",
        |p| markdown(raw, &rows, p, &images),
    )?;
    println!(
        "\nkernel pair: {} ({})\n\n{}",
        raw.pair.name(),
        raw.pair.describe(),
        tables(raw, &rows)
    );
    print!("{}", bar_summary(raw, &rows));
    println!("report: {}", dir.join("report.md").display());
    Ok(())
}

/// Write a run's report: report.md (returned) and `summary` as summary.json into `dir`,
/// and, if asked, the results page, with the plots (`images`, in `dir`) copied to a
/// directory named after the page beside it (results.md's to results/, bar.md's to bar/,
/// seeds.md's to seeds/). `md` renders the report with an image prefix; `header` opens the
/// page.
pub fn write_report(
    dir: &Path,
    summary: &impl Serialize,
    images: &[String],
    results_page: Option<&Path>,
    header: &str,
    md: impl Fn(&ReportPaths<'_>) -> String,
) -> Result<String> {
    let report = md(&ReportPaths { img_prefix: "" });
    std::fs::write(dir.join("report.md"), &report)?;
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_string_pretty(summary)?,
    )?;
    if let Some(page) = results_page {
        let stem = page
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("results")
            .to_string();
        let img_dir = page.parent().unwrap_or(Path::new(".")).join(&stem);
        let img_prefix = format!("{stem}/");
        if !images.is_empty() {
            std::fs::create_dir_all(&img_dir)
                .with_context(|| format!("creating {}", img_dir.display()))?;
        }
        for i in images {
            std::fs::copy(dir.join(i), img_dir.join(i)).with_context(|| format!("copying {i}"))?;
        }
        let page_md = md(&ReportPaths {
            img_prefix: &img_prefix,
        });
        std::fs::write(page, format!("{header}{page_md}"))
            .with_context(|| format!("writing {}", page.display()))?;
        eprintln!("==> eevdf-lab: wrote {}", page.display());
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::main_matrix::cells as matrix;
    use crate::verdict::has;
    use eevdf_guest::Record;

    /// The pooled p99 row follows each p99 row where the waker sent its histogram, and the
    /// bar judges it in --bar only on a pool of BAR_WAKEUPS wakeups a kernel.
    #[test]
    fn pooled_p99_rows() {
        // Twelve runs a kernel of `samples` wakeups each, rust's 2% earlier.
        let raw_of = |samples: u64| {
            latency_run(MatrixKind::Bar, 12, |k, _, _| {
                let scale = if k == Kernel::Rust { 0.98 } else { 1.0 };
                let ns: Vec<u64> = (1..=samples)
                    .map(|i| (i as f64 * 400.0 * scale) as u64)
                    .collect();
                let mut w = waker(37.0);
                if let Record::Waker(r) = &mut w {
                    r.samples = samples;
                    r.hist = eevdf_guest::latency_histogram(&ns);
                }
                w
            })
        };
        let raw = raw_of(5000);
        let id = raw.cells[0].id();
        let rows = summarise(&raw);
        let i = rows
            .iter()
            .position(|r| r.cell_id == id && r.metric == "lat_p99_us")
            .unwrap();
        let pooled = &rows[i + 1];
        assert_eq!(pooled.metric, "lat_p99_pooled_us");
        let ratio = pooled.ratio.unwrap();
        assert!((ratio.value - 0.98).abs() < 0.03, "{ratio:?}");
        assert_eq!(
            pooled.bar_pass,
            Some(true),
            "60,000 wakeups a kernel, rust earlier"
        );
        let few = summarise(&raw_of(1000));
        let pooled = few
            .iter()
            .find(|r| r.cell_id == id && r.metric == "lat_p99_pooled_us")
            .unwrap();
        assert_eq!(pooled.bar_pass, None, "12,000 wakeups: not judged");
    }

    fn waker(run_avg_us: f64) -> Record {
        Record::Waker(eevdf_guest::WakerResult {
            run_avg_us,
            ..parse::waker_for_test()
        })
    }

    /// A two-vCPU run of `kind`'s EEVDF latency cells, `boots` boots a kernel, every boot
    /// running each cell once with the waker's record `record(kernel, cell, boot)`.
    fn latency_run(
        kind: MatrixKind,
        boots: u32,
        record: impl Fn(Kernel, &Cell, u32) -> Record,
    ) -> Raw {
        let cells: Vec<Cell> = matrix(kind, &[Experiment::Latency])
            .into_iter()
            .filter(|c| c.features == FeatureSet::eevdf())
            .collect();
        let boots = [Kernel::Rust, Kernel::Stock]
            .into_iter()
            .flat_map(|k| (0..boots).map(move |i| (k, i)))
            .map(|(k, i)| {
                let outcomes = cells
                    .iter()
                    .map(|c| {
                        let mut o = Outcome::new(&c.id(), 0);
                        o.records.push(record(k, c, i));
                        o
                    })
                    .collect();
                BootRun::for_test(k, outcomes)
            })
            .collect();
        Raw {
            cpus: 2,
            boots,
            ..Raw::for_test(kind, cells)
        }
    }

    /// Whether the waker's latency moved with its slice, beside each load: computed from
    /// the 10x and 0.1x rows, undecided where they are the same, "moved" where apart.
    #[test]
    fn the_slice_moves_the_latency_only_where_the_rows_say() {
        let raw_with = |short_avg_us: f64| {
            // Six boots a kernel: the fewest whose intervals have their 95%.
            latency_run(MatrixKind::Quick, 6, |_, c, i| {
                let Workload::Latency { slice_x, .. } = c.workload else {
                    unreachable!()
                };
                let avg = if slice_x < 1.0 { short_avg_us } else { 2000.0 };
                Record::Waker(eevdf_guest::WakerResult {
                    avg_us: avg + f64::from(i),
                    run_avg_us: 37.0,
                    ..parse::waker_for_test()
                })
            })
        };
        let said = |raw: &Raw| {
            let rows = summarise(raw);
            let rs: Vec<&Row> = rows.iter().collect();
            slice_moves(raw, &rs)
        };
        let t = said(&raw_with(1500.0));
        has(&t, "- Beside load 1x (hackbench -g 2 -l 70) (EEVDF; the waker over its share at 10x, over its share at 0.1x), the waker's average latency on stock, 2002 [2000, 2005] µs at 10x against 1502 [1500, 1505] µs at 0.1x (lower at the short slice: the slice moved it)");
        has(
            &t,
            "- Beside load 1x (pinned beside 2 hogs on CPU 0) (EEVDF; the waker inside its share",
        );
        // The same latency at every slice: undecided, not moved.
        let t = said(&raw_with(2000.0));
        assert!(!t.contains("moved it"), "{t}");
        has(&t, "(undecided: the intervals overlap");
    }

    /// The regime table: the waker beside two hogs needs 3.7% of a CPU against a share of
    /// 33%; against hackbench -g 2 on 2 vCPUs it needs the same 3.7% against a nominal
    /// 2.4%.
    #[test]
    fn regimes_say_which_side_of_the_share() {
        // Six boots a kernel: the fewest whose interval has its 95% (one boot leaves the
        // regime undecided, checked at the end).
        let mut raw = latency_run(MatrixKind::Quick, 6, |_, _, _| waker(37.0));
        let t = tables(&raw, &summarise(&raw));
        let line = |label: &str| {
            t.lines()
                .find(|l| l.starts_with(&format!("| {label} |")) && l.contains("its share"))
                .unwrap_or_else(|| panic!("no regime row for {label} in\n{t}"))
                .to_string()
        };
        let hogs = line("waker 0.1x, load 1x (pinned beside 2 hogs on CPU 0)");
        has(&hogs, "| 3.7% | 3.7% | 33.3% | 0.11 | inside its share");
        let hb = line("waker 0.1x, load 1x (hackbench -g 2 -l 70)");
        has(&hb, "| 2.4% | 1.52 | over its share");
        // The simulator against the kernel, for the in-share cells: the same waker (37 us
        // every 1 ms) waits nothing at 0.1x (its slice preempts a hog at once), and at 10x
        // behind a hog's protected slice at times.
        let sim = |label: &str| {
            t.lines()
                .skip_while(|l| !l.starts_with("The simulator against the kernel"))
                .find(|l| l.starts_with(&format!("| {label} |")))
                .unwrap_or_else(|| panic!("no simulator row for {label} in\n{t}"))
                .to_string()
        };
        // Columns: run delay stock, rust, the simulator's average wait, rust/simulator,
        // the shares, the maxima.
        let short = sim("waker 0.1x, load 1x (pinned beside 2 hogs on CPU 0)");
        has(&short, "| 10.0 | 0.000 | - |");
        assert!(short.ends_with("| 0.000 |"), "{short}");
        let long = sim("waker 10x, load 1x (pinned beside 2 hogs on CPU 0)");
        assert!(!long.contains("| 0.000 | - |"), "{long}");
        // The prose says where the simulated wait is 0 what the kernel's delay was.
        has(
            &t,
            "in waker 0.1x, load 1x (pinned beside 2 hogs on CPU 0), where the simulated waker \
             preempts at once (wait 0), the kernel's run delay was 10.00 [10.00, 10.00] µs",
        );
        assert!(!t.contains("where the waker is over its share"), "{t}");
        // On one vCPU the hackbench cells are simulated too, and the waker is over its
        // share there: the simulator's backlog is not compared.
        raw.cpus = 1;
        let t1 = tables(&raw, &summarise(&raw));
        let hb_sim = t1
            .lines()
            .skip_while(|l| !l.starts_with("The simulator against the kernel"))
            .find(|l| l.starts_with("| waker 0.1x, load 1x (hackbench -g 2 -l 70) |"))
            .unwrap_or_else(|| panic!("{t1}"));
        has(hb_sim, "not compared (over its share)");
        has(&t1, "in the 3 cell(s) where the waker is over its share");
        raw.cpus = 2;
        // One boot a kernel: the regime is undecided, not guessed from a point.
        raw.boots.retain(|b| b.rep == 0);
        raw.boots.dedup_by_key(|b| b.kernel);
        let t = tables(&raw, &summarise(&raw));
        has(&t, "| 0.11 | undecided: 1 runs a side");
    }

    /// The boots' ping-pong rates, rust's and stock's alternately.
    fn alternating(rust: &[f64], stock: &[f64]) -> Vec<(Kernel, f64)> {
        let both = rust.iter().zip(stock);
        both.flat_map(|(&r, &s)| [(Kernel::Rust, r), (Kernel::Stock, s)])
            .collect()
    }

    fn raw_with(rates: &[(Kernel, f64)]) -> Raw {
        let cells = matrix(MatrixKind::Smoke, &[Experiment::Throughput]);
        let pp = cells
            .iter()
            .find(|c| c.id().starts_with("pingpong"))
            .unwrap()
            .id();
        let lat = matrix(MatrixKind::Quick, &[Experiment::Latency]);
        let mut all = cells.clone();
        all.extend(
            lat.into_iter()
                .filter(|c| c.features == FeatureSet::evdf())
                .take(1),
        );
        let evdf_id = all.last().unwrap().id();
        Raw {
            boots_per_kernel: 3,
            cpus: 2,
            bootstrap_resamples: 500,
            boots: rates
                .iter()
                .map(|&(k, r)| {
                    BootRun::for_test(
                        k,
                        vec![Outcome::pingpong_for_test(&pp, r), {
                            let mut o = Outcome::new(&evdf_id, 0);
                            o.status = Status::Unavailable("ELIGIBLE".into());
                            o
                        }],
                    )
                })
                .collect(),
            ..Raw::for_test(MatrixKind::Smoke, all)
        }
    }

    /// `raw`'s whole report, with the plots `pngs`, as report.md has it.
    fn page_of(raw: &Raw, pngs: &[String]) -> String {
        markdown(raw, &summarise(raw), &ReportPaths { img_prefix: "" }, pngs)
    }

    #[test]
    fn rows_ratios_and_bar() {
        let raw = raw_with(&alternating(
            &[1010.0, 1011.0, 1012.0],
            &[1000.0, 1001.0, 1002.0],
        ));
        let rows = summarise(&raw);
        let pp = rows
            .iter()
            .find(|r| r.metric == "pingpong_switches_per_s")
            .unwrap();
        assert_eq!(pp.kernels[&Kernel::Rust].value, 1011.0);
        let ratio = pp.ratio.unwrap();
        assert!((ratio.value - 1011.0 / 1001.0).abs() < 1e-12);
        assert_eq!(
            pp.bar_pass,
            Some(true),
            "higher is better and the interval is above 0.98"
        );
        let evdf = rows.iter().find(|r| r.cell_id.ends_with("/EVDF")).unwrap();
        assert_eq!(evdf.unavailable[&Kernel::Rust], "ELIGIBLE");
        let t = tables(&raw, &rows);
        assert!(t.contains("### Throughput") && t.contains("| pass |"));
        assert!(t.contains("not available on this kernel (no ELIGIBLE)"));
        assert!(t.contains("†"), "3 runs: coverage below 95% is flagged");
        let md = page_of(&raw, &["ratios.png".into()]);
        assert!(md.contains("```sh\neevdf-lab\n```") && md.contains("![ratios.png](ratios.png)"));
        assert!(md.contains("**The bar, computed from the rows below:** 1 rows pass, 0 FAIL"));
    }

    #[test]
    fn reproduce_speaks_subcommands() {
        let mut raw = raw_with(&[]);
        let case = |raw: &mut Raw, kind, cmd: &str| {
            raw.matrix = kind;
            raw.command = cmd.into();
            reproduce(raw)
        };
        assert_eq!(
            case(
                &mut raw,
                MatrixKind::Bar,
                "target/release/eevdf-lab --bar --no-build --results-page P"
            ),
            "target/release/eevdf-lab bar --no-build --results-page P"
        );
        assert_eq!(
            case(&mut raw, MatrixKind::NextSmoke, "eevdf-lab --next --smoke"),
            "eevdf-lab next --smoke"
        );
        assert_eq!(
            case(&mut raw, MatrixKind::Quick, "eevdf-lab --no-build"),
            "eevdf-lab run --no-build"
        );
        assert_eq!(
            case(&mut raw, MatrixKind::Seeds, "eevdf-lab seeds --no-build"),
            "eevdf-lab seeds --no-build"
        );
        // A page made again by `report` from the run's raw.json names both commands.
        raw.merge_command = "eevdf-lab report R.json --results-page P".into();
        assert_eq!(
            case(&mut raw, MatrixKind::Bar, "eevdf-lab bar --no-build"),
            "eevdf-lab bar --no-build\n# this page, made again from that run's raw.json:\n\
             eevdf-lab report R.json --results-page P"
        );
    }

    #[test]
    fn bar_summary_follows_the_rows() {
        // Ping-pong switches/s: higher is better. Rust ahead by 1%: pass; behind by 1%
        // with a tight interval: FAIL, named with its interval; the two within each
        // other's spread: open, with the runs that would decide.
        let runs = |rust: [f64; 6], stock: [f64; 6]| {
            let raw = raw_with(&alternating(&rust, &stock));
            let rows = summarise(&raw);
            bar_summary(&raw, &rows)
        };
        let even = [1000.0, 1001.0, 1002.0, 1003.0, 1004.0, 1005.0];
        let ahead = even.map(|x| x * 1.01);
        let behind = even.map(|x| x * 0.99);
        let t = runs(ahead, even);
        has(&t, "1 rows pass, 0 FAIL, 0 are open");
        let t = runs(behind, even);
        has(&t, "0 rows pass, 1 FAIL, 0 are open");
        has(&t, "- FAIL: pipe ping-pong");
        has(&t, "`pingpong_switches_per_s`, rust/stock 0.990 [");
        let spread = [990.0, 995.0, 1000.0, 1003.0, 1010.0, 1015.0];
        let t = runs(spread, even);
        has(&t, "0 rows pass, 0 FAIL, 1 are open");
        has(&t, "undecided: the intervals overlap");
    }

    /// The bar's rules by matrix: p99 is judged in --bar only (upper end 1.05), the means
    /// everywhere (1.02), the run delay too; shares never.
    #[test]
    fn bar_rules_by_matrix() {
        use MatrixKind::{Bar, Quick};
        // (matrix, metric, the interval's upper end, the bar); the median is 0.99.
        for (kind, metric, hi, want) in [
            (Quick, "lat_p99_us", 1.04, None),
            (Bar, "lat_p99_us", 1.04, None),
            (Quick, "lat_p99_pooled_us", 1.04, None),
            (Bar, "lat_p99_pooled_us", 1.04, Some(true)),
            (Bar, "lat_p99_pooled_us", 1.06, Some(false)),
            (Bar, "lat_avg_us", 1.04, Some(false)),
            (Quick, "run_delay_avg_us", 1.01, Some(true)),
            (Bar, "share_0", 1.04, None),
            (Quick, "pingpong_insns_per_switch", 1.04, Some(true)),
        ] {
            let r = verdict::est(0.99, 0.98, hi, 12);
            assert_eq!(bar_for(kind, metric, &r), want, "{kind:?} {metric} {hi}");
        }
    }

    /// Under icount on one vCPU the ping-pong also gets its instructions a switch, whose bar
    /// is rust <= stock; with realtime guest time, or two vCPUs, it does not.
    #[test]
    fn insnprof_row_follows_the_ping_pong_and_carries_the_bar() {
        let mut raw = raw_with(&[(Kernel::Rust, 30000.0), (Kernel::Stock, 30100.0)]);
        raw.timing = Some(TimingInfo::Icount { shift: 3 });
        raw.cpus = 1;
        let prof = |k, fair, rust| InsnProf {
            kernel: k,
            fair,
            rust,
            kernel_total: 4100.0,
            switches: 27000,
        };
        let rows = |raw: &Raw| summarise(raw);
        assert!(!rows(&raw).iter().any(|r| r.metric == insnprof::METRIC));
        raw.insnprof = vec![
            prof(Kernel::Rust, 687.7, 336.3),
            prof(Kernel::Stock, 1030.0, 0.0),
        ];
        let rs = rows(&raw);
        let i = rs
            .iter()
            .position(|r| r.metric == "pingpong_insns_per_switch")
            .unwrap();
        let row = &rs[i + 1];
        assert_eq!(row.metric, insnprof::METRIC);
        assert_eq!(row.kernels[&Kernel::Rust].value, 1024.0);
        assert_eq!(row.bar_pass, Some(true), "1024 <= 1030");
        raw.insnprof[1].fair = 1000.0;
        let rs = rows(&raw);
        let row = rs.iter().find(|r| r.metric == insnprof::METRIC).unwrap();
        assert_eq!(row.bar_pass, Some(false), "1024 > 1000");
    }

    #[test]
    fn instructions_per_switch_rows_and_their_bar() {
        let rates = alternating(&[30000.0, 30001.0, 30002.0], &[30100.0, 30101.0, 30102.0]);
        let icount_raw = |rates: &[(Kernel, f64)]| {
            let mut raw = raw_with(rates);
            raw.timing = Some(TimingInfo::Icount { shift: 3 });
            raw.cpus = 1;
            raw
        };
        let insns_row = |raw: &Raw| {
            summarise(raw)
                .into_iter()
                .find(|r| r.metric == "pingpong_insns_per_switch")
                .expect("an instructions row")
        };
        let raw = icount_raw(&rates);
        let insns = insns_row(&raw);
        let rust = insns.kernels[&Kernel::Rust].value;
        assert!((rust - 1e9 / (8.0 * 30001.0)).abs() < 1e-6, "{rust}");
        assert_eq!(insns.bar_pass, Some(false), "rust executes more a switch");
        let t = tables(&raw, &summarise(&raw));
        let line = t
            .lines()
            .find(|l| l.contains("pingpong_insns_per_switch"))
            .unwrap();
        assert!(line.ends_with("| FAIL |"), "{line}");
        // Faster rust: pass.
        let swapped: Vec<(Kernel, f64)> = rates
            .iter()
            .map(|&(k, v)| (k, if k == Kernel::Rust { v + 200.0 } else { v }))
            .collect();
        let mut raw = icount_raw(&swapped);
        assert_eq!(insns_row(&raw).bar_pass, Some(true));
        for (timing, cpus) in [(Some(TimingInfo::Realtime), 1), (raw.timing, 2)] {
            raw.timing = timing;
            raw.cpus = cpus;
            assert!(!summarise(&raw)
                .iter()
                .any(|r| r.metric == "pingpong_insns_per_switch"));
        }
    }

    #[test]
    fn report_names_the_pair_and_old_raw_loads() {
        let mut raw = raw_with(&[(Kernel::Rust, 1010.0), (Kernel::Stock, 1000.0)]);
        raw.pair = Pair::Distro;
        raw.kernels = [Kernel::Rust, Kernel::Stock]
            .into_iter()
            .map(|k| KernelInfo {
                kernel: k,
                image: String::new(),
                config_sched_eevdf_rust: Some(k == Kernel::Rust),
                build_current: Some(true),
            })
            .collect();
        raw.boots[1].exit = Some(1);
        let md = page_of(&raw, &[]);
        assert!(md.contains("Kernel pair: **distro** (Debian's 6.12 config"));
        assert!(
            md.contains("| rust | `distro` | y |") && md.contains("| stock | `distro-stock` | n |")
        );
        assert!(md.contains("**Failed boots:** distro-stock rep 0"));
        let json = serde_json::to_string(&raw).unwrap();
        assert!(json.contains("\"pair\":\"distro\""));
        // A raw.json from before the field: the tiny pair.
        let old = json.replace("\"pair\":\"distro\",", "");
        assert!(!old.contains("\"pair\""));
        let back: Raw = serde_json::from_str(&old).unwrap();
        assert_eq!(back.pair, Pair::Tiny);
        let md = page_of(&back, &[]);
        assert!(
            md.contains("Kernel pair: **tiny** (tinyconfig") && md.contains("| rust | `rust` |")
        );
    }

    #[test]
    fn bar_rules() {
        let pass = |b, value, lo, hi| bar_pass(b, &verdict::est(value, lo, hi, 6), BAR_TOLERANCE);
        assert_eq!(pass(Better::Lower, 0.99, 0.97, 1.01), Some(true));
        assert_eq!(pass(Better::Lower, 0.99, 0.97, 1.03), Some(false));
        assert_eq!(pass(Better::Lower, 1.001, 0.99, 1.01), Some(false));
        assert_eq!(pass(Better::Higher, 1.0, 0.985, 1.02), Some(true));
        assert_eq!(pass(Better::Higher, 1.0, 0.97, 1.02), Some(false));
        assert_eq!(pass(Better::Neither, 1.0, 0.97, 1.02), None);
    }

    /// The page is the header and the report with the page's image prefix; summary.json is
    /// the summary given; a run without plots gets no plots directory beside its page.
    #[test]
    fn write_report_writes_the_page_under_its_header() {
        let dir = std::env::temp_dir().join(format!("eevdf-lab-report-{}", std::process::id()));
        let page = dir.join("page.md");
        std::fs::create_dir_all(&dir).unwrap();
        let md = |p: &ReportPaths<'_>| format!("# report ({})\n", p.img_prefix);
        let report = write_report(&dir, &[1, 2], &[], Some(&page), "<!-- h -->\n", md).unwrap();
        assert_eq!(report, "# report ()\n");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(read("report.md"), report);
        assert_eq!(read("page.md"), "<!-- h -->\n# report (page/)\n");
        assert_eq!(
            read("summary.json").split_whitespace().collect::<String>(),
            "[1,2]"
        );
        assert!(!dir.join("page").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
