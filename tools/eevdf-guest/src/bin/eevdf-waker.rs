//! A cyclictest-like periodic waker for SCHED_OTHER that sets its own slice.
//!
//! It asks for a slice with sched_setattr (`sched_runtime`, SCHED_OTHER), which stock 6.12's
//! cyclictest cannot do, then sleeps to absolute CLOCK_MONOTONIC deadlines `--interval-us`
//! apart and records how late each wakeup was: timer slack, the scheduler's wakeup
//! preemption decision and the time the woken task waits behind the running one.
//!
//! With a command after `--` it forks that command as the background load (e.g. hackbench)
//! and measures until it exits; otherwise it measures for `--duration-ms`. It ends with a
//! summary and one `@@json` result line (see the eevdf-guest library).
//!
//! The load does not run at the waker's slice: 6.12 keeps a task's `custom_slice` across
//! fork (unless SCHED_RESET_ON_FORK), so the child sets its own slice
//! (`--load-slice-base-x`, the base slice by default) before it execs the command, and
//! every process the command forks inherits that one. While the load runs, the waker reads
//! `/proc/<pid>/sched` of itself, of the command and of up to two of its descendants, and
//! records policy, nice and `se.slice` of each (`readback`), so that the lab can hold them
//! against the cell's plan.
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{
    latency_histogram, slice_request_ns, summarise_latencies_ns, sys, Record, TaskReadback,
    WakerResult,
};
use std::ffi::CString;

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Period between wakeups, µs. Shorter periods give more samples per second but a waker
    /// that runs more often and so weighs more in the scheduler's accounting.
    #[arg(long, default_value_t = 1000)]
    interval_us: u64,

    /// The SCHED_OTHER slice to request, µs (0 = keep the base slice). The kernel clamps to
    /// [100, 100000]. Conflicts with --slice-base-x.
    #[arg(long, conflicts_with = "slice_base_x")]
    slice_us: Option<u64>,

    /// The slice to request as a multiple of /sys/kernel/debug/sched/base_slice_ns (the
    /// slice every other task has), e.g. 10, 1 or 0.1 as in the seed's experiment.
    #[arg(long)]
    slice_base_x: Option<f64>,

    /// Measure this long, ms; with a background command, the most to wait for it.
    #[arg(long, default_value_t = 2000)]
    duration_ms: u64,

    /// Pin the waker to this CPU (default: anywhere). Pinning it where the load runs makes
    /// every wakeup a preemption decision; leaving it free lets it find an idle CPU.
    #[arg(long)]
    cpu: Option<u32>,

    /// The background command's slice as a multiple of the base slice: 1 (the default)
    /// starts it at the base slice as a task that never asked has it (sched_runtime 0),
    /// anything else at round(base x X), clamped by the kernel to [100, 100000] µs. Set in
    /// the child before its exec, so the load never runs at the waker's slice.
    #[arg(long, default_value_t = 1.0)]
    load_slice_base_x: f64,

    /// When to read the waker's and the load's policy, nice and se.slice from
    /// /proc/<pid>/sched, ms after the load starts (at the first wakeup after it). Early, so
    /// that a short load is still there (its first processes are enough; they hold the
    /// slice the rest inherit); a load that ends before is not read. The periods the read
    /// takes are not measured, and its CPU time and run delay are left out of the
    /// per-wakeup averages.
    #[arg(long, default_value_t = 50)]
    readback_after_ms: u64,

    /// Read back only once the load has this many processes (the command and its
    /// descendants), trying again every 50 ms after --readback-after-ms until the load
    /// ends (0 = read at --readback-after-ms whatever it has). A load that forks its tasks
    /// after a start-up of unknown length (a slow guest) is then read with them; each try
    /// walks /proc, so a larger count costs the waker more periods, none of them measured.
    #[arg(long, default_value_t = 0)]
    readback_load_procs: u32,

    /// Print a log2 histogram of the lateness as well as the summary.
    #[arg(long)]
    histogram: bool,

    /// Background command: measured until it exits.
    #[arg(last = true)]
    command: Vec<String>,
}

fn base_slice_ns() -> Result<u64> {
    sys::base_slice_ns().with_context(|| format!("reading {}", sys::BASE_SLICE_PATH))
}

/// Fork `cmd` with SCHED_OTHER, nice 0 and a slice of `slice_ns` (0 = the base slice), set
/// in the child before its exec: the waker's own slice is inherited across fork.
fn spawn(cmd: &[String], slice_ns: u64) -> Result<libc::pid_t> {
    let argv: Vec<CString> = cmd
        .iter()
        .map(|a| CString::new(a.as_str()))
        .collect::<Result<_, _>>()
        .context("NUL in the background command")?;
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let pid = sys::fork_child(|| {
        if let Err(e) = sys::set_own_slice_ns(slice_ns, 0) {
            eprintln!("eevdf-waker: the load's sched_setattr(sched_runtime={slice_ns}): {e}");
            return 126;
        }
        // SAFETY: `ptrs` is a NULL-terminated array of pointers to live C strings.
        unsafe { libc::execvp(ptrs[0], ptrs.as_ptr()) };
        eprintln!("eevdf-waker: cannot run {}", cmd[0]);
        127
    })
    .context("fork")?;
    Ok(pid)
}

/// How long after a read-back that found too few load processes the next one is, ns.
const READBACK_RETRY_NS: u64 = 50_000_000;

/// Load tasks read back besides the background command itself.
const READBACK_DESCENDANTS: usize = 2;

/// The waker's own [`TaskReadback`] and, with a load, its command's and up to
/// [`READBACK_DESCENDANTS`] of its descendants'; and how many processes the load had.
fn read_back(bg: Option<libc::pid_t>) -> (Vec<TaskReadback>, u32) {
    // SAFETY: getpid takes no arguments and cannot fail.
    let me = unsafe { libc::getpid() };
    let mut out: Vec<TaskReadback> = TaskReadback::read("waker", me).into_iter().collect();
    let Some(root) = bg else {
        return (out, 0);
    };
    let below = sys::descendants_of(root, &sys::proc_parents());
    out.extend(
        std::iter::once(root)
            .chain(below.iter().copied().take(READBACK_DESCENDANTS))
            .filter_map(|pid| TaskReadback::read("load", pid)),
    );
    (out, 1 + below.len() as u32)
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.interval_us == 0 {
        bail!("--interval-us must be positive");
    }
    let slice_ns = match (args.slice_us, args.slice_base_x) {
        (Some(us), _) => us * 1000,
        (None, Some(x)) => slice_request_ns(base_slice_ns()?, x),
        (None, None) => 0,
    };
    if args.load_slice_base_x.is_nan() || args.load_slice_base_x <= 0.0 {
        bail!("--load-slice-base-x must be positive");
    }
    let load_slice_ns = if args.load_slice_base_x == 1.0 {
        0
    } else {
        slice_request_ns(base_slice_ns()?, args.load_slice_base_x)
    };
    if let Some(cpu) = args.cpu {
        sys::pin_to_cpu(0, cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    }
    sys::set_own_slice_ns(slice_ns, 0)
        .with_context(|| format!("sched_setattr(SCHED_OTHER, sched_runtime={slice_ns})"))?;
    let slice_effective_ns = sys::own_slice_ns().context("sched_getattr")?;
    let policy = eevdf_guest::fair_policy("eevdf-waker")?;

    let interval_ns = args.interval_us * 1000;
    let max_samples = (args.duration_ms * 1000 / args.interval_us) as usize + 1;
    let mut lat = Vec::with_capacity(max_samples);
    let mut missed = 0;
    let ctx0 = sys::system_ctxsw()?;
    let (run0, delay0) = sys::own_schedstat_ns()?;
    let bg = if args.command.is_empty() {
        None
    } else {
        Some(spawn(&args.command, load_slice_ns)?)
    };
    let mut bg_status = None;
    let t0 = sys::now_ns();
    let end = t0 + args.duration_ms * 1_000_000;
    let mut readback_at = t0 + args.readback_after_ms * 1_000_000;
    // The read-back: what it found, and the CPU time and run delay it took (ns); the last
    // one that found fewer than --readback-load-procs processes.
    let mut readback: Option<(Vec<TaskReadback>, u32)> = None;
    let mut readback_short: Option<(Vec<TaskReadback>, u32)> = None;
    let (mut readback_run, mut readback_delay) = (0, 0);
    let mut next = t0 + interval_ns;
    loop {
        sys::sleep_until_ns(next);
        let mut now = sys::now_ns();
        lat.push(now.saturating_sub(next));
        next += interval_ns;
        while next <= now {
            next += interval_ns;
            missed += 1;
        }
        if readback.is_none() && now >= readback_at {
            // Not measured: the periods it takes are skipped without counting as missed,
            // and its CPU time and run delay come off the per-wakeup averages.
            let (r0, d0) = sys::own_schedstat_ns()?;
            let (tasks, procs) = read_back(bg);
            if procs >= args.readback_load_procs {
                readback = Some((tasks, procs));
            } else {
                readback_short = Some((tasks, procs));
                readback_at = now + READBACK_RETRY_NS;
            }
            let (r1, d1) = sys::own_schedstat_ns()?;
            readback_run += r1.saturating_sub(r0);
            readback_delay += d1.saturating_sub(d0);
            now = sys::now_ns();
            while next <= now {
                next += interval_ns;
            }
        }
        if let Some(pid) = bg {
            if let Some(st) = sys::wait_pid(pid, false) {
                bg_status = Some(st);
                break;
            }
        }
        if now >= end || lat.len() >= max_samples {
            break;
        }
    }
    let duration_s = (sys::now_ns() - t0) as f64 / 1e9;
    if let (Some(pid), None) = (bg, bg_status) {
        eprintln!("eevdf-waker: background command still running after --duration-ms; waiting");
        bg_status = sys::wait_pid(pid, true);
    }
    let system_ctxsw = sys::system_ctxsw()? - ctx0;
    let (waker_nvcsw, waker_nivcsw) = sys::own_ctxsw();
    let (run1, delay1) = sys::own_schedstat_ns()?;
    let per_wakeup_us = |ns: u64| ns as f64 / 1e3 / lat.len().max(1) as f64;
    let run_delay_avg_us =
        per_wakeup_us(delay1.saturating_sub(delay0).saturating_sub(readback_delay));
    let run_avg_us = per_wakeup_us(run1.saturating_sub(run0).saturating_sub(readback_run));
    // A load that never reached --readback-load-procs is reported with what the last try
    // found; one that ended before --readback-after-ms was not read: the waker alone is
    // (and the lab fails the cell for want of a load task).
    if readback.is_none() {
        if let Some((_, procs)) = &readback_short {
            eprintln!(
                "eevdf-waker: the load had {procs} processes at the last read-back, never the {} asked for",
                args.readback_load_procs
            );
        }
    }
    let (readback, load_tasks) = readback
        .or(readback_short)
        .unwrap_or_else(|| read_back(None));
    if bg.is_some() {
        println!("eevdf-waker: the load had {load_tasks} processes at the read-back");
    }
    for t in &readback {
        println!("eevdf-waker: read back {} {}", t.role, t.describe());
    }
    let s = summarise_latencies_ns(&lat);
    println!(
        "eevdf-waker: slice {} us (asked {} us), {} wakeups every {} us: min {:.1} avg {:.1} p99 {:.1} max {:.1} us, {} missed, run delay {:.1} us and run time {:.1} us per wakeup",
        slice_effective_ns / 1000,
        slice_ns / 1000,
        lat.len(),
        args.interval_us,
        s.min_us,
        s.avg_us,
        s.p99_us,
        s.max_us,
        missed,
        run_delay_avg_us,
        run_avg_us
    );
    if args.histogram {
        let mut buckets = [0u64; 32];
        for &l in &lat {
            buckets[(64 - (l / 1000).leading_zeros()) as usize & 31] += 1;
        }
        for (i, &n) in buckets.iter().enumerate().filter(|(_, n)| **n > 0) {
            let lo = if i == 0 { 0 } else { 1u64 << (i - 1) };
            println!("  < {:>8} us: {n}", if i == 0 { 1 } else { lo * 2 });
        }
    }
    let r = Record::Waker(WakerResult {
        policy,
        interval_us: args.interval_us,
        slice_requested_ns: slice_ns,
        slice_effective_ns,
        samples: lat.len() as u64,
        missed,
        min_us: s.min_us,
        avg_us: s.avg_us,
        p50_us: s.p50_us,
        p90_us: s.p90_us,
        p99_us: s.p99_us,
        p999_us: s.p999_us,
        max_us: s.max_us,
        quantiles: s.quantiles,
        waker_nvcsw,
        waker_nivcsw,
        system_ctxsw,
        duration_s,
        bg_status,
        run_delay_avg_us,
        run_avg_us,
        hist: latency_histogram(&lat),
        load_slice_requested_ns: bg.map(|_| load_slice_ns),
        readback,
        load_tasks,
    });
    println!("{}", r.to_line());
    Ok(())
}
