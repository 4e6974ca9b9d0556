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
use clap::{Parser, Subcommand, ValueEnum};
use eevdf_guest::debugfs::{
    self, Features, Snapshot, Stats, Timeline, EEVDF, FEATURES, SCHED_DEBUG, SCHED_DEBUGFS, STATS,
    TIMELINE,
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
    Stats {
        /// Print one JSON object (features, counters, timeline) instead of the table; bigger
        /// and slower to read, but complete and for programs.
        #[arg(long, conflicts_with = "reset")]
        json: bool,
        /// Set every CPU's counters to zero (write `0` to the file) and print nothing.
        /// Counting starts again at once, so later reads show only what happened since;
        /// what was counted before is lost.
        #[arg(long)]
        reset: bool,
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
    Timeline {
        /// Print JSON (schema above) instead of the aligned text.
        #[arg(long)]
        json: bool,
        /// Only this CPU (its number); an error if the snapshot does not have it.
        #[arg(long, value_name = "N")]
        cpu: Option<u32>,
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

fn stats(json: bool, reset: bool) -> Result<()> {
    if reset {
        require_eevdf()?;
        let path = sched_path(STATS);
        return write_debugfs(&path, "0").map_err(|e| debugfs_error(&path, e));
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

fn timeline(json: bool, cpu: Option<u32>) -> Result<()> {
    let mut t = read_timeline()?;
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
        Cmd::Stats { json, reset } => ok(stats(json, reset)),
        Cmd::Timeline { json, cpu } => ok(timeline(json, cpu)),
        Cmd::Top {
            interval_ms,
            iterations,
            rows,
        } => ok(top(interval_ms, iterations, rows)),
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
                cpu: Some(3)
            }
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
