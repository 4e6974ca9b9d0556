//! Seed 002's mixed load: massive_intr-shaped "compute" against an "interactive" load.
//!
//! Mike Galbraith's test (LKML, 2023-10-13) ran massive_intr (processes that each run 8 ms
//! and sleep 1 ms, "a vaguely kbuild like competing compute component") against a browser
//! playing video, and compared EEVDF, EVDF and EVDF + NO_RUN_TO_PARITY with `perf sched
//! latency`. This is that shape without a browser:
//!
//! - `--compute N` processes named `massive_intr`: spin for `--compute-run-us` of wall time,
//!   sleep `--compute-sleep-us`, count one loop; the loops are the throughput.
//! - `--interactive M` processes named `interactive`: wake at absolute frame times
//!   `--frame-us` apart, burn `--burst-us` of their own CPU time, sleep to the next frame;
//!   the wakeup latency (how late each frame started) and the frames whose burst ended
//!   after the next frame was due (missed) are the interactivity.
//!
//! All are pinned to the CPUs of `--cpus` (the parent stays off them where it can). Each
//! group's runtime, switches and run delay come from `/proc/PID/schedstat` and
//! `/proc/PID/status` over the measured interval, so the table has the seed's columns
//! (runtime, switches, average and sum of delay; `perf sched latency` gives the maximum)
//! on any kernel, perf or not. It ends with the table and one `@@json` result line.
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{sys, FrameLatency, MixedGroup, MixedResult, Record, TaskReadback};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// massive_intr-shaped processes. The seed ran 9 on 8 hardware threads: slightly more
    /// than the CPUs, so that they always compete.
    #[arg(long, default_value_t = 3)]
    compute: u32,

    /// Wall time each compute loop spins, µs (massive_intr: 8000). Longer runs are more
    /// CPU-bound and preempt less often.
    #[arg(long, default_value_t = 8000)]
    compute_run_us: u64,

    /// Sleep after each compute run, µs (massive_intr: 1000). The sleep is what makes the
    /// compute tasks wake, and so be placed with lag, a thousand times a second.
    #[arg(long, default_value_t = 1000)]
    compute_sleep_us: u64,

    /// Interactive processes (the seed's browser had several threads per frame).
    #[arg(long, default_value_t = 2)]
    interactive: u32,

    /// Frame period, µs (16667: 60 frames a second). Shorter frames sample latency more
    /// often but raise the interactive load.
    #[arg(long, default_value_t = 16667)]
    frame_us: u64,

    /// CPU time each interactive process burns per frame, µs. Under a task's fair share
    /// (burst/frame below 1 / all the tasks on a CPU) the frames measure interactivity: how
    /// soon a wakeup is served. Near it and over it the interactive tasks leave sleeps with
    /// negative lag, and the frames measure fairness too: what the CPU time is split into
    /// (seed 002 runs all three: 12%, 20% and 30% beside 3 compute tasks).
    #[arg(long, default_value_t = 2000)]
    burst_us: u64,

    /// CPUs every process is pinned to, comma-separated (e.g. `0` or `0,1`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    cpus: Vec<u32>,

    /// Time before measuring, ms, so that lags and load averages settle.
    #[arg(long, default_value_t = 500)]
    warmup_ms: u64,

    /// Measured time, ms. At 60 frames a second, 10 s gives 600 frames per interactive
    /// process: enough for a p99, not for a p99.9.
    #[arg(long, default_value_t = 10_000)]
    duration_ms: u64,
}

/// Frames an interactive process records at most (the rest are counted, not kept).
const MAX_FRAMES: usize = 1 << 16;

/// What the children write and the parent reads: a MAP_SHARED anonymous mapping, so it
/// survives fork. Counters are atomics; the latency buffers are written by one child each.
struct Shared {
    base: *mut u8,
    len: usize,
    tasks: usize,
}

impl Shared {
    fn new(tasks: usize) -> Result<Shared> {
        let len = tasks * (8 * 4 + 8 * MAX_FRAMES);
        // SAFETY: an anonymous shared mapping of `len` bytes, no address hint, no fd.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error()).context("mmap of the shared results");
        }
        Ok(Shared {
            base: p.cast(),
            len,
            tasks,
        })
    }

    /// Task `i`'s counter `k` (0: loops or frames, 1: missed frames, 2: recording on).
    fn counter(&self, i: usize, k: usize) -> &AtomicU64 {
        assert!(i < self.tasks && k < 4);
        // SAFETY: in bounds of the mapping (checked above), 8-byte aligned (the mapping is
        // page-aligned and every offset is a multiple of 8), and only ever accessed
        // atomically.
        unsafe { &*self.base.add(8 * (4 * i + k)).cast::<AtomicU64>() }
    }

    /// Task `i`'s latency sample `j`, ns.
    fn sample(&self, i: usize, j: usize) -> &AtomicU64 {
        assert!(i < self.tasks && j < MAX_FRAMES);
        let off = 8 * 4 * self.tasks + 8 * (MAX_FRAMES * i + j);
        // SAFETY: in bounds and aligned as in `counter`.
        unsafe { &*self.base.add(off).cast::<AtomicU64>() }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the mapping this value made; nothing refers to it after the drop.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Names the calling process (its `comm`, what `perf sched latency` groups by).
fn set_comm(name: &str) {
    let mut buf = [0u8; 16];
    let n = name.len().min(15);
    buf[..n].copy_from_slice(&name.as_bytes()[..n]);
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes from `buf`.
    unsafe { libc::prctl(libc::PR_SET_NAME, buf.as_ptr()) };
}

fn compute(sh: &Shared, i: usize, run_ns: u64, sleep_ns: u64) -> ! {
    set_comm("massive_intr");
    loop {
        let end = sys::now_ns() + run_ns;
        while sys::now_ns() < end {
            std::hint::spin_loop();
        }
        sys::sleep_until_ns(sys::now_ns() + sleep_ns);
        if sh.counter(i, 2).load(Ordering::Relaxed) != 0 {
            sh.counter(i, 0).fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn interactive(sh: &Shared, i: usize, frame_ns: u64, burst_ns: u64) -> ! {
    set_comm("interactive");
    let mut next = sys::now_ns() + frame_ns;
    loop {
        sys::sleep_until_ns(next);
        let woke = sys::now_ns();
        let cpu_end = sys::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0) + burst_ns;
        while sys::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(u64::MAX) < cpu_end {
            std::hint::spin_loop();
        }
        let done = sys::now_ns();
        if sh.counter(i, 2).load(Ordering::Relaxed) != 0 {
            let n = sh.counter(i, 0).fetch_add(1, Ordering::Relaxed) as usize;
            if n < MAX_FRAMES {
                sh.sample(i, n).store(woke - next, Ordering::Relaxed);
            }
            if done > next + frame_ns {
                sh.counter(i, 1).fetch_add(1, Ordering::Relaxed);
            }
        }
        // The next frame due after now: a late frame skips the ones it overlapped.
        next += frame_ns;
        while next <= done {
            next += frame_ns;
        }
    }
}

/// (runtime, run delay, timeslices) of `pid`, ns, from /proc/PID/schedstat.
fn schedstat(pid: libc::pid_t) -> Result<(u64, u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .with_context(|| format!("reading /proc/{pid}/schedstat"))?;
    let v: Vec<u64> = s
        .split_whitespace()
        .map(|x| x.parse())
        .collect::<Result<_, _>>()
        .with_context(|| format!("parsing /proc/{pid}/schedstat '{s}'"))?;
    match v[..] {
        [run, delay, slices] => Ok((run, delay, slices)),
        _ => bail!("/proc/{pid}/schedstat has {} fields, not 3", v.len()),
    }
}

/// One group's counters over the interval, from its tasks' before/after readings.
fn group(
    name: &str,
    pids: &[libc::pid_t],
    before: &[(u64, u64, u64, u64)],
    after: &[(u64, u64, u64, u64)],
) -> MixedGroup {
    let d = |k: fn(&(u64, u64, u64, u64)) -> u64| -> u64 {
        after.iter().zip(before).map(|(a, b)| k(a) - k(b)).sum()
    };
    let runtime = d(|x| x.0);
    let delay = d(|x| x.1);
    let slices = d(|x| x.2);
    MixedGroup {
        name: name.to_string(),
        tasks: pids.len() as u32,
        runtime_ms: runtime as f64 / 1e6,
        switches: d(|x| x.3),
        avg_delay_ms: if slices == 0 {
            0.0
        } else {
            delay as f64 / slices as f64 / 1e6
        },
        sum_delay_ms: delay as f64 / 1e6,
        loops: 0,
        missed: 0,
        latency: None,
    }
}

fn main() -> Result<()> {
    let a = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-mixed")?;
    if a.cpus.is_empty() || a.compute + a.interactive == 0 {
        bail!("nothing to run: give --cpus and at least one task");
    }
    if a.burst_us >= a.frame_us {
        bail!(
            "--burst-us {} must be shorter than --frame-us {}",
            a.burst_us,
            a.frame_us
        );
    }
    let n = (a.compute + a.interactive) as usize;
    let sh = Shared::new(n)?;
    let set = a.cpus.clone();
    let online = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    if let Some(c) = (0..online).find(|c| !set.contains(c)) {
        let _ = sys::pin_to_cpu(0, c);
    }
    let mut pids = Vec::new();
    for i in 0..n {
        let cpus = set.clone();
        let sh = &sh;
        let pid = sys::fork_child(|| {
            if sys::pin_to_cpus(0, &cpus).is_err() {
                return 1;
            }
            if i < a.compute as usize {
                compute(sh, i, a.compute_run_us * 1000, a.compute_sleep_us * 1000)
            } else {
                interactive(sh, i, a.frame_us * 1000, a.burst_us * 1000)
            }
        })?;
        pids.push(pid);
    }
    std::thread::sleep(std::time::Duration::from_millis(a.warmup_ms));
    let read = |pids: &[libc::pid_t]| -> Result<Vec<(u64, u64, u64, u64)>> {
        pids.iter()
            .map(|&p| {
                let (r, d, s) = schedstat(p)?;
                Ok((r, d, s, sys::task_ctxsw(p)?))
            })
            .collect()
    };
    // What each task runs with, as the kernel holds it: the lab checks it against the cell.
    let readback: Vec<TaskReadback> = pids
        .iter()
        .enumerate()
        .filter_map(|(i, &p)| {
            let role = if i < a.compute as usize {
                "massive_intr"
            } else {
                "interactive"
            };
            TaskReadback::read(role, p)
        })
        .collect();
    let before = read(&pids)?;
    for i in 0..n {
        sh.counter(i, 2).store(1, Ordering::Relaxed);
    }
    let t0 = sys::now_ns();
    std::thread::sleep(std::time::Duration::from_millis(a.duration_ms));
    for i in 0..n {
        sh.counter(i, 2).store(0, Ordering::Relaxed);
    }
    let after = read(&pids);
    let dt = (sys::now_ns() - t0) as f64 / 1e9;
    for &p in &pids {
        sys::kill(p, libc::SIGKILL);
        sys::wait_pid(p, true);
    }
    let after = after?;
    let c = a.compute as usize;
    let mut groups = Vec::new();
    if c > 0 {
        let mut g = group("massive_intr", &pids[..c], &before[..c], &after[..c]);
        g.loops = (0..c)
            .map(|i| sh.counter(i, 0).load(Ordering::Relaxed))
            .sum();
        groups.push(g);
    }
    if n > c {
        let mut g = group("interactive", &pids[c..], &before[c..], &after[c..]);
        let mut lat = Vec::new();
        for i in c..n {
            let frames = sh.counter(i, 0).load(Ordering::Relaxed);
            g.loops += frames;
            g.missed += sh.counter(i, 1).load(Ordering::Relaxed);
            for j in 0..(frames as usize).min(MAX_FRAMES) {
                lat.push(sh.sample(i, j).load(Ordering::Relaxed));
            }
        }
        g.latency = Some(FrameLatency::from_ns(&lat));
        groups.push(g);
    }
    println!("Task | Runtime ms | Switches | Avg delay ms | Sum delay ms | loops or frames |");
    for g in &groups {
        println!(
            "{}:({}) | {:.3} ms | {} | avg: {:.3} ms | sum: {:.3} ms | {} |",
            g.name, g.tasks, g.runtime_ms, g.switches, g.avg_delay_ms, g.sum_delay_ms, g.loops
        );
    }
    if let Some(l) = groups.last().and_then(|g| g.latency.as_ref()) {
        println!(
            "interactive frame lateness: p50 {:.1} p99 {:.1} max {:.1} us, {} of {} frames missed",
            l.p50_us,
            l.p99_us,
            l.max_us,
            groups.last().map_or(0, |g| g.missed),
            groups.last().map_or(0, |g| g.loops)
        );
    }
    let r = Record::Mixed(MixedResult {
        policy,
        cpus: a.cpus.clone(),
        duration_s: dt,
        compute_run_us: a.compute_run_us,
        compute_sleep_us: a.compute_sleep_us,
        frame_us: a.frame_us,
        burst_us: a.burst_us,
        groups,
        readback,
    });
    println!("{}", r.to_line());
    Ok(())
}
