//! eevdfctl: look at and steer the fair class of a sched_eevdf kernel from inside the guest.
//!
//! - `eevdfctl features`: every scheduler feature, `NAME on|off`; `features set NAME...` and
//!   `features clear NAME...` turn them on or off (all names are checked first: one unknown
//!   name and nothing is written).
//! - `eevdfctl slice get PID`: `pid P policy POLICY slice_ns N custom yes|no|unknown`.
//! - `eevdfctl slice set PID NS`: give PID (other or batch) a slice of NS ns (0 = the base
//!   slice), keeping its policy and nice; says so on stderr when the kernel clamped it.
//! - `eevdfctl run --slice-ns N -- CMD ARGS...`: run CMD with that slice.
//! - `eevdfctl stats [--json | --reset]`, `eevdfctl timeline [--json] [--cpu N]`,
//!   `eevdfctl top`: sched_eevdf's counters and runqueue snapshot from
//!   /sys/kernel/debug/sched/eevdf (sched_eevdf kernels only; the others work on stock 6.12).
//!   For scripts (the guest tests): `stats --get NAME`, `stats --check-sums`,
//!   `timeline --check RULE`, `timeline --delayed`, `timeline --max-offset-ns`,
//!   `timeline --root-nr-queued`, each also on a saved copy (`--from FILE`).
//! - `eevdfctl place [--json] [--pid PID] [--check [--check-limit]] [--set on|off|clear]`:
//!   sched_eevdf's record of recent placements (`place_entity()`'s lag, V and clamp).
//! - `eevdfctl cputime PID...`: the CPU time accounted to each task against its age (the
//!   fault campaign's check; any kernel).
//!
//! Exit status: 0 done, 1 error, 2 bad usage, 127 `run` could not execute CMD.
//!
//! `$EEVDFCTL_SCHED_DIR`, when set, replaces /sys/kernel/debug/sched: the host tests
//! (tests/eevdfctl.rs) point it at fake files. Documentation/eevdfctl.md has the output
//! formats.
//!
//! The JSON schemas are in the `--help` of `stats` and `timeline` (the doc comments of
//! [`Cmd::Stats`] and [`Cmd::Timeline`] below). The parsers and renderers are
//! `eevdf_guest::debugfs`, unit-tested on the host.
use anyhow::{anyhow, bail, Context, Result};
use clap::{ArgGroup, Parser, Subcommand, ValueEnum};
use eevdf_guest::cputime;
use eevdf_guest::debugfs::{
    self, Features, Placements, Snapshot, Stats, Timeline, TimelineRule, EEVDF, FEATURES, PLACE,
    SCHED_DEBUG, SCHED_DEBUGFS, STATS, TIMELINE,
};
use eevdf_guest::sys::{
    self, policy_name, SchedAttr, SCHED_BATCH, SCHED_FLAG_RESET_ON_FORK, SCHED_IDLE, SCHED_OTHER,
};
use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// The schedstats switch: sched_eevdf's counters count while it is 1.
const SCHEDSTATS_SYSCTL: &str = "/proc/sys/kernel/sched_schedstats";
/// The live oracle's counters (CONFIG_SCHED_EEVDF_RUST_VERIFY), relative to the scheduler's
/// debugfs directory.
const VERIFY: &str = "eevdf/verify";

/// Look at and steer the fair class of a sched_eevdf kernel: features, per-task slices,
/// and sched_eevdf's counters and runqueue snapshot.
///
/// `features` and `slice`/`run` work on any 6.12 kernel (debugfs mounted, root for the
/// features); `stats`, `timeline` and `top` need a sched_eevdf kernel
/// (CONFIG_SCHED_EEVDF_RUST), which has /sys/kernel/debug/sched/eevdf.
///
/// Exit status: 0 done, 1 error, 2 bad usage, 127 `run` could not execute its command.
#[derive(Parser, Debug)]
#[command(version, name = "eevdfctl")]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// List the scheduler features (`NAME on|off`, the kernel's order), or set or clear some.
    ///
    /// Reads and writes /sys/kernel/debug/sched/features (root only). A feature is a global
    /// switch: it changes scheduling for every task on every CPU at once.
    Features {
        #[command(subcommand)]
        action: Option<FeaturesCmd>,
    },
    /// Read or change a task's slice (sched_getattr/sched_setattr `sched_runtime`).
    Slice {
        #[command(subcommand)]
        action: SliceCmd,
    },
    /// Give this process a slice, then execute CMD in its place (CMD keeps the slice, and its
    /// children inherit it unless reset-on-fork is set).
    ///
    /// Example: eevdfctl run --slice-ns 500000 -- cyclictest -m -n
    Run {
        /// The slice, ns; 0 = the base slice. The kernel clamps the rest to [100000,
        /// 100000000]. A shorter slice gives an earlier virtual deadline, so the task is
        /// picked sooner after a wakeup, but each turn on the CPU is shorter and it is
        /// preempted more often.
        #[arg(long, value_name = "NS")]
        slice_ns: u64,
        /// The policy to run with (default: keep the current one, which must be other or
        /// batch). batch marks CMD as CPU-bound: it does not preempt the running task at
        /// wakeup, which costs wakeup latency and saves context switches.
        #[arg(long, value_enum)]
        policy: Option<FairPolicy>,
        /// The command and its arguments (after `--`).
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "CMD"
        )]
        cmd: Vec<OsString>,
    },
    /// sched_eevdf's decision counters: one row per counter, one column per CPU, then `all`.
    ///
    /// Reads /sys/kernel/debug/sched/eevdf/stats. Counters count since boot or since the last
    /// --reset; the kernel decides which counters there are (the columns are not fixed).
    ///
    /// --json prints one object: the features, the counters and the timeline, read one after
    /// the other (not one atomic snapshot):
    ///
    ///   {
    ///     "features": {"NAME": true|false, ...},          (the kernel's order)
    ///     "stats": {
    ///       "columns": ["picks", ...],                   (the counter names, in order)
    ///       "cpus": {"0": {"picks": u64, ...}, ...},     (per online CPU, by number)
    ///       "all": {"picks": u64, ...}                   (the kernel's sums)
    ///     },
    ///     "timeline": [ ...as `eevdfctl timeline --json`... ]
    ///   }
    #[command(
        verbatim_doc_comment,
        about = "sched_eevdf's decision counters: one row per counter, one column per CPU, then `all`",
        after_long_help = counters_help()
    )]
    #[command(group(ArgGroup::new("stats_query").args(["json", "reset", "get", "check_sums"])))]
    Stats {
        /// Print one JSON object (features, counters, timeline) instead of the table; bigger
        /// and slower to read, but complete and for programs.
        #[arg(long, conflicts_with_all = ["from", "verify"])]
        json: bool,
        /// Set every CPU's counters to zero (write `0` to the file) and print nothing.
        /// Counting starts again at once, so later reads show only what happened since;
        /// what was counted before is lost.
        #[arg(long, conflicts_with_all = ["from", "verify"])]
        reset: bool,
        /// Print only the value of counter NAME: one number, the `all` row's (or --cpu's).
        /// For scripts: no table to parse, and an unknown NAME is an error, not an empty
        /// string.
        #[arg(long, value_name = "NAME")]
        get: Option<String>,
        /// With --get: the CPU's row instead of `all` (an error if the file has no such row).
        #[arg(long, value_name = "N", requires = "get")]
        cpu: Option<u32>,
        /// Check that the `all` row is the sum of the CPU rows, column by column; prints
        /// `cpus N columns N`, or each difference and exit 1. The file is read once: a
        /// copy taken while counters change is still consistent, as the kernel sums the
        /// rows it prints.
        #[arg(long)]
        check_sums: bool,
        /// With --check-sums: the number of CPU rows the file must have (the online CPUs);
        /// unchecked when not given, as CPUs may go offline between the count and the read.
        #[arg(long, value_name = "N", requires = "check_sums")]
        want_cpus: Option<usize>,
        /// Read the live oracle's counters (eevdf/verify, debug kernels) instead: the same
        /// table, then its `enabled 0|1` line.
        #[arg(long)]
        verify: bool,
        /// Parse FILE, a copy of the file saved earlier, instead of reading the kernel's:
        /// the counts of that moment, read as often as needed, where the live file would
        /// give newer counts at each read.
        #[arg(long, value_name = "FILE")]
        from: Option<String>,
    },
    /// sched_eevdf's snapshot of every CPU's cfs_rqs and their entities, aligned.
    ///
    /// Reads /sys/kernel/debug/sched/eevdf/timeline: per CPU each cfs_rq (V, zero_vruntime,
    /// the sum of weights, the queue length, the smallest slice, the cgroup path), then the
    /// running entity (R) and the queued ones (Q) in tree order, with vruntime - V (VRT-V),
    /// deadline - V (DL-V), both in virtual ns, and the flags C (custom slice), E (eligible)
    /// and D (delayed dequeue). A `(truncated ...)` line means the kernel ran out of room.
    ///
    /// --json prints an array, one object per CPU:
    ///
    ///   [{"cpu": u32, "truncated": bool,
    ///     "cfs_rqs": [{"V": u64, "zero": u64, "sum_w": u64, "nr_queued": u64,
    ///                  "min_slice_ns": u64|null, "path": "/...",
    ///                  "extra": {"key": "value"},     (only when the kernel printed
    ///                                                  keys this version does not know)
    ///                  "entities": [{"state": "running"|"queued", "pid": u32|null,
    ///                                "weight": u64, "vrt_v": i64, "dl_v": i64,
    ///                                "slice_ns": u64, "custom": bool, "eligible": bool,
    ///                                "delayed": bool, "name": "comm or group path"}]}]}]
    ///
    /// V and zero wrap around (u64 virtual time, as the kernel keeps it); pid is null for a
    /// group entity.
    #[command(
        verbatim_doc_comment,
        about = "sched_eevdf's snapshot of every CPU's cfs_rqs and their entities, aligned"
    )]
    #[command(group(ArgGroup::new("timeline_query").args([
        "json", "check", "delayed", "max_offset_ns", "root_nr_queued"
    ])))]
    #[command(group(ArgGroup::new("where_delayed").args(["cpu", "group"])))]
    Timeline {
        /// Print JSON (schema above) instead of the aligned text.
        #[arg(long)]
        json: bool,
        /// Only this CPU (its number); an error if the snapshot does not have it. With
        /// --delayed, --max-offset-ns and --root-nr-queued: the CPU to look at.
        #[arg(long, value_name = "N")]
        cpu: Option<u32>,
        /// Check the snapshot's consistency by RULE: sums (per cfs_rq, as many rows as
        /// nr_queued, weighing sum_w: holds whatever runs), eevdf (sums, and min_slice_ns
        /// is `-` exactly when empty, the running row first, V within the vruntimes, the
        /// smallest vruntime eligible: holds with any features), plain (eevdf, and eligible
        /// exactly when VRT-V <= 0: ELIGIBLE on, BIAS_ELIGIBLE off), all-eligible (eevdf,
        /// and every row eligible: NO_ELIGIBLE). Prints `cpus N rqs N rows N groups N`, or
        /// each problem and exit 1. The last cfs_rq of a truncated CPU is not checked.
        #[arg(long, value_enum, value_name = "RULE")]
        check: Option<CheckRule>,
        /// With --check: the CPU sections the snapshot must have (the online CPUs);
        /// unchecked when not given, as CPUs may go offline between the count and the read.
        #[arg(long, value_name = "N", requires = "check")]
        want_cpus: Option<usize>,
        /// Count the delayed entities (column D): on --cpu's cfs_rqs, or of --group. Prints
        /// `looks L delayed N`: with --looks, it looks again (every --interval-ms) until a
        /// look sees some, then stops.
        #[arg(long, requires = "where_delayed")]
        delayed: bool,
        /// With --delayed: the task group (a cgroup path like /g/a) whose delayed entities
        /// count: the rows on its own cfs_rqs, and its group entities on its parent's.
        #[arg(
            long,
            value_name = "PATH",
            requires = "delayed",
            conflicts_with = "cpu"
        )]
        group: Option<String>,
        /// Print the largest |VRT-V| or |DL-V| of --cpu's rows, in virtual ns (0 without
        /// rows): how far its entities' vruntimes and deadlines spread from V; with
        /// --looks, the largest over every look.
        #[arg(long, requires = "cpu")]
        max_offset_ns: bool,
        /// Print how many entities --cpu's root cfs_rq holds (its nr_queued).
        #[arg(long, requires = "cpu", conflicts_with = "looks")]
        root_nr_queued: bool,
        /// With --delayed or --max-offset-ns: the snapshots to take at most. One process for
        /// many looks (a script's loop would start one per look, which a slow guest pays
        /// dearly for); each look takes every CPU's runqueue lock once.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        looks: u64,
        /// The time between two looks, ms. Shorter catches briefer states, at more lock
        /// taking and CPU time for this process.
        #[arg(long, default_value_t = 20, value_name = "MS")]
        interval_ms: u64,
        /// Stop looking after this long, ms, even before --looks (a slow guest may take
        /// long for one look).
        #[arg(long, default_value_t = 10000, value_name = "MS")]
        timeout_ms: u64,
        /// Parse FILE, a copy of the timeline saved earlier, instead of the kernel's: that
        /// moment's snapshot, as often as needed (one look only).
        #[arg(long, value_name = "FILE", conflicts_with = "looks")]
        from: Option<String>,
    },
    /// A refreshing view: counter rates per second, and each CPU's root cfs_rq with the
    /// first rows of its queue.
    ///
    /// On a terminal each frame clears the screen; otherwise (a pipe or a file) the frames
    /// follow one another, each starting with a `=== eevdfctl top: sample N ...` line.
    Top {
        /// Time between frames, ms. Shorter shows faster changes, but the rates rest on
        /// fewer events and reading the timeline takes each CPU's runqueue lock more often.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
        interval_ms: u64,
        /// Frames to show before exiting; 0 = until interrupted (Ctrl-C).
        #[arg(long, default_value_t = 0)]
        iterations: u64,
        /// Entity rows shown per CPU (the running one, then the queue in tree order). More
        /// rows show more of the queue but push the view off a small terminal.
        #[arg(long, default_value_t = 5)]
        rows: usize,
    },
    /// sched_eevdf's record of recent placements, as `place_entity()` saw them.
    ///
    /// Reads /sys/kernel/debug/sched/eevdf/place (CONFIG_SCHED_EEVDF_RUST_STATS): whether it
    /// records, then each CPU's last placements, oldest first: pid (`-`: a group entity),
    /// the ENQUEUE flags (W wakeup, R restore, M migrated, I initial), the weight w, W (the
    /// queue's weight without it), the lag saved at dequeue (VLAG), the lag applied after
    /// PLACE_LAG's scaling (LAG), the clamp that holds VLAG (LIMIT), V, and the vruntime and
    /// deadline set, in virtual ns. The record is off at boot: `--set on` starts it (one
    /// branch a placement while off).
    ///
    /// --json prints {"enabled": bool, "rows": [{"cpu": u32, "seq": u64, "pid": i32,
    /// "flags": u32, "weight": u64, "load": u64, "vlag": i64, "lag": i64, "limit": u64,
    /// "avruntime": u64, "vruntime": u64, "deadline": u64}]}.
    #[command(
        verbatim_doc_comment,
        about = "sched_eevdf's record of recent placements, as place_entity() saw them"
    )]
    #[command(group(ArgGroup::new("place_query").args(["json", "check", "set"])))]
    Place {
        /// Print JSON (schema above) instead of the aligned text.
        #[arg(long)]
        json: bool,
        /// Only the placements of this task (a pid; 0: group entities).
        #[arg(long, value_name = "PID")]
        pid: Option<i32>,
        /// Check every row: vruntime = V - LAG, and a LAG that is not 0 is VLAG + VLAG * w /
        /// W; prints `rows N`, or each finding and exit 1.
        #[arg(long)]
        check: bool,
        /// With --check: also a task's |VLAG| within its LIMIT (not a group's: its weight and
        /// slice change between its dequeue and its placement).
        #[arg(long, requires = "check")]
        check_limit: bool,
        /// Switch the record on or off, or clear every CPU's ring; prints nothing.
        #[arg(long, value_enum, conflicts_with = "from")]
        set: Option<PlaceSet>,
        /// Parse FILE, a copy of the file saved earlier, instead of the kernel's.
        #[arg(long, value_name = "FILE")]
        from: Option<String>,
    },
    /// Check the CPU time accounted to tasks against their ages (any kernel).
    ///
    /// For each PID: its CPU time (sum_exec_runtime, /proc/PID/schedstat), then the uptime,
    /// then its start time (/proc/PID/stat field 22) are read one right after the other, so
    /// the age is never shorter than the span the CPU time covers. A task fails when it is
    /// gone, got no CPU time, or got more than its age times --slack-ratio plus --slack-s
    /// (a task runs on one CPU at a time). Prints a line per failure, then `cpu time: N
    /// tasks, S s in all; the most of its age: task P, R`; on a failure, each task's sched
    /// lines and the machine's CPU time against its uptime, and exit 1.
    Cputime {
        /// How far the CPU time may exceed the age, as a ratio. Under TCG the scheduler's
        /// clock and the uptime drift apart by up to 2%: a tighter ratio fails honest runs,
        /// a looser one lets more over-accounting pass.
        #[arg(long, default_value_t = 1.05, value_name = "RATIO")]
        slack_ratio: f64,
        /// What the CPU time may exceed the age by on top of the ratio, s: the uptime's and
        /// the start time's 10 ms resolution, and the reads' own time. Smaller fails young
        /// tasks on rounding; larger lets a short task's over-accounting pass.
        #[arg(long, default_value_t = 0.1, value_name = "S")]
        slack_s: f64,
        /// The tasks (process or thread ids).
        #[arg(required = true, value_name = "PID")]
        pids: Vec<u32>,
    },
}

/// `place --set`'s writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum PlaceSet {
    On,
    Off,
    Clear,
}

/// `eevdfctl place`.
fn place(
    json: bool,
    pid: Option<i32>,
    check: Option<bool>,
    set: Option<PlaceSet>,
    from: Option<String>,
) -> Result<ExitCode> {
    let path = from.clone().unwrap_or_else(|| sched_path(PLACE));
    if from.is_none() {
        require_eevdf()?;
    }
    if let Some(w) = set {
        let word = match w {
            PlaceSet::On => "on",
            PlaceSet::Off => "off",
            PlaceSet::Clear => "0",
        };
        write_debugfs(&path, word).map_err(|e| debugfs_error(&path, e))?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = read_debugfs(&path)?;
    let mut p = Placements::parse(&text).map_err(|e| anyhow!("{path}: {e}"))?;
    if let Some(id) = pid {
        p.rows.retain(|r| r.pid == id);
    }
    if let Some(limit) = check {
        return verdict(&path, p.check(limit));
    }
    emit(&if json {
        serde_json::to_string(&p)? + "\n"
    } else {
        p.render()
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `timeline --check`'s rules ([`TimelineRule`]).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CheckRule {
    Sums,
    Eevdf,
    Plain,
    AllEligible,
}

impl From<CheckRule> for TimelineRule {
    fn from(r: CheckRule) -> Self {
        match r {
            CheckRule::Sums => TimelineRule::Sums,
            CheckRule::Eevdf => TimelineRule::Eevdf,
            CheckRule::Plain => TimelineRule::Plain,
            CheckRule::AllEligible => TimelineRule::AllEligible,
        }
    }
}

#[derive(Subcommand, Debug)]
enum FeaturesCmd {
    /// Turn features on (writes NAME to the features file, one write per name).
    Set {
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Turn features off (writes NO_NAME, one write per name).
    Clear {
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
enum SliceCmd {
    /// Print `pid P policy POLICY slice_ns N custom yes|no|unknown`.
    ///
    /// POLICY is other, batch, idle, fifo, rr or deadline. For fifo, rr and deadline tasks
    /// the fair slice does not apply: `slice_ns - custom -`. `custom` says whether the slice
    /// was set with sched_setattr (else it follows base_slice_ns); sched_getattr cannot tell,
    /// so it comes from /sys/kernel/debug/sched/debug and is `unknown` without it.
    Get {
        /// The task (a thread id; 0 = this process).
        #[arg(value_parser = clap::value_parser!(i32).range(0..))]
        pid: libc::pid_t,
    },
    /// Set an other or batch task's slice, keeping its policy and nice.
    ///
    /// Prints `pid P slice_ns N (asked A ns, given in UNIT)`: the slice the task has now,
    /// and how SLICE was read; a note on stderr when the kernel clamped it (exit 0: a slice
    /// was set).
    Set {
        /// The task (a thread id; 0 = this process).
        #[arg(value_parser = clap::value_parser!(i32).range(0..))]
        pid: libc::pid_t,
        /// The slice: with a unit (300us, 3ms, 0.5ms, 1s) or bare nanoseconds; 0 = back to
        /// the base slice. The kernel clamps the rest to [100us, 100ms]. Shorter: picked
        /// sooner after a wakeup, but preempted more often.
        #[arg(value_name = "SLICE", value_parser = eevdf_guest::parse_slice)]
        slice: eevdf_guest::SliceArg,
    },
}

/// The policies that have a slice to set.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum FairPolicy {
    Other,
    Batch,
}

impl FairPolicy {
    fn number(self) -> u32 {
        match self {
            FairPolicy::Other => SCHED_OTHER,
            FairPolicy::Batch => SCHED_BATCH,
        }
    }
}

/// `rel` under the scheduler's debugfs directory: /sys/kernel/debug/sched, or
/// `$EEVDFCTL_SCHED_DIR` when set (the host tests point it at fake files).
fn sched_path(rel: &str) -> String {
    let dir = std::env::var("EEVDFCTL_SCHED_DIR").unwrap_or_else(|_| SCHED_DEBUGFS.into());
    format!("{dir}/{rel}")
}

/// Write `s` to stdout at once (a frame of `top` does not flicker).
fn emit(s: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(s.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")
}

/// A check's answer for scripts: its summary line and success, or one line per finding
/// (prefixed with the file's path) and failure.
fn verdict<S: std::fmt::Display, B: std::fmt::Display>(
    path: &str,
    r: std::result::Result<S, Vec<B>>,
) -> Result<ExitCode> {
    match r {
        Ok(sum) => {
            emit(&format!("{sum}\n"))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(bad) => {
            emit(
                &bad.iter()
                    .map(|b| format!("{path}: {b}\n"))
                    .collect::<String>(),
            )?;
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Turn a failed debugfs access into what to do about it.
fn debugfs_error(path: &str, e: io::Error) -> anyhow::Error {
    match e.kind() {
        io::ErrorKind::NotFound => anyhow!(
            "no {path}: debugfs is not mounted (mount -t debugfs debugfs /sys/kernel/debug) \
             or the kernel has no CONFIG_SCHED_DEBUG"
        ),
        io::ErrorKind::PermissionDenied => {
            anyhow!("{path}: permission denied (debugfs is for root only)")
        }
        _ => anyhow::Error::new(e).context(format!("accessing {path}")),
    }
}

fn read_debugfs(path: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| debugfs_error(path, e))
}

/// One write(2) of `word` to a debugfs file, opened as `echo word >path` opens it
/// (O_TRUNC, which debugfs ignores).
fn write_debugfs(path: &str, word: &str) -> io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?
        .write_all(word.as_bytes())
}

/// Fail unless this is a sched_eevdf kernel with debugfs mounted.
fn require_eevdf() -> Result<()> {
    let dir = sched_path(EEVDF);
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            bail!("{dir}: permission denied (debugfs is for root only)")
        }
        _ => bail!(
            "no {dir}: not a sched_eevdf kernel (CONFIG_SCHED_EEVDF_RUST) or debugfs not \
             mounted"
        ),
    }
}

/// The end of `stats --help`: what each counter counts, from the kernel's counter table
/// ([`debugfs::COUNTERS`]), each wrapped to 80 columns under its name.
fn counters_help() -> String {
    let mut s = String::from(
        "Counters (kernel/stats_table.rs of this version; the columns shown are the ones the \
         running kernel's file has):\n",
    );
    for c in debugfs::COUNTERS {
        s.push_str(&format!("\n  {}\n", c.name));
        let mut line = String::new();
        for word in c.doc.split_ascii_whitespace() {
            if !line.is_empty() && 6 + line.len() + 1 + word.len() > 80 {
                s.push_str(&format!("      {line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        s.push_str(&format!("      {line}\n"));
    }
    s
}

fn read_features() -> Result<Features> {
    let path = sched_path(FEATURES);
    Features::parse(&read_debugfs(&path)?).map_err(|e| anyhow!("{path}: {e}"))
}

fn read_stats() -> Result<Stats> {
    require_eevdf()?;
    let path = sched_path(STATS);
    Stats::parse(&read_debugfs(&path)?).map_err(|e| anyhow!("{path}: {e}"))
}

fn read_timeline() -> Result<Timeline> {
    require_eevdf()?;
    let path = sched_path(TIMELINE);
    Timeline::parse(&read_debugfs(&path)?).map_err(|e| anyhow!("{path}: {e}"))
}

fn features(action: Option<FeaturesCmd>) -> Result<ExitCode> {
    let before = read_features()?;
    let (names, on) = match action {
        None => {
            emit(&before.render())?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(FeaturesCmd::Set { names }) => (names, true),
        Some(FeaturesCmd::Clear { names }) => (names, false),
    };
    // All names first: the kernel would refuse an unknown one with EINVAL, but only after
    // the names before it were written.
    let unknown = before.unknown(&names);
    if !unknown.is_empty() {
        for name in unknown {
            match name.strip_prefix("NO_").filter(|n| before.get(n).is_some()) {
                Some(n) => eprintln!(
                    "eevdfctl: unknown feature {name} (to turn {n} off: eevdfctl features \
                     clear {n})"
                ),
                None => eprintln!("eevdfctl: unknown feature {name}"),
            }
        }
        eprintln!("eevdfctl: nothing was written");
        return Ok(ExitCode::FAILURE);
    }
    let path = sched_path(FEATURES);
    let mut done: Vec<&str> = Vec::new();
    for name in &names {
        let word = if on {
            name.clone()
        } else {
            format!("NO_{name}")
        };
        write_debugfs(&path, &word).map_err(|e| {
            if e.raw_os_error() == Some(libc::EINVAL) {
                anyhow!("unknown feature {name} (the kernel refused {word})")
            } else {
                debugfs_error(&path, e)
            }
        })?;
        if !done.contains(&name.as_str()) {
            done.push(name);
        }
    }
    let after = read_features()?;
    let mut out = String::new();
    for name in done {
        let now = after.get(name);
        if now != Some(on) {
            bail!(
                "{name} is {} after writing it",
                now.map_or("gone", debugfs::on_off)
            );
        }
        out.push_str(&format!("{name} {}\n", debugfs::on_off(on)));
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The pid to print: `pid`, or this process's for 0.
fn shown_pid(pid: libc::pid_t) -> libc::pid_t {
    if pid == 0 {
        std::process::id() as libc::pid_t
    } else {
        pid
    }
}

/// A failed sched_getattr/sched_setattr on `pid`, in words.
fn sched_error(e: io::Error, pid: libc::pid_t, call: String) -> anyhow::Error {
    match e.raw_os_error() {
        Some(libc::ESRCH) => anyhow!("no such process: {pid}"),
        Some(libc::EPERM) => {
            anyhow!("not permitted to change {pid} (needs CAP_SYS_NICE or same owner)")
        }
        Some(libc::EINVAL) => anyhow!(
            "{call}: the kernel refused it as invalid (EINVAL: a stop task, a policy or flag \
             this kernel does not have, or a nice out of range)"
        ),
        _ => anyhow::Error::new(e).context(call),
    }
}

fn getattr(pid: libc::pid_t) -> Result<SchedAttr> {
    sys::getattr(pid).map_err(|e| sched_error(e, shown_pid(pid), format!("sched_getattr({pid})")))
}

fn slice_get(pid: libc::pid_t) -> Result<()> {
    let a = getattr(pid)?;
    let shown = shown_pid(pid);
    let policy = policy_name(a.sched_policy);
    let line = match a.sched_policy {
        // 6.12's get_params() reports p->se.slice as sched_runtime for every task that is
        // neither RT nor deadline; sched_setattr only sets it for other and batch.
        SCHED_OTHER | SCHED_BATCH | SCHED_IDLE => format!(
            "pid {shown} policy {policy} slice_ns {} custom {}\n",
            a.sched_runtime,
            custom_slice(shown, a.sched_runtime)
        ),
        // RT: sched_runtime is 0; deadline: it is the reservation's runtime, not a slice.
        _ => format!("pid {shown} policy {policy} slice_ns - custom -\n"),
    };
    emit(&line)
}

/// `yes`, `no` or `unknown`: whether the task's slice came from sched_setattr.
///
/// sched_getattr does not say: it reports `p->se.slice` whether or not `custom_slice` is set.
/// Comparing with base_slice_ns does not tell either: a custom slice may equal it, and a
/// task without one keeps the old base slice until its next deadline update after
/// base_slice_ns changes. So the flag itself is read from the task lists of
/// /sys/kernel/debug/sched/debug (`S` after the deadline). Without that file (no debugfs,
/// not root) only a slice outside [100 us, 100 ms] answers: sched_setattr clamps custom
/// slices into that range, so such a slice is the base slice.
fn custom_slice(pid: libc::pid_t, slice_ns: u64) -> &'static str {
    let listed = std::fs::read(sched_path(SCHED_DEBUG))
        .ok()
        .and_then(|text| debugfs::sched_debug_custom_slice(&text, pid as u32));
    match listed {
        Some(true) => "yes",
        Some(false) => "no",
        None if slice_ns != sys::slice_clamp_ns(slice_ns) => "no",
        None => "unknown",
    }
}

/// Give `pid` a slice of `ns` (0 = the base slice), keeping its nice and reset-on-fork flag,
/// with `policy` or, when `None`, its current policy (which must be other or batch).
fn slice_set(pid: libc::pid_t, ns: u64, policy: Option<FairPolicy>) -> Result<u64> {
    let shown = shown_pid(pid);
    let a = getattr(pid)?;
    let policy = match (policy, a.sched_policy) {
        (Some(p), _) => p.number(),
        (None, p @ (SCHED_OTHER | SCHED_BATCH)) => p,
        (None, p) => bail!(
            "pid {shown} has policy {}: only other and batch tasks have a slice to set \
             (nothing was changed)",
            policy_name(p)
        ),
    };
    // Between the read above and this write the task could change its own policy or nice;
    // the write then undoes that change. Nothing here can prevent it.
    let mut attr = SchedAttr::new(policy);
    attr.sched_nice = a.sched_nice;
    // An unprivileged caller may not clear reset-on-fork, so pass it back as it was.
    attr.sched_flags = a.sched_flags & SCHED_FLAG_RESET_ON_FORK;
    attr.sched_runtime = ns;
    // Note: when policy, nice and slice all equal what the task has, 6.12's
    // __sched_setscheduler() returns early and changes nothing, so a task without a custom
    // slice asked for exactly its current (base) slice keeps custom_slice unset.
    sys::sched_setattr(pid, &mut attr, 0).map_err(|e| {
        sched_error(
            e,
            shown,
            format!(
                "sched_setattr({pid}, policy {}, nice {}, sched_runtime {ns})",
                policy_name(policy),
                attr.sched_nice
            ),
        )
    })?;
    let got = getattr(pid)?.sched_runtime;
    if let Some(note) = sys::slice_clamp_note(ns, got) {
        eprintln!("eevdfctl: {note}");
    }
    Ok(got)
}

fn run(slice_ns: u64, policy: Option<FairPolicy>, cmd: &[OsString]) -> Result<ExitCode> {
    slice_set(0, slice_ns, policy)?;
    let (prog, args) = cmd.split_first().expect("clap requires CMD");
    let e = Command::new(prog).args(args).exec();
    eprintln!("eevdfctl: cannot run {}: {e}", prog.to_string_lossy());
    Ok(ExitCode::from(127))
}

/// `stats`' options for scripts: which file, and what to print of it.
struct StatsQuery {
    get: Option<String>,
    cpu: Option<u32>,
    want_cpus: Option<usize>,
    verify: bool,
    from: Option<String>,
}

/// Print one counter (`get`), or else check the sums, of the stats (or verify) file or its
/// copy.
fn stats_query(q: StatsQuery) -> Result<ExitCode> {
    let (path, text) = match &q.from {
        Some(f) => (
            f.clone(),
            std::fs::read_to_string(f).with_context(|| format!("reading {f}"))?,
        ),
        None => {
            require_eevdf()?;
            let path = sched_path(if q.verify { VERIFY } else { STATS });
            let text = read_debugfs(&path)?;
            (path, text)
        }
    };
    let stats = if q.verify {
        Stats::parse_verify(&text).map(|(s, _)| s)
    } else {
        Stats::parse(&text)
    }
    .map_err(|e| anyhow!("{path}: {e}"))?;
    if let Some(name) = &q.get {
        let v = stats.value(q.cpu, name).ok_or_else(|| match q.cpu {
            Some(c) if stats.columns.contains(name) => anyhow!("{path}: no row for cpu {c}"),
            _ => anyhow!(
                "{path}: no counter {name} (the file has: {})",
                stats.columns.join(" ")
            ),
        })?;
        emit(&format!("{v}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let sums = stats
        .check_sums(q.want_cpus)
        .map(|()| format!("cpus {} columns {}", stats.cpus.len(), stats.columns.len()));
    verdict(&path, sums)
}

fn stats(json: bool, reset: bool, verify: bool) -> Result<()> {
    if reset {
        require_eevdf()?;
        let path = sched_path(STATS);
        return write_debugfs(&path, "0").map_err(|e| debugfs_error(&path, e));
    }
    if verify {
        require_eevdf()?;
        let path = sched_path(VERIFY);
        let (stats, on) =
            Stats::parse_verify(&read_debugfs(&path)?).map_err(|e| anyhow!("{path}: {e}"))?;
        return emit(&format!("{}enabled {}\n", stats.render(), u8::from(on)));
    }
    let stats = read_stats()?;
    warn_not_counting();
    if json {
        let snap = Snapshot {
            features: read_features()?,
            stats,
            timeline: read_timeline()?,
        };
        warn_truncated(&snap.timeline);
        emit(&format!("{}\n", serde_json::to_string_pretty(&snap)?))
    } else {
        emit(&stats.render())
    }
}

/// The counters count only while schedstats are enabled: say so when they are not, or
/// a table of zeros (or of old counts) would read as "nothing happened".
fn warn_not_counting() {
    if std::fs::read_to_string(SCHEDSTATS_SYSCTL).is_ok_and(|v| v.trim() == "0") {
        eprintln!(
            "eevdfctl: note: schedstats are off, so the counters are not counting; \
             `sysctl kernel.sched_schedstats=1` (or `echo 1 > {SCHEDSTATS_SYSCTL}`) turns \
             them on, at a cost of some instructions per context switch"
        );
    }
}

fn warn_truncated(t: &Timeline) {
    for cpu in t.truncated_cpus() {
        eprintln!(
            "eevdfctl: warning: the timeline is truncated after cpu {cpu}'s rows (the \
             kernel's snapshot ran out of room)"
        );
    }
}

fn timeline(json: bool, cpu: Option<u32>, from: Option<String>) -> Result<()> {
    let mut t = match from {
        Some(f) => {
            let text = std::fs::read_to_string(&f).with_context(|| format!("reading {f}"))?;
            Timeline::parse(&text).map_err(|e| anyhow!("{f}: {e}"))?
        }
        None => read_timeline()?,
    };
    if let Some(cpu) = cpu {
        let one = t.cpu(cpu).cloned().ok_or_else(|| {
            anyhow!("cpu {cpu} is not in the timeline (offline, or cut off by truncation)")
        })?;
        t = Timeline(vec![one]);
    }
    warn_truncated(&t);
    if json {
        emit(&format!("{}\n", serde_json::to_string_pretty(&t)?))
    } else {
        emit(&t.render())
    }
}

/// `timeline`'s options for scripts.
struct TimelineQuery {
    cpu: Option<u32>,
    check: Option<CheckRule>,
    want_cpus: Option<usize>,
    delayed: bool,
    group: Option<String>,
    root_nr_queued: bool,
    looks: u64,
    interval_ms: u64,
    timeout_ms: u64,
    from: Option<String>,
}

fn timeline_query(q: TimelineQuery) -> Result<ExitCode> {
    let read = || -> Result<(String, String)> {
        match &q.from {
            Some(f) => Ok((
                f.clone(),
                std::fs::read_to_string(f).with_context(|| format!("reading {f}"))?,
            )),
            None => {
                require_eevdf()?;
                let path = sched_path(TIMELINE);
                let text = read_debugfs(&path)?;
                Ok((path, text))
            }
        }
    };
    let parse = |(path, text): (String, String)| -> Result<Timeline> {
        Timeline::parse(&text).map_err(|e| anyhow!("{path}: {e}"))
    };
    if let Some(rule) = q.check {
        let (path, text) = read()?;
        return verdict(
            &path,
            debugfs::check_timeline(&text, rule.into(), q.want_cpus),
        );
    }
    if q.root_nr_queued {
        let cpu = q.cpu.expect("clap: --root-nr-queued requires --cpu");
        let t = parse(read()?)?;
        let root = t
            .cpu(cpu)
            .ok_or_else(|| anyhow!("cpu {cpu} is not in the timeline"))?
            .root()
            .ok_or_else(|| anyhow!("cpu {cpu} has no cfs_rq in the timeline"))?;
        emit(&format!("{}\n", root.nr_queued))?;
        return Ok(ExitCode::SUCCESS);
    }
    // --delayed, else --max-offset-ns: up to --looks snapshots, --interval-ms apart, within
    // --timeout-ms.
    let start = Instant::now();
    let timeout = Duration::from_millis(q.timeout_ms);
    let (mut looks, mut found) = (0u64, 0u64);
    loop {
        let t = parse(read()?)?;
        looks += 1;
        if q.delayed {
            found = match (&q.group, q.cpu) {
                (Some(g), _) => t.delayed_in_group(g),
                (None, Some(c)) => t.delayed_on_cpu(c),
                (None, None) => unreachable!("clap: --delayed requires --cpu or --group"),
            } as u64;
            if found > 0 {
                break;
            }
        } else {
            let cpu = q.cpu.expect("clap: --max-offset-ns requires --cpu");
            found = found.max(t.max_abs_offset_ns(cpu));
        }
        if looks >= q.looks || start.elapsed() >= timeout {
            break;
        }
        std::thread::sleep(Duration::from_millis(q.interval_ms));
    }
    if q.delayed {
        emit(&format!("looks {looks} delayed {found}\n"))?;
    } else {
        emit(&format!("{found}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `/proc/REL`, or `$EEVDFCTL_PROC_DIR/REL` when set (the host tests point it at fake
/// files).
fn proc_path(rel: &str) -> String {
    let dir = std::env::var("EEVDFCTL_PROC_DIR").unwrap_or_else(|_| "/proc".into());
    format!("{dir}/{rel}")
}

fn cputime_check(slack_ratio: f64, slack_s: f64, pids: &[u32]) -> Result<ExitCode> {
    let read = |rel: &str| std::fs::read_to_string(proc_path(rel)).ok();
    let uptime = || -> Result<f64> {
        let text = read("uptime").ok_or_else(|| anyhow!("cannot read {}", proc_path("uptime")))?;
        cputime::parse_uptime_s(&text).map_err(|e| anyhow!(e))
    };
    let mut samples = Vec::with_capacity(pids.len());
    for &pid in pids {
        // In this order, one right after the other (cputime's module doc says why).
        let cpu_ns = read(&format!("{pid}/schedstat"))
            .as_deref()
            .and_then(cputime::parse_schedstat_ns);
        let uptime_s = uptime()?;
        let start_ticks = read(&format!("{pid}/stat"))
            .as_deref()
            .and_then(cputime::parse_stat_start_ticks);
        samples.push(cputime::Sample {
            pid,
            cpu_ns,
            uptime_s,
            start_ticks,
        });
    }
    let v = cputime::judge(&samples, slack_ratio, slack_s);
    let mut out: String = v.lines.iter().map(|l| format!("{l}\n")).collect();
    if !v.ok {
        for &pid in pids {
            let sched = read(&format!("{pid}/sched"));
            out.push_str(&cputime::sched_diag(pid, sched.as_deref()));
            out.push('\n');
        }
        let up = uptime()?;
        let ticks = read("stat")
            .as_deref()
            .and_then(cputime::parse_proc_stat_cpu_ticks)
            .ok_or_else(|| anyhow!("no cpu line in {}", proc_path("stat")))?;
        out.push_str(&cputime::machine_diag(ticks, up));
        out.push('\n');
    }
    emit(&out)?;
    Ok(if v.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn top(interval_ms: u64, iterations: u64, rows: usize) -> Result<()> {
    let tty = io::stdout().is_terminal();
    let interval = Duration::from_millis(interval_ms);
    let mut prev = read_stats()?;
    warn_not_counting();
    let mut prev_at = Instant::now();
    let mut sample = 0;
    while iterations == 0 || sample < iterations {
        std::thread::sleep(interval);
        let now = read_stats()?;
        let now_at = Instant::now();
        let timeline = read_timeline()?;
        let delta = now
            .delta(&prev)
            .map_err(|e| anyhow!("{}: {e}", sched_path(STATS)))?;
        sample += 1;
        let frame = debugfs::render_top(
            sample,
            iterations,
            (now_at - prev_at).as_secs_f64(),
            &delta,
            &timeline,
            rows,
        );
        // ANSI: cursor home, clear the screen. Not on a pipe, so frames can be read back:
        // there a blank line separates them.
        let clear = match (tty, sample) {
            (true, _) => "\x1b[H\x1b[2J",
            (false, 1) => "",
            (false, _) => "\n",
        };
        emit(&format!("{clear}{frame}"))?;
        prev = now;
        prev_at = now_at;
    }
    Ok(())
}

fn dispatch(args: Args) -> Result<ExitCode> {
    let ok = |r: Result<()>| r.map(|()| ExitCode::SUCCESS);
    match args.cmd {
        Cmd::Features { action } => features(action),
        Cmd::Slice {
            action: SliceCmd::Get { pid },
        } => ok(slice_get(pid)),
        Cmd::Slice {
            action: SliceCmd::Set { pid, slice },
        } => ok(slice_set(pid, slice.ns, None).map(|got| {
            println!(
                "pid {} slice_ns {got} (asked {} ns, given in {})",
                shown_pid(pid),
                slice.ns,
                slice.unit
            );
        })),
        Cmd::Run {
            slice_ns,
            policy,
            cmd,
        } => run(slice_ns, policy, &cmd),
        Cmd::Place {
            json,
            pid,
            check,
            check_limit,
            set,
            from,
        } => place(json, pid, check.then_some(check_limit), set, from),
        Cmd::Stats {
            json,
            reset,
            get,
            cpu,
            check_sums,
            want_cpus,
            verify,
            from,
        } => {
            if get.is_some() || check_sums {
                stats_query(StatsQuery {
                    get,
                    cpu,
                    want_cpus,
                    verify,
                    from,
                })
            } else if let Some(f) = from {
                // A saved copy, as the table.
                let text = std::fs::read_to_string(&f).with_context(|| format!("reading {f}"))?;
                let table = if verify {
                    Stats::parse_verify(&text).map(|(s, _)| s)
                } else {
                    Stats::parse(&text)
                }
                .map_err(|e| anyhow!("{f}: {e}"))?;
                ok(emit(&table.render()))
            } else {
                ok(stats(json, reset, verify))
            }
        }
        Cmd::Timeline {
            json,
            cpu,
            check,
            want_cpus,
            delayed,
            group,
            max_offset_ns,
            root_nr_queued,
            looks,
            interval_ms,
            timeout_ms,
            from,
        } => {
            if check.is_some() || delayed || max_offset_ns || root_nr_queued {
                timeline_query(TimelineQuery {
                    cpu,
                    check,
                    want_cpus,
                    delayed,
                    group,
                    root_nr_queued,
                    looks,
                    interval_ms,
                    timeout_ms,
                    from,
                })
            } else {
                ok(timeline(json, cpu, from))
            }
        }
        Cmd::Top {
            interval_ms,
            iterations,
            rows,
        } => ok(top(interval_ms, iterations, rows)),
        Cmd::Cputime {
            slack_ratio,
            slack_s,
            pids,
        } => cputime_check(slack_ratio, slack_s, &pids),
    }
}

fn main() -> ExitCode {
    // Bad usage exits 2 here (clap).
    let args = Args::parse();
    match dispatch(args) {
        Ok(code) => code,
        Err(e) => {
            // `eevdfctl top | head`: the reader left, which is not an error.
            let pipe_closed = e.chain().any(|c| {
                c.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            });
            if pipe_closed {
                return ExitCode::SUCCESS;
            }
            eprintln!("eevdfctl: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("eevdfctl").chain(args.iter().copied()))
    }

    #[test]
    fn clap_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn usage_errors_exit_2() {
        for bad in [
            &["slice", "set", "1", "-5"][..],
            &["slice", "set", "1", "abc"],
            &["slice", "set", "1", "18446744073709551616"],
            &["slice", "get", "-1"],
            &["slice", "get"],
            &["run", "--slice-ns", "1"],
            &["run", "ls"],
            &["run", "--slice-ns", "1", "--policy", "fifo", "--", "ls"],
            &["stats", "--json", "--reset"],
            &["top", "--interval-ms", "0"],
            &["features", "set"],
            &["stats", "--get", "picks", "--check-sums"],
            &["stats", "--cpu", "1"],
            &["stats", "--want-cpus", "1"],
            &["stats", "--json", "--from", "/tmp/x"],
            &["stats", "--reset", "--verify"],
            &["timeline", "--check", "strict"],
            &["timeline", "--check", "sums", "--json"],
            &["timeline", "--want-cpus", "2"],
            &["timeline", "--delayed"],
            &["timeline", "--delayed", "--cpu", "1", "--group", "/a"],
            &["timeline", "--group", "/a"],
            &["timeline", "--max-offset-ns"],
            &["timeline", "--root-nr-queued", "--cpu", "1", "--looks", "2"],
            &["timeline", "--delayed", "--cpu", "1", "--looks", "0"],
            &[
                "timeline",
                "--delayed",
                "--cpu",
                "1",
                "--from",
                "f",
                "--looks",
                "2",
            ],
            &["cputime"],
            &["cputime", "--slack-ratio", "x", "1"],
            &["cputime", "-1"],
        ] {
            let e = parse(bad).expect_err(&format!("{bad:?} parsed"));
            assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
        }
    }

    #[test]
    fn run_takes_the_rest_as_the_command() {
        let a = parse(&["run", "--slice-ns", "500000", "--", "ls", "-l", "--color"]).unwrap();
        match a.cmd {
            Cmd::Run {
                slice_ns,
                policy,
                cmd,
            } => {
                assert_eq!(slice_ns, 500000);
                assert_eq!(policy, None);
                assert_eq!(cmd, ["ls", "-l", "--color"]);
            }
            c => panic!("{c:?}"),
        }
        let a = parse(&[
            "run",
            "--policy",
            "batch",
            "--slice-ns",
            "0",
            "sh",
            "-c",
            "x",
        ])
        .unwrap();
        assert!(matches!(
            a.cmd,
            Cmd::Run { policy: Some(FairPolicy::Batch), ref cmd, .. } if cmd.len() == 3
        ));
    }

    #[test]
    fn subcommands_parse() {
        assert!(matches!(
            parse(&["features"]).unwrap().cmd,
            Cmd::Features { action: None }
        ));
        assert!(matches!(
            parse(&["features", "clear", "A", "B"]).unwrap().cmd,
            Cmd::Features { action: Some(FeaturesCmd::Clear { ref names }) } if names.len() == 2
        ));
        assert!(matches!(
            parse(&["slice", "set", "0", "0"]).unwrap().cmd,
            Cmd::Slice {
                action: SliceCmd::Set {
                    pid: 0,
                    slice: eevdf_guest::SliceArg { ns: 0, unit: "ns" }
                }
            }
        ));
        assert!(matches!(
            parse(&["top"]).unwrap().cmd,
            Cmd::Top {
                interval_ms: 1000,
                iterations: 0,
                rows: 5
            }
        ));
        assert!(matches!(
            parse(&["timeline", "--json", "--cpu", "3"]).unwrap().cmd,
            Cmd::Timeline {
                json: true,
                cpu: Some(3),
                ..
            }
        ));
        assert!(matches!(
            parse(&["stats", "--get", "picks", "--cpu", "1", "--from", "/tmp/x"]).unwrap().cmd,
            Cmd::Stats { get: Some(ref n), cpu: Some(1), from: Some(_), .. } if n == "picks"
        ));
        assert!(matches!(
            parse(&["stats", "--check-sums", "--verify", "--want-cpus", "4"])
                .unwrap()
                .cmd,
            Cmd::Stats {
                check_sums: true,
                verify: true,
                want_cpus: Some(4),
                ..
            }
        ));
        assert!(matches!(
            parse(&["timeline", "--check", "all-eligible", "--want-cpus", "2"])
                .unwrap()
                .cmd,
            Cmd::Timeline {
                check: Some(CheckRule::AllEligible),
                want_cpus: Some(2),
                looks: 1,
                ..
            }
        ));
        assert!(matches!(
            parse(&["timeline", "--delayed", "--group", "/a b", "--looks", "100"]).unwrap().cmd,
            Cmd::Timeline { delayed: true, group: Some(ref g), looks: 100, interval_ms: 20,
                            timeout_ms: 10000, .. } if g == "/a b"
        ));
        assert!(matches!(
            parse(&["timeline", "--max-offset-ns", "--cpu", "2", "--looks", "5"])
                .unwrap()
                .cmd,
            Cmd::Timeline {
                max_offset_ns: true,
                cpu: Some(2),
                looks: 5,
                ..
            }
        ));
        assert!(matches!(
            parse(&["cputime", "1", "2"]).unwrap().cmd,
            Cmd::Cputime { slack_ratio, slack_s, ref pids }
                if slack_ratio == 1.05 && slack_s == 0.1 && pids[..] == [1, 2]
        ));
    }

    #[test]
    fn errno_messages() {
        let m = |errno| sched_error(io::Error::from_raw_os_error(errno), 42, "call".into());
        assert_eq!(m(libc::ESRCH).to_string(), "no such process: 42");
        assert_eq!(
            m(libc::EPERM).to_string(),
            "not permitted to change 42 (needs CAP_SYS_NICE or same owner)"
        );
        assert!(m(libc::EINVAL)
            .to_string()
            .starts_with("call: the kernel refused"));
        assert!(format!("{:#}", m(libc::EFAULT)).starts_with("call: "));
    }
}
