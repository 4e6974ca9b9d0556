//! Statistics of a kernel-faithful run: one struct per task, one for the run.
//!
//! The same structs feed the terminal table ([`Report::table`]) and `--json`
//! (`serde_json`), so the two views cannot disagree. Every field says its unit in its name.

use serde::Serialize;

/// Per-task results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TaskStats {
    /// Task name (`name.k` for the k-th of a `count` group).
    pub name: String,
    /// Nice value, if the scenario gave one.
    pub nice: Option<i32>,
    /// Load weight, user-visible units (nice 0 = 1024).
    pub weight: u64,
    /// The slice the core used for the task at the end of the run, in ns.
    pub slice_ns: u64,
    /// CPU time received, in ns.
    pub runtime_ns: u64,
    /// `runtime_ns` over the simulated time the task existed (fork to exit or end).
    pub cpu_share: f64,
    /// Number of wakeups whose latency was measured (the task got the CPU after them).
    pub wakeups: u64,
    /// Wakeup latency, from the wakeup (the timer expiry for periodic tasks) to the moment
    /// the task starts running: minimum, in ns.
    pub wakeup_latency_min_ns: u64,
    /// Mean wakeup latency, in ns.
    pub wakeup_latency_avg_ns: f64,
    /// 99th percentile (nearest rank) wakeup latency, in ns.
    pub wakeup_latency_p99_ns: u64,
    /// Maximum wakeup latency, in ns.
    pub wakeup_latency_max_ns: u64,
    /// Times the task was switched in.
    pub switches_in: u64,
    /// Times the task was switched out while still runnable (involuntary: tick, wakeup
    /// preemption); the rest of its switch-outs were sleeps.
    pub preempted: u64,
    /// Minimum of the task's virtual lag `V − v_i`, in virtual ns, sampled at every tick
    /// and every pick while the task was queued.
    pub lag_min_vns: i64,
    /// Maximum of the virtual lag, in virtual ns.
    pub lag_max_vns: i64,
    /// Longest time the task was runnable without running (from a wakeup, a fork or a
    /// preemption to the next time it got the CPU), in ns.
    pub wait_max_ns: u64,
    /// Total time runnable without running, in ns.
    pub wait_total_ns: u64,
    /// Longest stretch on the CPU without a switch, in ns.
    pub run_max_ns: u64,
    /// Dequeues whose saved lag, before the clamp, was outside Vincent Guittot's bound
    /// (the core's `lag_error`: ±(slice + tick), or ±max(slice, base slice + tick) without
    /// RUN_TO_PARITY): what the kernel's `lag_error` counter counts.
    pub lag_errors: u64,
    /// Lags the core's limit clamped when it saved them (dequeue, DELAY_ZERO requeue),
    /// positive ones (the task was owed more than the limit keeps): the kernel's
    /// `lag_clamped_pos`.
    pub lag_clamped_pos: u64,
    /// The same for negative lags: `lag_clamped_neg`.
    pub lag_clamped_neg: u64,
}

/// Whole-run results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The scenario's name.
    pub scenario: String,
    /// Simulated time, in ns.
    pub duration_ns: u64,
    /// Tick rate.
    pub hz: u32,
    /// Base slice, in ns.
    pub base_slice_ns: u64,
    /// Feature flags at the start, by name.
    pub features: Vec<(String, bool)>,
    /// CPU time nobody used, in ns.
    pub idle_ns: u64,
    /// Context switches (a different task got the CPU, idle not counted).
    pub context_switches: u64,
    /// Events the loop handled (ticks, wakeups, burst ends, forks, exits, feature changes).
    pub events: u64,
    /// Lag errors of all tasks (see [`TaskStats::lag_errors`]).
    pub lag_errors: u64,
    /// Per task, in scenario order.
    pub tasks: Vec<TaskStats>,
}

/// Nearest-rank percentile of `samples` (sorted in place by selection). `p` in (0, 100].
pub fn percentile(samples: &mut [u64], p: f64) -> u64 {
    if samples.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    let idx = rank.clamp(1, samples.len()) - 1;
    *samples.select_nth_unstable(idx).1
}

impl TaskStats {
    /// Fills the latency fields from the raw samples.
    pub fn set_latencies(&mut self, samples: &mut [u64]) {
        self.wakeups = samples.len() as u64;
        if samples.is_empty() {
            return;
        }
        let sum: u128 = samples.iter().map(|&x| u128::from(x)).sum();
        self.wakeup_latency_avg_ns = sum as f64 / samples.len() as f64;
        self.wakeup_latency_min_ns = *samples.iter().min().unwrap_or(&0);
        self.wakeup_latency_max_ns = *samples.iter().max().unwrap_or(&0);
        self.wakeup_latency_p99_ns = percentile(samples, 99.0);
    }
}

impl Report {
    /// Looks a task up by name.
    pub fn task(&self, name: &str) -> Option<&TaskStats> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// Sum of `runtime_ns` of the tasks whose name is `prefix` or starts with `prefix.`.
    pub fn group_runtime_ns(&self, prefix: &str) -> u64 {
        self.group(prefix).map(|t| t.runtime_ns).sum()
    }

    /// The tasks of one `[[task]]` table.
    pub fn group<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a TaskStats> + 'a {
        self.tasks.iter().filter(move |t| {
            t.name == prefix
                || t.name
                    .strip_prefix(prefix)
                    .is_some_and(|r| r.starts_with('.'))
        })
    }

    /// The human-readable table: one line per task (groups of more than `max_rows` tasks
    /// are cut with a note).
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario: {}  ({} ms simulated, HZ={}, base slice {} us)",
            self.scenario,
            self.duration_ns / 1_000_000,
            self.hz,
            self.base_slice_ns / 1000
        );
        let on: Vec<&str> = self
            .features
            .iter()
            .map(|(n, v)| if *v { n.as_str() } else { "" })
            .filter(|n| !n.is_empty())
            .collect();
        let _ = writeln!(s, "features on: {}", on.join(" "));
        let _ = writeln!(
            s,
            "idle {:.3} ms, context switches {}, events {}, lag errors {}",
            self.idle_ns as f64 / 1e6,
            self.context_switches,
            self.events,
            self.lag_errors
        );
        let _ = writeln!(
            s,
            concat!(
                "{:<16} {:>6} {:>8} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>10} {:>10}",
                " {:>9} {:>7} {:>7} {:>7}"
            ),
            "task",
            "weight",
            "slice_us",
            "share",
            "wakeups",
            "lat_min",
            "lat_avg",
            "lat_p99",
            "lat_max",
            "sw_in",
            "preempt",
            "lag_min",
            "lag_max",
            "wait_max",
            "lag_err",
            "clamp+",
            "clamp-"
        );
        let _ = writeln!(
            s,
            concat!(
                "{:<16} {:>6} {:>8} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>10} {:>10}",
                " {:>9} {:>7} {:>7} {:>7}"
            ),
            "", "", "", "", "", "us", "us", "us", "us", "", "", "vus", "vus", "us", "", "", ""
        );
        for t in &self.tasks {
            let _ = writeln!(
                s,
                concat!(
                    "{:<16} {:>6} {:>8} {:>7.4} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8} {:>8}",
                    " {:>10.1} {:>10.1} {:>9.1} {:>7} {:>7} {:>7}"
                ),
                t.name,
                t.weight,
                t.slice_ns / 1000,
                t.cpu_share,
                t.wakeups,
                t.wakeup_latency_min_ns as f64 / 1e3,
                t.wakeup_latency_avg_ns / 1e3,
                t.wakeup_latency_p99_ns as f64 / 1e3,
                t.wakeup_latency_max_ns as f64 / 1e3,
                t.switches_in,
                t.preempted,
                t.lag_min_vns as f64 / 1e3,
                t.lag_max_vns as f64 / 1e3,
                t.wait_max_ns as f64 / 1e3,
                t.lag_errors,
                t.lag_clamped_pos,
                t.lag_clamped_neg,
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&mut v, 99.0), 99);
        assert_eq!(percentile(&mut v, 100.0), 100);
        let mut w = vec![5];
        assert_eq!(percentile(&mut w, 99.0), 5);
        let mut e: Vec<u64> = vec![];
        assert_eq!(percentile(&mut e, 99.0), 0);
    }

    #[test]
    fn latency_summary() {
        let mut t = TaskStats::default();
        let mut s = vec![10, 30, 20];
        t.set_latencies(&mut s);
        assert_eq!(t.wakeups, 3);
        assert_eq!(t.wakeup_latency_min_ns, 10);
        assert_eq!(t.wakeup_latency_max_ns, 30);
        assert!((t.wakeup_latency_avg_ns - 20.0).abs() < 1e-9);
        assert_eq!(t.wakeup_latency_p99_ns, 30);
    }
}
