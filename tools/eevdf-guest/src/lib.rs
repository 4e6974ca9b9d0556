//! Guest-side workloads for the experiment lab (`eevdf-lab`), the records they print, and
//! `eevdfctl`'s parsers.
//!
//! The binaries are built static for the VM (`--target x86_64-unknown-linux-musl`) and
//! installed at `/eevdf/bin` by eevdf-vm. `eevdf-slice` is the guest tests'
//! sched_setattr()/sched_getattr() slice tool (its `check` is tests/guest/12-eevdf-setattr.sh).
//! `eevdfctl` is the user's tool: features, per-task slices, and sched_eevdf's counters and
//! runqueue snapshot; its debugfs parsers are [`debugfs`], unit-tested here on the host.
//! The workloads (`eevdf-waker`, `eevdf-pingpong`, `eevdf-share`, `eevdf-scale`, and for
//! upstream's next EEVDF features `eevdf-rtapp`, `eevdf-msgr` and `eevdf-storm`) each end by
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

pub mod cputime;
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
    RtApp(RtAppResult),
    Msgr(MsgrResult),
    Storm(Box<StormResult>),
    Mixed(MixedResult),
    ForkJob(ForkJobResult),
    Migrate(MigrateResult),
    PipeJob(PipeJobResult),
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
    /// Every wakeup's lateness as a log-spaced histogram ([`latency_histogram`]), so that
    /// the lab can pool runs and take quantiles of all their wakeups. Empty in records from
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hist: Vec<(u16, u32)>,
    /// The slice the background command was started with, ns (`sched_setattr()` in the
    /// child before its exec, so that it does not inherit the waker's: 0 = the base slice,
    /// as a task that never asked has it). `None`: no background command, or a record from
    /// before the load-slice fix, whose load inherited the waker's slice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_slice_requested_ns: Option<u64>,
    /// The waker and the load as `/proc/<pid>/sched` showed them while the cell ran
    /// ([`TaskReadback`]): the waker first, then the background command and up to two of
    /// its descendants (hackbench's workers, eevdf-share's hogs). Empty in records from
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readback: Vec<TaskReadback>,
    /// The background command's processes (itself and its descendants) at the read-back.
    #[serde(default)]
    pub load_tasks: u32,
}

/// One task's scheduling attributes as `/proc/<pid>/sched` showed them while a workload
/// ran: what the lab holds against the cell's plan (policy, nice, slice).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskReadback {
    /// `waker` or `load`.
    pub role: String,
    pub pid: i32,
    /// The command name, from the file's first line.
    pub comm: String,
    /// `policy` by name (`other`, `batch`, ...; [`sys::policy_name`]).
    pub policy: Option<String>,
    /// The nice value, from `prio` ([`sys::ProcSched::nice`]).
    pub nice: Option<i32>,
    /// `se.slice`, ns (a fair task's only).
    pub slice_ns: Option<u64>,
}

impl TaskReadback {
    /// What the `sched` file `text` of a task in `role` says (its pid and name from the
    /// file's first line; `fallback_pid` when that line is missing).
    pub fn parse(role: &str, fallback_pid: i32, text: &str) -> TaskReadback {
        let p = sys::parse_proc_sched(text);
        let (comm, pid) = sys::parse_proc_sched_head(text).unwrap_or_default();
        TaskReadback {
            role: role.to_string(),
            pid: if pid > 0 { pid } else { fallback_pid },
            comm,
            policy: p.policy.map(sys::policy_name),
            nice: p.nice(),
            slice_ns: p.slice_ns,
        }
    }

    /// Process `pid`'s, read now; `None` when it is gone (or no CONFIG_SCHED_DEBUG).
    pub fn read(role: &str, pid: i32) -> Option<TaskReadback> {
        sys::proc_sched_text(pid).map(|t| TaskReadback::parse(role, pid, &t))
    }

    /// `pid 187 (hackbench): other nice 0 slice 700000 ns`.
    pub fn describe(&self) -> String {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "?".into());
        format!(
            "pid {} ({}): {} nice {} slice {} ns",
            self.pid,
            self.comm,
            opt(self.policy.clone()),
            opt(self.nice.map(|n| n.to_string())),
            opt(self.slice_ns.map(|n| n.to_string()))
        )
    }
}

/// The slice to ask `sched_setattr()` for, ns, at `x` times the base slice `base_ns`, as the
/// workloads' `--*slice-base-x` flags mean it: `round(base_ns * x)`. The kernel keeps
/// [`slice_held_ns`] of it.
pub fn slice_request_ns(base_ns: u64, x: f64) -> u64 {
    (base_ns as f64 * x).round() as u64
}

/// The slice a fair task holds after asking for `request_ns`: the base slice for 0, else
/// the request clamped to [`sys::SLICE_MIN_NS`], [`sys::SLICE_MAX_NS`].
pub fn slice_held_ns(request_ns: u64, base_ns: u64) -> u64 {
    if request_ns == 0 {
        base_ns
    } else {
        sys::slice_clamp_ns(request_ns)
    }
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

fn uniform() -> String {
    "uniform".into()
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
    /// What differs between the tasks: `uniform`, `weights` (nice -10, -3 and 4 in turn) or `slices`
    /// (100 us to 100 ms). `uniform` in records from before it was kept.
    #[serde(default = "uniform")]
    pub mix: String,
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

/// Quantiles of a set of durations, microseconds; absent where there were no samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// How many durations.
    pub samples: u64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl Quantiles {
    /// The quantiles of `ns` (durations in nanoseconds; sorted here); `None` when empty.
    pub fn of_ns(ns: &mut [u64]) -> Option<Quantiles> {
        if ns.is_empty() {
            return None;
        }
        ns.sort_unstable();
        let us: Vec<f64> = ns.iter().map(|&n| n as f64 / 1000.0).collect();
        Some(Quantiles {
            samples: us.len() as u64,
            avg_us: us.iter().sum::<f64>() / us.len() as f64,
            p50_us: quantile(&us, 50.0),
            p90_us: quantile(&us, 90.0),
            p99_us: quantile(&us, 99.0),
            p999_us: quantile(&us, 99.9),
            max_us: quantile(&us, 100.0),
        })
    }
}

/// What a task of a workload asked the kernel for and what the kernel then held: the check
/// that a record measures what its label says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskAttr {
    /// The policy sched_getattr() read back (`other`, `batch`, ...).
    pub policy: String,
    /// The nice value sched_getattr() read back.
    pub nice: i32,
    /// The slice asked for with sched_setattr (`sched_runtime`), ns; 0 = the base slice.
    pub slice_requested_ns: u64,
    /// The slice sched_getattr() read back, ns (the kernel's clamp applied).
    pub slice_effective_ns: u64,
    /// `se.slice` in `/proc/thread-self/sched`, ns (None without CONFIG_SCHED_DEBUG).
    pub proc_slice_ns: Option<u64>,
    /// `se.load.weight` there, as shown (scaled by 1024 on 64-bit kernels).
    pub proc_weight: Option<u64>,
}

impl TaskAttr {
    /// What the kernel holds for the calling thread, which asked for `slice_requested_ns`
    /// (0: it asked for nothing, or for the base slice).
    pub fn read_own(slice_requested_ns: u64) -> io::Result<TaskAttr> {
        let a = sys::getattr(0)?;
        let proc = sys::own_proc_sched();
        Ok(TaskAttr {
            policy: sys::policy_name(a.sched_policy),
            nice: a.sched_nice,
            slice_requested_ns,
            slice_effective_ns: a.sched_runtime,
            proc_slice_ns: proc.and_then(|p| p.slice_ns),
            proc_weight: proc.and_then(|p| p.weight),
        })
    }

    /// Give the calling thread SCHED_OTHER with `slice_ns` (0 = the base slice) and `nice`,
    /// then read back what the kernel holds. An error when the kernel holds something else
    /// than asked: a policy outside the fair class, another nice, a slice that is not the
    /// clamp of the request (or, for 0, not `base_slice_ns`).
    pub fn set_own(slice_ns: u64, nice: i32, base_slice_ns: u64) -> io::Result<TaskAttr> {
        sys::set_own_slice_ns(slice_ns, nice)?;
        let t = TaskAttr::read_own(slice_ns)?;
        let want_slice = if slice_ns == 0 {
            base_slice_ns
        } else {
            sys::slice_clamp_ns(slice_ns)
        };
        let bad = |what: String| Err(io::Error::other(what));
        if t.policy != sys::policy_name(sys::SCHED_OTHER) {
            return bad(format!("asked for SCHED_OTHER, the task is {}", t.policy));
        }
        if t.nice != nice {
            return bad(format!("asked for nice {nice}, the task has {}", t.nice));
        }
        if t.slice_effective_ns != want_slice || t.proc_slice_ns.is_some_and(|s| s != want_slice) {
            return bad(format!(
                "asked for a slice of {slice_ns} ns (want {want_slice}), sched_getattr says {} \
                 and /proc/thread-self/sched {:?}",
                t.slice_effective_ns, t.proc_slice_ns
            ));
        }
        Ok(t)
    }
}

/// rt-app-shaped periodic tasks, sleepers and hogs on one CPU (`eevdf-rtapp`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RtAppResult {
    /// The main thread's policy (the fair class, checked before anything runs).
    pub policy: String,
    /// The CPU every task was pinned to.
    pub cpu: u32,
    /// `/sys/kernel/debug/sched/base_slice_ns` during the run.
    pub base_slice_ns: u64,
    /// The measured window, seconds (after the warm-up).
    pub duration_s: f64,
    pub tasks: Vec<RtAppTask>,
    /// Wakeup latency over every activation of every task that sleeps (hogs have none).
    pub wakeup: Option<Quantiles>,
    /// max |share - fair share| over the tasks, percentage points.
    pub max_share_err_pp: f64,
}

/// One task of an [`RtAppResult`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RtAppTask {
    /// Its name from the `--task`/`--hog` spec (default `p0`, `s0`, `hog0`, ...).
    pub name: String,
    /// `periodic` (wakes on a CLOCK_MONOTONIC grid), `sleeper` (sleeps a fixed time after
    /// each run) or `hog` (never sleeps).
    pub kind: String,
    /// Period, µs (periodic tasks; 0 otherwise).
    pub period_us: u64,
    /// Sleep after each run, µs (sleepers; 0 otherwise).
    pub sleep_us: u64,
    /// CPU time each activation runs, µs (0 for hogs).
    pub run_us: u64,
    /// What the task asked for and what the kernel held.
    pub attr: TaskAttr,
    /// Activations whose wakeup fell in the window.
    pub periods: u64,
    /// Of those, activations that ended after their period did (periodic tasks): the
    /// next activation could not start on time.
    pub missed: u64,
    /// Whole periods skipped because the task was still that far behind.
    pub skipped: u64,
    /// Wakeup latency (woken minus asked-for time) of its activations.
    pub wakeup: Option<Quantiles>,
    /// Its CPU time in the window, ns.
    pub runtime_ns: u64,
    /// runtime / window (0..1).
    pub share: f64,
    /// What it needs alone: run / period, run / (run + sleep), 1 for a hog.
    pub demand: f64,
    /// Its weight-fair share: weighted max-min fairness over the tasks' demands
    /// ([`fair_shares`]).
    pub fair_share: f64,
    /// The task's involuntary context switches in the window (preemptions).
    pub nivcsw: u64,
}

/// The messenger/worker wakeup-latency workload (`eevdf-msgr`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MsgrResult {
    pub policy: String,
    /// Messenger threads.
    pub messengers: u32,
    /// Worker threads per messenger.
    pub workers: u32,
    /// Compute asked for per request, µs.
    pub work_us: u64,
    /// The calibrated loop: iterations per µs of CPU time.
    pub loops_per_us: f64,
    /// The CPU time one request's compute took when measured alone after calibration (the
    /// least of five), µs.
    pub work_cpu_us: f64,
    /// The pin of every thread, if any.
    pub cpu: Option<u32>,
    /// The measured window, seconds.
    pub duration_s: f64,
    /// Requests completed in the window.
    pub requests: u64,
    pub requests_per_s: f64,
    /// Time from the start of the messenger's round to the worker running, per request.
    pub wakeup: Option<Quantiles>,
    /// The messenger stamped once a round, before its first wake (`true`), not once a wake
    /// (`false`: records from before 2026-12-03, whose latency left out the wakes and the
    /// runs that came before a worker's own wake in its round).
    #[serde(default)]
    pub stamp_per_round: bool,
    /// A worker's attributes as the kernel holds them (every thread inherits the main
    /// thread's: SCHED_OTHER, the base slice, unless started otherwise).
    pub worker: TaskAttr,
    /// The workers' voluntary and involuntary context switches over the whole run.
    pub worker_nvcsw: u64,
    pub worker_nivcsw: u64,
}

/// The sched_change storm (`eevdf-storm`): a target hog whose attributes change every few
/// hundred µs while it runs, against a competitor hog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StormResult {
    pub policy: String,
    /// `slice` (sched_setattr alternating the target's slice by `slice_step_ns`) or `nice`
    /// (setpriority 0 <-> 1).
    pub change: String,
    /// `self` (the target changes itself: a change of the running task on one CPU) or
    /// `thread` (a driver thread on another CPU).
    pub driver: String,
    /// Time between changes, µs.
    pub period_us: u64,
    /// Changes made in the window, and changes that failed.
    pub changes: u64,
    pub change_errors: u64,
    /// The target's attributes at the start (slice asked for, clamp, /proc).
    pub target: TaskAttr,
    /// The competitor's.
    pub competitor: TaskAttr,
    /// A clock jump longer than this split a run, µs (besides the competitor having run).
    pub gap_threshold_us: u64,
    /// The measured window, seconds.
    pub duration_s: f64,
    /// The target's uninterrupted runs.
    pub target_runs: Option<Quantiles>,
    /// T's runs go on through its own changes unless the competitor ran during one
    /// (`true`); records from before 2026-12-03 (`false`) ended a run at any change that
    /// took longer than the gap threshold, which every cgroup move did, so their cgroup
    /// storms' runs are not measurements.
    #[serde(default)]
    pub runs_span_changes: bool,
    /// The competitor's waits between its runs.
    pub competitor_waits: Option<Quantiles>,
    /// The competitor's runs.
    pub competitor_runs: Option<Quantiles>,
    /// The target's CPU share in the window (0..1).
    pub target_share: f64,
    /// The competitor's.
    pub competitor_share: f64,
}

/// One task of `eevdf-rtapp`, parsed from `--task` or `--hog`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    pub name: String,
    pub kind: TaskKind,
    /// CPU time per activation, µs (0 for a hog).
    pub run_us: u64,
    /// The slice to ask for, µs (0 = the base slice).
    pub slice_us: u64,
    pub nice: i32,
}

/// How a [`TaskSpec`] sleeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    /// Wakes every `period_us` on an absolute grid (rt-app's `timer`).
    Periodic { period_us: u64 },
    /// Sleeps `sleep_us` after each run (rt-app's `sleep`).
    Sleeper { sleep_us: u64 },
    /// Never sleeps.
    Hog,
}

impl TaskSpec {
    /// The fraction of a CPU the task needs when nothing else runs.
    pub fn demand(&self) -> f64 {
        match self.kind {
            TaskKind::Periodic { period_us } => (self.run_us as f64 / period_us as f64).min(1.0),
            TaskKind::Sleeper { sleep_us } => self.run_us as f64 / (self.run_us + sleep_us) as f64,
            TaskKind::Hog => 1.0,
        }
    }

    /// `periodic`, `sleeper` or `hog`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            TaskKind::Periodic { .. } => "periodic",
            TaskKind::Sleeper { .. } => "sleeper",
            TaskKind::Hog => "hog",
        }
    }
}

/// Parse the `--task` (`hog` false) or `--hog` (`hog` true) syntax of eevdf-rtapp:
/// comma-separated `KEY=VALUE`s. A task takes `run_us` and either `period_us` or
/// `sleep_us`; both take `slice_us` (0 = the base slice), `nice`, `name` and `count` (that
/// many copies, named NAME0, NAME1, ...). `n` numbers the default names.
pub fn parse_task_specs(spec: &str, hog: bool, n: usize) -> Result<Vec<TaskSpec>, String> {
    let bad = |why: String| {
        format!(
            "bad {} '{spec}': {why}",
            if hog { "--hog" } else { "--task" }
        )
    };
    let (mut period, mut sleep, mut run, mut slice, mut nice, mut name, mut count) =
        (None, None, None, 0u64, 0i32, None, 1u32);
    for kv in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("'{kv}' is not KEY=VALUE")))?;
        let num = |v: &str| -> Result<u64, String> {
            v.trim()
                .parse()
                .map_err(|_| bad(format!("{k}: '{v}' is not a whole number")))
        };
        match (k.trim(), hog) {
            ("period_us", false) => period = Some(num(v)?),
            ("sleep_us", false) => sleep = Some(num(v)?),
            ("run_us", false) => run = Some(num(v)?),
            ("slice_us", _) => slice = num(v)?,
            ("nice", _) => {
                nice = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or_else(|| bad(format!("nice: '{v}' is not in -20..=19")))?
            }
            ("name", _) if !v.trim().is_empty() && !v.contains(char::is_whitespace) => {
                name = Some(v.trim().to_string())
            }
            ("count", _) => {
                count = u32::try_from(num(v)?)
                    .ok()
                    .filter(|c| (1..=1000).contains(c))
                    .ok_or_else(|| bad(format!("count: '{v}' is not in 1..=1000")))?
            }
            (k, _) => {
                let keys = if hog {
                    "slice_us, nice, name, count"
                } else {
                    "period_us or sleep_us, run_us, slice_us, nice, name, count"
                };
                return Err(bad(format!("unknown key '{k}' (keys: {keys})")));
            }
        }
    }
    let (kind, run_us, prefix) = if hog {
        (TaskKind::Hog, 0, "hog")
    } else {
        let run = run
            .filter(|&r| r > 0)
            .ok_or_else(|| bad("run_us > 0 is required".into()))?;
        match (period, sleep) {
            (Some(p), None) if p >= run => (TaskKind::Periodic { period_us: p }, run, "p"),
            (Some(_), None) => return Err(bad("period_us is shorter than run_us".into())),
            (None, Some(s)) if s > 0 => (TaskKind::Sleeper { sleep_us: s }, run, "s"),
            (None, Some(_)) => return Err(bad("sleep_us must be > 0".into())),
            _ => return Err(bad("give exactly one of period_us and sleep_us".into())),
        }
    };
    Ok((0..count)
        .map(|i| TaskSpec {
            name: match (&name, count) {
                (Some(nm), 1) => nm.clone(),
                (Some(nm), _) => format!("{nm}{i}"),
                (None, _) => format!("{prefix}{}", n + i as usize),
            },
            kind,
            run_us,
            slice_us: slice,
            nice,
        })
        .collect())
}

/// Each task's weight-fair share of one CPU: weighted max-min fairness (what an ideal
/// weighted fair queue, GPS, gives). Tasks whose demand is below `C * w_i / Σ w` (C the
/// capacity left, the sum over the tasks not yet served) get their demand; the rest split
/// what is left by weight; repeated until no demand fits. Shares sum to min(1, Σ demand).
pub fn fair_shares(demands: &[f64], weights: &[f64]) -> Vec<f64> {
    assert_eq!(demands.len(), weights.len());
    let mut share = vec![0.0; demands.len()];
    let mut open: Vec<usize> = (0..demands.len()).collect();
    let mut capacity = 1.0f64;
    while !open.is_empty() {
        let total_w: f64 = open.iter().map(|&i| weights[i]).sum();
        let satisfied: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| demands[i] <= capacity * weights[i] / total_w)
            .collect();
        if satisfied.is_empty() {
            for &i in &open {
                share[i] = capacity * weights[i] / total_w;
            }
            break;
        }
        for &i in &satisfied {
            share[i] = demands[i];
            capacity -= demands[i];
        }
        open.retain(|i| !satisfied.contains(i));
    }
    share
}

/// Seed 003's long sleeper that wakes on another CPU (`eevdf-migrate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MigrateResult {
    pub policy: String,
    /// `affinity` (moved while asleep, one hog on each CPU) or `natural`.
    pub mode: String,
    pub sleep_ms: u64,
    pub after_ms: u64,
    /// The hogs' nice (`affinity`): at 19 (weight 15) a hog alone on a CPU runs V ahead 68
    /// times faster than real time. 0 in records from before it was kept.
    #[serde(default)]
    pub hog_nice: i32,
    /// Whether the kernel kept a record of placements (`/sys/kernel/debug/sched/eevdf/place`,
    /// sched_eevdf kernels): then each round has the sleeper's [`MigrateRound::placements`].
    #[serde(default)]
    pub place_record: bool,
    pub rounds: Vec<MigrateRound>,
    /// The hogs' policy, nice and `se.slice` as their `/proc/PID/sched` read after the
    /// rounds, role `hog` (empty without hogs, and in records from before 2026-12-03).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hogs: Vec<TaskReadback>,
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
    /// Its lag at placement read from the vruntimes themselves (`affinity` only, and
    /// CONFIG_SCHED_DEBUG): right after waking, S reads its own `se.vruntime` and the hog's
    /// from `/proc/<pid>/sched`. With two equal-weight tasks `V = (v_S + v_H) / 2`, so
    /// `lag = V - v_S = (v_H - v_S) / 2`, in µs of virtual time (= CPU time at nice 0).
    /// S's vruntime is the placement's but for what a tick charged S before the read, the
    /// hog's as it left the CPU: the read overstates S's lag by half of what the hog ran
    /// after S woke (S's wake latency bounds that) and understates it by half of what S ran
    /// before the read (a tick's worth at most). Absent in records from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_vruntime_us: Option<f64>,
    /// Its share over the first 100 ms after waking: of its and the hog's CPU time
    /// (`affinity`, fair share w_S / (w_S + w_H): 0.5 beside a nice-0 hog), or of the wall
    /// time (`natural`).
    pub share_first_100ms: f64,
    /// The same over the whole window.
    pub share: f64,
    /// The sleeper's placements in the kernel's record since it was forked
    /// ([`MigrateResult::place_record`]), read right after it woke: the round's wakeup on
    /// the new CPU is the last one with `ENQUEUE_WAKEUP`. Empty without the record. Last
    /// in the JSON, after the shares: a script that reads a round up to its first `}`
    /// (tests/guest/42-lab-seeds-workloads.sh) still finds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placements: Vec<debugfs::Placement>,
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

/// Seed 001's case (`eevdf-pipejob`): a CPU-bound pipe consumer fed by a producer on
/// another CPU, timed alone and beside hogs on the consumer's CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipeJobResult {
    /// Data through the pipe, MiB.
    pub mib: u64,
    /// Bytes per write, KiB.
    pub chunk_kib: u64,
    /// The producer's CPU time per KiB, ns.
    pub producer_ns_per_kib: u64,
    /// The consumer's CPU time per KiB, ns.
    pub consumer_ns_per_kib: u64,
    /// What the kernel held for the consumer (the same in both runs, or there is no record).
    pub consumer: TaskAttr,
    /// What the kernel held for the producer.
    pub producer: TaskAttr,
    /// Each hog's name and what the kernel held for it.
    pub hogs: Vec<(String, TaskAttr)>,
    /// The job alone.
    pub alone: PipeJobPhase,
    /// The job beside the hogs (none without hogs).
    pub loaded: Option<PipeJobPhase>,
    /// `loaded.elapsed_s / alone.elapsed_s`.
    pub slowdown: Option<f64>,
}

/// One run of [`PipeJobResult`]'s job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipeJobPhase {
    /// From the start to the consumer's last byte, s.
    pub elapsed_s: f64,
    /// The consumer's CPU time, s.
    pub consumer_cpu_s: f64,
    /// The consumer's time runnable but not running (schedstat), s.
    pub consumer_wait_s: f64,
    /// The consumer's voluntary switches: its blocks on the empty pipe.
    pub consumer_blocks: u64,
    /// Its involuntary switches: preemptions.
    pub consumer_preempted: u64,
    /// The hogs' CPU time meanwhile, s.
    pub hogs_cpu_s: f64,
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
    /// Each task's policy, nice and `se.slice` as its `/proc/PID/sched` read after the
    /// warm-up, role `massive_intr` or `interactive` (empty in records from before
    /// 2026-12-03).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readback: Vec<TaskReadback>,
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

/// Buckets a decade in [`latency_histogram`]: each bucket is 10^(1/100), 2.3%, wide.
pub const HIST_PER_DECADE: f64 = 100.0;

/// The last bucket of [`latency_histogram`]: 10 s and more.
pub const HIST_LAST: u16 = 700;

/// Latencies (ns) as a sparse log-spaced histogram, (bucket, count) for the buckets with
/// any: bucket `b > 0` holds [10^((b-1)/100), 10^(b/100)) µs, bucket 0 what is under 1 µs,
/// [`HIST_LAST`] what is 10 s or more. A quantile read from it ([`hist_quantile_us`]) is
/// off by at most one bucket, 2.3%.
pub fn latency_histogram(lat_ns: &[u64]) -> Vec<(u16, u32)> {
    let mut counts = std::collections::BTreeMap::<u16, u32>::new();
    for &ns in lat_ns {
        let us = ns as f64 / 1000.0;
        let b = if us < 1.0 {
            0
        } else {
            ((us.log10() * HIST_PER_DECADE).floor() as u64 + 1).min(u64::from(HIST_LAST)) as u16
        };
        *counts.entry(b).or_default() += 1;
    }
    counts.into_iter().collect()
}

/// The upper end (µs) of [`latency_histogram`]'s bucket `b`: a quantile read from the
/// histogram is reported at its bucket's upper end (the lower for the last bucket).
pub fn hist_bucket_upper_us(b: u16) -> f64 {
    10f64.powf(f64::from(b.min(HIST_LAST - 1)) / HIST_PER_DECADE)
}

/// The `p`-th percentile (µs) of the histograms pooled, NaN when they are empty: the upper
/// end of the bucket that holds the rank-`ceil(p/100 * n)` latency.
pub fn hist_quantile_us<'a>(hists: impl IntoIterator<Item = &'a [(u16, u32)]>, p: f64) -> f64 {
    let mut pooled = std::collections::BTreeMap::<u16, u64>::new();
    for h in hists {
        for &(b, n) in h {
            *pooled.entry(b).or_default() += u64::from(n);
        }
    }
    let total: u64 = pooled.values().sum();
    if total == 0 {
        return f64::NAN;
    }
    let rank = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (&b, &n) in &pooled {
        seen += n;
        if seen >= rank {
            return hist_bucket_upper_us(b);
        }
    }
    f64::NAN
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

    /// The histogram's quantiles are within a bucket (2.3%) above the exact ones, and two
    /// runs' histograms pooled read as the histogram of their wakeups together.
    #[test]
    fn latency_histogram_pools_runs() {
        // 20,000 latencies from 0.5 us to about 50 ms, spread log-uniformly.
        let all: Vec<u64> = (0..20_000u64)
            .map(|i| (500.0 * 10f64.powf(5.0 * (i * 7919 % 20_000) as f64 / 20_000.0)) as u64)
            .collect();
        let (a, b) = all.split_at(7_000);
        let (ha, hb, hall) = (
            latency_histogram(a),
            latency_histogram(b),
            latency_histogram(&all),
        );
        let mut us: Vec<f64> = all.iter().map(|&n| n as f64 / 1000.0).collect();
        us.sort_by(f64::total_cmp);
        for p in [50.0, 90.0, 99.0, 99.9, 100.0] {
            let pooled = hist_quantile_us([ha.as_slice(), hb.as_slice()], p);
            assert_eq!(pooled, hist_quantile_us([hall.as_slice()], p), "p{p}");
            let exact = quantile(&us, p);
            assert!(
                pooled >= exact && pooled <= exact * 1.024,
                "p{p}: {pooled} against {exact}"
            );
        }
        assert_eq!(hall.iter().map(|&(_, n)| u64::from(n)).sum::<u64>(), 20_000);
        assert!(hist_quantile_us([], 99.0).is_nan());
        assert_eq!(latency_histogram(&[999]), vec![(0, 1)]);
        assert_eq!(latency_histogram(&[100_000_000_000]), vec![(HIST_LAST, 1)]);
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
    fn fair_shares_water_fill() {
        let close = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
        };
        // Two hogs split evenly; a small periodic task gets its demand, the hogs the rest.
        assert!(close(
            &fair_shares(&[1.0, 1.0], &[1024.0, 1024.0]),
            &[0.5, 0.5]
        ));
        let s = fair_shares(&[0.1, 1.0, 1.0], &[1024.0, 1024.0, 1024.0]);
        assert!(close(&s, &[0.1, 0.45, 0.45]), "{s:?}");
        // A periodic task that needs more than its weight's share is held to that share.
        let s = fair_shares(&[0.6, 1.0], &[1024.0, 1024.0]);
        assert!(close(&s, &[0.5, 0.5]), "{s:?}");
        // Weights: nice -5 (3121) against nice 0 (1024), both hogs.
        let s = fair_shares(&[1.0, 1.0], &[3121.0, 1024.0]);
        assert!(close(&s, &[3121.0 / 4145.0, 1024.0 / 4145.0]), "{s:?}");
        // Under-loaded: everyone gets their demand, the sum stays below 1.
        let s = fair_shares(&[0.1, 0.2], &[1024.0, 1024.0]);
        assert!(close(&s, &[0.1, 0.2]), "{s:?}");
        // Satisfying one task raises the others' level, which then satisfies another.
        let s = fair_shares(&[0.05, 0.3, 1.0, 1.0], &[1024.0; 4]);
        assert!(close(&s, &[0.05, 0.3, 0.325, 0.325]), "{s:?}");
        assert!(fair_shares(&[], &[]).is_empty());
    }

    #[test]
    fn task_specs_parse_and_reject() {
        let t = parse_task_specs("period_us=1000,run_us=300,slice_us=100", false, 0).unwrap();
        assert_eq!(
            t,
            [TaskSpec {
                name: "p0".into(),
                kind: TaskKind::Periodic { period_us: 1000 },
                run_us: 300,
                slice_us: 100,
                nice: 0
            }]
        );
        assert!((t[0].demand() - 0.3).abs() < 1e-12);
        let t = parse_task_specs("sleep_us=50000,run_us=5000,nice=-5,count=2", false, 3).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].name.as_str(), t[1].name.as_str()), ("s3", "s4"));
        assert_eq!(t[1].kind, TaskKind::Sleeper { sleep_us: 50000 });
        assert!((t[0].demand() - 5000.0 / 55000.0).abs() < 1e-12);
        let h = parse_task_specs("slice_us=100000,name=long", true, 0).unwrap();
        assert_eq!(
            (h[0].name.as_str(), h[0].kind, h[0].slice_us),
            ("long", TaskKind::Hog, 100000)
        );
        assert_eq!(h[0].demand(), 1.0);
        let h = parse_task_specs("", true, 2).unwrap();
        assert_eq!((h[0].name.as_str(), h[0].slice_us), ("hog2", 0));
        for (bad, hog, msg) in [
            ("run_us=5", false, "exactly one of"),
            ("period_us=10,sleep_us=10,run_us=5", false, "exactly one of"),
            ("period_us=10,run_us=20", false, "shorter than run_us"),
            ("period_us=10", false, "run_us > 0"),
            ("sleep_us=0,run_us=1", false, "sleep_us must be > 0"),
            ("period_us=10,run_us=5,nice=20", false, "nice"),
            (
                "period_us=10,run_us=5,bogus=1",
                false,
                "unknown key 'bogus'",
            ),
            ("period_us=ten,run_us=5", false, "not a whole number"),
            ("run_us=5", true, "unknown key 'run_us'"),
            ("count=0", true, "count"),
            ("slice_us", true, "not KEY=VALUE"),
        ] {
            let e = parse_task_specs(bad, hog, 0).unwrap_err();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }

    #[test]
    fn slices_requested_and_held() {
        // 6.12 on one vCPU: base 0.7 ms. 0.1x asks 70 us and gets the 100 us minimum.
        assert_eq!(slice_request_ns(700_000, 0.1), 70_000);
        assert_eq!(slice_held_ns(70_000, 700_000), 100_000);
        assert_eq!(slice_request_ns(700_000, 10.0), 7_000_000);
        assert_eq!(slice_held_ns(7_000_000, 700_000), 7_000_000);
        assert_eq!(slice_held_ns(0, 1_400_000), 1_400_000);
        assert_eq!(slice_held_ns(u64::MAX, 700_000), sys::SLICE_MAX_NS);
    }

    #[test]
    fn readback_of_a_sched_file() {
        let t = TaskReadback::parse(
            "load",
            5,
            "eevdf-share (88, #threads: 1)\n---\npolicy : 0\nprio : 120\n\
             se.slice : 700000\n",
        );
        assert_eq!(
            t,
            TaskReadback {
                role: "load".into(),
                pid: 88,
                comm: "eevdf-share".into(),
                policy: Some("other".into()),
                nice: Some(0),
                slice_ns: Some(700_000),
            }
        );
        assert_eq!(
            t.describe(),
            "pid 88 (eevdf-share): other nice 0 slice 700000 ns"
        );
        let empty = TaskReadback::parse("waker", 5, "");
        assert_eq!((empty.pid, empty.slice_ns), (5, None));
        assert_eq!(empty.describe(), "pid 5 (): ? nice ? slice ? ns");
    }

    #[test]
    fn quantiles_of_durations() {
        assert_eq!(Quantiles::of_ns(&mut []), None);
        let mut ns: Vec<u64> = (1..=1000).rev().map(|i| i * 1000).collect();
        let q = Quantiles::of_ns(&mut ns).unwrap();
        assert_eq!((q.samples, q.p50_us, q.max_us), (1000, 500.5, 1000.0));
        assert!(q.p90_us < q.p99_us && q.p99_us < q.p999_us && q.p999_us < q.max_us);
        // A record with no samples has no quantiles, and round-trips as such (JSON has no
        // NaN: serde_json would write null and fail to read it back as a number).
        let r = Record::Msgr(MsgrResult {
            policy: "other".into(),
            messengers: 1,
            workers: 1,
            work_us: 50,
            loops_per_us: 100.0,
            work_cpu_us: 50.0,
            cpu: None,
            duration_s: 1.0,
            requests: 0,
            requests_per_s: 0.0,
            wakeup: None,
            stamp_per_round: true,
            worker: TaskAttr {
                policy: "other".into(),
                nice: 0,
                slice_requested_ns: 0,
                slice_effective_ns: 700_000,
                proc_slice_ns: None,
                proc_weight: Some(1_048_576),
            },
            worker_nvcsw: 0,
            worker_nivcsw: 0,
        });
        assert_eq!(Record::from_line(&r.to_line()).unwrap().unwrap(), r);
        // A record from before the stamp moved to the round's start reads as per wake.
        let old = r.to_line().replace(",\"stamp_per_round\":true", "");
        assert!(old.len() < r.to_line().len());
        let Some(Ok(Record::Msgr(m))) = Record::from_line(&old) else {
            panic!("{old}")
        };
        assert!(!m.stamp_per_round);
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
