//! Messengers and workers: a wakeup-latency workload shaped like schbench's default run.
//!
//! `--messengers` M threads each own `--workers` W worker threads. A round: the messenger
//! stamps the time once, posts a request with that stamp to each of its workers and wakes it
//! with FUTEX_WAKE (a plain wakeup, not a WF_SYNC one as a pipe write would be), then sleeps
//! on a futex until all W have answered. A worker sleeps on its own futex; woken, it records
//! how long ago its messenger stamped the round (the wakeup latency: the wakes before its
//! own, the wakeup-preemption decision and the wait on the runqueue), computes for
//! `--work-us` µs (a loop calibrated at
//! start against the thread's CPU clock, so the work is fixed, not the time), answers and
//! sleeps again. Every thread is SCHED_OTHER with the base slice, as the main thread is
//! (a worker's attributes, as sched_getattr and `/proc/thread-self/sched` show them, are
//! in the record).
//!
//! After `--warmup-ms` it measures for `--duration-ms`: the latency's p50, p90, p99 and
//! p99.9 over every request whose wake fell in the window, and requests per second. Ends
//! with a summary and one `@@json` result line (see the eevdf-guest library).
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{sys, MsgrResult, Quantiles, Record, TaskAttr};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

#[derive(Parser, Debug)]
#[command(
    version,
    about = concat!(
        "Messengers waking workers by futex (schbench-shaped): wakeup latency ",
        "p50/p90/p99/p99.9 and requests per second",
    ),
    long_about = None
)]
struct Args {
    /// Messenger threads. Each wakes its own workers; more messengers means more wakeups
    /// racing for the CPU.
    #[arg(long, default_value_t = 2)]
    messengers: u32,

    /// Worker threads per messenger. A round ends when the slowest of them answers, so more
    /// workers mean longer rounds and a deeper runqueue at each wake.
    #[arg(long, default_value_t = 4)]
    workers: u32,

    /// Compute per request, µs of CPU time (a calibrated loop). Short work makes the
    /// wakeup path dominate; long work makes the runqueue wait behind other workers
    /// dominate.
    #[arg(long, default_value_t = 50)]
    work_us: u64,

    /// Pin every thread to this CPU (default: no pinning, the load balancer places them).
    #[arg(long)]
    cpu: Option<u32>,

    /// Time before measuring, ms: the threads' placement and lag settle.
    #[arg(long, default_value_t = 300)]
    warmup_ms: u64,

    /// Measured time, ms. The p99.9 needs a few thousand requests: at least a second at the
    /// defaults on one vCPU.
    #[arg(long, default_value_t = 3000)]
    duration_ms: u64,

    /// CPU time each calibration pass runs the loop for, ms. Longer passes average out
    /// ticks; the best of three passes is kept.
    #[arg(long, default_value_t = 20)]
    calibrate_ms: u64,
}

/// A futex wait's bound, so that a lost wakeup or the end of the run is seen within it.
const WAIT_NS: u64 = 100_000_000;

/// One worker's mailbox.
struct Worker {
    /// 1 while a request is posted and not yet taken: the futex word the worker sleeps on.
    posted: AtomicU32,
    /// CLOCK_MONOTONIC ns at which the messenger began the round that posted the request.
    posted_at: AtomicU64,
}

/// One messenger and its workers.
struct Group {
    workers: Vec<Worker>,
    /// Answers to the current round: the futex word the messenger sleeps on.
    answered: AtomicU32,
}

struct Shared {
    groups: Vec<Group>,
    stop: AtomicBool,
    window_start: u64,
    window_end: u64,
    loops_per_request: u64,
    go: Barrier,
}

/// What a thread returns: its latencies (ns) and requests in the window, and its
/// (voluntary, involuntary) context switches.
struct ThreadOut {
    lat: Vec<u64>,
    done: u64,
    ctxsw: (u64, u64),
}

/// A thread's body.
type Body = Box<dyn FnOnce() -> ThreadOut + Send>;

/// `loops` iterations of the work loop: a fixed number of instructions.
fn work(loops: u64) -> u64 {
    let mut x = 0u64;
    for _ in 0..loops {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
    x
}

/// Iterations per µs of this thread's CPU time: the best of three passes of about
/// `pass_ms` each (a pass that a tick or a preemption interrupted is slower, never faster).
fn calibrate(pass_ms: u64) -> f64 {
    let mut loops = 10_000u64;
    // Grow until one pass takes a tenth of the target, then scale to the target.
    loop {
        let t = sys::thread_cpu_ns();
        work(loops);
        let dt = sys::thread_cpu_ns() - t;
        if dt >= pass_ms * 100_000 {
            loops = (loops as f64 * (pass_ms * 1_000_000) as f64 / dt as f64) as u64;
            break;
        }
        loops *= 4;
    }
    (0..3)
        .map(|_| {
            let t = sys::thread_cpu_ns();
            work(loops);
            loops as f64 * 1000.0 / (sys::thread_cpu_ns() - t).max(1) as f64
        })
        .fold(0.0, f64::max)
}

fn messenger(sh: &Shared, g: &Group) {
    sh.go.wait();
    let n = g.workers.len() as u32;
    while !sh.stop.load(Ordering::Relaxed) {
        g.answered.store(0, Ordering::Release);
        // One stamp a round, taken before the first wake: a worker woken later in the round
        // waited for the wakes before its own, and for whatever ran in between (with a next
        // buddy, the workers woken before it). A stamp per wake would leave that out.
        let at = sys::now_ns();
        for w in &g.workers {
            w.posted_at.store(at, Ordering::Relaxed);
            w.posted.store(1, Ordering::Release);
            let _ = sys::futex_wake(&w.posted, 1);
        }
        loop {
            let a = g.answered.load(Ordering::Acquire);
            if a >= n || sh.stop.load(Ordering::Relaxed) {
                break;
            }
            let _ = sys::futex_wait(&g.answered, a, WAIT_NS);
        }
    }
}

/// A worker's loop; returns its wakeup latencies (ns) of requests posted in the window and
/// the requests it completed in the window.
fn worker(sh: &Shared, g: &Group, w: &Worker) -> (Vec<u64>, u64) {
    sh.go.wait();
    let mut lat = Vec::new();
    let mut done = 0;
    let n = g.workers.len() as u32;
    loop {
        while w.posted.load(Ordering::Acquire) == 0 {
            if sh.stop.load(Ordering::Relaxed) {
                return (lat, done);
            }
            let _ = sys::futex_wait(&w.posted, 0, WAIT_NS);
        }
        let now = sys::now_ns();
        let at = w.posted_at.load(Ordering::Relaxed);
        let in_window = at >= sh.window_start && at < sh.window_end;
        if in_window {
            lat.push(now.saturating_sub(at));
        }
        work(sh.loops_per_request);
        w.posted.store(0, Ordering::Release);
        if in_window {
            done += 1;
        }
        if g.answered.fetch_add(1, Ordering::AcqRel) + 1 == n {
            let _ = sys::futex_wake(&g.answered, 1);
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.messengers == 0 || args.workers == 0 || args.work_us == 0 {
        bail!("--messengers, --workers and --work-us must be positive");
    }
    let policy = eevdf_guest::fair_policy("eevdf-msgr")?;
    if let Some(c) = args.cpu {
        sys::pin_to_cpu(0, c).with_context(|| format!("pinning to CPU {c}"))?;
    }
    let loops_per_us = calibrate(args.calibrate_ms);
    let loops_per_request = (loops_per_us * args.work_us as f64).round() as u64;
    // One request's work measured alone: the least of five (a tick adds to one).
    let work_cpu_us = (0..5)
        .map(|_| {
            let t = sys::thread_cpu_ns();
            work(loops_per_request);
            (sys::thread_cpu_ns() - t) as f64 / 1000.0
        })
        .fold(f64::INFINITY, f64::min);

    let t0 = sys::now_ns();
    let window_start = t0 + args.warmup_ms * 1_000_000;
    let sh = Arc::new(Shared {
        groups: (0..args.messengers)
            .map(|_| Group {
                workers: (0..args.workers)
                    .map(|_| Worker {
                        posted: AtomicU32::new(0),
                        posted_at: AtomicU64::new(0),
                    })
                    .collect(),
                answered: AtomicU32::new(0),
            })
            .collect(),
        stop: AtomicBool::new(false),
        window_start,
        window_end: window_start + args.duration_ms * 1_000_000,
        loops_per_request,
        go: Barrier::new((args.messengers * (args.workers + 1)) as usize + 1),
    });
    let pin = args.cpu;
    let spawn = |name: String, f: Body| {
        std::thread::Builder::new().name(name).spawn(move || {
            if let Some(c) = pin {
                let _ = sys::pin_to_cpu(0, c);
            }
            f()
        })
    };
    let (attr_tx, attr_rx) = std::sync::mpsc::channel();
    let mut workers = Vec::new();
    let mut messengers = Vec::new();
    for m in 0..args.messengers as usize {
        for k in 0..args.workers as usize {
            let sh = Arc::clone(&sh);
            let tx = (m, k) == (0, 0);
            let attr_tx = attr_tx.clone();
            workers.push(
                spawn(
                    format!("worker{m}.{k}"),
                    Box::new(move || {
                        if tx {
                            let _ = attr_tx.send(TaskAttr::read_own(0));
                        }
                        let g = &sh.groups[m];
                        let (lat, done) = worker(&sh, g, &g.workers[k]);
                        ThreadOut {
                            lat,
                            done,
                            ctxsw: sys::thread_ctxsw(),
                        }
                    }),
                )
                .context("spawning a worker")?,
            );
        }
        let sh = Arc::clone(&sh);
        messengers.push(
            spawn(
                format!("messenger{m}"),
                Box::new(move || {
                    messenger(&sh, &sh.groups[m]);
                    ThreadOut {
                        lat: Vec::new(),
                        done: 0,
                        ctxsw: (0, 0),
                    }
                }),
            )
            .context("spawning a messenger")?,
        );
    }
    drop(attr_tx);
    let worker_attr = attr_rx
        .recv()
        .context("the first worker sent no attributes")?
        .context("sched_getattr in a worker")?;
    if worker_attr.policy != "other" {
        bail!("the workers run as {}, not SCHED_OTHER", worker_attr.policy);
    }
    sh.go.wait();
    // The main thread only keeps time; it leaves the pinned CPU to the workload if it can.
    if let Some(c) = args.cpu {
        let _ = sys::pin_to_cpu(0, if c == 0 { 1 } else { 0 });
    }
    sys::sleep_until_ns(sh.window_end);
    let duration_s = (sh.window_end - sh.window_start) as f64 / 1e9;
    sh.stop.store(true, Ordering::Relaxed);
    for g in &sh.groups {
        for w in &g.workers {
            let _ = sys::futex_wake(&w.posted, 1);
        }
        let _ = sys::futex_wake(&g.answered, 1);
    }
    for m in messengers {
        m.join()
            .map_err(|_| anyhow::anyhow!("a messenger panicked"))?;
    }
    let mut lat = Vec::new();
    let (mut requests, mut nvcsw, mut nivcsw) = (0, 0, 0);
    for w in workers {
        let o = w.join().map_err(|_| anyhow::anyhow!("a worker panicked"))?;
        lat.extend_from_slice(&o.lat);
        requests += o.done;
        nvcsw += o.ctxsw.0;
        nivcsw += o.ctxsw.1;
    }
    let wakeup = Quantiles::of_ns(&mut lat);
    let requests_per_s = requests as f64 / duration_s;
    match &wakeup {
        Some(q) => println!(
            "eevdf-msgr: {} messengers x {} workers, {} us of work ({:.1} us measured): \
             {requests} requests, {requests_per_s:.0}/s; wakeup latency p50 {:.1} p90 {:.1} \
             p99 {:.1} p99.9 {:.1} max {:.1} us",
            args.messengers,
            args.workers,
            args.work_us,
            work_cpu_us,
            q.p50_us,
            q.p90_us,
            q.p99_us,
            q.p999_us,
            q.max_us
        ),
        None => bail!("no request was woken in the measured window"),
    }
    let r = Record::Msgr(MsgrResult {
        policy,
        messengers: args.messengers,
        workers: args.workers,
        work_us: args.work_us,
        loops_per_us,
        work_cpu_us,
        cpu: args.cpu,
        duration_s,
        requests,
        requests_per_s,
        wakeup,
        stamp_per_round: true,
        worker: worker_attr,
        worker_nvcsw: nvcsw,
        worker_nivcsw: nivcsw,
    });
    println!("{}", r.to_line());
    Ok(())
}
