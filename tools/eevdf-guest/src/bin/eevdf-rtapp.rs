//! rt-app-shaped tasks on one CPU: periodic tasks, long sleepers and hogs, each with its own
//! SCHED_OTHER slice (sched_setattr `sched_runtime`) and nice value.
//!
//! - A periodic task (`--task period_us=P,run_us=R`) wakes on an absolute CLOCK_MONOTONIC
//!   grid every P µs anchored at the window's start (rt-app's `timer`), runs R µs of CPU
//!   time and sleeps to the next point. An activation that ends after its period is a missed
//!   period; whole periods it is still behind by are skipped, and so are the window's points
//!   before a late-starting thread's first activation.
//! - A sleeper (`--task sleep_us=S,run_us=R`) runs R µs of CPU time, then sleeps S µs
//!   (rt-app's `sleep`): the long sleepers whose lag the kernel clamps at each dequeue.
//! - A hog (`--hog`) never sleeps.
//!
//! "Run R µs" means R µs of the task's own CPU time (`CLOCK_THREAD_CPUTIME_ID`), so
//! preemption stretches an activation but does not shorten its work, as rt-app's calibrated
//! `run` does. Every task is a thread pinned to `--cpu`; each sets its own policy, slice and
//! nice and checks with sched_getattr and `/proc/thread-self/sched` that the kernel holds
//! them (an error otherwise). After `--warmup-ms` it measures for `--duration-ms`: per task
//! its activations, missed periods, wakeup latency (woken minus asked-for time) p50/p99/max,
//! and its CPU share against its weight-fair share (weighted max-min over the tasks'
//! demands). Ends with a summary and one `@@json` result line (see the eevdf-guest library).
//!
//! Example, one 0.1 ms-slice periodic task among two 3 ms-slice hogs:
//!   eevdf-rtapp --task period_us=1000,run_us=300,slice_us=100 --hog slice_us=3000,count=2
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{
    fair_shares, nice_to_weight, parse_task_specs, sys, Quantiles, Record, RtAppResult, RtAppTask,
    TaskAttr, TaskKind, TaskSpec,
};
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier};

#[derive(Parser, Debug)]
#[command(
    version,
    about = concat!(
        "rt-app-shaped periodic tasks, sleepers and hogs on one CPU, each with its own ",
        "SCHED_OTHER slice and nice value: periods, misses, wakeup latency, CPU share ",
        "against the weight-fair share",
    ),
    long_about = None
)]
struct Args {
    /// A task that sleeps: `period_us=P,run_us=R` (periodic) or `sleep_us=S,run_us=R`
    /// (sleeper), with optional `slice_us=` (0 = the base slice; the kernel clamps to
    /// [100, 100000]), `nice=`, `name=` and `count=` (that many copies). Repeat for each.
    /// Several periodic tasks with one period wake together, as rt-app's do.
    #[arg(long = "task")]
    tasks: Vec<String>,

    /// A task that never sleeps: optional `slice_us=`, `nice=`, `name=`, `count=`. Repeat
    /// for each. Hogs keep the CPU busy, so that every wakeup is a preemption decision.
    #[arg(long = "hog")]
    hogs: Vec<String>,

    /// The CPU every task is pinned to: one runqueue's decisions, no load balancing.
    #[arg(long, default_value_t = 0)]
    cpu: u32,

    /// Time before measuring, ms: placement and lag settle, and the first, synchronised
    /// wakeups of every task are left out.
    #[arg(long, default_value_t = 300)]
    warmup_ms: u64,

    /// Measured time, ms. Shares converge as 1/duration; a sleeper with a 200 ms period
    /// needs seconds for a few dozen activations.
    #[arg(long, default_value_t = 2000)]
    duration_ms: u64,
}

/// How long after the window the tasks stop by themselves if the main thread has not told
/// them to (a kernel that lets them starve the main thread would otherwise never stop
/// them); a main thread later than half of it was starved, and the run has no result.
const GRACE_NS: u64 = 1_000_000_000;

/// What every task shares with the main thread.
struct Shared {
    /// Start of the measured window, CLOCK_MONOTONIC ns (set before the barrier).
    window_start: u64,
    /// End of the measured window.
    window_end: u64,
    /// Set by the main thread once the window is over: hogs stop, sleepers stop at their
    /// next wakeup.
    stop: AtomicBool,
    /// Where every task waits until all have set their attributes.
    go: Barrier,
}

/// What a task thread returns.
struct TaskOut {
    periods: u64,
    missed: u64,
    skipped: u64,
    latencies_ns: Vec<u64>,
    nivcsw: u64,
}

/// Burn `ns` of this thread's CPU time. The clock is read every few hundred loop
/// iterations (a system call each), a few µs of work apart under TCG.
fn run_cpu_ns(ns: u64) {
    let end = sys::thread_cpu_ns() + ns;
    let mut x = 0u64;
    while sys::thread_cpu_ns() < end {
        for _ in 0..200 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
}

fn in_window(sh: &Shared, t: u64) -> bool {
    t >= sh.window_start && t < sh.window_end
}

/// The main thread said stop, or it is long past the window.
fn stopped(sh: &Shared, now: u64) -> bool {
    sh.stop.load(Ordering::Relaxed) || now >= sh.window_end + GRACE_NS
}

/// The body of one task's thread, after its attributes are set and the barrier passed.
fn run_task(spec: &TaskSpec, sh: &Shared) -> TaskOut {
    let mut out = TaskOut {
        periods: 0,
        missed: 0,
        skipped: 0,
        latencies_ns: Vec::new(),
        nivcsw: 0,
    };
    // The involuntary switches are counted from the first time the task sees the window
    // open (a hog within a few µs, a sleeper at its first wakeup in it).
    let start_nivcsw = sys::thread_ctxsw().1;
    let mut window_nivcsw: Option<u64> = None;
    let note_window = |now: u64, at: &mut Option<u64>| {
        if at.is_none() && now >= sh.window_start {
            *at = Some(sys::thread_ctxsw().1);
        }
    };
    match spec.kind {
        TaskKind::Hog => {
            let mut x = 0u64;
            loop {
                for _ in 0..1000 {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
                let now = sys::now_ns();
                note_window(now, &mut window_nivcsw);
                if stopped(sh, now) {
                    break;
                }
            }
        }
        TaskKind::Periodic { period_us } => {
            let period = period_us * 1000;
            // The grid is the window's, window_start + i·period for every integer i, so
            // that periodic tasks with one period wake together and the window holds
            // exactly duration/period grid points. The first activation is the first grid
            // point after now. A thread that passed the barrier after the window opened
            // (thread creation is slow on a loaded debug kernel) is behind from the start:
            // the window's points it never reached are skipped.
            let now = sys::now_ns();
            let mut next = if now < sh.window_start {
                sh.window_start - (sh.window_start - now) / period * period
            } else {
                sh.window_start + ((now - sh.window_start) / period + 1) * period
            };
            let mut missed_point = sh.window_start;
            while missed_point < next {
                if in_window(sh, missed_point) {
                    out.skipped += 1;
                }
                missed_point += period;
            }
            while !stopped(sh, sys::now_ns()) {
                let slept = sys::now_ns() < next;
                if slept {
                    sys::sleep_until_ns(next);
                }
                let woke = sys::now_ns();
                note_window(woke, &mut window_nivcsw);
                let counted = in_window(sh, next);
                if counted {
                    out.periods += 1;
                    if slept {
                        out.latencies_ns.push(woke.saturating_sub(next));
                    }
                }
                run_cpu_ns(spec.run_us * 1000);
                let end = sys::now_ns();
                if counted && end > next + period {
                    out.missed += 1;
                }
                next += period;
                // Activations whose successor is due too are skipped; the last one due
                // starts at once, late.
                while next + period <= end {
                    if in_window(sh, next) {
                        out.skipped += 1;
                    }
                    next += period;
                }
            }
            // Told to stop while still behind: the window's activations it never reached
            // are skipped too, so that activations + skipped = the window's grid points.
            while next < sh.window_end {
                if in_window(sh, next) {
                    out.skipped += 1;
                }
                next += period;
            }
        }
        TaskKind::Sleeper { sleep_us } => {
            while !stopped(sh, sys::now_ns()) {
                run_cpu_ns(spec.run_us * 1000);
                let target = sys::now_ns() + sleep_us * 1000;
                sys::sleep_until_ns(target);
                let woke = sys::now_ns();
                note_window(woke, &mut window_nivcsw);
                if in_window(sh, target) {
                    out.periods += 1;
                    out.latencies_ns.push(woke.saturating_sub(target));
                }
            }
        }
    }
    let end_nivcsw = sys::thread_ctxsw().1;
    out.nivcsw = end_nivcsw.saturating_sub(window_nivcsw.unwrap_or(start_nivcsw));
    out
}

fn main() -> Result<()> {
    let args = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-rtapp")?;
    let mut specs: Vec<TaskSpec> = Vec::new();
    for t in &args.tasks {
        let n = specs.iter().filter(|s| s.kind != TaskKind::Hog).count();
        specs.extend(parse_task_specs(t, false, n).map_err(anyhow::Error::msg)?);
    }
    for h in &args.hogs {
        let n = specs.iter().filter(|s| s.kind == TaskKind::Hog).count();
        specs.extend(parse_task_specs(h, true, n).map_err(anyhow::Error::msg)?);
    }
    if specs.is_empty() {
        bail!("no tasks: give at least one --task or --hog");
    }
    let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        bail!("two tasks are named '{}'", w[0]);
    }
    let base_slice_ns =
        sys::base_slice_ns().with_context(|| format!("reading {}", sys::BASE_SLICE_PATH))?;
    // The main thread stays off the measured CPU where there is another.
    let _ = sys::pin_to_cpu(0, if args.cpu == 0 { 1 } else { 0 });

    let t0 = sys::now_ns();
    // Threads start within the warm-up; the window is fixed before any runs.
    let window_start = t0 + args.warmup_ms * 1_000_000;
    let sh = Arc::new(Shared {
        window_start,
        window_end: window_start + args.duration_ms * 1_000_000,
        stop: AtomicBool::new(false),
        go: Barrier::new(specs.len() + 1),
    });
    let (attr_tx, attr_rx) = mpsc::channel::<(usize, Result<TaskAttr, String>)>();
    let mut handles = Vec::new();
    for (i, spec) in specs.iter().cloned().enumerate() {
        let (sh, tx, cpu) = (Arc::clone(&sh), attr_tx.clone(), args.cpu);
        let h = std::thread::Builder::new()
            .name(spec.name.clone())
            .spawn(move || {
                let attr = sys::pin_to_cpu(0, cpu)
                    .map_err(|e| format!("pinning to CPU {cpu}: {e}"))
                    .and_then(|()| {
                        TaskAttr::set_own(spec.slice_us * 1000, spec.nice, base_slice_ns)
                            .map_err(|e| format!("task {}: {e}", spec.name))
                    });
                let ok = attr.is_ok();
                let _ = tx.send((i, attr));
                sh.go.wait();
                if !ok {
                    return None;
                }
                Some(run_task(&spec, &sh))
            })
            .context("spawning a task thread")?;
        handles.push(h);
    }
    drop(attr_tx);
    let mut attrs: Vec<Option<TaskAttr>> = vec![None; specs.len()];
    let mut errors = Vec::new();
    for (i, a) in attr_rx.iter().take(specs.len()) {
        match a {
            Ok(a) => attrs[i] = Some(a),
            Err(e) => errors.push(e),
        }
    }
    sh.go.wait();
    let clocks: Vec<libc::clockid_t> = handles
        .iter()
        .map(|h| sys::pthread_cpu_clock(h.as_pthread_t()))
        .collect::<Result<_, _>>()
        .context("pthread_getcpuclockid")?;
    let read = |clocks: &[libc::clockid_t]| -> Result<Vec<u64>> {
        clocks
            .iter()
            .map(|&c| sys::clock_ns(c).context("reading a task's CPU clock"))
            .collect()
    };
    sys::sleep_until_ns(sh.window_start);
    let r0 = read(&clocks)?;
    let w0 = sys::now_ns();
    sys::sleep_until_ns(sh.window_end);
    let w1 = sys::now_ns();
    if w1 - sh.window_end > GRACE_NS / 2 {
        sh.stop.store(true, Ordering::Relaxed);
        bail!(
            "the main thread woke {} ms after the window: the tasks starved it (the kernel \
             never preempted them for it), so there is no measurement",
            (w1 - sh.window_end) / 1_000_000
        );
    }
    let r1 = read(&clocks)?;
    sh.stop.store(true, Ordering::Relaxed);
    let mut outs: Vec<Option<TaskOut>> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or(None))
        .collect();
    if !errors.is_empty() {
        bail!("{}", errors.join("; "));
    }
    let window_s = (w1 - w0) as f64 / 1e9;
    let demands: Vec<f64> = specs.iter().map(TaskSpec::demand).collect();
    let weights: Vec<f64> = specs.iter().map(|s| nice_to_weight(s.nice)).collect();
    let fair = fair_shares(&demands, &weights);
    let mut all_lat = Vec::new();
    let mut tasks = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let mut out = outs[i].take().context("a task thread returned nothing")?;
        all_lat.extend_from_slice(&out.latencies_ns);
        let runtime_ns = r1[i].saturating_sub(r0[i]);
        let (period_us, sleep_us) = match spec.kind {
            TaskKind::Periodic { period_us } => (period_us, 0),
            TaskKind::Sleeper { sleep_us } => (0, sleep_us),
            TaskKind::Hog => (0, 0),
        };
        tasks.push(RtAppTask {
            name: spec.name.clone(),
            kind: spec.kind_name().into(),
            period_us,
            sleep_us,
            run_us: spec.run_us,
            attr: attrs[i].take().context("a task's attributes are missing")?,
            periods: out.periods,
            missed: out.missed,
            skipped: out.skipped,
            wakeup: Quantiles::of_ns(&mut out.latencies_ns),
            runtime_ns,
            share: runtime_ns as f64 / (w1 - w0) as f64,
            demand: demands[i],
            fair_share: fair[i],
            nivcsw: out.nivcsw,
        });
    }
    let max_share_err_pp = tasks
        .iter()
        .map(|t| (t.share - t.fair_share).abs() * 100.0)
        .fold(0.0, f64::max);
    for t in &tasks {
        let lat = t.wakeup.as_ref().map_or("no wakeups".into(), |q| {
            format!(
                "wakeup p50 {:.1} p99 {:.1} max {:.1} us",
                q.p50_us, q.p99_us, q.max_us
            )
        });
        println!(
            "eevdf-rtapp: {:<6} {:<8} slice {:>6} us nice {:>3}: {} periods, {} missed, {}; \
             share {:.3} (fair {:.3}), {} preemptions",
            t.name,
            t.kind,
            t.attr.slice_effective_ns / 1000,
            t.attr.nice,
            t.periods,
            t.missed,
            lat,
            t.share,
            t.fair_share,
            t.nivcsw
        );
    }
    let r = Record::RtApp(RtAppResult {
        policy,
        cpu: args.cpu,
        base_slice_ns,
        duration_s: window_s,
        tasks,
        wakeup: Quantiles::of_ns(&mut all_lat),
        max_share_err_pp,
    });
    println!("{}", r.to_line());
    Ok(())
}
