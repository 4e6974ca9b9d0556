//! Guest-side workloads for the experiment lab (`eevdf-lab`), the records they print, and
//! `eevdfctl`'s parsers.
//!
//! The binaries are built static for the VM (`--target x86_64-unknown-linux-musl`) and
//! installed at `/eevdf/bin` by eevdf-vm. `eevdf-slice` is the guest tests'
//! sched_setattr()/sched_getattr() slice tool (its `check` is tests/guest/12-eevdf-setattr.sh).
//! `eevdfctl` is the user's tool: features, per-task slices, and sched_eevdf's counters and
//! runqueue snapshot; its debugfs parsers are [`debugfs`], unit-tested here on the host.
//! The workloads (`eevdf-waker`, `eevdf-pingpong`, `eevdf-share`, `eevdf-scale`) each end by
//! printing one line, [`RESULT_PREFIX`] followed by a JSON [`Record`];
//! eevdf-lab links this library on the host and parses those lines with the same types, so the
//! two sides cannot drift apart.
//!
//! Everything is measured with what stock 6.12 has: `clock_nanosleep`/`clock_gettime`,
//! `/proc/stat` (`ctxt`), `/proc/schedstat` (per-CPU `sched_count`, `run_delay`),
//! `/proc/<pid>/schedstat` (runtime) and `/proc/<pid>/status` (context switches). The
//! project's own counters (/sys/kernel/debug/sched/eevdf, read by `eevdfctl`) are not used,
//! so that the same workloads measure the stock kernel.

use serde::{Deserialize, Serialize};
use std::io;

pub mod debugfs;
pub mod sys;

/// What every workload's result line starts with.
pub const RESULT_PREFIX: &str = "@@json ";

/// One workload's result, as printed on its [`RESULT_PREFIX`] line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Waker(WakerResult),
    PingPong(PingPongResult),
    Share(ShareResult),
    Scale(ScaleResult),
    Mixed(MixedResult),
    ForkJob(ForkJobResult),
    Migrate(MigrateResult),
}

impl Record {
    /// The line a workload prints.
    pub fn to_line(&self) -> String {
        format!(
            "{RESULT_PREFIX}{}",
            serde_json::to_string(self).expect("records always serialise")
        )
    }

    /// Parse a result line; `None` when `line` is not one.
    pub fn from_line(line: &str) -> Option<serde_json::Result<Record>> {
        let json = line.trim().strip_prefix(RESULT_PREFIX)?;
        Some(serde_json::from_str(json))
    }
}

/// The periodic waker: how late each absolute-time wakeup was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WakerResult {
    /// The measured tasks' scheduling policy, read back with sched_getattr (`other`,
    /// `batch` or `idle`: the fair class). Empty in records from before it was kept.
    #[serde(default)]
    pub policy: String,
    /// Period between wakeups, in microseconds.
    pub interval_us: u64,
    /// The slice asked for with sched_setattr (sched_runtime), ns; 0 = left at the base slice.
    pub slice_requested_ns: u64,
    /// The slice sched_getattr returned afterwards, ns (after the kernel's clamp).
    pub slice_effective_ns: u64,
    /// Wakeups measured.
    pub samples: u64,
    /// Periods skipped because a wakeup was later than a whole period.
    pub missed: u64,
    /// Lateness (wakeup time minus requested time), microseconds.
    pub min_us: f64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// `(percentile, microseconds)` pairs at [`QUANTILE_POINTS`], for distribution plots.
    pub quantiles: Vec<(f64, f64)>,
    /// The waker's own voluntary and involuntary context switches.
    pub waker_nvcsw: u64,
    pub waker_nivcsw: u64,
    /// Context switches on the whole machine during the run (`/proc/stat` ctxt delta).
    pub system_ctxsw: u64,
    /// Wall time of the measurement, seconds.
    pub duration_s: f64,
    /// Exit status of the background command, when there was one.
    pub bg_status: Option<i32>,
    /// The waker's average wait on the runqueue per wakeup, microseconds
    /// (`/proc/thread-self/schedstat` run_delay delta over the wakeups). Unlike
    /// the lateness above it leaves out timer lateness, so it is the part of the
    /// latency that the scheduler's pick decides, and is far less sensitive to a
    /// vCPU that the host did not run.
    #[serde(default)]
    pub run_delay_avg_us: f64,
    /// The waker's own CPU time per wakeup, microseconds (schedstat
    /// sum_exec_runtime delta over the wakeups). A slice shorter than this is
    /// used up at every wakeup, so it buys no earlier deadline.
    #[serde(default)]
    pub run_avg_us: f64,
}

/// Two processes bouncing a byte over two pipes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PingPongResult {
    /// The measured tasks' scheduling policy, read back with sched_getattr (`other`,
    /// `batch` or `idle`: the fair class). Empty in records from before it was kept.
    #[serde(default)]
    pub policy: String,
    pub round_trips: u64,
    pub duration_s: f64,
    /// Two switches per round trip: the rate the fair class sustains.
    pub switches_per_s: f64,
    /// The machine's context switches per second during the run (`/proc/stat`).
    pub system_ctxsw_per_s: f64,
    /// The CPU both ends were pinned to, if any.
    pub cpu: Option<u32>,
}

/// CPU hogs on one CPU: each one's share of the CPU against its weight-ideal share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareResult {
    /// The measured tasks' scheduling policy, read back with sched_getattr (`other`,
    /// `batch` or `idle`: the fair class). Empty in records from before it was kept.
    #[serde(default)]
    pub policy: String,
    pub duration_s: f64,
    pub hogs: Vec<HogShare>,
    /// max |share - ideal| over the hogs, in percentage points.
    pub max_abs_err_pp: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HogShare {
    pub nice: i32,
    /// cgroup path under the lab's root, or "" for the root group.
    pub group: String,
    /// What the weights say the share should be (0..1).
    pub ideal: f64,
    /// What it got (0..1), from `/proc/<pid>/schedstat` runtime deltas.
    pub share: f64,
    pub runtime_ns: u64,
}

/// Many runnable tasks on one CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleResult {
    /// The measured tasks' scheduling policy, read back with sched_getattr (`other`,
    /// `batch` or `idle`: the fair class). Empty in records from before it was kept.
    #[serde(default)]
    pub policy: String,
    pub tasks: u32,
    /// `yield` (each task loops on sched_yield: every switch is a pick) or `spin`.
    pub mode: String,
    pub duration_s: f64,
    /// Sum of the tasks' voluntary and involuntary switches over the run.
    pub switches: u64,
    pub switches_per_s: f64,
    /// Wall time per switch on the loaded CPU, ns: an upper bound on the cost of a pick,
    /// since it also holds the syscall and the switch itself.
    pub ns_per_switch: f64,
    /// `/proc/schedstat` of that CPU: schedule() calls and summed run delay over the run.
    pub sched_count: Option<u64>,
    pub run_delay_ns: Option<u64>,
}

/// Seed 003's long sleeper that wakes on another CPU (`eevdf-migrate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MigrateResult {
    pub policy: String,
    /// `affinity` (moved while asleep, one hog on each CPU) or `natural`.
    pub mode: String,
    pub sleep_ms: u64,
    pub after_ms: u64,
    pub rounds: Vec<MigrateRound>,
}

/// One sleep and wakeup of [`MigrateResult`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MigrateRound {
    /// The CPU the sleeper ran on right after waking.
    pub woke_on: u32,
    /// How late it ran after its timer, µs.
    pub wake_latency_us: f64,
    /// Its lag at placement, µs of CPU time at nice 0, from how far it ran ahead of (or
    /// behind) the equal-weight hog on its new CPU (`affinity` only).
    pub lag_us: Option<f64>,
    /// Its share over the first 100 ms after waking: of its and the hog's CPU time
    /// (`affinity`, fair share 0.5), or of the wall time (`natural`).
    pub share_first_100ms: f64,
    /// The same over the whole window.
    pub share: f64,
}

/// Seed 004's fork-heavy CPU-bound job (`eevdf-forkjob`), a kernel build's stand-in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForkJobResult {
    pub policy: String,
    /// Parallel slots (`make -j`).
    pub jobs: u32,
    /// The guest's CPUs: jobs / cpus is the load (1 = 100%).
    pub cpus: u32,
    pub files: u32,
    pub nice: i32,
    /// CPU time the files asked for in all, s.
    pub cpu_s: f64,
    /// Completion time, s.
    pub elapsed_s: f64,
}

/// Seed 002's mixed load (`eevdf-mixed`): massive_intr-shaped compute against frames.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixedResult {
    /// The measured tasks' scheduling policy, read back with sched_getattr.
    pub policy: String,
    /// The CPUs every task was pinned to.
    pub cpus: Vec<u32>,
    pub duration_s: f64,
    pub compute_run_us: u64,
    pub compute_sleep_us: u64,
    pub frame_us: u64,
    pub burst_us: u64,
    /// `massive_intr`, then `interactive` (a group with no tasks is left out).
    pub groups: Vec<MixedGroup>,
}

/// One group of [`MixedResult`], over the measured interval: the columns of `perf sched
/// latency` that /proc gives (the maximum delay needs perf), and the group's own counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixedGroup {
    pub name: String,
    pub tasks: u32,
    pub runtime_ms: f64,
    /// Voluntary and involuntary context switches (/proc/PID/status).
    pub switches: u64,
    /// Run delay per timeslice (/proc/PID/schedstat: run delay over timeslices run).
    pub avg_delay_ms: f64,
    pub sum_delay_ms: f64,
    /// Compute loops (throughput) or frames started.
    pub loops: u64,
    /// Frames whose burst ended after the next frame was due (interactive only).
    pub missed: u64,
    /// How late each frame started (interactive only).
    pub latency: Option<FrameLatency>,
}

/// Frame-start lateness, µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameLatency {
    pub samples: u64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl FrameLatency {
    /// The summary of lateness samples in ns.
    pub fn from_ns(lat_ns: &[u64]) -> FrameLatency {
        let s = summarise_latencies_ns(lat_ns);
        FrameLatency {
            samples: lat_ns.len() as u64,
            avg_us: s.avg_us,
            p50_us: s.p50_us,
            p99_us: s.p99_us,
            p999_us: s.p999_us,
            max_us: s.max_us,
        }
    }
}

/// The calling thread's policy name, read back with sched_getattr, if it is in the fair
/// class (SCHED_OTHER, SCHED_BATCH or SCHED_IDLE); an error naming `tool` otherwise. The
/// workloads call it before measuring, so that a record labelled with the fair class
/// cannot come from an RT or deadline task (a shell started under `chrt`, say).
pub fn fair_policy(tool: &str) -> io::Result<String> {
    let attr = sys::getattr(0)?;
    match attr.sched_policy {
        sys::SCHED_OTHER | sys::SCHED_BATCH | sys::SCHED_IDLE => {
            Ok(sys::policy_name(attr.sched_policy))
        }
        p => Err(io::Error::other(format!(
            "{tool} measures the fair class, but it runs as {}: start it as a SCHED_OTHER task",
            sys::policy_name(p)
        ))),
    }
}

/// Percentiles the waker reports for plots.
pub const QUANTILE_POINTS: &[f64] = &[
    0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 100.0,
];

/// The `p`th percentile (0..=100) of sorted data, by linear interpolation between ranks.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let rank = p.clamp(0.0, 100.0) / 100.0 * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
        }
    }
}

/// Summarise lateness samples in nanoseconds into a [`WakerResult`]'s statistics.
pub fn summarise_latencies_ns(lat_ns: &[u64]) -> LatencySummary {
    let mut us: Vec<f64> = lat_ns.iter().map(|&n| n as f64 / 1000.0).collect();
    us.sort_by(f64::total_cmp);
    let avg = if us.is_empty() {
        f64::NAN
    } else {
        us.iter().sum::<f64>() / us.len() as f64
    };
    LatencySummary {
        min_us: quantile(&us, 0.0),
        avg_us: avg,
        p50_us: quantile(&us, 50.0),
        p90_us: quantile(&us, 90.0),
        p99_us: quantile(&us, 99.0),
        p999_us: quantile(&us, 99.9),
        max_us: quantile(&us, 100.0),
        quantiles: QUANTILE_POINTS
            .iter()
            .map(|&p| (p, quantile(&us, p)))
            .collect(),
    }
}

/// The statistics part of a [`WakerResult`].
#[derive(Clone, Debug, PartialEq)]
pub struct LatencySummary {
    pub min_us: f64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub quantiles: Vec<(f64, f64)>,
}

/// kernel/sched/core.c's `sched_prio_to_weight[]`, nice -20 ..= 19.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// The load weight of a task at `nice` (clamped to -20..=19, as the syscall does).
pub fn nice_to_weight(nice: i32) -> f64 {
    SCHED_PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize] as f64
}

/// A cgroup's weight as the fair class sees it: cgroup v2 `cpu.weight` (1..=10000, default
/// 100) becomes `shares = weight * 1024 / 100`, on the same scale as a nice-0 task's 1024.
pub fn cpu_weight_to_load(cpu_weight: u32) -> f64 {
    cpu_weight as f64 * 1024.0 / 100.0
}

/// The share of one CPU each hog should get when all are runnable on that CPU all the time.
///
/// `hogs` are `(nice, group)` with `group` a `/`-separated path ("" = root); `groups` gives
/// `cpu.weight` per path (absent = 100). At each level of the hierarchy an entity gets
/// `w / Σ w` over the sibling entities that hold at least one hog, and a hog's share is the
/// product of those fractions from the root down: what weighted fair queueing promises.
pub fn ideal_shares(hogs: &[(i32, String)], groups: &[(String, u32)]) -> Vec<f64> {
    // Each hog's chain of (entity key, weight) from the root down.
    let weight_of = |path: &str| {
        groups
            .iter()
            .find(|(p, _)| p == path)
            .map_or(100, |&(_, w)| w)
    };
    let chains: Vec<Vec<(String, f64)>> = hogs
        .iter()
        .enumerate()
        .map(|(i, (nice, group))| {
            let mut chain = Vec::new();
            let mut prefix = String::new();
            for part in group.split('/').filter(|s| !s.is_empty()) {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                chain.push((
                    format!("g:{prefix}"),
                    cpu_weight_to_load(weight_of(&prefix)),
                ));
            }
            chain.push((format!("t:{i}"), nice_to_weight(*nice)));
            chain
        })
        .collect();
    chains
        .iter()
        .map(|chain| {
            let mut share = 1.0;
            for (depth, (key, w)) in chain.iter().enumerate() {
                // Siblings: distinct entities at this depth whose parent is this entity's parent.
                let parent = &chain[..depth];
                let mut seen: Vec<(&str, f64)> = Vec::new();
                for other in &chains {
                    if other.len() > depth
                        && other[..depth]
                            .iter()
                            .map(|e| &e.0)
                            .eq(parent.iter().map(|e| &e.0))
                        && !seen.iter().any(|(k, _)| *k == other[depth].0)
                    {
                        seen.push((&other[depth].0, other[depth].1));
                    }
                }
                let total: f64 = seen.iter().map(|(_, w)| w).sum();
                debug_assert!(seen.iter().any(|(k, _)| k == key));
                share *= w / total;
            }
            share
        })
        .collect()
}

/// Parse `NICE[@GROUP]`, the `--hog` syntax of eevdf-share.
pub fn parse_hog(spec: &str) -> io::Result<(i32, String)> {
    let (nice, group) = spec.split_once('@').unwrap_or((spec, ""));
    let nice = nice.trim().parse().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad hog '{spec}': want NICE[@GROUP]"),
        )
    })?;
    Ok((nice, group.trim_matches('/').to_string()))
}

/// Parse `PATH=WEIGHT`, the `--group` syntax of eevdf-share.
pub fn parse_group(spec: &str) -> io::Result<(String, u32)> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad group '{spec}': want PATH=WEIGHT with WEIGHT in 1..=10000"),
        )
    };
    let (path, w) = spec.split_once('=').ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    if !(1..=10000).contains(&w) || path.trim_matches('/').is_empty() {
        return Err(bad());
    }
    Ok((path.trim_matches('/').to_string(), w))
}

/// A slice as a user writes it: `300us`, `3ms`, `0.5ms`, `1s`, `250000ns` or bare
/// nanoseconds (`250000`). The value in ns and the unit it was given in (`ns` for a bare
/// number), so that a tool can say which unit it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceArg {
    /// The slice, ns.
    pub ns: u64,
    /// The unit it was written in: `ns`, `us`, `ms` or `s`.
    pub unit: &'static str,
}

impl std::fmt::Display for SliceArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ns", self.ns)
    }
}

/// Parse a [`SliceArg`]: digits, an optional fraction, an optional unit (`ns`, `us`, `µs`,
/// `ms`, `s`; none means ns). Exact: a fraction finer than 1 ns, a value above `u64::MAX` ns
/// or anything else is an error that says what is wanted.
pub fn parse_slice(s: &str) -> Result<SliceArg, String> {
    let bad = |why: &str| {
        format!("bad slice '{s}': {why} (want e.g. 300us, 3ms, 0.5ms or bare nanoseconds)")
    };
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let (unit, scale): (&'static str, u64) = match unit.trim() {
        "" | "ns" => ("ns", 1),
        "us" | "\u{b5}s" => ("us", 1_000),
        "ms" => ("ms", 1_000_000),
        "s" => ("s", 1_000_000_000),
        _ => return Err(bad("unknown unit")),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad("no number"));
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("not a number"));
    }
    let too_big = || bad("more than 2^64-1 ns");
    let int: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_big())?
    };
    let mut ns = int.checked_mul(scale).ok_or_else(too_big)?;
    // The fraction, digit by digit: each must land on a whole nanosecond.
    let mut place = scale;
    for d in frac.bytes() {
        let digit = u64::from(d - b'0');
        if place % 10 != 0 {
            if digit != 0 {
                return Err(bad("finer than 1 ns"));
            }
            continue;
        }
        place /= 10;
        ns = ns.checked_add(digit * place).ok_or_else(too_big)?;
    }
    Ok(SliceArg { ns, unit })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 50.0), 3.0);
        assert_eq!(quantile(&v, 100.0), 5.0);
        assert_eq!(quantile(&v, 12.5), 1.5);
        assert!(quantile(&[], 50.0).is_nan());
    }

    #[test]
    fn nice_split_is_the_seed_70_30() {
        let s = ideal_shares(&[(-4, String::new()), (0, String::new())], &[]);
        assert!((s[0] - 2501.0 / (2501.0 + 1024.0)).abs() < 1e-12);
        assert!((s[0] - 0.7095).abs() < 0.001, "{s:?}");
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn nested_groups_multiply_down_the_tree() {
        let hogs = [
            (0, "a/x".to_string()),
            (0, "a/y".to_string()),
            (0, "b".to_string()),
        ];
        let groups = [
            ("a".to_string(), 200),
            ("b".to_string(), 100),
            ("a/x".to_string(), 100),
            ("a/y".to_string(), 300),
        ];
        let s = ideal_shares(&hogs, &groups);
        let want = [2.0 / 3.0 * 0.25, 2.0 / 3.0 * 0.75, 1.0 / 3.0];
        for (g, w) in s.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{s:?}");
        }
    }

    #[test]
    fn equal_hogs_split_evenly_and_empty_groups_do_not_count() {
        let hogs = vec![(0, String::new()); 4];
        let s = ideal_shares(&hogs, &[("unused".into(), 5000)]);
        assert!(s.iter().all(|x| (x - 0.25).abs() < 1e-12));
    }

    #[test]
    fn specs_parse_and_reject() {
        assert_eq!(parse_hog("-4").unwrap(), (-4, String::new()));
        assert_eq!(parse_hog("0@/a/x/").unwrap(), (0, "a/x".into()));
        assert!(parse_hog("x@a").is_err());
        assert_eq!(parse_group("a/x=300").unwrap(), ("a/x".into(), 300));
        assert!(parse_group("a=0").is_err());
        assert!(parse_group("=5").is_err());
    }

    #[test]
    fn records_round_trip_through_their_line() {
        let r = Record::PingPong(PingPongResult {
            round_trips: 10,
            duration_s: 1.0,
            switches_per_s: 20.0,
            system_ctxsw_per_s: 25.0,
            cpu: Some(0),
            policy: "other".into(),
        });
        let line = r.to_line();
        assert!(line.starts_with("@@json {\"kind\":\"ping_pong\""));
        assert_eq!(Record::from_line(&line).unwrap().unwrap(), r);
        assert!(Record::from_line("Time: 1.0").is_none());
    }

    #[test]
    fn latency_summary_orders_its_statistics() {
        let ns: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        let s = summarise_latencies_ns(&ns);
        assert_eq!(s.min_us, 1.0);
        assert_eq!(s.max_us, 1000.0);
        assert!((s.avg_us - 500.5).abs() < 1e-9);
        assert!(s.p50_us < s.p99_us && s.p99_us < s.p999_us && s.p999_us <= s.max_us);
        assert_eq!(s.quantiles.len(), QUANTILE_POINTS.len());
    }

    #[test]
    fn slices_with_units() {
        let ok = |s: &str, ns: u64, unit: &'static str| {
            assert_eq!(parse_slice(s), Ok(SliceArg { ns, unit }), "{s}");
        };
        ok("250000", 250_000, "ns");
        ok("250000ns", 250_000, "ns");
        ok("300us", 300_000, "us");
        ok("300\u{b5}s", 300_000, "us");
        ok("3ms", 3_000_000, "ms");
        ok("0.5ms", 500_000, "ms");
        ok(".25ms", 250_000, "ms");
        ok("1.000000001s", 1_000_000_001, "s");
        ok("1.5us", 1_500, "us");
        ok(" 3 ms ", 3_000_000, "ms");
        ok("0", 0, "ns");
        ok("18446744073709551615", u64::MAX, "ns");
        for bad in [
            "",
            "ms",
            ".",
            "3 mss",
            "3h",
            "-3ms",
            "1e6",
            "1.5ns",
            "0.0001us",
            "18446744073709551616",
            "18446744074s",
            "3ms3",
            "1..2ms",
            "+3ms",
        ] {
            assert!(parse_slice(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(parse_slice("3h").unwrap_err().contains("want e.g. 300us"));
        // Zeros past 1 ns are exact, so they are fine.
        ok("1.000ns", 1, "ns");
        ok("0.0010us", 1, "us");
    }
}
