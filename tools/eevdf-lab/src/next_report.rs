//! The `next` report: for each of upstream's post-6.12 features, what it is, where it came
//! from, how to toggle it, upstream's claim, our measurement (its cells off against on) and
//! where the two agree. The same text is report.md, the terminal's summary and, with
//! `--results-page` (`--markdown`), Documentation/reports/next.md.
//!
//! Statistics as in the lab's other tables: per cell and metric the median over every run
//! with a distribution-free 95% interval, and on/off as a ratio of medians with a bootstrap
//! 95% interval (each side resampled independently, fixed seed).

use crate::metrics;
use crate::next::{NextFeature, NB_OFF, NB_ON, NB_SYNC};
use crate::parse::{self, ctr, Status, COUNTER_PREFIX};
use crate::plan::{Experiment, Kernel, Workload};
use crate::report::{cell_outcomes, fmt_est, fmt_num, with_unit, Raw, TimingInfo};
use crate::stats::{self, Estimate};
use crate::verdict::{self, Verdict};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One measured quantity of one pair of cells: off against on.
#[derive(Clone, Debug, Serialize)]
pub struct PairRow {
    pub feature: NextFeature,
    /// The workload in words, and its ID part.
    pub workload: String,
    pub workload_id: String,
    /// What both cells share besides the workload (`RUN_TO_PARITY`, ...; may be empty).
    pub context: String,
    /// The metric's name; a counter's is `ctr:NAME`.
    pub metric: String,
    pub unit: String,
    /// Median and 95% interval over the runs of each side (None: no value in any run).
    pub off: Option<Estimate>,
    pub on: Option<Estimate>,
    /// median(on) / median(off), bootstrap 95% interval.
    pub ratio: Option<Estimate>,
    /// (runs with a value above 0, runs with a value) per side: for event counters.
    pub off_nonzero: (usize, usize),
    pub on_nonzero: (usize, usize),
    /// One of the feature's own metrics or counters (else: another counter it moved).
    pub primary: bool,
}

impl PairRow {
    fn is_counter(&self) -> bool {
        self.metric.starts_with(COUNTER_PREFIX)
    }

    /// The feature moved it: the on/off interval excludes 1 and the medians differ by
    /// [`MOVED_BY`] or more, with at least [`MIN_RUNS`] runs a side.
    fn moved(&self) -> bool {
        if self.off_nonzero.1.min(self.on_nonzero.1) < MIN_RUNS {
            return false;
        }
        match (&self.ratio, &self.off, &self.on) {
            (Some(r), _, _) if r.lo.is_finite() && r.hi.is_finite() => {
                (r.lo > 1.0 || r.hi < 1.0) && (r.value - 1.0).abs() >= MOVED_BY
            }
            // A count that is 0 in every run on one side and not on the other.
            (_, Some(a), Some(b)) => (a.hi == 0.0) != (b.hi == 0.0),
            _ => false,
        }
    }
}

/// The fewest runs a side for a verdict: with fewer, a bootstrap interval is a point.
pub const MIN_RUNS: usize = verdict::MIN_RUNS;

/// How far from 1 a counter's on/off must be for the "other counters" table: the
/// decisions a feature changes move by tens of percent; a counter of every pick or wakeup
/// moves a few percent with the work done.
pub const MOVED_BY: f64 = 0.1;

/// The summary of a `next` run: its rows and what could not be measured.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub rows: Vec<PairRow>,
    /// The counters the kernel reported (empty: no counters file).
    pub counters_seen: Vec<String>,
    /// Cell runs that failed or could not run: (cell ID, why).
    pub problems: Vec<(String, String)>,
}

/// Samples per (cell, metric) over the rust kernel's successful runs.
type Samples = BTreeMap<(usize, String), Vec<f64>>;

pub fn summarise(raw: &Raw) -> Summary {
    let mut samples: Samples = BTreeMap::new();
    let mut problems = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (_, ci, o) in cell_outcomes(raw).filter(|(b, _, _)| b.kernel == Kernel::Rust) {
        let why = match &o.status {
            Status::Ok => None,
            Status::Unavailable(f) => Some(format!("the kernel has no {f}")),
            Status::Failed(why) => Some(why.clone()),
        };
        if let Some(why) = why {
            problems.push((o.id.clone(), why));
            continue;
        }
        seen.extend(o.counters.iter().flat_map(|c| c.keys()).cloned());
        for (m, v) in parse::metrics(&raw.cells[ci], o) {
            samples.entry((ci, m)).or_default().push(v);
        }
    }
    problems.sort();
    problems.dedup();
    let (mut rows, none) = (Vec::new(), Vec::new());
    for (feature, off, on, context) in pairs(raw) {
        let c = &raw.cells[off];
        let workload_id = c.id().split('/').next().unwrap_or("").to_string();
        // The pair's metrics, the off cell's first (it precedes the on cell in the matrix).
        let keys = samples.keys().filter(|(ci, _)| *ci == off || *ci == on);
        let present = stats::first_seen(keys.map(|(_, m)| m.clone()));
        // The feature's metrics, then (long sleepers) each task's, then its counters (also
        // the missing ones, shown as "-"), then every other counter.
        let mut wanted: Vec<(String, bool)> = feature
            .metrics()
            .iter()
            .filter(|m| present.iter().any(|p| p == *m))
            .map(|m| (m.to_string(), true))
            .collect();
        if feature == NextFeature::LagClampMaxSlice {
            wanted.extend(
                present
                    .iter()
                    .filter(|m| m.ends_with(".share_err_pp") || m.ends_with(".p99_us"))
                    .map(|m| (m.clone(), true)),
            );
        }
        let own: Vec<String> = feature.counters().iter().map(|c| ctr(c)).collect();
        // A derived pair (cells of two contexts) shows the workload's metrics only: its
        // cells' counters are in the measured pairs they belong to.
        let derived = c.ab.as_ref().is_none_or(|a| a.context != context);
        if !derived {
            wanted.extend(own.iter().map(|c| (c.clone(), true)));
            wanted.extend(
                present
                    .iter()
                    .filter(|m| m.starts_with(COUNTER_PREFIX) && !own.contains(m))
                    .map(|m| (m.clone(), false)),
            );
        }
        for (metric, primary) in wanted {
            let get = |ci| samples.get(&(ci, metric.clone())).unwrap_or(&none);
            let (a, b) = (get(off), get(on));
            let est = |v: &[f64]| (!v.is_empty()).then(|| stats::median_ci(v, raw.confidence));
            let nz = |v: &[f64]| (v.iter().filter(|x| **x > 0.0).count(), v.len());
            let seed = raw.seed.wrapping_add(rows.len() as u64);
            let ratio = (!a.is_empty() && !b.is_empty())
                .then(|| stats::ratio_ci(b, a, raw.confidence, raw.bootstrap_resamples, seed));
            rows.push(PairRow {
                feature,
                workload: c.label(),
                workload_id: workload_id.clone(),
                context: context.clone(),
                unit: unit_of(&metric).to_string(),
                off: est(a),
                on: est(b),
                ratio,
                off_nonzero: nz(a),
                on_nonzero: nz(b),
                primary,
                metric,
            });
        }
    }
    Summary {
        rows,
        counters_seen: stats::first_seen(seen),
        problems,
    }
}

/// NEXT_BUDDY_EEVDF's derived pairs' contexts: 6.12's NEXT_BUDDY toggled with
/// NEXT_BUDDY_EEVDF off, and with it on (each one write, as the measured pairs are); both
/// toggled together, upstream's comparison (6.18 against the v5 series with NEXT_BUDDY
/// enabled: two writes); and `migration_cost_ns` 0 against the default, both on.
pub const NB_TOGGLED_EEVDF_OFF: &str = "NEXT_BUDDY off → on, NEXT_BUDDY_EEVDF off";
pub const NB_TOGGLED_EEVDF_ON: &str = "NEXT_BUDDY off → on, NEXT_BUDDY_EEVDF on";
pub const NB_UPSTREAM: &str = "both off → both on (upstream's comparison, two writes)";
pub const NB_SYNC_TOGGLED: &str = "migration_cost_ns default → 0, both on";

/// The (feature, off cell, on cell, context) pairs of the run's cells, in the cells' order:
/// each cell with its twin (same workload and context, the feature's other side), then
/// NEXT_BUDDY_EEVDF's derived pairs, which compare cells of different contexts.
fn pairs(raw: &Raw) -> Vec<(NextFeature, usize, usize, String)> {
    let mut v = Vec::new();
    for (i, c) in raw.cells.iter().enumerate() {
        let (Experiment::Next(f), Some(ab)) = (c.experiment, c.ab.as_ref()) else {
            continue;
        };
        if ab.on {
            continue;
        }
        if let Some(j) = cell_of(raw, f, &c.workload, &ab.context, true) {
            v.push((f, i, j, ab.context.clone()));
        }
    }
    let nb = NextFeature::NextBuddyEevdf;
    let mut derived = Vec::new();
    for &(f, off, on, ref ctx) in &v {
        if f != nb || ctx != NB_OFF.0 {
            continue;
        }
        let w = &raw.cells[off].workload;
        let Some((nb_off, nb_on)) =
            cell_of(raw, nb, w, NB_ON.0, false).zip(cell_of(raw, nb, w, NB_ON.0, true))
        else {
            continue;
        };
        derived.push((nb, off, nb_off, NB_TOGGLED_EEVDF_OFF.to_string()));
        derived.push((nb, on, nb_on, NB_TOGGLED_EEVDF_ON.to_string()));
        derived.push((nb, off, nb_on, NB_UPSTREAM.to_string()));
        if let Some(sync) = cell_of(raw, nb, w, NB_SYNC.0, true) {
            derived.push((nb, nb_on, sync, NB_SYNC_TOGGLED.to_string()));
        }
    }
    v.extend(derived);
    v
}

/// The cell of feature `f`'s pairs with workload `w`, context `ctx` and side `on`.
fn cell_of(raw: &Raw, f: NextFeature, w: &Workload, ctx: &str, on: bool) -> Option<usize> {
    raw.cells.iter().position(|o| {
        o.experiment == Experiment::Next(f)
            && &o.workload == w
            && o.ab
                .as_ref()
                .is_some_and(|x| x.on == on && x.context == ctx)
    })
}

fn unit_of(metric: &str) -> &'static str {
    if metric.starts_with(COUNTER_PREFIX) {
        "per run"
    } else if metric.ends_with("_us") {
        "µs"
    } else if metric.ends_with("_pp") {
        "pp"
    } else {
        metrics::meta(metric).0
    }
}

/// What a metric is called in the tables.
fn metric_title(m: &str) -> String {
    if let Some(c) = m.strip_prefix(COUNTER_PREFIX) {
        return format!("`{c}`");
    }
    let t = match m {
        "wake_p50_us" => "wakeup p50",
        "wake_p99_us" => "wakeup p99",
        "missed_pct" => "missed periods (%)",
        "share_err_pp" => "largest share error",
        "msgr_p50_us" => "wakeup p50",
        "msgr_p90_us" => "wakeup p90",
        "msgr_p99_us" => "wakeup p99",
        "msgr_p999_us" => "wakeup p99.9",
        "msgr_rps" => "requests/s",
        "hackbench_s" => "hackbench time",
        "t_run_max_us" => "T's longest run",
        "t_run_p99_us" => "T's run p99",
        "c_wait_p99_us" => "C's wait p99",
        "c_wait_max_us" => "C's longest wait",
        "t_share" => "T's CPU share",
        "changes_per_s" => "changes/s",
        other => {
            if let Some(t) = other.strip_suffix(".share_err_pp") {
                return format!("{t}: share − fair");
            }
            if let Some(t) = other.strip_suffix(".p99_us") {
                return format!("{t}: wakeup p99");
            }
            other
        }
    };
    t.to_string()
}

fn fmt_side(e: &Option<Estimate>, nz: (usize, usize), counter: bool) -> String {
    match e {
        None => "-".into(),
        Some(e) if counter => format!("{} ({}/{} runs > 0)", fmt_est(e), nz.0, nz.1),
        Some(e) => fmt_est(e),
    }
}

/// An on/off ratio with its interval, `-` without a finite one.
fn fmt_ratio(r: &Option<Estimate>) -> String {
    r.as_ref().map_or("-".into(), |r| verdict::show(r, 3))
}

/// What a claim expects of on/off (where on/off lies is a [`Verdict`] against 1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// Below 1: the feature lowers it.
    Lower,
    /// Above 1.
    Higher,
    NoChange,
}

/// Where on/off's interval lies against 1 (`Missing` without one: a side without runs, or
/// a median of 0).
fn effect(r: &Option<Estimate>) -> Verdict {
    r.as_ref()
        .map_or(Verdict::Missing, |r| verdict::against(r, 1.0))
}

/// Where a pair's on/off lies: by its ratio's interval, or, when a median is 0 and the
/// ratio has none, by whether the two sides' intervals are apart (both never above 0: no
/// change).
fn row_effect(r: &PairRow) -> Verdict {
    match effect(&r.ratio) {
        Verdict::Missing => match (&r.off, &r.on) {
            (Some(a), Some(b)) if a.hi == 0.0 && b.hi == 0.0 && a.n.min(b.n) >= MIN_RUNS => {
                Verdict::Undecided { runs: None }
            }
            (Some(a), Some(b)) => verdict::between(b, a),
            _ => Verdict::Missing,
        },
        e => e,
    }
}

/// The verdict on a directional expectation: one upstream measured (`measured`), or one its
/// claim implies. Overlapping intervals are undecided, with the runs that would decide.
fn verdict(expected: Expect, observed: Verdict, measured: bool) -> String {
    let runs = |r: Option<usize>| match r {
        Some(r) => format!("about {r} runs a side would decide a difference this size"),
        None => "the difference is too small against the spread for more runs to decide".into(),
    };
    match (expected, observed) {
        (_, Verdict::Missing | Verdict::TooFew { .. }) => observed.to_string(),
        // No change was expected, and the interval holds 1: that shows no change either way
        // (the medians may still have moved), so undecided, with what more runs could show.
        (Expect::NoChange, Verdict::Undecided { runs: r }) => format!(
            "undecided: the interval holds 1, so no change is shown either way (none was \
             expected; {})",
            runs(r)
        ),
        (Expect::NoChange, _) => "differs: a change where none was expected".into(),
        (Expect::Lower, Verdict::Below) | (Expect::Higher, Verdict::Above) => {
            "agrees: same direction".into()
        }
        (_, Verdict::Undecided { runs: r }) if measured => {
            format!(
                "undecided: the interval holds 1 where upstream saw a change ({})",
                runs(r)
            )
        }
        (_, Verdict::Undecided { runs: r }) => format!(
            "undecided: the interval holds 1 where the claim expects a change ({})",
            runs(r)
        ),
        _ => "disagrees: the opposite direction".into(),
    }
}

/// A row of a claims table: the claim, what it expects (`says`), the pair's medians off → on (in
/// `unit`) with on/off, and the verdict on an implied (not measured by upstream) `expect`.
fn claim_row(t: &mut String, claim: &str, says: &str, r: &PairRow, unit: &str, expect: Expect) {
    let median = |e: &Option<Estimate>| e.as_ref().map_or("-".into(), |e| fmt_num(e.value));
    let _ = writeln!(
        t,
        "| {claim} | {says} | {} → {}{unit} ({}) | {} |",
        median(&r.off),
        median(&r.on),
        fmt_ratio(&r.ratio),
        verdict(expect, row_effect(r), false)
    );
}

/// `metric` of the pair (workload ID `wid`, context `ctx`).
fn find<'a>(rows: &[&'a PairRow], wid: &str, ctx: &str, metric: &str) -> Option<&'a PairRow> {
    rows.iter()
        .copied()
        .find(|r| r.workload_id == wid && r.context == ctx && r.metric == metric)
}

/// The pairs (workload ID, label, context) of a feature, in order.
fn pair_keys(rows: &[&PairRow]) -> Vec<(String, String, String)> {
    stats::first_seen(
        rows.iter()
            .map(|r| (r.workload_id.clone(), r.workload.clone(), r.context.clone())),
    )
}

/// Feature 1's headline: cases with lag errors, off and on, per parity mode.
fn agreement_run_to_parity(s: &Summary, rows: &[&PairRow]) -> String {
    let mut t =
        String::from("| claim | upstream | ours (off → on) | agreement |\n|---|---|---|---|\n");
    let lag = ctr("lag_error");
    for ctx in ["RUN_TO_PARITY", "NO_RUN_TO_PARITY"] {
        let cases: Vec<&PairRow> = rows
            .iter()
            .copied()
            .filter(|r| r.context == ctx && r.metric == lag)
            .collect();
        if cases.is_empty() {
            continue;
        }
        let n = cases.len();
        // A case has lag errors when its median run counted any.
        let with = |e: &Option<Estimate>| e.as_ref().is_some_and(|e| e.value > 0.0);
        let any = |nz: (usize, usize)| nz.0 > 0;
        let off = cases.iter().filter(|r| with(&r.off)).count();
        let on = cases.iter().filter(|r| with(&r.on)).count();
        let off_any = cases.iter().filter(|r| any(r.off_nonzero)).count();
        let on_any = cases.iter().filter(|r| any(r.on_nonzero)).count();
        let measured = s.counters_seen.iter().any(|c| c == "lag_error");
        let runs = cases
            .iter()
            .map(|r| r.off_nonzero.1.min(r.on_nonzero.1))
            .min()
            .unwrap_or(0);
        let ours = if measured {
            format!("{off}/{n} → {on}/{n} (in any run: {off_any}/{n} → {on_any}/{n})")
        } else {
            "- (the kernel has no `lag_error` counter)".into()
        };
        let v = if !measured {
            "undecided: upstream's metric is not measured".to_string()
        } else if runs < MIN_RUNS {
            Verdict::TooFew { have: runs }.to_string()
        } else if on == 0 && off > 0 {
            // The claim is upstream's 14 of 37 cases; say how many of ours carry it.
            format!(
                "agrees: none of the {n} cases has lag errors with the feature, {off} without \
                 it (the verdict rests on {off} case{})",
                if off == 1 { "" } else { "s" }
            )
        } else if on == 0 {
            format!(
                "agrees on the end state (0/{n}), not on the start: no case of ours has lag \
                 errors without the feature either"
            )
        } else if on < off {
            "partly: fewer cases with lag errors, not none".into()
        } else {
            "disagrees: the feature does not remove the lag errors".into()
        };
        let _ = writeln!(
            t,
            "| use cases with lag errors, {ctx} | 14/37 → 0/37 | {ours} | {v} |"
        );
    }
    // What the feature costs the cases: upstream claims no change in missed periods or
    // wakeups, so a change in either is reported beside the lag errors, case by case.
    for (wid, label, ctx) in pair_keys(rows) {
        for (metric, what) in [
            ("missed_pct".to_string(), "missed periods (%)"),
            (ctr("wakeups"), "wakeups a run (`wakeups`)"),
        ] {
            let Some(r) = find(rows, &wid, &ctx, &metric) else {
                continue;
            };
            let claim = format!("{what}, {label}, {ctx}");
            claim_row(&mut t, &claim, "no change claimed", r, "", Expect::NoChange);
        }
    }
    t
}

/// Feature 2: fewer clamps, shares nearer the fair ones.
fn agreement_lag_clamp(rows: &[&PairRow]) -> String {
    let mut t = String::from(
        "| claim | upstream | ours: off → on (on/off) | agreement |\n|---|---|---|---|\n",
    );
    let fewer = |c: &str, what: &str| {
        (
            ctr(c),
            format!("{what} (`{c}`)"),
            "fewer (no undue clamping)",
        )
    };
    for (wid, _, ctx) in pair_keys(rows) {
        for (metric, what, expect) in [
            fewer("lag_clamped", "lag clamps at dequeue"),
            fewer("lag_clamped_pos", "positive lags clamped"),
            fewer("lag_clamped_neg", "negative lags clamped"),
            (
                "share_err_pp".to_string(),
                "largest share error".to_string(),
                "smaller (implied: lag kept, service nearer fair)",
            ),
            (
                ctr("lag_error"),
                "lag errors (`lag_error`, outside ±(slice + tick))".to_string(),
                "fewer (implied: no undue clamping, so lags nearer their bounds)",
            ),
        ] {
            // A counter the kernel lacks, or one that never counted: nothing to judge.
            let Some(r) = find(rows, &wid, &ctx, &metric)
                .filter(|r| r.off.is_some() && r.off_nonzero.0 + r.on_nonzero.0 > 0)
            else {
                continue;
            };
            claim_row(&mut t, &what, expect, r, "", Expect::Lower);
        }
    }
    t
}

/// Feature 3: upstream's claims (schbench's RPS and quantiles, hackbench) against
/// upstream's comparison, both off against both on (6.18 against the v5 series with
/// NEXT_BUDDY enabled); then each workload's two by two, and whether 6.19's WF_SYNC
/// reschedule fired where `migration_cost_ns` is 0.
fn agreement_next_buddy(rows: &[&PairRow]) -> String {
    let mut t = String::from(
        "| claim | upstream off → on (on/off) | ours: workload, both off → both on (on/off) \
         [95%] | agreement |\n|---|---|---|---|\n",
    );
    use Expect::{Higher, Lower};
    let keys = pair_keys(rows);
    for (metric, what, a, b, expect) in [
        ("msgr_rps", "requests/s", 1.0, 1.012, Higher),
        ("msgr_p50_us", "wakeup p50", 7.17, 6.00, Lower),
        ("msgr_p90_us", "wakeup p90", 46.56, 19.78, Lower),
        ("msgr_p99_us", "wakeup p99", 119.61, 89.94, Lower),
        ("msgr_p999_us", "wakeup p99.9", 3193.78, 328.22, Lower),
        (
            "hackbench_s",
            "hackbench process pipes",
            3.5023,
            3.9197,
            Higher,
        ),
    ] {
        let up = match metric {
            "msgr_rps" => "+1.2% to +3.1%".to_string(),
            "hackbench_s" => format!("up to {a} → {b} s ({:.3}, 48 groups)", b / a),
            _ => format!("{a} → {b} µs ({:.3})", b / a),
        };
        for (wid, label, _) in keys.iter().filter(|k| k.2 == NB_UPSTREAM) {
            let Some(r) = find(rows, wid, NB_UPSTREAM, metric) else {
                continue;
            };
            let _ = writeln!(
                t,
                "| {what} | {up} | {label}: {} | {} |",
                fmt_ratio(&r.ratio),
                verdict(expect, row_effect(r), true)
            );
        }
    }
    t.push_str(&four_way(rows));
    t.push_str(&sync_fired(rows));
    t
}

/// Each workload's two by two: the medians [95%] of its headline metrics in the four cells.
/// The on/off of every one-write pair is in the measured table above.
fn four_way(rows: &[&PairRow]) -> String {
    let mut t = String::new();
    let sync = ctr("wakeup_sync_resched");
    for (wid, label, _) in pair_keys(rows).iter().filter(|k| k.2 == NB_OFF.0) {
        for metric in ["msgr_rps", "msgr_p99_us", "hackbench_s", sync.as_str()] {
            let (Some(a), Some(b)) = (
                find(rows, wid, NB_OFF.0, metric),
                find(rows, wid, NB_ON.0, metric),
            ) else {
                continue;
            };
            if a.off.is_none() && a.on.is_none() && b.off.is_none() && b.on.is_none() {
                continue;
            }
            let c = a.is_counter();
            let _ = writeln!(
                t,
                "| {label} | {} | {} | {} | {} | {} |",
                metric_title(metric),
                fmt_side(&a.off, a.off_nonzero, c),
                fmt_side(&a.on, a.on_nonzero, c),
                fmt_side(&b.off, b.off_nonzero, c),
                fmt_side(&b.on, b.on_nonzero, c),
            );
        }
    }
    if t.is_empty() {
        return t;
    }
    format!(
        "\nThe two by two, medians [95%] (both off is one write from either feature alone, and \
         either alone one write from both on; the two single-feature columns are two writes \
         apart; the measured table has the on/off of each one-write pair):\n\n\
         | workload | metric | both off (6.12's default) | NEXT_BUDDY_EEVDF only (6.19 as \
         released) | NEXT_BUDDY only (6.12's) | both on (6.19-rc1) |\n|---|---|---|---|---|---|\n{t}"
    )
}

/// Whether 6.19's WF_SYNC reschedule (`wakeup_sync_resched`) fired in the cells with
/// `migration_cost_ns` 0, and in the others, computed from the runs' counters.
fn sync_fired(rows: &[&PairRow]) -> String {
    let sync = ctr("wakeup_sync_resched");
    let mut t = String::new();
    for r in rows
        .iter()
        .filter(|r| r.metric == sync && (r.context == NB_SYNC.0 || r.context == NB_ON.0))
    {
        let (fired, runs) = r.on_nonzero;
        if runs == 0 {
            continue;
        }
        let what = if fired == 0 {
            format!("did not fire in any of {runs} runs")
        } else {
            format!(
                "fired in {fired} of {runs} runs, median {} a run",
                r.on.as_ref().map_or("-".into(), |e| fmt_num(e.value))
            )
        };
        let _ = writeln!(
            t,
            "- WF_SYNC's reschedule (`wakeup_sync_resched`), {}, {}, NEXT_BUDDY_EEVDF on: \
             {what}.",
            r.workload, r.context
        );
    }
    if t.is_empty() {
        t
    } else {
        format!("\n{t}")
    }
}

/// Feature 4: the storm's runs and waits, with and without RUN_TO_PARITY_MIN_SLICE: shorter
/// with it, unchanged without it.
const SHORTER: &str = "shorter: changes no longer restart T's window";
const UNCHANGED: &str = "unchanged: without MIN_SLICE, T is protected to its deadline either way";
fn agreement_protect(rows: &[&PairRow]) -> String {
    let mut t = String::from(
        "| claim | expected with the feature | ours: off → on (on/off) | agreement |\n\
         |---|---|---|---|\n",
    );
    for (wid, label, ctx) in pair_keys(rows) {
        let (says, expect) = if ctx.contains("off") {
            (UNCHANGED, Expect::NoChange)
        } else {
            (SHORTER, Expect::Lower)
        };
        for (metric, what) in [
            ("t_run_max_us", "T's longest uninterrupted run"),
            ("c_wait_max_us", "C's longest wait"),
        ] {
            let Some(r) = find(rows, &wid, &ctx, metric) else {
                continue;
            };
            let claim = format!("{what}, {label}, {ctx}");
            claim_row(&mut t, &claim, says, r, " µs", expect);
        }
    }
    t.push_str(&storm_picks(rows));
    t
}

/// The share of a storm's picks that RUN_TO_PARITY must answer by keeping T for the storm
/// to count as one that reschedules T during its runs: one pick in twenty (the storms
/// measured are at 0.1% or below, or at 10% and above).
const PARITY_SHARE: f64 = 0.05;

/// What bounds T's runs in each storm, from `picks_parity` of the cells without the
/// feature: picks during T's runs that RUN_TO_PARITY answered by keeping T (the mechanism is
/// in the text this returns).
fn storm_picks(rows: &[&PairRow]) -> String {
    let parity = ctr("picks_parity");
    let mut lines = Vec::new();
    for (wid, label, ctx) in pair_keys(rows) {
        let Some(r) = find(rows, &wid, &ctx, &parity) else {
            continue;
        };
        let Some(off) = r.off.as_ref() else {
            continue;
        };
        let (with, runs) = r.off_nonzero;
        // What share of the picks RUN_TO_PARITY answered by keeping T: a storm that
        // reschedules T makes it a large one; a stray pick now and then does not.
        let picks = find(rows, &wid, &ctx, &ctr("picks"))
            .and_then(|p| p.off.as_ref())
            .map_or(0.0, |p| p.value);
        let share = if picks > 0.0 { off.value / picks } else { 0.0 };
        let (kept, pct, picks) = (fmt_num(off.value), 100.0 * share, fmt_num(picks));
        let how = if runs < MIN_RUNS {
            Verdict::TooFew { have: runs }.to_string()
        } else if share >= PARITY_SHARE {
            let (lo, hi) = (fmt_num(off.lo), fmt_num(off.hi));
            format!(
                "RUN_TO_PARITY kept T at {kept} [{lo}, {hi}] picks a run, {pct:.0}% of its {picks} \
                 picks ({with} of {runs} runs above 0), so T's runs end at its parity with C"
            )
        } else {
            format!(
                "RUN_TO_PARITY kept T at {kept} picks a run, {pct:.1}% of its {picks} picks \
                 ({with} of {runs} runs above 0), so T's runs end where its protection does"
            )
        };
        lines.push(format!("- {label}, {ctx}, without the feature: {how}."));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nWhat bounds T's runs, from `picks_parity` (RUN_TO_PARITY kept T at a pick) in the \
         cells without the feature. 6.12 reschedules a running task after a renice that \
         lowers its priority (`prio_changed_fair()`) and after a cgroup move \
         (`sched_move_task()`), not after a `sched_setattr()` that changes only its slice. At \
         such a pick RUN_TO_PARITY keeps T only while T is eligible, so its run ends at the \
         first pick after it passes C, and the protected window that the feature shortens \
         matters only where it ends first:\n\n{}\n",
        lines.join("\n")
    )
}

/// Why our numbers may differ from upstream's: what holds for every feature.
const COMMON_REASONS: &str = "Our set-up differs from upstream's in ways that change the \
    numbers: QEMU TCG under icount (every guest instruction takes 8 ns; no caches, so nothing \
    is cache-hot), one vCPU for every feature but NEXT_BUDDY_EEVDF (every task on one \
    runqueue, where upstream's machines had many CPUs and a woken task often found an idle \
    one), and the tiny kernel at HZ=1000 (a 1 ms tick, which also enters the lag limits; the distro pair's HZ=250 is not run by --next).";

/// What else may make feature `f`'s numbers differ from upstream's.
fn reasons(f: NextFeature) -> &'static str {
    match f {
        NextFeature::RunToParityMinSlice => {
            "Our five rt-app cases are ours (upstream's 37 files were not published), and \
             the `lag_error` counter checks the lag when an entity is dequeued, where upstream \
             also checked it at every eligibility test."
        }
        NextFeature::LagClampMaxSlice => {
            "Upstream gave no numbers, so the agreement is with the direction its report \
             implies."
        }
        NextFeature::NextBuddyEevdf => {
            "Upstream's schbench numbers came from a 2-socket machine with the v5 series, \
             which still had the branch that forced a resched when the waker was ineligible \
             (reverted by 15257cc2f905 before 6.19; our feature is 6.19's code without it), \
             and its hackbench regressions peaked at 48 groups where we run 1 to 4. \
             eevdf-msgr is shaped like schbench (futex wakeups, not WF_SYNC) but is not \
             schbench; it stamps a round once, before its first wake, so a worker's latency \
             holds the wakes and runs before its own. The cells run on 4 vCPUs, where a \
             woken worker can find an idle CPU; under icount the vCPUs take turns on one \
             clock (lab.md, \"TCG\"), so a wakeup sent to another vCPU waits for that \
             vCPU's turn, which no real machine makes it do."
        }
        NextFeature::ProtectAtPick => {
            "Upstream published no measurement; the storm is our construction of the case \
             its commit message describes. On one vCPU the target changes itself: a driver \
             on the same CPU could never reach it while it runs. The expectation is the \
             commit message's; what bounds T's runs in each storm (above, from \
             `picks_parity`) says where it can show."
        }
    }
}

/// How to toggle `f`, and what the lab's cells write.
fn toggle(f: NextFeature, raw: &Raw) -> String {
    let n = f.name();
    let mut s = format!(
        "Default off. `echo {n} > /sys/kernel/debug/sched/features` turns it on, \
         `echo NO_{n} > /sys/kernel/debug/sched/features` off; with the guest tool, \
         `eevdfctl features set {n}` and `eevdfctl features clear {n}`."
    );
    if f == NextFeature::NextBuddyEevdf {
        s.push_str(
            " It changes 6.12's `NEXT_BUDDY` path, so set that too: `eevdfctl features set \
             NEXT_BUDDY NEXT_BUDDY_EEVDF`.",
        );
    }
    let w = |i: usize| {
        let fs = &raw.cells[i].features;
        let t = fs.tunables().iter().map(|t| format!(" {}", t.write()));
        format!("{}{}", fs.writes().join(" "), t.collect::<String>())
    };
    // The measured pairs (each cell with its twin), not the derived ones.
    let sets = stats::first_seen(
        pairs(raw)
            .into_iter()
            .filter(|p| p.0 == f && raw.cells[p.1].ab.as_ref().is_some_and(|a| a.context == p.3))
            .map(|(_, off, on, _)| format!("off `{}`, on `{}`", w(off), w(on))),
    );
    if !sets.is_empty() {
        let _ = write!(
            s,
            " The cells write, on top of the boot's defaults: {}.",
            sets.join("; ")
        );
    }
    s
}

/// The measured table of `f`: the feature's own metrics and counters per pair.
fn measured_table(rows: &[&PairRow]) -> String {
    let ctx_col = rows.iter().any(|r| !r.context.is_empty());
    let mut t = format!(
        "| workload |{} metric | off | on | on/off |\n|---|{}---|---|---|---|\n",
        if ctx_col { " with |" } else { "" },
        if ctx_col { "---|" } else { "" }
    );
    for r in rows.iter().filter(|r| r.primary) {
        let ctx = if ctx_col {
            format!(" {} |", r.context)
        } else {
            String::new()
        };
        let _ = writeln!(
            t,
            "| {} |{ctx} {} | {} | {} | {} |",
            r.workload,
            with_unit(&metric_title(&r.metric), &r.unit),
            fmt_side(&r.off, r.off_nonzero, r.is_counter()),
            fmt_side(&r.on, r.on_nonzero, r.is_counter()),
            fmt_ratio(&r.ratio)
        );
    }
    t
}

/// The counters outside the feature's own list that it moved (on/off interval without 1).
fn moved_counters(rows: &[&PairRow]) -> String {
    let moved: Vec<&&PairRow> = rows.iter().filter(|r| !r.primary && r.moved()).collect();
    let runs = rows
        .iter()
        .map(|r| r.off_nonzero.1.min(r.on_nonzero.1))
        .max()
        .unwrap_or(0);
    if runs < MIN_RUNS {
        return format!(
            "Too few runs ({runs} a side, at least {MIN_RUNS} needed) to say which other \
             counters the feature moved.\n"
        );
    }
    if moved.is_empty() {
        return "No other counter moved (every on/off interval holds 1).\n".into();
    }
    let mut t = String::from(
        "Other counters the feature moved (on/off interval without 1, medians 10% or more \
         apart):\n\n\
         | workload | with | counter (per run) | off | on | on/off |\n|---|---|---|---|---|---|\n",
    );
    for r in moved {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} |",
            r.workload_id,
            r.context,
            metric_title(&r.metric),
            fmt_side(&r.off, r.off_nonzero, true),
            fmt_side(&r.on, r.on_nonzero, true),
            fmt_ratio(&r.ratio)
        );
    }
    t
}

/// The report.md, summary.json and (if asked) the results page of a `next` run; the
/// report is printed too.
pub fn finish(raw: &Raw, dir: &Path, results_page: Option<&Path>) -> Result<()> {
    let summary = summarise(raw);
    let md = crate::report::write_report(
        dir,
        &summary,
        &[],
        results_page,
        "<!-- Generated by eevdf-lab next --results-page from a real run: do not edit. -->\n",
        |_| markdown(raw, &summary),
    )?;
    println!("\n{md}");
    println!("report: {}", dir.join("report.md").display());
    Ok(())
}

/// The report (report.md, and the page under its header).
pub fn markdown(raw: &Raw, s: &Summary) -> String {
    let mut out = String::from("# Upstream's next EEVDF on the 6.12 LTS kernel: measured\n\n");
    let rust = raw.boots.iter().find(|b| b.kernel == Kernel::Rust);
    let runs = raw.boots_per_kernel * raw.inner_reps;
    let _ = writeln!(
        out,
        "The project brings four changes of upstream's EEVDF after 6.12 to the Rust core as \
         sched_feat toggles, all default off. `eevdf-lab next` runs each against its \
         absence on the rust kernel: every pair of cells differs only in the feature. Run \
         {} UTC, {} boots × {} runs per boot ({runs} runs a cell), {} vCPU unless a \
         feature's section says otherwise ({}); kernel \
         `{}` (`uname -r` {}). Reproduce with:\n\n```sh\n{}\n```\n",
        raw.started_utc,
        raw.boots_per_kernel,
        raw.inner_reps,
        raw.cpus,
        TimingInfo::describe(raw.timing),
        raw.pair.build(Kernel::Rust),
        rust.map_or("-", |b| b.info.uname.as_str()),
        crate::report::reproduce(raw)
    );
    if !raw.stand_ins.is_empty() {
        let list: Vec<String> = raw
            .stand_ins
            .iter()
            .map(|x| format!("`{}` was written as `{}`", x.feature, x.written_as))
            .collect();
        let _ = writeln!(
            out,
            "**Stand-ins: this run checks the pipeline, it does not measure the features.** \
             The kernel lacked them, so {}: the numbers below are those features', under \
             the names of the ones they stand in for.\n",
            list.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "Every cell runs with schedstats on, off and on alike, because sched_eevdf's \
         counters (`/sys/kernel/debug/sched/eevdf/stats`) count only then; the lab reads them \
         before and after each cell and reports what the cell counted. {}\n",
        if s.counters_seen.is_empty() {
            "This kernel has no counters file, so every counter shows as -.".to_string()
        } else {
            let seen: Vec<String> = s.counters_seen.iter().map(|c| format!("`{c}`")).collect();
            format!(
                "This kernel has: {}. A counter it lacks shows as -.",
                seen.join(", ")
            )
        }
    );
    let _ = writeln!(
        out,
        "In the tables, off and on are the median over the runs with its 95% interval \
         `[lo, hi]` († when fewer than 6 runs leave it below 95%); counters are per run, with \
         the runs in which they counted anything; on/off is the ratio of the medians with a \
         bootstrap 95% interval (- when a median is 0). Documentation/lab.md describes the \
         workloads and what TCG does to the numbers. {COMMON_REASONS}\n"
    );
    if !s.problems.is_empty() {
        let _ = writeln!(out, "**Runs that did not measure:**\n");
        for (id, why) in &s.problems {
            let _ = writeln!(out, "- `{id}`: {why}");
        }
        out.push('\n');
    }
    for f in NextFeature::ALL {
        let rows: Vec<&PairRow> = s.rows.iter().filter(|r| r.feature == f).collect();
        let cells = || {
            raw.cells
                .iter()
                .filter(move |c| c.experiment == Experiment::Next(f))
        };
        if rows.is_empty() && cells().next().is_none() {
            continue;
        }
        let _ = writeln!(out, "## {} (bit {})\n", f.name(), f.bit());
        let _ = writeln!(out, "**What it does.** {}\n", f.what());
        let _ = writeln!(out, "**Where it comes from.** {}\n", f.origin());
        let _ = writeln!(out, "**How to toggle it.** {}\n", toggle(f, raw));
        let _ = writeln!(out, "**Upstream's claim.** {}\n", f.claim());
        if rows.is_empty() {
            let _ = writeln!(out, "**Our measurement.** No run of its cells measured.\n");
            continue;
        }
        let own_cpus = stats::first_seen(cells().filter_map(|c| c.cpus));
        let on = match own_cpus.as_slice() {
            [] => String::new(),
            [n] => format!(" On {n} vCPUs."),
            _ => " On the vCPUs each cell names.".to_string(),
        };
        let _ = writeln!(out, "**Our measurement.**{on}\n\n{}", measured_table(&rows));
        out.push_str(&moved_counters(&rows));
        out.push('\n');
        let table = match f {
            NextFeature::RunToParityMinSlice => agreement_run_to_parity(s, &rows),
            NextFeature::LagClampMaxSlice => agreement_lag_clamp(&rows),
            NextFeature::NextBuddyEevdf => agreement_next_buddy(&rows),
            NextFeature::ProtectAtPick => agreement_protect(&rows),
        };
        let _ = writeln!(
            out,
            "**Agreement with upstream.**\n\n{table}\nWhy ours may differ: {} The common \
             reasons are in the introduction.\n",
            reasons(f)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::StandIn;
    use crate::next::matrix;
    use crate::parse::Outcome;
    use crate::plan::{Cell, MatrixKind};
    use crate::report::BootRun;
    use crate::verdict::has;

    /// A run of `boots`, each with the outcomes `outcome(boot, cell)` gives (None: the cell
    /// did not run).
    fn raw(cells: Vec<Cell>, boots: u32, outcome: impl Fn(u32, &Cell) -> Option<Outcome>) -> Raw {
        Raw {
            started_utc: "2026-12-01 00:00:00".into(),
            command: "target/release/eevdf-lab --next".into(),
            boots_per_kernel: boots,
            timing: Some(TimingInfo::Icount { shift: 3 }),
            bootstrap_resamples: 500,
            boots: (0..boots)
                .map(|b| {
                    let outcomes = cells.iter().filter_map(|c| outcome(b, c)).collect();
                    let mut run = BootRun::for_test(Kernel::Rust, outcomes);
                    run.rep = b;
                    run.info.uname = "6.12.117".into();
                    run
                })
                .collect(),
            ..Raw::for_test(MatrixKind::Next, cells)
        }
    }

    fn counters(c: &[(&str, u64)]) -> Option<BTreeMap<String, u64>> {
        Some(c.iter().map(|&(k, v)| (k.to_string(), v)).collect())
    }

    fn side(c: &Cell) -> (bool, &str) {
        let ab = c.ab.as_ref().unwrap();
        (ab.on, ab.context.as_str())
    }

    /// Five cases under each parity mode: with RUN_TO_PARITY the first two count lag errors
    /// without the feature and none with it; `picks` doubles with the feature.
    fn lag_run(with_lag_error: bool) -> Raw {
        let cells = matrix(false, &[Experiment::Next(NextFeature::RunToParityMinSlice)]);
        let erring: Vec<String> = cells
            .iter()
            .filter(|c| side(c) == (false, "RUN_TO_PARITY"))
            .take(2)
            .map(|c| c.id())
            .collect();
        raw(cells, 6, |b, c| {
            let (on, _) = side(c);
            let err = if erring.contains(&c.id()) {
                3 + b as u64
            } else {
                0
            };
            let mut cs = vec![
                ("lag_clamped", 10 + b as u64),
                ("picks", if on { 200 } else { 100 } + b as u64),
            ];
            if with_lag_error {
                cs.push(("lag_error", err));
            }
            let mut o = Outcome::new(&c.id(), 0);
            o.counters = counters(&cs);
            Some(o)
        })
    }

    #[test]
    fn lag_errors_are_counted_per_case() {
        let r = lag_run(true);
        let s = summarise(&r);
        let md = markdown(&r, &s);
        has(&md, "| use cases with lag errors, RUN_TO_PARITY | 14/37 → 0/37 | 2/5 → 0/5 (in any \
                 run: 2/5 → 0/5) | agrees: none of the 5 cases has lag errors with the feature, 2 without \
                 it (the verdict rests on 2 cases) |");
        assert!(md.contains(
            "| use cases with lag errors, NO_RUN_TO_PARITY | 14/37 → 0/37 | 0/5 → 0/5 (in any \
             run: 0/5 → 0/5) | agrees on the end state (0/5), not on the start"
        ));
        // The feature's own counters; one the kernel lacks shows as -.
        let row = s
            .rows
            .iter()
            .find(|r| r.metric == "ctr:lag_error" && r.off_nonzero.0 > 0)
            .unwrap();
        assert_eq!((row.off_nonzero, row.on_nonzero), ((6, 6), (0, 6)));
        assert!(md.contains("| `protect_expired` (per run) | - | - | - |"));
        // picks is not one of its counters, but it moved: listed with the others.
        assert!(md.contains("Other counters the feature moved"));
        assert!(md.contains("| rt-short-among-long | RUN_TO_PARITY | `picks` |"));
        assert!(
            !md.contains("| `lag_clamped` | 1"),
            "lag_clamped did not move"
        );
        assert!(md.contains(
            "off `RUN_TO_PARITY NO_RUN_TO_PARITY_MIN_SLICE`, on `RUN_TO_PARITY \
             RUN_TO_PARITY_MIN_SLICE`; off `NO_RUN_TO_PARITY NO_RUN_TO_PARITY_MIN_SLICE`"
        ));
        assert!(md.contains("This kernel has: `lag_clamped`, `lag_error`, `picks`."));
        assert!(md.contains("## RUN_TO_PARITY_MIN_SLICE (bit 7)"));
        assert!(
            !md.contains("## NEXT_BUDDY_EEVDF"),
            "only the features the run had"
        );
    }

    #[test]
    fn no_lag_error_counter_no_verdict() {
        let r = lag_run(false);
        let md = markdown(&r, &summarise(&r));
        assert!(md.contains(
            "| - (the kernel has no `lag_error` counter) | undecided: upstream's metric is not \
             measured |"
        ));
        assert!(md.contains("| `lag_error` (per run) | - | - | - |"));
    }

    #[test]
    fn next_buddy_verdicts_follow_the_intervals() {
        let cells = matrix(false, &[Experiment::Next(NextFeature::NextBuddyEevdf)]);
        let r = raw(cells, 6, |b, c| {
            let Workload::Hackbench { groups, .. } = c.workload else {
                return None;
            };
            let (on, ctx) = side(c);
            // -g 1 and -g 2: 10% slower with both on; -g 4: the same. The WF_SYNC
            // reschedule counts only with migration_cost_ns 0.
            let both = on && ctx != NB_OFF.0;
            let t = 1.0 + 0.001 * b as f64 + if both && groups < 4 { 0.1 } else { 0.0 };
            let mut o = Outcome::new(&c.id(), 0);
            o.hackbench_s.push(t);
            let fired = if on && ctx == NB_SYNC.0 {
                5 + b as u64
            } else {
                0
            };
            o.counters = counters(&[("wakeup_sync_resched", fired), ("picks", 100)]);
            Some(o)
        });
        let md = markdown(&r, &summarise(&r));
        assert!(md.contains(
            "| hackbench process pipes | up to 3.5023 → 3.9197 s (1.119, 48 groups) | hackbench \
             processes pipe -g 1, 4 vCPUs: "
        ));
        let verdicts: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| hackbench process pipes |"))
            .map(|l| l.rsplit(" | ").next().unwrap())
            .collect();
        assert_eq!(
            verdicts,
            [
                "agrees: same direction |",
                "agrees: same direction |",
                "undecided: the interval holds 1 where upstream saw a change (the difference is \
                 too small against the spread for more runs to decide) |"
            ]
        );
        // Upstream's comparison is the diagonal; NEXT_BUDDY's own pairs are derived and
        // measured too: with NEXT_BUDDY_EEVDF on, NEXT_BUDDY makes -g 1 10% slower.
        let s = summarise(&r);
        let row = |ctx: &str, wid: &str| {
            s.rows
                .iter()
                .find(|x| x.context == ctx && x.workload_id == wid && x.metric == "hackbench_s")
                .unwrap()
                .ratio
                .unwrap()
        };
        assert!(row(NB_TOGGLED_EEVDF_ON, "hb-process-pipe-g1@4cpu").lo > 1.05);
        assert!(row(NB_TOGGLED_EEVDF_OFF, "hb-process-pipe-g1@4cpu").hi < 1.05);
        assert!(row(NB_UPSTREAM, "hb-process-pipe-g2@4cpu").lo > 1.05);
        // Derived pairs carry the workload's metrics, not the cells' counters.
        assert!(s
            .rows
            .iter()
            .filter(|x| x.context == NB_UPSTREAM)
            .all(|x| !x.metric.starts_with(COUNTER_PREFIX)));
        assert!(s
            .rows
            .iter()
            .any(|x| x.context == NB_ON.0 && x.metric == "ctr:wakeup_sync_resched"));
        // The two by two shows all four cells of a workload.
        assert!(md.contains("| both off (6.12's default) | NEXT_BUDDY_EEVDF only (6.19 as"));
        assert!(md
            .lines()
            .any(|l| l.starts_with("| hackbench processes pipe -g 4, 4 vCPUs | hackbench time |")));
        // The WF_SYNC reschedule: computed from the counters, both ways.
        assert!(md.contains(&format!(
            "- WF_SYNC's reschedule (`wakeup_sync_resched`), hackbench processes pipe -g 1, 4 \
             vCPUs, {}, NEXT_BUDDY_EEVDF on: fired in 6 of 6 runs, median 7.50 a run.",
            NB_SYNC.0
        )));
        assert!(md.contains(&format!(
            "- WF_SYNC's reschedule (`wakeup_sync_resched`), hackbench processes pipe -g 1, 4 \
             vCPUs, {}, NEXT_BUDDY_EEVDF on: did not fire in any of 6 runs.",
            NB_ON.0
        )));
        // No msgr run: its rows are absent from the agreement, the counters show -.
        assert!(!md.contains("| wakeup p50 |"));
        assert!(md.contains("| `preempt_buddy` (per run) | - | - | - |"));
        assert!(md.contains("`eevdfctl features set NEXT_BUDDY NEXT_BUDDY_EEVDF`"));
        assert!(md.contains("on `NEXT_BUDDY NEXT_BUDDY_EEVDF migration_cost_ns=0`"));
        assert!(md.contains("**Our measurement.** On 4 vCPUs."));
    }

    /// A storm record of `change` whose T runs `run` µs (C waits 50 µs more).
    fn storm(change: &str, runs_span_changes: bool, run: f64) -> eevdf_guest::Record {
        use eevdf_guest::{Quantiles, Record, StormResult, TaskAttr};
        // One duration of `us`: every quantile is it.
        let q = |us: f64| Quantiles::of_ns(&mut [(us * 1e3) as u64]);
        let attr = TaskAttr {
            policy: "other".into(),
            nice: 0,
            slice_requested_ns: 0,
            slice_effective_ns: 700_000,
            proc_slice_ns: Some(700_000),
            proc_weight: Some(1_048_576),
        };
        Record::Storm(Box::new(StormResult {
            runs_span_changes,
            policy: "other".into(),
            change: change.into(),
            driver: "self".into(),
            period_us: 200,
            changes: 5000,
            change_errors: 0,
            target: attr.clone(),
            competitor: attr,
            gap_threshold_us: 200,
            duration_s: 2.0,
            target_runs: q(run),
            competitor_waits: q(run + 50.0),
            competitor_runs: q(700.0),
            target_share: 0.5,
            competitor_share: 0.5,
        }))
    }

    /// Before T's runs spanned its own changes, every cgroup move ended one: those runs are
    /// not metrics; C's waits are, and so are the other storms' runs.
    #[test]
    fn old_cgroup_storm_runs_are_not_measured() {
        let cells = matrix(false, &[Experiment::Next(NextFeature::ProtectAtPick)]);
        let cgroup = cells
            .iter()
            .find(|c| c.id().starts_with("storm-cgroup"))
            .unwrap();
        let has = |change: &str, span: bool, metric: &str| {
            let mut o = Outcome::new(&cgroup.id(), 0);
            o.records.push(storm(change, span, 0.0));
            parse::metrics(cgroup, &o).iter().any(|(k, _)| k == metric)
        };
        assert!(!has("cgroup", false, "t_run_max_us"));
        assert!(has("cgroup", false, "c_wait_max_us"));
        assert!(has("cgroup", true, "t_run_max_us"));
        assert!(has("nice", false, "t_run_max_us"));
    }

    #[test]
    fn storm_expectations_follow_min_slice() {
        let cells = matrix(false, &[Experiment::Next(NextFeature::ProtectAtPick)]);
        // With MIN_SLICE on, the feature cuts T's longest run from 3 ms to 1 ms; with it off
        // nothing changes.
        let r = raw(cells, 6, |b, c| {
            let (on, ctx) = side(c);
            let run = if on && !ctx.contains("off") {
                1000.0
            } else {
                3000.0
            } + b as f64;
            let mut o = Outcome::new(&c.id(), 0);
            o.records.push(storm("slice", true, run));
            Some(o)
        });
        let md = markdown(&r, &summarise(&r));
        let lines: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| T's longest uninterrupted run,"))
            .collect();
        assert_eq!(lines.len(), 6, "{md}");
        for l in lines {
            if l.contains("MIN_SLICE on") {
                assert!(l.ends_with("| agrees: same direction |"), "{l}");
            } else {
                has(
                    l,
                    "| undecided: the interval holds 1, so no change is shown either way (none \
                     was expected; ",
                );
            }
        }
        assert!(md.contains("| `protect_restored` (per run) | - | - | - |"));
        // No counters in these runs: nothing said about what bounds T's runs.
        assert!(!md.contains("What bounds T's runs"));
    }

    /// The storms' picks: a storm whose off cell's picks kept T says its runs end at
    /// parity; one whose did not says they end with the protection.
    #[test]
    fn storm_picks_follow_the_counters() {
        let cells = matrix(false, &[Experiment::Next(NextFeature::ProtectAtPick)]);
        let r = raw(cells, 6, |b, c| {
            let renice = matches!(
                c.workload,
                crate::plan::Workload::Storm {
                    change: crate::plan::StormChange::Nice,
                    ..
                }
            );
            let mut o = Outcome::new(&c.id(), 0);
            // The slice storm's stray pick that kept T: 1 in 5000, below the share.
            let kept = if renice { 2000 + b as u64 } else { 1 };
            o.counters = counters(&[("picks_parity", kept), ("picks", 5000)]);
            Some(o)
        });
        let md = markdown(&r, &summarise(&r));
        assert!(md.contains("What bounds T's runs"));
        assert!(md.contains(
            "- T reniced 0/1 every 200 us, RUN_TO_PARITY_MIN_SLICE on, without the feature: \
             RUN_TO_PARITY kept T at 2002 [2000, 2005] picks a run, 40% of its 5000 picks (6 \
             of 6 runs above 0), so T's runs end at its parity with C."
        ));
        assert!(md.contains(
            "- T's slice set every 200 us (sched_setattr), RUN_TO_PARITY_MIN_SLICE on, without \
             the feature: RUN_TO_PARITY kept T at 1.00 picks a run, 0.0% of its 5000 picks \
             (6 of 6 runs above 0), so T's runs end where its protection does."
        ));
    }

    #[test]
    fn page_says_stand_ins_and_failures() {
        let mut r = lag_run(true);
        r.stand_ins = vec![StandIn::parse("RUN_TO_PARITY_MIN_SLICE=NO_PREEMPT_SHORT").unwrap()];
        let id = r.cells[0].id();
        r.boots[0].outcomes[0].status = Status::Failed("exit status 1".into());
        let md = markdown(&r, &summarise(&r));
        assert!(md.starts_with("# Upstream's next EEVDF"));
        assert!(md.contains(
            "**Stand-ins: this run checks the pipeline, it does not measure the features.** The \
             kernel lacked them, so `RUN_TO_PARITY_MIN_SLICE` was written as `NO_PREEMPT_SHORT`"
        ));
        assert!(md.contains(&format!("- `{id}`: exit status 1")));
        assert!(md.contains("6 boots × 1 runs per boot (6 runs a cell)"));
    }

    #[test]
    fn verdicts() {
        let e = |value, lo, hi, n| Some(verdict::est(value, lo, hi, n));
        use Expect::{Lower, NoChange};
        let v = |x, r: Option<Estimate>, measured| verdict(x, effect(&r), measured);
        assert_eq!(
            v(Lower, e(0.8, 0.7, 0.9, 8), true),
            "agrees: same direction"
        );
        assert_eq!(
            v(Lower, e(1.2, 1.1, 1.3, 8), true),
            "disagrees: the opposite direction"
        );
        assert_eq!(
            v(Lower, e(0.95, 0.9, 1.01, 8), true),
            "undecided: the interval holds 1 where upstream saw a change (about 12 runs a side \
             would decide a difference this size)"
        );
        assert_eq!(
            v(Lower, e(0.95, 0.9, 1.01, 8), false),
            "undecided: the interval holds 1 where the claim expects a change (about 12 runs a \
             side would decide a difference this size)"
        );
        assert_eq!(
            v(NoChange, e(0.99, 0.9, 1.1, 8), false),
            "undecided: the interval holds 1, so no change is shown either way (none was \
             expected; about 968 runs a side would decide a difference this size)"
        );
        assert_eq!(
            v(NoChange, e(0.5, 0.4, 0.6, 8), false),
            "differs: a change where none was expected"
        );
        assert_eq!(
            v(Lower, e(0.5, 0.5, 0.5, 2), true),
            "undecided: 2 runs a side, fewer than the 6 a 95% interval needs"
        );
        assert_eq!(
            v(Lower, e(f64::INFINITY, f64::NAN, f64::NAN, 8), true),
            "undecided: not measured"
        );
        // A count that is 0 in every run without the feature and not with it: the ratio
        // has no interval, the sides' intervals decide.
        let row = |off: Option<Estimate>, on: Option<Estimate>| PairRow {
            feature: NextFeature::LagClampMaxSlice,
            workload: String::new(),
            workload_id: String::new(),
            context: String::new(),
            metric: "ctr:lag_clamped_pos".into(),
            unit: String::new(),
            ratio: e(f64::INFINITY, f64::NAN, f64::NAN, 8),
            off,
            on,
            off_nonzero: (0, 8),
            on_nonzero: (8, 8),
            primary: true,
        };
        let z = e(0.0, 0.0, 0.0, 8);
        assert_eq!(row_effect(&row(z, e(5.0, 3.0, 7.0, 8))), Verdict::Above);
        assert_eq!(row_effect(&row(e(5.0, 3.0, 7.0, 8), z)), Verdict::Below);
        assert_eq!(row_effect(&row(z, z)), Verdict::Undecided { runs: None });
        // Overlapping sides: undecided, with the runs that would decide (facing halves 0 +
        // 1 against a gap of 1: 8 runs, so one more).
        assert_eq!(
            row_effect(&row(z, e(1.0, 0.0, 2.0, 8))),
            Verdict::Undecided { runs: Some(9) }
        );
        assert_eq!(row_effect(&row(z, None)), Verdict::Missing);
        assert_eq!(
            row_effect(&row(e(0.0, 0.0, 0.0, 2), e(1.0, 1.0, 1.0, 2))),
            Verdict::TooFew { have: 2 }
        );
        assert_eq!(v(Lower, None, true), "undecided: not measured");
    }
}
