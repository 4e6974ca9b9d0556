//! A crowd of runnable SCHED_OTHER threads on one CPU, and a command run amid it from
//! SCHED_FIFO: a runqueue with tens of thousands of queued entities, and a way to measure
//! something against it (a latency test, while a reader reads a debugfs file in a loop).
//!
//!   eevdf-crowd --threads N --cpu C [--reader-file PATH] -- CMD [ARGS...]
//!
//! 1. Spawns N threads (threads, not processes: a thread costs its small stack and the
//!    kernel's task and stack, so 20,000 fit a guest of 2 GiB). Each checks that it is
//!    SCHED_OTHER, pins itself to C, sets its nice (--nice) and blocks at a barrier:
//!    nothing spins while the rest are spawned, so spawning takes linear time.
//! 2. Turns its main thread SCHED_FIFO (--fifo-prio), only now: a thread inherits its
//!    creator's policy, so the crowd stays SCHED_OTHER. Releases the crowd, which spins,
//!    and waits until /proc/loadavg counts at least N runnable tasks.
//! 3. With --reader-file: starts a reader thread, SCHED_FIFO --reader-fifo-prio, pinned to
//!    C, that opens and reads the whole file again and again, and waits for its first read.
//! 4. Runs CMD, forked from the SCHED_FIFO main thread (so CMD starts as SCHED_FIFO
//!    --fifo-prio, and can still run on a CPU that N spinning threads share: a
//!    SCHED_OTHER shell there would get 1/(N+1) of it), with its output passed through,
//!    and waits for it.
//! 5. Stops the reader and prints its reads and time per read; stops and joins the crowd;
//!    exits with CMD's status (128 + the signal if a signal killed it).
//!
//! Progress goes to stdout as `crowd: ...` and `reader: ...` lines.
use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use eevdf_guest::sys;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Many runnable SCHED_OTHER threads on one CPU, and a command run amid them from \
             SCHED_FIFO, optionally beside a SCHED_FIFO reader of a file",
    long_about = None
)]
struct Args {
    /// Threads in the crowd. Each costs its stack (--stack-kib, of which it touches a page
    /// or two) plus the kernel's task and stack (about 30 KiB, twice that with KASAN).
    /// Spawning fails past /proc/sys/kernel/threads-max (RAM / 128 KiB by default) and
    /// near vm.max_map_count / 2 (two mappings a stack).
    #[arg(long, default_value_t = 1000)]
    threads: u32,

    /// The CPU the crowd and the reader run on.
    #[arg(long, default_value_t = 0)]
    cpu: u32,

    /// Each crowd thread's stack, KiB: small, since a thread only spins; too small and it
    /// overflows into the guard page (SIGSEGV).
    #[arg(long, default_value_t = 32)]
    stack_kib: usize,

    /// The crowd's nice value (-20..19). At 0, a SCHED_OTHER kernel thread (a kworker)
    /// woken on the CPU waits its turn among N equals, and N = 20,000 at the 4 ms tick
    /// of Debian's HZ=250 makes that turn tens of seconds away: whatever waits for such
    /// a kworker waits as long. A fork does, once the per-CPU allocator's balance work
    /// holds its mutex (seen with 2,000 threads on stock 6.12 as well: the fork sleeps in
    /// pcpu_alloc while kworker/0:1 sits runnable in pcpu_balance_workfn). At 19 (weight
    /// 15 against a kworker's 1024) a woken kernel thread runs within a tick, and the
    /// crowd is still N queued entities. Below 0 needs root or CAP_SYS_NICE.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i32).range(-20..=19))]
    nice: i32,

    /// SCHED_FIFO priority (1-99) of the main thread once the crowd is spawned, and so of
    /// CMD, which it forks. Keep it above --reader-fifo-prio, or CMD (a shell, say) waits
    /// for the reader's reads; CMD may set its own (cyclictest -p does).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=99))]
    fifo_prio: u32,

    /// A file to open and read whole, again and again, while CMD runs. A debugfs file is
    /// rendered at each open, so each read is a fresh snapshot. Without it nothing reads.
    #[arg(long)]
    reader_file: Option<PathBuf>,

    /// The reader's SCHED_FIFO priority (1-99): above the crowd's SCHED_OTHER, so it reads
    /// at once instead of waiting for the crowd's slices; below a latency test's (e.g.
    /// cyclictest -p 90), so that the test preempts it whenever the kernel lets it.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=99))]
    reader_fifo_prio: u32,

    /// The most of its time the reader spends reading, percent (1-100): after a read that
    /// took T it sleeps T * (100 - P) / P. At 100 the crowd starves, and Linux 6.12's fair
    /// server (/sys/kernel/debug/sched/fair_server: 50 ms of each 1 s for starved
    /// SCHED_OTHER tasks, at deadline priority, above every SCHED_FIFO task) then runs the
    /// crowd for up to 50 ms at a stretch: a stall that a FIFO CMD sees but that has
    /// nothing to do with the file. Lower: fewer reads in the same time.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100))]
    reader_busy_percent: u32,

    /// How long the crowd may take to be spawned, pinned and counted runnable, s; then the
    /// program gives up. 20,000 threads take a few minutes under QEMU's TCG.
    #[arg(long, default_value_t = 1800)]
    settle_timeout_s: u64,

    /// The command to run amid the crowd, and its arguments (after `--`).
    #[arg(last = true, required = true)]
    cmd: Vec<OsString>,
}

/// What the crowd's threads share.
struct Crowd {
    /// Where every thread waits until the main thread has turned SCHED_FIFO.
    go: Barrier,
    /// Set when the crowd is to stop spinning.
    stop: AtomicBool,
    /// Threads that have checked their policy, pinned themselves and reached the barrier.
    ready: AtomicU32,
    /// Threads that were not SCHED_OTHER.
    not_fair: AtomicU32,
    /// Threads that could not pin themselves to the CPU.
    unpinned: AtomicU32,
    /// Threads that could not set their nice value.
    not_niced: AtomicU32,
}

/// What the reader did.
#[derive(Default)]
struct ReaderStats {
    reads: u64,
    /// Time spent in open() + read() + close(), ns.
    busy_ns: u64,
    /// The longest read, ns.
    max_ns: u64,
    /// From the first read's start to the reader's stop, ns.
    wall_ns: u64,
    /// The size of the last read, bytes.
    bytes: usize,
}

/// Reads `path` whole into `buf` (cleared first); its length.
fn read_whole(path: &Path, buf: &mut Vec<u8>) -> Result<usize> {
    buf.clear();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .with_context(|| format!("reading {}", path.display()))
}

/// The reader thread: SCHED_FIFO `prio`, pinned to `cpu`, reading `path` until `stop`.
/// Sends the first read's outcome on `started`.
fn reader(
    path: &Path,
    cpu: u32,
    prio: u32,
    busy_percent: u32,
    stop: &AtomicBool,
    started: mpsc::Sender<Result<(usize, u64)>>,
) -> Result<ReaderStats> {
    let setup = sys::set_fifo(0, prio)
        .with_context(|| format!("making the reader SCHED_FIFO {prio}"))
        .and_then(|()| {
            sys::pin_to_cpu(0, cpu).with_context(|| format!("pinning the reader to CPU {cpu}"))
        });
    let mut buf = Vec::new();
    let mut st = ReaderStats::default();
    let t0 = sys::now_ns();
    let first = setup.and_then(|()| read_whole(path, &mut buf));
    let dt = sys::now_ns().saturating_sub(t0);
    match first {
        Ok(n) => {
            let _ = started.send(Ok((n, dt)));
            (st.reads, st.busy_ns, st.max_ns, st.bytes) = (1, dt, dt, n);
        }
        Err(e) => {
            let _ = started.send(Err(e));
            bail!("the reader stopped at its first read");
        }
    }
    let pause = |dt: u64| dt / u64::from(busy_percent) * u64::from(100 - busy_percent);
    std::thread::sleep(Duration::from_nanos(pause(dt)));
    while !stop.load(Ordering::Relaxed) {
        let t = sys::now_ns();
        st.bytes = read_whole(path, &mut buf)?;
        let dt = sys::now_ns().saturating_sub(t);
        st.reads += 1;
        st.busy_ns += dt;
        st.max_ns = st.max_ns.max(dt);
        std::thread::sleep(Duration::from_nanos(pause(dt)));
    }
    st.wall_ns = sys::now_ns().saturating_sub(t0);
    Ok(st)
}

/// `running/total` from /proc/loadavg: the runnable tasks of every CPU and all tasks.
fn loadavg_tasks() -> Result<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/loadavg").context("reading /proc/loadavg")?;
    sys::parse_loadavg_tasks(&s).ok_or_else(|| anyhow!("/proc/loadavg: no running/total: {s:?}"))
}

fn main() -> Result<()> {
    let args = Args::parse();
    let code = run(&args)?;
    std::process::exit(code)
}

fn run(args: &Args) -> Result<i32> {
    let n = args.threads;
    eevdf_guest::fair_policy("eevdf-crowd (its threads inherit its policy)")?;
    let deadline = Instant::now() + Duration::from_secs(args.settle_timeout_s);
    let crowd = Arc::new(Crowd {
        go: Barrier::new(n as usize + 1),
        stop: AtomicBool::new(false),
        ready: AtomicU32::new(0),
        not_fair: AtomicU32::new(0),
        unpinned: AtomicU32::new(0),
        not_niced: AtomicU32::new(0),
    });

    let t0 = Instant::now();
    let mut handles = Vec::with_capacity(n as usize);
    for i in 0..n {
        let (c, cpu, nice) = (crowd.clone(), args.cpu, args.nice);
        let h = std::thread::Builder::new()
            .stack_size(args.stack_kib * 1024)
            .spawn(move || {
                let fair = sys::getattr(0).is_ok_and(|a| a.sched_policy == sys::SCHED_OTHER);
                let pinned = sys::pin_to_cpu(0, cpu).is_ok();
                // setpriority(PRIO_PROCESS, 0) sets the calling thread's nice on Linux.
                if sys::set_nice(0, nice).is_err() {
                    c.not_niced.fetch_add(1, Ordering::Relaxed);
                }
                if !fair {
                    c.not_fair.fetch_add(1, Ordering::Relaxed);
                }
                if !pinned {
                    c.unpinned.fetch_add(1, Ordering::Relaxed);
                }
                c.ready.fetch_add(1, Ordering::Release);
                c.go.wait();
                while fair && pinned && !c.stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
            .with_context(|| {
                format!(
                    "starting crowd thread {i} of {n} (limits: /proc/sys/kernel/threads-max, \
                     /proc/sys/vm/max_map_count, memory)"
                )
            })?;
        handles.push(h);
    }
    while crowd.ready.load(Ordering::Acquire) < n {
        if Instant::now() > deadline {
            bail!(
                "only {} of {n} crowd threads reached the barrier in {} s",
                crowd.ready.load(Ordering::Relaxed),
                args.settle_timeout_s
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let not_fair = crowd.not_fair.load(Ordering::Relaxed);
    if not_fair > 0 {
        bail!("{not_fair} of {n} crowd threads are not SCHED_OTHER");
    }
    let unpinned = crowd.unpinned.load(Ordering::Relaxed);
    if unpinned > 0 {
        bail!(
            "{unpinned} of {n} crowd threads could not pin themselves to CPU {}",
            args.cpu
        );
    }
    let not_niced = crowd.not_niced.load(Ordering::Relaxed);
    if not_niced > 0 {
        bail!(
            "{not_niced} of {n} crowd threads could not set nice {} (below 0 needs root)",
            args.nice
        );
    }
    println!(
        "crowd: {n} SCHED_OTHER nice {} threads spawned and pinned to CPU {} in {:.1} s",
        args.nice,
        args.cpu,
        t0.elapsed().as_secs_f64()
    );

    sys::set_fifo(0, args.fifo_prio).with_context(|| {
        format!(
            "making the main thread SCHED_FIFO {} (needs root or CAP_SYS_NICE)",
            args.fifo_prio
        )
    })?;
    let t1 = Instant::now();
    crowd.go.wait();
    let (running, total) = loop {
        let (running, total) = loadavg_tasks()?;
        if running >= u64::from(n) {
            break (running, total);
        }
        if Instant::now() > deadline {
            bail!(
                "/proc/loadavg counts {running} runnable tasks, not the crowd's {n}, {} s \
                 after it started",
                args.settle_timeout_s
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    println!(
        "crowd: released; /proc/loadavg counts {running} runnable of {total} tasks after \
         {:.1} s; this thread and CMD are SCHED_FIFO {}",
        t1.elapsed().as_secs_f64(),
        args.fifo_prio
    );

    let reader_stop = Arc::new(AtomicBool::new(false));
    let reader_handle = match &args.reader_file {
        None => None,
        Some(file) => {
            let (tx, rx) = mpsc::channel();
            let (path, stop) = (file.clone(), reader_stop.clone());
            let (cpu, prio, busy) = (args.cpu, args.reader_fifo_prio, args.reader_busy_percent);
            let h = std::thread::Builder::new()
                .name("reader".into())
                .spawn(move || reader(&path, cpu, prio, busy, &stop, tx))
                .context("starting the reader thread")?;
            let (bytes, ns) = rx
                .recv()
                .map_err(|_| anyhow!("the reader thread ended before its first read"))??;
            println!(
                "reader: SCHED_FIFO {prio} on CPU {cpu}, busy at most {busy}%: first read \
                 of {}: {bytes} bytes in {:.3} ms",
                file.display(),
                ns as f64 / 1e6
            );
            Some(h)
        }
    };

    let _ = std::io::stdout().flush();
    let status = std::process::Command::new(&args.cmd[0])
        .args(&args.cmd[1..])
        .status()
        .with_context(|| format!("running {:?}", args.cmd[0]));
    let code = status.map(|s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)));

    reader_stop.store(true, Ordering::Relaxed);
    if let Some(h) = reader_handle {
        let st = h
            .join()
            .map_err(|_| anyhow!("the reader thread panicked"))??;
        let ms = |ns: u64| ns as f64 / 1e6;
        println!(
            "reader: {} reads in {:.3} s: {:.3} ms per read, longest {:.3} ms, {} bytes a read",
            st.reads,
            ms(st.wall_ns) / 1e3,
            ms(st.busy_ns) / st.reads as f64,
            ms(st.max_ns),
            st.bytes
        );
    }

    let t2 = Instant::now();
    crowd.stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().map_err(|_| anyhow!("a crowd thread panicked"))?;
    }
    println!(
        "crowd: stopped and joined in {:.1} s",
        t2.elapsed().as_secs_f64()
    );
    code
}
