//! The lab's metrics: one table of every name the parsers produce and the reports read,
//! with its unit, which way is better, whether the project's performance bar applies, and
//! what it measures, as `kernel/stats_table.rs` is for the kernel's counters. A name that
//! is not here (a typo in a parser or a report) fails `metrics_are_known` below, where it
//! used to mean, silently, "no unit, no bar". Documentation/lab.md's metric table is
//! generated from this one (`EEVDF_BLESS=1 cargo test -p eevdf-lab metrics`).

/// Which way a metric improves.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
    /// Descriptive (e.g. a share that should match an ideal): no bar.
    Neither,
}

/// One metric, or one family of them (`pattern` holds `{...}` where the name varies: a
/// task, a group, an index, a counter).
#[derive(Debug)]
pub struct Metric {
    pub pattern: &'static str,
    pub unit: &'static str,
    pub better: Better,
    /// Whether the performance bar judges it (report::bar_for says how, by matrix).
    pub bar: bool,
    /// The cells that produce it, and what it measures (Documentation/lab.md's table).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the documentation's test")
    )]
    pub what: &'static str,
}

const fn m(
    pattern: &'static str,
    unit: &'static str,
    better: Better,
    bar: bool,
    what: &'static str,
) -> Metric {
    Metric {
        pattern,
        unit,
        better,
        bar,
        what,
    }
}

use Better::{Higher, Lower, Neither};

/// Every metric, in the order of the lab's documentation.
pub const METRICS: &[Metric] = &[
    m("lat_min_us", "µs", Lower, false, "latency cells: the waker's smallest wakeup latency (timer to running) in a run"),
    m("lat_avg_us", "µs", Lower, true, "latency cells: the waker's average wakeup latency in a run"),
    m("lat_p99_us", "µs", Lower, true, "latency cells: the p99 of a run's wakeups (descriptive; the bar judges the pooled one)"),
    m("lat_p99_pooled_us", "µs", Lower, true, "latency cells: the p99 of all the runs' wakeups pooled, with a bootstrap interval over the runs (judged in `bar` only, on 50,000 wakeups)"),
    m("lat_max_us", "µs", Lower, false, "latency cells: the waker's largest wakeup latency in a run"),
    m("run_delay_avg_us", "µs", Lower, true, "latency cells: the waker's wait on the runqueue per wakeup (schedstat run_delay): the part of the latency the pick decides"),
    m("need_pct", "% of a CPU", Neither, false, "latency cells: the waker's CPU time per wakeup over its 1 ms period (its regime against its share)"),
    m("waker_share_pct", "% of a CPU", Neither, false, "latency cells: the waker's CPU time over the run"),
    m("ctxsw_per_s", "/s", Neither, false, "latency cells: context switches a second on the whole guest"),
    m("hackbench_s", "s", Lower, true, "hackbench cells, and the latency cells' load: hackbench's time"),
    m("pingpong_switches_per_s", "/s", Higher, true, "the pipe ping-pong on one CPU: context switches a second"),
    m("pingpong_insns_per_switch", "instructions", Lower, true, "the ping-pong under icount: the guest's instructions per switch (derived from its rate)"),
    m("yield_insns_per_switch", "instructions", Lower, true, "the yielding tasks under icount: the guest's instructions per switch"),
    m("sched_insns_per_switch", "instructions", Lower, true, "`bar`: fair.c's and the Rust core's instructions per ping-pong switch (tools/insnprof)"),
    m("switches_per_s", "/s", Higher, false, "scale cells: switches a second among the yielding tasks"),
    m("ns_per_switch", "ns", Lower, false, "scale cells: guest time per switch"),
    m("max_err_pp", "pp", Lower, false, "fairness cells: the largest distance of a hog's CPU share from its weight-ideal one"),
    m("share_{i}", "", Neither, false, "fairness cells: hog i's share of the CPU (its ideal beside it)"),
    m("forkjob_s", "s", Lower, false, "seed 004: the fork job's completion time"),
    m("cyc_avg_us", "µs", Lower, false, "seed 004: cyclictest's average latency beside the job (or alone)"),
    m("cyc_max_us", "µs", Lower, false, "seed 004: cyclictest's largest latency"),
    m("pipejob_alone_s", "s", Lower, false, "seed 001: the pipe job's time alone"),
    m("pipejob_loaded_s", "s", Lower, false, "seed 001: the pipe job's time beside the hogs"),
    m("pipejob_slowdown", "x alone", Lower, false, "seed 001: loaded over alone, the seed's \"% of the baseline\""),
    m("migrate_max_abs_lag_us", "µs", Lower, false, "seed 003: the sleeper's largest |lag| after a move, from CPU times"),
    m("migrate_max_abs_lag_vr_us", "µs", Lower, false, "seed 003: the sleeper's largest |lag| at placement, from the vruntimes"),
    m("migrate_max_abs_lag_vr_net_us", "µs", Lower, false, "seed 003: the same less what the read adds, the hog's run after the placement (wake latency × w_sleeper / (w_sleeper + w_hog)): what stock's runs are held to the clamp with"),
    m("migrate_share", "", Neither, false, "seed 003: the sleeper's CPU share after its wakeup (fair: w_sleeper / (w_sleeper + w_hog), 0.5 beside a nice-0 hog)"),
    m("migrate_place_rounds", "rounds", Neither, false, "seed 003 (rust kernel, record of placements): the rounds whose wakeup placement the kernel's record kept"),
    m("migrate_place_max_abs_vlag_us", "µs", Lower, false, "seed 003 (rust kernel): the sleeper's largest |vlag| at its wakeup placement, the lag saved at dequeue, as `place_entity()` read it"),
    m("migrate_place_max_abs_lag_us", "µs", Neither, false, "seed 003 (rust kernel): the largest |lag| applied at the wakeup placement, after PLACE_LAG's scaling by (W + w) / W"),
    m("migrate_place_limit_us", "µs", Neither, false, "seed 003 (rust kernel): the largest clamp limit the record gives for the sleeper"),
    m("migrate_place_over", "rounds", Lower, false, "seed 003 (rust kernel): the rounds whose |vlag| exceeded the record's limit"),
    m("migrate_place_scale_mismatch", "rounds", Lower, false, "seed 003 (rust kernel): the rounds whose applied lag was not vlag + vlag * w / W"),
    m("{group}_avg_delay_ms", "ms", Lower, false, "seed 002: eevdf-mixed's group's average delay"),
    m("{group}_loops_per_s", "/s", Higher, false, "seed 002: eevdf-mixed's group's work loops a second"),
    m("{group}_cpu_pct", "% of a CPU", Neither, false, "seed 002: a task of the group's CPU time over eevdf-mixed's window (its fair share: 1 / the tasks)"),
    m("{group}_missed_pct", "%", Lower, false, "seed 002: the interactive frames whose burst ended after the next frame was due"),
    m("{group}_p50_us", "µs", Lower, false, "seed 002: the interactive frames' median lateness"),
    m("{group}_p99_us", "µs", Lower, false, "seed 002: the interactive frames' p99 lateness"),
    m("perf_{group}_runtime_ms", "ms", Neither, false, "seed 002: `perf sched latency`'s runtime of the group"),
    m("perf_{group}_switches", "", Neither, false, "seed 002: `perf sched latency`'s switches (delays counted)"),
    m("perf_{group}_avg_delay_ms", "ms", Lower, false, "seed 002: `perf sched latency`'s average delay"),
    m("perf_{group}_max_delay_ms", "ms", Lower, false, "seed 002: `perf sched latency`'s largest delay"),
    m("perf_{group}_sum_delay_ms", "ms", Lower, false, "seed 002: the average delay times the count (the seed's sum)"),
    m("wake_p50_us", "µs", Lower, false, "rt-app cells: the median wakeup latency of the tasks that sleep"),
    m("wake_p99_us", "µs", Lower, false, "rt-app cells: their p99"),
    m("wake_max_us", "µs", Lower, false, "rt-app cells: their largest"),
    m("missed_pct", "%", Lower, false, "rt-app cells: periods missed, over all periodic tasks"),
    m("share_err_pp", "pp", Lower, false, "rt-app cells: the largest distance of a task's share from its fair one"),
    m("{task}.share_err_pp", "pp", Neither, false, "rt-app cells: the task's share minus its fair share (signed)"),
    m("{task}.p90_us", "µs", Lower, false, "rt-app cells: a sleeper's p90 wakeup latency"),
    m("{task}.p99_us", "µs", Lower, false, "rt-app cells: the task's p99 wakeup latency"),
    m("{task}.p999_us", "µs", Lower, false, "rt-app cells: a sleeper's p99.9 wakeup latency"),
    m("{task}.max_us", "µs", Lower, false, "rt-app cells: the task's largest wakeup latency"),
    m("{task}.slowdown_pct", "%", Lower, false, "seed 001: a sleeper's activation time over its time alone"),
    m("{task}.preempt_per_act", "", Lower, false, "seed 001: a sleeper's involuntary switches an activation"),
    m("msgr_p50_us", "µs", Lower, false, "`next`: eevdf-msgr's median wakeup latency (schbench-shaped)"),
    m("msgr_p90_us", "µs", Lower, false, "`next`: eevdf-msgr's p90"),
    m("msgr_p99_us", "µs", Lower, false, "`next`: eevdf-msgr's p99"),
    m("msgr_p999_us", "µs", Lower, false, "`next`: eevdf-msgr's p99.9"),
    m("msgr_rps", "/s", Higher, false, "`next`: eevdf-msgr's requests a second"),
    m("t_run_p50_us", "µs", Neither, false, "`next` storm: T's median uninterrupted run"),
    m("t_run_p99_us", "µs", Neither, false, "`next` storm: T's p99 run"),
    m("t_run_max_us", "µs", Neither, false, "`next` storm: T's longest run"),
    m("c_wait_p99_us", "µs", Lower, false, "`next` storm: the competitor's p99 wait"),
    m("c_wait_max_us", "µs", Lower, false, "`next` storm: the competitor's longest wait"),
    m("t_share", "", Neither, false, "`next` storm: T's CPU share"),
    m("changes_per_s", "/s", Neither, false, "`next` storm: the sched_changes made a second"),
    m("ctr:{counter}", "", Neither, false, "`next` and seed 002 cells: a sched_eevdf counter's count over the cell (seed 002: over `perf sched record`; Documentation/debugfs.md)"),
    m("ineligible_picks_pct", "% of picks", Neither, false, "seed 002, Rust kernel: `picks_ineligible_earliest` over `picks`, the picks where ELIGIBLE passed over an earlier deadline"),
    m("ineligible_picks_per_s", "/s", Neither, false, "seed 002, Rust kernel: `picks_ineligible_earliest` a second of eevdf-mixed's warm-up and window"),
];

/// `name` against `pattern`: equal, or, where the pattern has a `{...}`, the same text
/// around a non-empty part.
fn matches(pattern: &str, name: &str) -> bool {
    match (pattern.find('{'), pattern.find('}')) {
        (Some(a), Some(b)) if a < b => {
            let (pre, post) = (&pattern[..a], &pattern[b + 1..]);
            name.len() > pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        _ => pattern == name,
    }
}

/// The table's entry for `name`: its own, else the family that fixes the most of it
/// (`perf_{group}_avg_delay_ms` before `{group}_avg_delay_ms`).
pub fn find(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.pattern == name).or_else(|| {
        METRICS
            .iter()
            .filter(|m| matches(m.pattern, name))
            .max_by_key(|m| m.pattern.len())
    })
}

/// The metric's unit and direction, and whether the performance bar applies: its
/// entry in [`METRICS`] (none: no unit, no bar; `metrics_are_known` keeps the sources'
/// names in the table).
pub fn meta(name: &str) -> (&'static str, Better, bool) {
    find(name).map_or(("", Better::Neither, false), |m| (m.unit, m.better, m.bar))
}

/// Documentation/lab.md's table of the metrics, from [`METRICS`].
#[cfg(test)]
fn markdown_table() -> String {
    let mut t = String::from("| metric | unit | better | bar | what |\n|---|---|---|---|---|\n");
    for m in METRICS {
        t.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            m.pattern,
            if m.unit.is_empty() { "-" } else { m.unit },
            match m.better {
                Lower => "lower",
                Higher => "higher",
                Neither => "-",
            },
            if m.bar { "yes" } else { "" },
            m.what
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_families_resolve() {
        assert_eq!(find("lat_avg_us").unwrap().unit, "µs");
        assert!(find("lat_avg_us").unwrap().bar);
        assert_eq!(find("share_3").unwrap().pattern, "share_{i}");
        // An exact entry wins over a family that would also match.
        assert_eq!(find("share_err_pp").unwrap().pattern, "share_err_pp");
        assert_eq!(find("sleeper.p99_us").unwrap().pattern, "{task}.p99_us");
        assert_eq!(find("ctr:lag_error").unwrap().pattern, "ctr:{counter}");
        assert_eq!(
            find("perf_interactive_avg_delay_ms").unwrap().pattern,
            "perf_{group}_avg_delay_ms"
        );
        assert!(find("lat_avg_ms").is_none(), "a typo is not a metric");
        assert!(find("ctr:").is_none(), "a family needs its part");
        let mut seen = std::collections::BTreeSet::new();
        for m in METRICS {
            assert!(seen.insert(m.pattern), "{} twice", m.pattern);
            assert!(
                !m.bar || m.better != Neither,
                "{}: a bar needs a direction",
                m.pattern
            );
        }
    }

    /// Every string literal in the lab's sources that names a metric (by its shape: a unit
    /// suffix, or a known prefix) is in the table, so a typo in a report's lookup fails
    /// here instead of reading nothing.
    #[test]
    fn metrics_are_known() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        // Literals with a metric's shape that are not metrics: an rt-app spec key, the
        // counters' prefix.
        let not_metrics = ["slice_us", "ctr:"];
        let suffixes = [
            "_us",
            "_ms",
            "_s",
            "_pct",
            "_pp",
            "_per_s",
            "_per_switch",
            "_rps",
            "_slowdown",
        ];
        let mut unknown = Vec::new();
        for e in std::fs::read_dir(&src).unwrap() {
            let path = e.unwrap().path();
            // This file's literals are the table itself and its tests' made-up names.
            if path.file_name().is_some_and(|n| n == "metrics.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for lit in text.split('"').skip(1).step_by(2) {
                let shaped = lit
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.:".contains(c))
                    && lit.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                    && (suffixes.iter().any(|s| lit.ends_with(s)) || lit.starts_with("ctr:"));
                if shaped && !not_metrics.contains(&lit) && find(lit).is_none() {
                    unknown.push(format!(
                        "{}: \"{lit}\"",
                        path.file_name().unwrap().to_string_lossy()
                    ));
                }
            }
        }
        assert!(unknown.is_empty(), "not in metrics::METRICS: {unknown:?}");
    }

    /// Documentation/lab.md carries [`markdown_table`] between its markers.
    #[test]
    fn lab_md_has_the_table() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Documentation/lab.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = (
            "<!-- metrics table: begin -->\n",
            "<!-- metrics table: end -->",
        );
        let a = doc
            .find(begin)
            .expect("lab.md has no metrics table markers")
            + begin.len();
        let b = doc.find(end).expect("lab.md has no end marker");
        let want = markdown_table();
        if doc[a..b] != want {
            if std::env::var_os("EEVDF_BLESS").is_some() {
                std::fs::write(&path, format!("{}{want}{}", &doc[..a], &doc[b..])).unwrap();
            } else {
                panic!("lab.md's metrics table is stale: EEVDF_BLESS=1 cargo test -p eevdf-lab metrics");
            }
        }
    }
}
