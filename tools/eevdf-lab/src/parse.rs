//! Parsing a boot's guest output (the protocol `plan::guest_script` prints) into cell
//! outcomes, and outcomes into named metrics.

use crate::plan::{Cell, Workload, MIXED_WARMUP_MS};
use crate::protocol::{CellEvent, CellLine};
use eevdf_guest::{Record, RtAppResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the guest said about itself at the start of a boot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BootInfo {
    pub uname: String,
    pub cpus: u32,
    pub base_slice_ns: u64,
    /// `/sys/kernel/debug/sched/features` at boot.
    pub features: String,
    /// The guest script ran to its end.
    pub done: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Status {
    #[default]
    Ok,
    /// The kernel lacks the named sched_feat.
    Unavailable(String),
    /// The workload exited non-zero, or printed no result.
    Failed(String),
}

/// One run of one cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub id: String,
    pub rep: u32,
    pub status: Status,
    pub records: Vec<Record>,
    /// hackbench's "Time:" lines, seconds.
    pub hackbench_s: Vec<f64>,
    /// What sched_eevdf's counters (`/sys/kernel/debug/sched/eevdf/stats`, all CPUs)
    /// counted during the run, by name: the cells that read them (those with schedstats
    /// on) on a kernel that has them. A counter that went down was reset in between, and
    /// counts from 0.
    #[serde(default)]
    pub counters: Option<BTreeMap<String, u64>>,
    /// The counters before the run, until its `after` line comes.
    #[serde(skip)]
    counters_before: Option<BTreeMap<String, u64>>,
    /// Text the report reads as it came: `perf latency ...` and `perf timehist ...` (the
    /// guest's `@@perf` lines, seed 002), `cyclictest T: ...` (cyclictest's summary lines,
    /// seed 004).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub text: Vec<String>,
    /// The scheduler tunables the cell's feature set writes, as the guest read them back
    /// after the run (`@@tunables FILE=VALUE...`), by file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tunables: BTreeMap<String, u64>,
}

impl Outcome {
    /// A run of cell `id` that has begun and not yet said anything.
    pub fn new(id: &str, rep: u32) -> Outcome {
        Outcome {
            id: id.to_string(),
            rep,
            ..Outcome::default()
        }
    }
}

#[cfg(test)]
impl Outcome {
    /// A run of cell `id` (rep 0) whose one record is a ping-pong at `rate` switches a
    /// second, for the tests' fixtures.
    pub(crate) fn pingpong_for_test(id: &str, rate: f64) -> Outcome {
        let mut o = Outcome::new(id, 0);
        o.records
            .push(Record::PingPong(eevdf_guest::PingPongResult {
                round_trips: 1,
                duration_s: 1.0,
                switches_per_s: rate,
                system_ctxsw_per_s: rate,
                cpu: Some(0),
                policy: "other".into(),
            }));
        o
    }
}

/// A waker's record for the tests' fixtures: 100 wakeups 1 ms apart, latencies of a few µs,
/// no histogram and no read-back; struct update syntax sets the rest.
#[cfg(test)]
pub(crate) fn waker_for_test() -> eevdf_guest::WakerResult {
    eevdf_guest::WakerResult {
        policy: "other".into(),
        interval_us: 1000,
        slice_requested_ns: 0,
        slice_effective_ns: 0,
        samples: 100,
        missed: 0,
        min_us: 1.0,
        avg_us: 2.0,
        p50_us: 2.0,
        p90_us: 3.0,
        p99_us: 4.0,
        p999_us: 5.0,
        max_us: 6.0,
        quantiles: vec![],
        waker_nvcsw: 0,
        waker_nivcsw: 0,
        system_ctxsw: 0,
        duration_s: 1.0,
        bg_status: None,
        run_delay_avg_us: 10.0,
        run_avg_us: 37.0,
        hist: vec![],
        load_slice_requested_ns: None,
        readback: vec![],
        load_tasks: 0,
    }
}

/// A seed 003 record for the tests' fixtures: `rounds` of the sleeper beside nice-0 hogs,
/// no hogs read back; struct update syntax sets the rest.
#[cfg(test)]
pub(crate) fn migrate_for_test(
    rounds: Vec<eevdf_guest::MigrateRound>,
) -> eevdf_guest::MigrateResult {
    eevdf_guest::MigrateResult {
        policy: "other".into(),
        mode: "affinity".into(),
        sleep_ms: 1000,
        after_ms: 500,
        hog_nice: 0,
        place_record: false,
        rounds,
        hogs: Vec::new(),
    }
}

/// A seed 002 record for the tests' fixtures: 2 s of `groups`, its tasks read back as
/// `readback`.
#[cfg(test)]
pub(crate) fn mixed_for_test(
    groups: Vec<eevdf_guest::MixedGroup>,
    readback: Vec<eevdf_guest::TaskReadback>,
) -> Record {
    Record::Mixed(eevdf_guest::MixedResult {
        policy: "other".into(),
        cpus: vec![0],
        duration_s: 2.0,
        compute_run_us: 8000,
        compute_sleep_us: 1000,
        frame_us: 16667,
        burst_us: 5000,
        groups,
        readback,
    })
}

/// `NAME=VALUE` pairs of an `@@counters` line; `None` if one is malformed.
fn parse_counters(s: &str) -> Option<BTreeMap<String, u64>> {
    s.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// What was counted from `before` to `after`, by the names `after` has.
pub fn counter_delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, &a)| {
            let d = before.get(k).and_then(|&b| a.checked_sub(b)).unwrap_or(a);
            (k.clone(), d)
        })
        .collect()
}

pub fn parse_boot(out: &str) -> (BootInfo, Vec<Outcome>) {
    let mut info = BootInfo::default();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut open: Option<Outcome> = None;
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("@@info ") {
            for kv in rest.split_whitespace() {
                match kv.split_once('=') {
                    Some(("uname", v)) => info.uname = v.to_string(),
                    Some(("cpus", v)) => info.cpus = v.parse().unwrap_or(0),
                    Some(("base_slice_ns", v)) => info.base_slice_ns = v.parse().unwrap_or(0),
                    _ => {}
                }
            }
        } else if let Some(rest) = line.strip_prefix("@@features ") {
            info.features = rest.trim().to_string();
        } else if line.trim() == "@@done" {
            info.done = true;
        } else if let Some(CellLine { id, event }) = CellLine::parse(line) {
            match event {
                CellEvent::Begin { rep } => {
                    if let Some(o) = open.take() {
                        outcomes.push(close(o, None));
                    }
                    open = Some(Outcome::new(id, rep));
                }
                CellEvent::End { rc } => {
                    if let Some(o) = open.take().filter(|o| o.id == id) {
                        outcomes.push(close(o, Some(rc.to_string())));
                    }
                }
                CellEvent::Unavailable { feature } => {
                    let mut o = open
                        .take()
                        .filter(|o| o.id == id)
                        .unwrap_or_else(|| Outcome::new(id, 0));
                    o.status = Status::Unavailable(feature.to_string());
                    outcomes.push(o);
                }
                CellEvent::Other => {}
            }
        } else if let Some(o) = open.as_mut() {
            if let Some(rest) = line.strip_prefix("@@counters ") {
                let (when, pairs) = rest.split_once(' ').unwrap_or((rest, ""));
                let Some(c) = parse_counters(pairs) else {
                    o.status = Status::Failed(format!("bad counters line: {line}"));
                    continue;
                };
                match when {
                    "before" => o.counters_before = Some(c),
                    "after" => {
                        if let Some(b) = o.counters_before.take() {
                            o.counters = Some(counter_delta(&b, &c));
                        }
                    }
                    _ => {}
                }
            } else if let Some(rest) = line.strip_prefix("@@tunables ") {
                match parse_counters(rest) {
                    Some(t) => o.tunables.extend(t),
                    None => o.status = Status::Failed(format!("bad tunables line: {line}")),
                }
            } else if let Some(rest) = line.strip_prefix("@@perf ") {
                o.text.push(format!("perf {rest}"));
            } else if line.trim_start().starts_with("T:") && line.contains("Avg:") {
                o.text.push(format!("cyclictest {}", line.trim()));
            } else if let Some(r) = Record::from_line(line) {
                match r {
                    Ok(r) => o.records.push(r),
                    Err(e) => o.status = Status::Failed(format!("bad result line: {e}")),
                }
            } else if let Some(t) = line.trim().strip_prefix("Time:") {
                if let Ok(t) = t.trim().parse() {
                    o.hackbench_s.push(t);
                }
            }
        }
    }
    if let Some(o) = open.take() {
        outcomes.push(close(o, None));
    }
    (info, outcomes)
}

fn close(mut o: Outcome, rc: Option<String>) -> Outcome {
    if o.status == Status::Ok {
        match rc.as_deref() {
            None => o.status = Status::Failed("no end line (guest stopped or timed out)".into()),
            Some("0") => {
                // A result: a record, a hackbench time, or cyclictest's summary (seed
                // 004's idle baseline has nothing else).
                let cyclictest = o
                    .text
                    .iter()
                    .filter_map(|l| l.strip_prefix("cyclictest "))
                    .any(|l| cyclictest_line(l).is_some());
                if o.records.is_empty() && o.hackbench_s.is_empty() && !cyclictest {
                    o.status = Status::Failed("no result".into());
                }
            }
            Some(rc) => o.status = Status::Failed(format!("exit status {rc}")),
        }
    }
    o
}

/// `put!(m; NAME => VALUE, ...)`: pushes each named metric onto `m`, in order.
macro_rules! put {
    ($m:expr; $($k:expr => $v:expr),+ $(,)?) => {
        $($m.push(($k.into(), $v));)+
    };
}

/// The named metrics of one successful outcome, in display order.
pub fn metrics(cell: &Cell, o: &Outcome) -> Vec<(String, f64)> {
    let mut m: Vec<(String, f64)> = Vec::new();
    if o.status != Status::Ok {
        return m;
    }
    let hb = o.hackbench_s.first().copied();
    for r in &o.records {
        match r {
            Record::Waker(w) => {
                put!(m; "lat_min_us" => w.min_us, "lat_avg_us" => w.avg_us,
                    "lat_p99_us" => w.p99_us, "lat_max_us" => w.max_us,
                    "run_delay_avg_us" => w.run_delay_avg_us);
                // The waker's need: its CPU time per wakeup over its period (the report
                // puts it beside its share: which regime the cell is in).
                if w.interval_us > 0 && w.run_avg_us > 0.0 {
                    let need_pct = 100.0 * w.run_avg_us / w.interval_us as f64;
                    m.push(("need_pct".into(), need_pct));
                }
                // What it got: its CPU time over the run (it misses periods when it needs
                // more than its share).
                if w.duration_s > 0.0 && w.run_avg_us > 0.0 {
                    let got = 100.0 * w.run_avg_us * w.samples as f64 / (w.duration_s * 1e6);
                    m.push(("waker_share_pct".into(), got));
                }
                if let Some(t) = hb {
                    m.push(("hackbench_s".into(), t));
                }
                if w.duration_s > 0.0 {
                    m.push(("ctxsw_per_s".into(), w.system_ctxsw as f64 / w.duration_s));
                }
            }
            Record::PingPong(p) => m.push(("pingpong_switches_per_s".into(), p.switches_per_s)),
            Record::Share(s) => {
                m.push(("max_err_pp".into(), s.max_abs_err_pp));
                for (i, h) in s.hogs.iter().enumerate() {
                    m.push((format!("share_{i}"), h.share));
                }
            }
            Record::Scale(s) => {
                put!(m; "switches_per_s" => s.switches_per_s, "ns_per_switch" => s.ns_per_switch);
            }
            Record::ForkJob(j) => m.push(("forkjob_s".into(), j.elapsed_s)),
            Record::PipeJob(j) => {
                m.push(("pipejob_alone_s".into(), j.alone.elapsed_s));
                if let (Some(l), Some(s)) = (&j.loaded, j.slowdown) {
                    put!(m; "pipejob_loaded_s" => l.elapsed_s, "pipejob_slowdown" => s);
                }
            }
            Record::Migrate(x) => {
                let n = x.rounds.len().max(1) as f64;
                let lags: Vec<f64> = x.rounds.iter().filter_map(|r| r.lag_us).collect();
                if let Some(l) = lags.iter().map(|l| l.abs()).reduce(f64::max) {
                    m.push(("migrate_max_abs_lag_us".into(), l));
                }
                // The lag read from the vruntimes: the placement's own number.
                let vr: Vec<f64> = x.rounds.iter().filter_map(|r| r.lag_vruntime_us).collect();
                if let Some(l) = vr.iter().map(|l| l.abs()).reduce(f64::max) {
                    m.push(("migrate_max_abs_lag_vr_us".into(), l));
                }
                if let Some(l) = lag_vr_net_us(x) {
                    m.push(("migrate_max_abs_lag_vr_net_us".into(), l));
                }
                let share = x.rounds.iter().map(|r| r.share).sum::<f64>() / n;
                m.push(("migrate_share".into(), share));
                if x.place_record {
                    m.extend(placement_metrics(&x.rounds));
                }
            }
            Record::Mixed(x) => {
                for g in &x.groups {
                    m.push((format!("{}_avg_delay_ms", g.name), g.avg_delay_ms));
                    if x.duration_s > 0.0 {
                        let loops_per_s = g.loops as f64 / x.duration_s;
                        // A task's CPU time over the window, against its fair share.
                        let tasks = f64::from(g.tasks.max(1));
                        let cpu_pct = 100.0 * g.runtime_ms / 1000.0 / x.duration_s / tasks;
                        put!(m; format!("{}_loops_per_s", g.name) => loops_per_s,
                            format!("{}_cpu_pct", g.name) => cpu_pct);
                    }
                    if g.latency.is_some() && g.loops > 0 {
                        let missed_pct = 100.0 * g.missed as f64 / g.loops as f64;
                        m.push((format!("{}_missed_pct", g.name), missed_pct));
                    }
                    if let Some(l) = &g.latency {
                        let n = &g.name;
                        put!(m; format!("{n}_p50_us") => l.p50_us,
                            format!("{n}_p99_us") => l.p99_us);
                    }
                }
            }
            Record::RtApp(r) => rtapp_metrics(r, &mut m),
            Record::Msgr(r) => {
                if let Some(q) = &r.wakeup {
                    put!(m; "msgr_p50_us" => q.p50_us, "msgr_p90_us" => q.p90_us);
                    put!(m; "msgr_p99_us" => q.p99_us, "msgr_p999_us" => q.p999_us);
                }
                m.push(("msgr_rps".into(), r.requests_per_s));
            }
            Record::Storm(r) => {
                // Before runs spanned T's own changes, every cgroup move ended a run: those
                // runs measure the move, not the protection.
                let runs_measured = r.runs_span_changes || r.change != "cgroup";
                if let Some(q) = r.target_runs.as_ref().filter(|_| runs_measured) {
                    put!(m; "t_run_max_us" => q.max_us, "t_run_p99_us" => q.p99_us,
                        "t_run_p50_us" => q.p50_us);
                }
                if let Some(q) = &r.competitor_waits {
                    put!(m; "c_wait_p99_us" => q.p99_us, "c_wait_max_us" => q.max_us);
                }
                m.push(("t_share".into(), r.target_share));
                if r.duration_s > 0.0 {
                    m.push(("changes_per_s".into(), r.changes as f64 / r.duration_s));
                }
            }
        }
    }
    if matches!(
        cell.workload,
        Workload::Hackbench { .. } | Workload::MigrateHackbench { .. }
    ) {
        if let Some(t) = hb {
            m.push(("hackbench_s".into(), t));
        }
    }
    // Seed 002: perf's view of the two groups (the seed's columns).
    let rows = perf_lat_rows(o);
    for r in rows
        .iter()
        .filter(|r| matches!(r.task.as_str(), "massive_intr" | "interactive"))
    {
        let g = &r.task;
        put!(m; format!("perf_{g}_runtime_ms") => r.runtime_ms,
            format!("perf_{g}_switches") => r.switches as f64,
            format!("perf_{g}_avg_delay_ms") => r.avg_delay_ms,
            format!("perf_{g}_max_delay_ms") => r.max_delay_ms,
            format!("perf_{g}_sum_delay_ms") => r.sum_delay_ms());
    }
    // Seed 004: cyclictest's threads, its mean average and its largest maximum.
    let cyc: Vec<(f64, f64, f64)> = o
        .text
        .iter()
        .filter_map(|l| l.strip_prefix("cyclictest "))
        .filter_map(cyclictest_line)
        .collect();
    if !cyc.is_empty() {
        let avg = cyc.iter().map(|c| c.1).sum::<f64>() / cyc.len() as f64;
        let max = cyc.iter().map(|c| c.2).fold(0.0, f64::max);
        put!(m; "cyc_avg_us" => avg, "cyc_max_us" => max);
    }
    for (k, &v) in o.counters.iter().flatten() {
        m.push((ctr(k), v as f64));
    }
    // Seed 002: the picks where ELIGIBLE changed the outcome, a share of all picks and a
    // rate over the record the counters bracket (eevdf-mixed's warm-up and window).
    if let (Workload::Mixed { duration_ms, .. }, Some(c)) = (&cell.workload, &o.counters) {
        if let (Some(&n), Some(&picks)) = (c.get("picks_ineligible_earliest"), c.get("picks")) {
            if picks > 0 {
                let pct = 100.0 * n as f64 / picks as f64;
                m.push(("ineligible_picks_pct".into(), pct));
            }
            let s = (MIXED_WARMUP_MS + duration_ms) as f64 / 1000.0;
            m.push(("ineligible_picks_per_s".into(), n as f64 / s));
        }
    }
    m
}

/// What a counter's metric name starts with: `ctr:lag_clamped`.
pub const COUNTER_PREFIX: &str = "ctr:";

/// The metric name of counter `name`.
pub fn ctr(name: &str) -> String {
    format!("{COUNTER_PREFIX}{name}")
}

/// One task row of `perf sched latency` (perf 6.1 and 6.12: `name:pid | runtime ms |
/// switches (6.12: count) | avg: x ms | max: y ms | max start: ... | max end: ...`; a group
/// of same-named tasks is `name:(n)`).
#[derive(Clone, Debug, PartialEq)]
pub struct PerfLatRow {
    /// The task's name, without `:pid` or `:(n)`.
    pub task: String,
    /// `(n)` for a group, the pid otherwise.
    pub which: String,
    pub runtime_ms: f64,
    /// What perf calls switches: the delays it measured (its average's divisor).
    pub switches: u64,
    pub avg_delay_ms: f64,
    pub max_delay_ms: f64,
}

impl PerfLatRow {
    /// The seed's "Sum delay ms": perf's average times its count (what Mike Galbraith's
    /// table sums, to the average's rounding).
    pub fn sum_delay_ms(&self) -> f64 {
        self.avg_delay_ms * self.switches as f64
    }
}

/// A `perf sched latency` task line, or None (headers, rules, TOTAL).
pub fn perf_lat_row(line: &str) -> Option<PerfLatRow> {
    let f: Vec<&str> = line.split('|').map(str::trim).collect();
    if f.len() < 5 || f[0].starts_with("Task") || f[0].starts_with("TOTAL") {
        return None;
    }
    let (task, which) = f[0].rsplit_once(':')?;
    let ms = |s: &str, key: &str| -> Option<f64> {
        s.strip_prefix(key)?
            .trim()
            .strip_suffix("ms")?
            .trim()
            .parse()
            .ok()
    };
    Some(PerfLatRow {
        task: task.to_string(),
        which: which.to_string(),
        runtime_ms: ms(f[1], "")?,
        switches: f[2].parse().ok()?,
        avg_delay_ms: ms(f[3], "avg:")?,
        max_delay_ms: ms(f[4], "max:")?,
    })
}

/// The `perf sched latency` rows of an outcome.
pub fn perf_lat_rows(o: &Outcome) -> Vec<PerfLatRow> {
    o.text
        .iter()
        .filter_map(|l| l.strip_prefix("perf latency "))
        .filter_map(perf_lat_row)
        .collect()
}

/// cyclictest's summary line (`T: 0 ( 123) P: 0 I:1000 C: 99 Min: 3 Act: 5 Avg: 8 Max:
/// 120`, µs): (min, avg, max).
pub fn cyclictest_line(line: &str) -> Option<(f64, f64, f64)> {
    let after = |key: &str| -> Option<f64> {
        let (_, rest) = line.split_once(key)?;
        rest.split_whitespace().next()?.parse().ok()
    };
    Some((after("Min:")?, after("Avg:")?, after("Max:")?))
}

/// The metrics of an rt-app record: over the tasks that sleep, the pooled wakeup latency
/// and the percentage of missed periods; over all tasks, the largest share error; per task
/// (`<name>.`), its share error (signed: above its fair share is positive) its p99 and
/// maximum, and for a sleeper its slowdown (seed 001).
fn rtapp_metrics(r: &RtAppResult, m: &mut Vec<(String, f64)>) {
    if let Some(q) = &r.wakeup {
        put!(m; "wake_p50_us" => q.p50_us, "wake_p99_us" => q.p99_us, "wake_max_us" => q.max_us);
    }
    let periods: u64 = r.tasks.iter().map(|t| t.periods).sum();
    if periods > 0 {
        let missed: u64 = r.tasks.iter().map(|t| t.missed).sum();
        m.push(("missed_pct".into(), 100.0 * missed as f64 / periods as f64));
    }
    m.push(("share_err_pp".into(), r.max_share_err_pp));
    for t in &r.tasks {
        let share_err_pp = (t.share - t.fair_share) * 100.0;
        m.push((format!("{}.share_err_pp", t.name), share_err_pp));
        if let Some(q) = &t.wakeup {
            let n = &t.name;
            put!(m; format!("{n}.p99_us") => q.p99_us, format!("{n}.max_us") => q.max_us);
            if t.kind == "sleeper" {
                put!(m; format!("{n}.p90_us") => q.p90_us, format!("{n}.p999_us") => q.p999_us);
            }
        }
        // How long an activation (run and sleep) took, against its length alone: seed
        // 001's "% of the baseline".
        if t.kind == "sleeper" && t.periods > 0 && r.duration_s > 0.0 {
            let alone_s = (t.run_us + t.sleep_us) as f64 / 1e6;
            let slowdown_pct = 100.0 * r.duration_s / t.periods as f64 / alone_s;
            m.push((format!("{}.slowdown_pct", t.name), slowdown_pct));
            // How often its run is cut by a preemption (involuntary switches an
            // activation): what stretches an activation beyond its wait and its run.
            let preempt_per_act = t.nivcsw as f64 / t.periods as f64;
            m.push((format!("{}.preempt_per_act", t.name), preempt_per_act));
        }
    }
}

/// Ideal shares of a share cell, from its first record (for the table's "ideal" column).
pub fn ideal_shares(outcomes: &[&Outcome]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for o in outcomes {
        for r in &o.records {
            if let Record::Share(s) = r {
                for (i, h) in s.hogs.iter().enumerate() {
                    out.insert(format!("share_{i}"), h.ideal);
                }
                return out;
            }
        }
    }
    out
}

/// Seed 003's lag read from the vruntimes, less what the read itself adds: the hog ran on
/// for the sleeper's wake latency after the placement, which moves the read's
/// `w_H (v_H - v_S) / (w_S + w_H)` by `latency * w_S / (w_S + w_H)` (the hog's vruntime
/// advances at `w_S / w_H` of real time per unit, times its weight's share): half the
/// latency beside a nice-0 hog, nearly all of it beside a nice-19 one (1024 / 1039). The
/// largest |lag| of the rounds so corrected, µs.
fn lag_vr_net_us(x: &eevdf_guest::MigrateResult) -> Option<f64> {
    let (w_s, w_h) = (
        eevdf_guest::nice_to_weight(0),
        eevdf_guest::nice_to_weight(x.hog_nice),
    );
    x.rounds
        .iter()
        .filter_map(|r| {
            let l = r.lag_vruntime_us?;
            Some(l.abs() - r.wake_latency_us.max(0.0) * w_s / (w_s + w_h))
        })
        .reduce(f64::max)
}

/// Seed 003's lag at placement as the kernel saw it (`eevdf-migrate` on a kernel with the
/// record of placements): each round's wakeup on the new CPU, its sleeper's last placement
/// with `ENQUEUE_WAKEUP`. µs of virtual time (the sleeper is nice 0: µs of CPU time).
///
/// - `migrate_place_rounds`: rounds whose wakeup placement the record kept;
/// - `migrate_place_max_abs_vlag_us`: the largest |vlag|, the lag saved at dequeue;
/// - `migrate_place_max_abs_lag_us`: the largest |lag| applied, after PLACE_LAG's scaling;
/// - `migrate_place_limit_us`: the largest clamp limit the record gives;
/// - `migrate_place_over`: rounds whose |vlag| exceeded their limit;
/// - `migrate_place_scale_mismatch`: rounds whose applied lag is not `vlag + vlag * w / W`.
pub fn placement_metrics(rounds: &[eevdf_guest::MigrateRound]) -> Vec<(String, f64)> {
    use eevdf_guest::debugfs::ENQUEUE_WAKEUP;
    let woke: Vec<_> = rounds
        .iter()
        .filter_map(|r| r.placements.iter().rfind(|p| p.flags & ENQUEUE_WAKEUP != 0))
        .collect();
    let mut m = vec![("migrate_place_rounds".to_string(), woke.len() as f64)];
    if woke.is_empty() {
        return m;
    }
    let us = |v: u64| v as f64 / 1000.0;
    let max = |f: &dyn Fn(&eevdf_guest::debugfs::Placement) -> u64| {
        woke.iter().map(|p| f(p)).max().unwrap_or(0)
    };
    let vlag = max(&|p| p.vlag.unsigned_abs());
    let lag = max(&|p| p.lag.unsigned_abs());
    m.push(("migrate_place_max_abs_vlag_us".into(), us(vlag)));
    m.push(("migrate_place_max_abs_lag_us".into(), us(lag)));
    m.push(("migrate_place_limit_us".into(), us(max(&|p| p.limit))));
    let count = |f: &dyn Fn(&eevdf_guest::debugfs::Placement) -> bool| {
        woke.iter().filter(|p| f(p)).count() as f64
    };
    m.push(("migrate_place_over".into(), count(&|p| !p.within_limit())));
    let mismatch = count(&|p| p.lag != 0 && p.lag != p.scaled_lag());
    m.push(("migrate_place_scale_mismatch".into(), mismatch));
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Experiment, MatrixKind};
    use eevdf_guest::{FrameLatency, MixedGroup};

    /// A round of seed 003's sleeper woken after `latency` µs, its lag read from the
    /// vruntimes `lag_vr`.
    fn round(
        lag_vr: Option<f64>,
        latency: f64,
        placements: Vec<eevdf_guest::debugfs::Placement>,
    ) -> eevdf_guest::MigrateRound {
        eevdf_guest::MigrateRound {
            woke_on: 1,
            wake_latency_us: latency,
            lag_us: None,
            lag_vruntime_us: lag_vr,
            placements,
            share_first_100ms: 0.5,
            share: 0.5,
        }
    }

    #[test]
    fn placement_metrics_take_each_rounds_wakeup() {
        use eevdf_guest::debugfs::Placement;
        let p = |flags, vlag: i64, lag, limit| Placement {
            cpu: 1,
            seq: 1,
            pid: 42,
            flags,
            weight: 1024,
            load: 15,
            vlag,
            lag,
            limit,
            avruntime: 0,
            vruntime: 0,
            deadline: 0,
        };
        let round = |placements| round(None, 1.0, placements);
        // -2000 + -2000 * 1024 / 15 = -138533 (truncating). The fork's placement (no
        // WAKEUP) is not the round's.
        let ok = round(vec![
            p(0x80, -9_000_000, 0, 1),
            p(0x41, -2000, -138_533, 2_800_000),
        ]);
        let get = |m: &[(String, f64)], k: &str| m.iter().find(|x| x.0 == k).map(|x| x.1);
        let m = placement_metrics(&[ok.clone(), round(Vec::new())]);
        assert_eq!(get(&m, "migrate_place_rounds"), Some(1.0));
        assert_eq!(get(&m, "migrate_place_max_abs_vlag_us"), Some(2.0));
        assert_eq!(get(&m, "migrate_place_max_abs_lag_us"), Some(138.533));
        assert_eq!(get(&m, "migrate_place_over"), Some(0.0));
        assert_eq!(get(&m, "migrate_place_scale_mismatch"), Some(0.0));
        // Over its limit, and a lag that is not the scaled vlag: both counted.
        let bad = round(vec![p(0x41, -2_900_000, -5, 2_800_000)]);
        let m = placement_metrics(&[ok, bad]);
        assert_eq!(get(&m, "migrate_place_over"), Some(1.0));
        assert_eq!(get(&m, "migrate_place_scale_mismatch"), Some(1.0));
        assert_eq!(get(&placement_metrics(&[]), "migrate_place_over"), None);
    }

    #[test]
    fn the_vruntime_read_loses_the_hogs_run_after_the_placement() {
        let round = |lag_vr: f64, latency: f64| round(Some(lag_vr), latency, Vec::new());
        let mut x = migrate_for_test(vec![round(3000.0, 200.0), round(-2950.0, 100.0)]);
        // Beside a nice-0 hog half the latency: max(3000 - 100, 2950 - 50).
        assert_eq!(lag_vr_net_us(&x), Some(2900.0));
        // Beside a nice-19 hog 1024 / 1039 of it: the second round is now the larger.
        x.hog_nice = 19;
        let want = 2950.0 - 100.0 * 1024.0 / 1039.0;
        assert!((lag_vr_net_us(&x).unwrap() - want).abs() < 1e-9);
        x.rounds.clear();
        assert_eq!(lag_vr_net_us(&x), None);
    }
    /// The cells of a matrix of `kind`, from its study's own module (not through
    /// `studies`, which sits above this one).
    fn matrix(kind: MatrixKind, only: &[Experiment]) -> Vec<crate::plan::Cell> {
        match kind {
            MatrixKind::Seeds | MatrixKind::SeedsSmoke => {
                crate::seeds::matrix(kind == MatrixKind::SeedsSmoke, only)
            }
            MatrixKind::Next | MatrixKind::NextSmoke => {
                crate::next::matrix(kind == MatrixKind::NextSmoke, only)
            }
            _ => crate::main_matrix::cells(kind, only),
        }
    }

    /// The metrics of `o`, a run of a cell of the matrix of `kind`.
    fn metrics_of(kind: MatrixKind, o: &Outcome) -> Vec<(String, f64)> {
        let cells = matrix(kind, &[]);
        metrics(cells.iter().find(|c| c.id() == o.id).unwrap(), o)
    }

    /// The metrics of `o`, a run of a cell of the seeds' matrix.
    fn seeds_metrics(o: &Outcome) -> BTreeMap<String, f64> {
        metrics_of(MatrixKind::Seeds, o).into_iter().collect()
    }

    const OUT: &str = "\
@@info uname=6.12.117 cpus=2 base_slice_ns=1400000
@@features PLACE_LAG PLACE_DEADLINE_INITIAL NO_RUN_TO_PARITY
@@cell lat-w1x-l1x/EEVDF begin rep=0
Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)
Time: 1.509
eevdf-waker: slice 1400 us
@@json {\"kind\":\"waker\",\"interval_us\":1000,\"slice_requested_ns\":140000,\"slice_effective_ns\":140000,\"samples\":184,\"missed\":3,\"min_us\":128.8,\"avg_us\":899.7,\"p50_us\":117.1,\"p90_us\":263.4,\"p99_us\":945.6,\"p999_us\":2297.6,\"max_us\":2592.5,\"quantiles\":[[0.0,128.8],[100.0,2592.5]],\"waker_nvcsw\":170,\"waker_nivcsw\":11,\"system_ctxsw\":3753,\"duration_s\":1.5,\"bg_status\":0}
@@cell lat-w1x-l1x/EEVDF end rc=0
@@cell lat-w1x-l1x/EVDF unavailable ELIGIBLE
@@cell hb-process-pipe-g2/EEVDF begin rep=1
Time: 0.75
@@cell hb-process-pipe-g2/EEVDF end rc=0
@@cell pingpong/EEVDF begin rep=0
@@cell pingpong/EEVDF end rc=137
@@cell share-nice/EEVDF begin rep=0
@@json {\"kind\":\"share\",\"duration_s\":0.5,\"hogs\":[{\"nice\":-4,\"group\":\"\",\"ideal\":0.7095,\"share\":0.7077,\"runtime_ns\":374994758},{\"nice\":0,\"group\":\"\",\"ideal\":0.2905,\"share\":0.2923,\"runtime_ns\":154888593}],\"max_abs_err_pp\":0.18}
";

    #[test]
    fn boot_output_parses() {
        let (info, o) = parse_boot(OUT);
        assert_eq!(info.uname, "6.12.117");
        assert_eq!((info.cpus, info.base_slice_ns), (2, 1_400_000));
        assert!(info.features.contains("NO_RUN_TO_PARITY"));
        assert!(!info.done);
        assert_eq!(o.len(), 5);
        assert_eq!(o[0].status, Status::Ok);
        assert_eq!(o[0].hackbench_s, vec![1.509]);
        assert!(matches!(o[0].records[0], Record::Waker(_)));
        assert_eq!(o[1].status, Status::Unavailable("ELIGIBLE".into()));
        assert_eq!((o[2].rep, o[2].hackbench_s[0]), (1, 0.75));
        assert_eq!(o[3].status, Status::Failed("exit status 137".into()));
        // The last cell never ended: the guest died or timed out in it.
        assert!(matches!(o[4].status, Status::Failed(ref s) if s.contains("no end line")));
    }

    #[test]
    fn metrics_by_workload() {
        let (_, o) = parse_boot(OUT);
        let m = metrics_of(MatrixKind::Quick, &o[0]);
        let get = |m: &[(String, f64)], k: &str| m.iter().find(|(n, _)| n == k).map(|x| x.1);
        assert_eq!(get(&m, "lat_avg_us"), Some(899.7));
        assert_eq!(get(&m, "hackbench_s"), Some(1.509));
        assert_eq!(get(&m, "ctxsw_per_s"), Some(3753.0 / 1.5));
        let m = metrics_of(MatrixKind::Quick, &o[2]);
        assert_eq!(m, vec![("hackbench_s".to_string(), 0.75)]);
        assert!(metrics_of(MatrixKind::Quick, &o[3]).is_empty());
        let shares = matrix(MatrixKind::Quick, &[Experiment::Fairness]);
        let (_, o2) = parse_boot(&format!("{OUT}@@cell share-nice/EEVDF end rc=0\n"));
        let m = metrics(&shares[0], &o2[4]);
        assert_eq!(get(&m, "share_0"), Some(0.7077));
        assert_eq!(ideal_shares(&[&o2[4]])["share_1"], 0.2905);
    }

    #[test]
    fn counters_around_a_cell_become_its_deltas() {
        let out = "\
@@cell hb-process-pipe-g1@4cpu/NB1/on begin rep=0
@@counters before picks=100 lag_clamped=7 preempt_buddy=0
Time: 0.25
@@counters after picks=150 lag_clamped=3 preempt_buddy=12
@@tunables migration_cost_ns=0
@@cell hb-process-pipe-g1@4cpu/NB1/on end rc=0
@@cell hb-process-pipe-g1@4cpu/NB1/off begin rep=0
Time: 0.26
@@cell hb-process-pipe-g1@4cpu/NB1/off end rc=0
@@cell msgr-1x4/on begin rep=0
@@counters before picks=1 x
@@cell msgr-1x4/on end rc=0
";
        let (_, o) = parse_boot(out);
        let c = o[0].counters.as_ref().unwrap();
        // lag_clamped went down: reset in between, so it counted its whole value since.
        assert_eq!(
            (c["picks"], c["lag_clamped"], c["preempt_buddy"]),
            (50, 3, 12)
        );
        assert_eq!(o[0].tunables["migration_cost_ns"], 0);
        assert!(o[1].tunables.is_empty());
        // A cell without counter lines (stock, or no stats file) has none.
        assert!(o[1].status == Status::Ok && o[1].counters.is_none());
        assert!(matches!(o[2].status, Status::Failed(ref w) if w.contains("bad counters")));
        let m = metrics_of(MatrixKind::NextSmoke, &o[0]);
        assert!(m.contains(&("hackbench_s".to_string(), 0.25)));
        assert!(m.contains(&("ctr:preempt_buddy".to_string(), 12.0)));
        // Old raw.json outcomes have no counters field.
        let json = serde_json::to_string(&o[1])
            .unwrap()
            .replace(",\"counters\":null", "");
        assert_eq!(serde_json::from_str::<Outcome>(&json).unwrap(), o[1]);
    }

    #[test]
    fn bar_metrics_are_the_issues() {
        use crate::metrics::{meta, Better};
        for m in "hackbench_s lat_avg_us lat_p99_us pingpong_switches_per_s".split(' ') {
            assert!(meta(m).2, "{m}");
        }
        assert!(!meta("lat_max_us").2 && !meta("share_0").2);
        assert_eq!(meta("pingpong_switches_per_s").1, Better::Higher);
    }

    #[test]
    fn perf_sched_latency_rows_parse() {
        // Debian's perf 6.1 against the 6.12 guest (a real line, pids and times shortened).
        let l = "  massive_intr:(3)      |   3378.018 ms |      395 | avg:  23.627 ms | \
                 max: 187.745 ms | max start:    61.045221 s | max end:    61.232966 s";
        let r = perf_lat_row(l).unwrap();
        assert_eq!((r.task.as_str(), r.which.as_str()), ("massive_intr", "(3)"));
        assert_eq!((r.runtime_ms, r.switches), (3378.018, 395));
        assert_eq!((r.avg_delay_ms, r.max_delay_ms), (23.627, 187.745));
        assert!((r.sum_delay_ms() - 9332.665).abs() < 1e-6);
        // A name with colons keeps them; headers, rules and the total are not rows.
        let k = perf_lat_row("  kworker/0:1-mm_:11    |    110.727 ms |        4 | avg:  23.551 ms | max:  46.474 ms | max start: 1 s | max end: 2 s").unwrap();
        assert_eq!(
            (k.task.as_str(), k.which.as_str()),
            ("kworker/0:1-mm_", "11")
        );
        for l in [
            "  Task                  |   Runtime ms  | Switches | Avg delay ms    | Max delay ms    |",
            " -----------------------------------------------",
            "  TOTAL:                |  11014.023 ms |      798 |",
            "",
        ] {
            assert_eq!(perf_lat_row(l), None, "{l:?}");
        }
        // The seed's own format (a sum column, no max start) parses too.
        let seed = "massive_intr:(9) |1827981.908 ms | 9163472 | avg: 0.040 ms | max: 13.026 ms | sum:366012.231 ms |";
        assert_eq!(perf_lat_row(seed).unwrap().switches, 9163472);
    }

    #[test]
    fn perf_and_cyclictest_lines_become_metrics() {
        let out = "@@cell mixed-3c2i-near20pct/EEVDF begin rep=0
@@counters before picks=1000 picks_ineligible_earliest=10
@@json {\"kind\":\"fork_job\",\"policy\":\"other\",\"jobs\":2,\"cpus\":2,\"files\":60,\"nice\":0,\"cpu_s\":1.8,\"elapsed_s\":0.975}
@@counters after picks=5000 picks_ineligible_earliest=410
@@perf latency   interactive:(2)       |   2281.394 ms |      288 | avg:  19.570 ms | max: 104.191 ms | max start: 1 s | max end: 2 s
@@perf timehist            time    cpu  task name
T: 0 (  181) P: 0 I:1000 C:    912 Min:      7 Act:   55 Avg:   87 Max:    2052
@@cell mixed-3c2i-near20pct/EEVDF end rc=0
";
        let (_, o) = parse_boot(out);
        assert_eq!(o[0].status, Status::Ok);
        assert_eq!(o[0].text.len(), 3, "{:?}", o[0].text);
        let m = seeds_metrics(&o[0]);
        assert_eq!(m["perf_interactive_switches"], 288.0);
        assert_eq!(m["perf_interactive_max_delay_ms"], 104.191);
        // 400 of 4000 picks, over the 0.3 s warm-up and 3 s window.
        assert_eq!(m["ineligible_picks_pct"], 10.0);
        assert!((m["ineligible_picks_per_s"] - 400.0 / 3.3).abs() < 1e-9);
        // Without counters (stock): neither.
        let mut stock = o[0].clone();
        stock.counters = None;
        let m = seeds_metrics(&stock);
        assert!(
            !m.contains_key("ineligible_picks_pct") && !m.contains_key("ineligible_picks_per_s")
        );
        assert_eq!((m["cyc_avg_us"], m["cyc_max_us"]), (87.0, 2052.0));
        assert_eq!(
            cyclictest_line(
                "T: 0 ( 1) P:80 I:10000 C: 10 Min: 1831 Act: 2245 Avg: 2413 Max: 12687"
            ),
            Some((1831.0, 2413.0, 12687.0))
        );
        assert_eq!(cyclictest_line("T: 0 ( 1) no numbers"), None);
    }

    /// Seed 002's groups: a task's CPU share over the window and the frames missed.
    #[test]
    fn mixed_groups_give_their_share_and_missed_frames() {
        let group = |name: &str, tasks, runtime_ms, loops, missed, lat: bool| MixedGroup {
            name: name.into(),
            tasks,
            runtime_ms,
            switches: 0,
            avg_delay_ms: 1.0,
            sum_delay_ms: 1.0,
            loops,
            missed,
            latency: lat.then(|| FrameLatency::from_ns(&[1000, 2000])),
        };
        let mut o = Outcome::new("mixed-3c2i-over30pct/EEVDF", 0);
        let groups = vec![
            group("massive_intr", 3, 3600.0, 500, 0, false),
            group("interactive", 2, 800.0, 200, 50, true),
        ];
        o.records.push(mixed_for_test(groups, Vec::new()));
        let m = seeds_metrics(&o);
        assert_eq!(m["massive_intr_cpu_pct"], 60.0);
        assert_eq!(m["interactive_cpu_pct"], 20.0);
        assert_eq!(m["interactive_missed_pct"], 25.0);
        assert!(!m.contains_key("massive_intr_missed_pct"), "no frames");
    }

    /// Seed 004's idle baseline prints cyclictest's summary and nothing else: a result;
    /// with no summary either, no result.
    #[test]
    fn cyclictest_alone_is_a_result() {
        let cell = |body: &str| {
            format!(
                "@@cell cyclictest-idle@2cpu/EEVDF begin rep=0\n{body}@@cell \
                 cyclictest-idle@2cpu/EEVDF end rc=0\n"
            )
        };
        let (_, o) = parse_boot(&cell(
            "T: 0 (  181) P: 0 I:1000 C:    912 Min:      7 Act:   55 Avg:   60 Max:    900\n",
        ));
        assert_eq!(o[0].status, Status::Ok);
        assert_eq!(seeds_metrics(&o[0])["cyc_avg_us"], 60.0);
        let (_, o) = parse_boot(&cell("nothing\n"));
        assert_eq!(o[0].status, Status::Failed("no result".into()));
    }
}
