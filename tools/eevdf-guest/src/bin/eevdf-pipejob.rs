//! Seed 001's case: a CPU-bound pipe consumer fed by a producer on another CPU, timed
//! alone and then beside hogs on the consumer's CPU.
//!
//! FreeBSD ULE's partial-slice bug (the seed, commit ea8294fe8a61): a thread that goes off
//! CPU often, each time having used a fraction of its slice, waits a whole slice of a CPU
//! hog to get back on. The seed's measurement: `tar cf - /usr/src | gzip` with gzip bound
//! to a core beside a nice 20 hog took 907 s against 45 s alone (2005%), and 61 s (136%)
//! with the fix. Here the producer (tar's stand-in) spends `--producer-ns-per-kib` of CPU
//! time on each KiB it writes into the pipe, and the consumer (gzip's) spends
//! `--consumer-ns-per-kib` on each KiB it reads: with the producer the slower (25 against
//! 20 µs by default), the consumer finds the pipe empty after each chunk and blocks, as
//! gzip does behind a slower tar. The
//! question is how long each wakeup then waits behind the hogs: in 6.12 a nice 19 hog
//! that is eligible keeps the CPU until its slice ends under RUN_TO_PARITY, unless the
//! consumer's slice is shorter (PREEMPT_SHORT).
//!
//! "Spends N ns" means N ns of the thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`), so
//! waiting for the CPU does not shorten the work. Every thread sets and reads back its
//! own policy, nice and slice (an error when the kernel holds something else), and the
//! read-back goes into the result record. Ends with a summary and one `@@json` line.
//!
//! Example, one nice 19 hog beside the consumer on CPU 1, then the same with a 0.1 ms
//! consumer slice:
//!   eevdf-pipejob --hog nice=19
//!   eevdf-pipejob --hog nice=19 --consumer-slice-us 100
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{parse_task_specs, sys, PipeJobPhase, PipeJobResult, Record, TaskAttr, TaskSpec};
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Seed 001's case: a pipe consumer fed from another CPU, alone and beside hogs on its CPU",
    long_about = None
)]
struct Args {
    /// The producer's CPU (tar's).
    #[arg(long, default_value_t = 0)]
    producer_cpu: u32,

    /// The consumer's CPU (gzip's), where the hogs run too.
    #[arg(long, default_value_t = 1)]
    consumer_cpu: u32,

    /// Data through the pipe, MiB. The run's length is about this times 1024 times the
    /// larger of the two costs per KiB; more data averages more wakeups.
    #[arg(long, default_value_t = 8)]
    mib: u64,

    /// Bytes per write, KiB (at most the pipe's 64 KiB). The consumer blocks about once a
    /// chunk: smaller chunks mean more wakeups, each costing a wait behind the hogs.
    #[arg(long, default_value_t = 64)]
    chunk_kib: u64,

    /// The producer's CPU time per KiB, ns. Slower than the consumer keeps the pipe empty
    /// and the consumer blocking once a chunk (the seed's case: gzip waiting for tar); much
    /// faster keeps it full, and the consumer then never blocks and simply shares its CPU
    /// by weight. A slower producer also makes the job longer.
    #[arg(long, default_value_t = 25_000)]
    producer_ns_per_kib: u64,

    /// The consumer's CPU time per KiB, ns: its work per wakeup is this times the chunk.
    /// Larger makes each wakeup's wait behind the hogs a smaller part of the job.
    #[arg(long, default_value_t = 20_000)]
    consumer_ns_per_kib: u64,

    /// The consumer's slice, µs (0 = the base slice; the kernel clamps to [100, 100000]).
    /// Shorter than the hogs' lets its wakeups preempt them (PREEMPT_SHORT), at the price
    /// of shorter turns.
    #[arg(long, default_value_t = 0)]
    consumer_slice_us: u64,

    /// The consumer's nice value.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    consumer_nice: i32,

    /// A hog on the consumer's CPU for the loaded run: optional `nice=`, `slice_us=` (0 =
    /// the base slice), `name=`, `count=`. Repeat for more. Without any, only the run
    /// alone is made.
    #[arg(long = "hog")]
    hogs: Vec<String>,

    /// The hogs' head start before the loaded run, ms: they are running, and their lag
    /// settled, when the job starts. Longer only adds to the run's time.
    #[arg(long, default_value_t = 200)]
    hog_warmup_ms: u64,
}

/// Burn this thread's CPU time until its clock reads `until_ns` (at once when it is past).
/// The callers give a running total (what all the work so far costs, from the thread's
/// clock at its start), not a cost per call: each call overshoots by up to a clock read
/// and 200 loop iterations, which on a KASAN guest is a good part of a small call, and a
/// total does not add the overshoots up. With per-call costs, the consumer, which makes a
/// call per read (a read may return less than a chunk), fell behind a producer with the
/// larger cost per KiB and never found the pipe empty.
fn run_cpu_until_ns(until_ns: u64) {
    let mut x = 0u64;
    while sys::thread_cpu_ns() < until_ns {
        for _ in 0..200 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
}

/// A pipe: (read end, write end).
fn pipe() -> Result<(std::fs::File, std::fs::File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe2");
    }
    // SAFETY: pipe2 succeeded: both are open descriptors that nothing else owns.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((r.into(), w.into()))
}

/// What the consumer measured of itself over the job.
struct ConsumerOut {
    bytes: u64,
    start_ns: u64,
    cpu_ns: u64,
    wait_ns: u64,
    blocks: u64,
    preempted: u64,
    end_ns: u64,
}

/// The job once: the consumer and the producer start together at the barrier; the job ends
/// when the consumer has read the last byte. With `hogs`, they run on the consumer's CPU
/// from `hog_warmup_ms` before the start to the end.
fn run_job(
    args: &Args,
    base_slice_ns: u64,
    hogs: &[TaskSpec],
) -> Result<(PipeJobPhase, [TaskAttr; 2], Vec<TaskAttr>)> {
    let stop = Arc::new(AtomicBool::new(false));
    let hogs_ready = Arc::new(Barrier::new(hogs.len() + 1));
    let mut hog_threads = Vec::new();
    for h in hogs.iter().cloned() {
        let (stop, ready, cpu) = (
            Arc::clone(&stop),
            Arc::clone(&hogs_ready),
            args.consumer_cpu,
        );
        let t = std::thread::Builder::new()
            .name(h.name.clone())
            .spawn(move || -> std::result::Result<TaskAttr, String> {
                let attr = sys::pin_to_cpu(0, cpu)
                    .map_err(|e| format!("pinning hog {} to CPU {cpu}: {e}", h.name))
                    .and_then(|()| {
                        TaskAttr::set_own(h.slice_us * 1000, h.nice, base_slice_ns)
                            .map_err(|e| format!("hog {}: {e}", h.name))
                    });
                ready.wait();
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..1000 {
                        x = std::hint::black_box(x.wrapping_add(1));
                    }
                }
                attr
            })
            .context("spawning a hog thread")?;
        hog_threads.push(t);
    }
    hogs_ready.wait();
    let hog_clocks: Vec<libc::clockid_t> = hog_threads
        .iter()
        .map(|t| sys::pthread_cpu_clock(t.as_pthread_t()))
        .collect::<Result<_, _>>()
        .context("pthread_getcpuclockid")?;
    if !hogs.is_empty() {
        sys::sleep_until_ns(sys::now_ns() + args.hog_warmup_ms * 1_000_000);
    }

    let (mut rd, mut wr) = pipe()?;
    let go = Arc::new(Barrier::new(3));
    let chunk = (args.chunk_kib * 1024) as usize;
    let chunks = args.mib * 1024 / args.chunk_kib;
    let (producer_cpu, producer_ns) = (args.producer_cpu, args.producer_ns_per_kib);
    let chunk_kib = args.chunk_kib;
    let go_p = Arc::clone(&go);
    let producer = std::thread::Builder::new()
        .name("producer".into())
        .spawn(move || -> std::result::Result<TaskAttr, String> {
            let attr = sys::pin_to_cpu(0, producer_cpu)
                .map_err(|e| format!("pinning the producer to CPU {producer_cpu}: {e}"))
                .and_then(|()| {
                    TaskAttr::set_own(0, 0, base_slice_ns).map_err(|e| format!("producer: {e}"))
                });
            go_p.wait();
            let attr = attr?;
            let buf = vec![0x5au8; chunk];
            let cpu0 = sys::thread_cpu_ns();
            for i in 1..=chunks {
                run_cpu_until_ns(cpu0 + (i * chunk_kib).saturating_mul(producer_ns));
                wr.write_all(&buf)
                    .map_err(|e| format!("producer: writing the pipe: {e}"))?;
            }
            // Dropping `wr` closes the pipe: the consumer reads its end.
            Ok(attr)
        })
        .context("spawning the producer")?;
    let (consumer_cpu, consumer_ns) = (args.consumer_cpu, args.consumer_ns_per_kib);
    let (slice_ns, nice) = (args.consumer_slice_us * 1000, args.consumer_nice);
    let go_c = Arc::clone(&go);
    let consumer = std::thread::Builder::new()
        .name("consumer".into())
        .spawn(
            move || -> std::result::Result<(TaskAttr, ConsumerOut), String> {
                let attr = sys::pin_to_cpu(0, consumer_cpu)
                    .map_err(|e| format!("pinning the consumer to CPU {consumer_cpu}: {e}"))
                    .and_then(|()| {
                        TaskAttr::set_own(slice_ns, nice, base_slice_ns)
                            .map_err(|e| format!("consumer: {e}"))
                    });
                go_c.wait();
                let start_ns = sys::now_ns();
                let attr = attr?;
                let stat = || sys::own_schedstat_ns().map_err(|e| format!("consumer: {e}"));
                let (run0, wait0) = stat()?;
                let (vol0, invol0) = sys::thread_ctxsw();
                let mut buf = vec![0u8; chunk];
                let mut bytes = 0u64;
                let cpu0 = sys::thread_cpu_ns();
                loop {
                    let n = rd
                        .read(&mut buf)
                        .map_err(|e| format!("consumer: reading the pipe: {e}"))?;
                    if n == 0 {
                        break;
                    }
                    bytes += n as u64;
                    run_cpu_until_ns(cpu0 + bytes.saturating_mul(consumer_ns) / 1024);
                }
                let end_ns = sys::now_ns();
                let (run1, wait1) = stat()?;
                let (vol1, invol1) = sys::thread_ctxsw();
                Ok((
                    attr,
                    ConsumerOut {
                        bytes,
                        start_ns,
                        cpu_ns: run1.saturating_sub(run0),
                        wait_ns: wait1.saturating_sub(wait0),
                        blocks: vol1.saturating_sub(vol0),
                        preempted: invol1.saturating_sub(invol0),
                        end_ns,
                    },
                ))
            },
        )
        .context("spawning the consumer")?;
    let hog_cpu = |clocks: &[libc::clockid_t]| -> Result<u64> {
        let mut s = 0;
        for &c in clocks {
            s += sys::clock_ns(c).context("reading a hog's CPU clock")?;
        }
        Ok(s)
    };
    go.wait();
    let h0 = hog_cpu(&hog_clocks)?;
    let consumed = consumer.join();
    let h1 = hog_cpu(&hog_clocks)?;
    let produced = producer.join();
    stop.store(true, Ordering::Relaxed);
    let mut hog_attrs = Vec::new();
    let mut errors = Vec::new();
    for t in hog_threads {
        match t.join() {
            Ok(Ok(a)) => hog_attrs.push(a),
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push("a hog thread panicked".into()),
        }
    }
    let (consumer_attr, out) = match consumed {
        Ok(Ok(x)) => (Some(x.0), Some(x.1)),
        Ok(Err(e)) => {
            errors.push(e);
            (None, None)
        }
        Err(_) => {
            errors.push("the consumer panicked".into());
            (None, None)
        }
    };
    let producer_attr = match produced {
        Ok(Ok(a)) => Some(a),
        Ok(Err(e)) => {
            errors.push(e);
            None
        }
        Err(_) => {
            errors.push("the producer panicked".into());
            None
        }
    };
    if !errors.is_empty() {
        bail!("{}", errors.join("; "));
    }
    let (Some(consumer_attr), Some(producer_attr), Some(out)) = (consumer_attr, producer_attr, out)
    else {
        bail!("the consumer or the producer returned nothing");
    };
    let want = chunks * args.chunk_kib * 1024;
    if out.bytes != want {
        bail!(
            "the consumer read {} bytes, the producer wrote {want}",
            out.bytes
        );
    }
    let phase = PipeJobPhase {
        elapsed_s: out.end_ns.saturating_sub(out.start_ns) as f64 / 1e9,
        consumer_cpu_s: out.cpu_ns as f64 / 1e9,
        consumer_wait_s: out.wait_ns as f64 / 1e9,
        consumer_blocks: out.blocks,
        consumer_preempted: out.preempted,
        hogs_cpu_s: h1.saturating_sub(h0) as f64 / 1e9,
    };
    Ok((phase, [consumer_attr, producer_attr], hog_attrs))
}

fn describe(what: &str, p: &PipeJobPhase, chunks: u64) -> String {
    format!(
        "eevdf-pipejob: {what}: {:.3} s; the consumer ran {:.3} s, waited {:.3} s on the \
         runqueue, blocked {} times ({:.2} a chunk), was preempted {} times; the hogs ran \
         {:.3} s",
        p.elapsed_s,
        p.consumer_cpu_s,
        p.consumer_wait_s,
        p.consumer_blocks,
        p.consumer_blocks as f64 / chunks.max(1) as f64,
        p.consumer_preempted,
        p.hogs_cpu_s
    )
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.chunk_kib == 0 || args.chunk_kib > 64 {
        bail!("--chunk-kib must be 1 to 64 (the pipe holds 64 KiB)");
    }
    if args.mib * 1024 < args.chunk_kib {
        bail!("--mib must hold at least one chunk");
    }
    if args.producer_cpu == args.consumer_cpu {
        bail!("--producer-cpu and --consumer-cpu must differ: the producer runs on another CPU");
    }
    let mut hogs: Vec<TaskSpec> = Vec::new();
    for h in &args.hogs {
        let n = hogs.len();
        hogs.extend(parse_task_specs(h, true, n).map_err(anyhow::Error::msg)?);
    }
    let base_slice_ns =
        sys::base_slice_ns().with_context(|| format!("reading {}", sys::BASE_SLICE_PATH))?;
    // The main thread only waits; it stays off the job's CPUs where there is a third.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    if let Some(spare) = (0..cpus).find(|&c| c != args.producer_cpu && c != args.consumer_cpu) {
        let _ = sys::pin_to_cpu(0, spare);
    }
    let (alone, [consumer, producer], _) = run_job(&args, base_slice_ns, &[])?;
    let chunks = args.mib * 1024 / args.chunk_kib;
    println!("{}", describe("alone", &alone, chunks));
    let (loaded, hog_attrs) = if hogs.is_empty() {
        (None, Vec::new())
    } else {
        let (p, [c, _], h) = run_job(&args, base_slice_ns, &hogs)?;
        if c != consumer {
            bail!("the consumer's read-back changed between the runs: {consumer:?} then {c:?}");
        }
        println!(
            "{}",
            describe(&format!("beside {} hog(s)", hogs.len()), &p, chunks)
        );
        (Some(p), h)
    };
    let slowdown = loaded
        .as_ref()
        .map(|l| l.elapsed_s / alone.elapsed_s.max(1e-9));
    if let Some(s) = slowdown {
        println!("eevdf-pipejob: {:.0}% of the time alone", 100.0 * s);
    }
    let record = Record::PipeJob(PipeJobResult {
        mib: args.mib,
        chunk_kib: args.chunk_kib,
        producer_ns_per_kib: args.producer_ns_per_kib,
        consumer_ns_per_kib: args.consumer_ns_per_kib,
        consumer,
        producer,
        hogs: hogs.iter().map(|h| h.name.clone()).zip(hog_attrs).collect(),
        alone,
        loaded,
        slowdown,
    });
    println!("{}", record.to_line());
    Ok(())
}
