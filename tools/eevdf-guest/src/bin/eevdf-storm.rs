//! A sched_change storm: a target hog T whose attributes change every `--period-us` while it
//! runs, against a competitor hog C, both pinned to `--cpu`.
//!
//! T asks for a `--target-slice-us` slice (3 ms by default), C keeps the base slice; both are
//! SCHED_OTHER, checked with sched_getattr and `/proc/thread-self/sched`. A change is a
//! sched_change of T in the kernel's sense: dequeue, put_prev_task, the new attributes,
//! enqueue, set_next_task, which 6.12's set_next_entity() uses to set T's slice protection
//! again. Two kinds (`--change`):
//!
//! - `slice`: sched_setattr(SCHED_OTHER) alternating T's slice between the slice and the
//!   slice + `--slice-step-ns`. A sched_setattr() that changes nothing returns before the
//!   sched_change (6.12's `__sched_setscheduler()`: same policy, nice and slice), so "the
//!   same slice again" would test nothing; a 1 µs step changes the deadline by nothing
//!   that matters.
//! - `nice`: setpriority() alternating T's nice between 0 and 1 (a reweight as well).
//! - `cgroup`: T moved between two threaded cgroups, `a` and `b`, under one made for the
//!   run (`/sys/fs/cgroup/eevdf-storm-<pid>`, the cpu controller on; C stays in it): a
//!   cgroup move of the running task, `sched_move_task()`. The groups are removed at the
//!   end, the process moved back to the root.
//!
//! Who changes T (`--driver`): `self`, T itself every `--period-us` of wall time while it runs
//! (on one CPU the only way to change a *running* T: a driver thread there runs only while
//! T does not); or `thread`, a driver thread pinned to `--driver-cpu` (another CPU) that
//! sleeps to each change on a CLOCK_MONOTONIC grid, as an external tool would.
//!
//! T and C spin reading CLOCK_MONOTONIC and swapping their id into a shared word. A run ends
//! when the other one ran in between (the word holds its id) or when the clock jumped by
//! more than `--gap-threshold-us` (another task ran); T's own change is part of its run
//! unless C ran during it. After `--warmup-ms` it measures for
//! `--duration-ms`: T's uninterrupted runs (the longest is the protection's effect) and C's
//! waits between runs (p99, max), and their CPU shares. Ends with a summary and one `@@json`
//! result line (see the eevdf-guest library).
use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use eevdf_guest::{sys, Quantiles, Record, StormResult, TaskAttr};
use std::os::unix::thread::JoinHandleExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};

#[derive(Parser, Debug)]
#[command(
    version,
    about = concat!(
        "A sched_change storm: a 3 ms-slice hog changed every 200 us while it runs, ",
        "against a base-slice hog: the target's uninterrupted runs, the competitor's ",
        "waits",
    ),
    long_about = None
)]
struct Args {
    /// What each change does to T.
    #[arg(long, value_enum, default_value_t = Change::Slice)]
    change: Change,

    /// Who makes the changes.
    #[arg(long, value_enum, default_value_t = Driver::SelfDriven)]
    driver: Driver,

    /// Time between changes, µs. Shorter than the competitor's slice (the base slice), so
    /// that a protection window a change restarts never runs out on its own.
    #[arg(long, default_value_t = 200)]
    period_us: u64,

    /// T's slice, µs: longer than the base slice, so that its protection (up to its whole
    /// slice under 6.12's RUN_TO_PARITY) is what keeps C waiting.
    #[arg(long, default_value_t = 3000)]
    target_slice_us: u64,

    /// With `--change slice`: the second slice is this much longer, ns.
    #[arg(long, default_value_t = 1000)]
    slice_step_ns: u64,

    /// The CPU T and C are pinned to.
    #[arg(long, default_value_t = 0)]
    cpu: u32,

    /// With `--driver thread`: the driver's CPU, which must not be `--cpu`.
    #[arg(long, default_value_t = 1)]
    driver_cpu: u32,

    /// A clock jump longer than this ends a run, µs. Below the cost of a timer tick under
    /// TCG (tens of µs at icount shift 3) a tick would end runs; above the shortest time
    /// another task runs, a switch to it is missed. Switches to the other hog are always
    /// seen (the shared word).
    #[arg(long, default_value_t = 200)]
    gap_threshold_us: u64,

    /// Time before measuring, ms.
    #[arg(long, default_value_t = 300)]
    warmup_ms: u64,

    /// Measured time, ms.
    #[arg(long, default_value_t = 2000)]
    duration_ms: u64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    /// sched_setattr(SCHED_OTHER) alternating the slice by --slice-step-ns.
    Slice,
    /// setpriority() alternating nice 0 and 1.
    Nice,
    /// T moved between two threaded cgroups.
    Cgroup,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Driver {
    /// T changes itself while running.
    #[value(name = "self")]
    SelfDriven,
    /// A driver thread on --driver-cpu changes T.
    Thread,
}

/// Two threaded cgroups, `a` and `b`, under a threaded domain made for this process (the cpu
/// controller on, so that each has its own runqueue and a move is a group change); the
/// process is in the domain. Dropping it moves the process back to the root and removes
/// them.
struct ThreadedGroups {
    domain: PathBuf,
}

impl ThreadedGroups {
    const ROOT: &'static str = "/sys/fs/cgroup";

    fn new() -> Result<ThreadedGroups> {
        let root = Path::new(Self::ROOT);
        if !root.join("cgroup.controllers").is_file() {
            bail!("--change cgroup needs cgroup2 at {}", Self::ROOT);
        }
        let write = |p: &Path, v: &str| {
            std::fs::write(p, v).with_context(|| format!("writing {v} to {}", p.display()))
        };
        write(&root.join("cgroup.subtree_control"), "+cpu")?;
        let g = ThreadedGroups {
            domain: root.join(format!("eevdf-storm-{}", std::process::id())),
        };
        std::fs::create_dir(&g.domain).with_context(|| format!("mkdir {}", g.domain.display()))?;
        write(&g.domain.join("cgroup.subtree_control"), "+cpu")?;
        for leaf in ["a", "b"] {
            let d = g.domain.join(leaf);
            std::fs::create_dir(&d).with_context(|| format!("mkdir {}", d.display()))?;
            write(&d.join("cgroup.type"), "threaded")?;
        }
        write(
            &g.domain.join("cgroup.procs"),
            &std::process::id().to_string(),
        )?;
        Ok(g)
    }

    fn threads_files(&self) -> [PathBuf; 2] {
        ["a", "b"].map(|l| self.domain.join(l).join("cgroup.threads"))
    }
}

impl Drop for ThreadedGroups {
    fn drop(&mut self) {
        let _ = std::fs::write(
            Path::new(Self::ROOT).join("cgroup.procs"),
            std::process::id().to_string(),
        );
        for leaf in ["a", "b"] {
            let _ = std::fs::remove_dir(self.domain.join(leaf));
        }
        let _ = std::fs::remove_dir(&self.domain);
    }
}

/// How long the hogs spin past the window for the main thread to read their clocks; a main
/// thread later than half of it was starved, and the run has no result.
const GRACE_NS: u64 = 1_000_000_000;

struct Shared {
    /// The id (1 = T, 2 = C) of the hog that last went round its loop.
    owner: AtomicU32,
    /// T's thread id, for a driver thread.
    target_tid: AtomicI32,
    window_start: u64,
    window_end: u64,
    stop: AtomicBool,
    /// Changes made in the window, and failures.
    changes: AtomicU64,
    change_errors: AtomicU64,
    go: Barrier,
}

/// How a hog went: its runs and the waits between them, ns, for runs that ended in the
/// window.
struct HogOut {
    runs: Vec<u64>,
    waits: Vec<u64>,
}

/// Makes change number `n` of thread `tid`.
struct Changer {
    change: Change,
    slice_ns: u64,
    step_ns: u64,
    /// With `Change::Cgroup`: the two groups' `cgroup.threads` files.
    groups: Option<[PathBuf; 2]>,
}

impl Changer {
    /// Change `n` (from 0) sets the second value when `n` is even, the first when odd: each
    /// one differs from what T has, so none is a no-op the kernel skips.
    fn apply(&self, tid: libc::pid_t, n: u64) -> std::io::Result<()> {
        let second = (n + 1) % 2;
        match self.change {
            Change::Slice => {
                let mut a = sys::SchedAttr::new(sys::SCHED_OTHER);
                a.sched_runtime = self.slice_ns + second * self.step_ns;
                sys::sched_setattr(tid, &mut a, 0)
            }
            Change::Nice => sys::set_nice(tid, second as i32),
            Change::Cgroup => match &self.groups {
                Some(g) => std::fs::write(&g[second as usize], tid.to_string()),
                None => Err(std::io::Error::other("no cgroups set up")),
            },
        }
    }
}

fn note_change(sh: &Shared, at: u64, r: std::io::Result<()>) {
    if at >= sh.window_start && at < sh.window_end {
        match r {
            Ok(()) => sh.changes.fetch_add(1, Ordering::Relaxed),
            Err(_) => sh.change_errors.fetch_add(1, Ordering::Relaxed),
        };
    }
}

/// A hog's loop: `me` is 1 for T, 2 for C. T changes itself when `self_changer` is given.
fn spin(sh: &Shared, me: u32, threshold_ns: u64, self_changer: Option<(&Changer, u64)>) -> HogOut {
    let mut out = HogOut {
        runs: Vec::new(),
        waits: Vec::new(),
    };
    let tid = sys::gettid();
    let mut last = sys::now_ns();
    let mut run_start = last;
    let mut seen_other = false;
    let mut next_change = last;
    let mut n_change = 0u64;
    loop {
        let now = sys::now_ns();
        let prev = sh.owner.swap(me, Ordering::Relaxed);
        let other_ran = prev != me && prev != 0;
        if other_ran || now - last > threshold_ns {
            // Runs before the other hog first ran started before the hogs competed.
            if seen_other && last >= sh.window_start && last < sh.window_end {
                out.runs.push(last - run_start);
                out.waits.push(now - last);
            }
            seen_other |= other_ran;
            run_start = now;
        }
        last = now;
        // Spin on past the window, until the main thread has read the CPU clocks (the
        // clock of a thread that has exited cannot be read), but not for ever: a kernel
        // that lets the hogs starve the main thread would otherwise never stop them.
        if now >= sh.window_end
            && (sh.stop.load(Ordering::Relaxed) || now >= sh.window_end + GRACE_NS)
        {
            return out;
        }
        if let Some((c, period_ns)) = self_changer {
            if now >= next_change {
                let r = c.apply(tid, n_change);
                note_change(sh, now, r);
                n_change += 1;
                next_change = now + period_ns;
                // The call is part of T's run unless the competitor ran during it (T slept
                // or was preempted inside the sched_change): then the owner word holds C's
                // id, `last` stays before the call and the next round ends the run there.
                // A cgroup move takes longer than the gap threshold, so leaving `last`
                // before every call would end a run at every move.
                if sh.owner.load(Ordering::Relaxed) == me {
                    last = sys::now_ns();
                }
            }
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-storm")?;
    if args.period_us == 0 || args.target_slice_us == 0 {
        bail!("--period-us and --target-slice-us must be positive");
    }
    let ncpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if args.driver == Driver::Thread && (args.driver_cpu == args.cpu || ncpus < 2) {
        bail!(
            "--driver thread needs a second CPU (--driver-cpu other than --cpu): on T's CPU the \
             driver runs only while T does not, so it would never change a running T; use \
             --driver self on one CPU"
        );
    }
    let base_slice_ns =
        sys::base_slice_ns().with_context(|| format!("reading {}", sys::BASE_SLICE_PATH))?;
    let _ = sys::pin_to_cpu(0, if args.cpu == 0 { 1 } else { 0 });
    // The cgroups outlive the run (the guard removes them at the end of main).
    let groups = (args.change == Change::Cgroup)
        .then(ThreadedGroups::new)
        .transpose()?;
    let changer = Arc::new(Changer {
        change: args.change,
        slice_ns: args.target_slice_us * 1000,
        step_ns: args.slice_step_ns,
        groups: groups.as_ref().map(ThreadedGroups::threads_files),
    });
    let t0 = sys::now_ns();
    let window_start = t0 + args.warmup_ms * 1_000_000;
    let threads = if args.driver == Driver::Thread { 3 } else { 2 };
    let sh = Arc::new(Shared {
        owner: AtomicU32::new(0),
        target_tid: AtomicI32::new(0),
        window_start,
        window_end: window_start + args.duration_ms * 1_000_000,
        stop: AtomicBool::new(false),
        changes: AtomicU64::new(0),
        change_errors: AtomicU64::new(0),
        go: Barrier::new(threads + 1),
    });
    let threshold_ns = args.gap_threshold_us * 1000;
    let period_ns = args.period_us * 1000;
    let (tx, rx) = mpsc::channel::<(u32, Result<TaskAttr, String>)>();
    let mut hogs = Vec::new();
    for me in [1u32, 2] {
        let (sh, tx, changer, cpu) = (Arc::clone(&sh), tx.clone(), Arc::clone(&changer), args.cpu);
        let slice_ns = if me == 1 {
            args.target_slice_us * 1000
        } else {
            0
        };
        let self_driven = me == 1 && args.driver == Driver::SelfDriven;
        hogs.push(
            std::thread::Builder::new()
                .name(if me == 1 { "target" } else { "competitor" }.into())
                .spawn(move || {
                    let attr = sys::pin_to_cpu(0, cpu)
                        .map_err(|e| format!("pinning to CPU {cpu}: {e}"))
                        .and_then(|()| {
                            TaskAttr::set_own(slice_ns, 0, base_slice_ns).map_err(|e| e.to_string())
                        });
                    let ok = attr.is_ok();
                    if me == 1 {
                        sh.target_tid.store(sys::gettid(), Ordering::Relaxed);
                    }
                    let _ = tx.send((me, attr));
                    sh.go.wait();
                    ok.then(|| {
                        spin(
                            &sh,
                            me,
                            threshold_ns,
                            self_driven.then_some((&*changer, period_ns)),
                        )
                    })
                })
                .context("spawning a hog")?,
        );
    }
    drop(tx);
    let driver = (args.driver == Driver::Thread).then(|| {
        let (sh, changer, cpu) = (Arc::clone(&sh), Arc::clone(&changer), args.driver_cpu);
        std::thread::spawn(move || {
            let pinned = sys::pin_to_cpu(0, cpu);
            sh.go.wait();
            if pinned.is_err() {
                return;
            }
            let tid = sh.target_tid.load(Ordering::Relaxed);
            let mut next = sys::now_ns() + period_ns;
            let mut n = 0u64;
            while !sh.stop.load(Ordering::Relaxed) && next < sh.window_end {
                sys::sleep_until_ns(next);
                note_change(&sh, next, changer.apply(tid, n));
                n += 1;
                next += period_ns;
            }
        })
    });
    let mut attrs: [Option<TaskAttr>; 2] = [None, None];
    let mut errors = Vec::new();
    for (me, a) in rx.iter().take(2) {
        match a {
            Ok(a) => attrs[me as usize - 1] = Some(a),
            Err(e) => errors.push(format!("{}: {e}", if me == 1 { "T" } else { "C" })),
        }
    }
    sh.go.wait();
    let clocks: Vec<libc::clockid_t> = hogs
        .iter()
        .map(|h| sys::pthread_cpu_clock(h.as_pthread_t()))
        .collect::<Result<_, _>>()
        .context("pthread_getcpuclockid")?;
    sys::sleep_until_ns(sh.window_start);
    let r0: Vec<u64> = clocks
        .iter()
        .map(|&c| sys::clock_ns(c).unwrap_or(0))
        .collect();
    let w0 = sys::now_ns();
    sys::sleep_until_ns(sh.window_end);
    let r1: Vec<u64> = clocks
        .iter()
        .map(|&c| sys::clock_ns(c).unwrap_or(0))
        .collect();
    let w1 = sys::now_ns();
    let late_ns = w1 - sh.window_end;
    sh.stop.store(true, Ordering::Relaxed);
    let outs: Vec<Option<HogOut>> = hogs.into_iter().map(|h| h.join().unwrap_or(None)).collect();
    if let Some(d) = driver {
        d.join()
            .map_err(|_| anyhow::anyhow!("the driver panicked"))?;
    }
    if !errors.is_empty() {
        bail!("{}", errors.join("; "));
    }
    if late_ns > GRACE_NS / 2 {
        bail!(
            "the main thread woke {} ms after the window: the hogs starved it (the kernel \
             never preempted them for it), so there is no measurement",
            late_ns / 1_000_000
        );
    }
    let [Some(mut t), Some(mut c)] =
        <[Option<HogOut>; 2]>::try_from(outs).map_err(|_| anyhow::anyhow!("two hogs expected"))?
    else {
        bail!("a hog did not run");
    };
    let [Some(target), Some(competitor)] = attrs else {
        bail!("a hog's attributes are missing");
    };
    let share = |i: usize| r1[i].saturating_sub(r0[i]) as f64 / (w1 - w0) as f64;
    let r = StormResult {
        runs_span_changes: true,
        policy,
        change: format!("{:?}", args.change).to_lowercase(),
        driver: match args.driver {
            Driver::SelfDriven => "self".into(),
            Driver::Thread => "thread".into(),
        },
        period_us: args.period_us,
        changes: sh.changes.load(Ordering::Relaxed),
        change_errors: sh.change_errors.load(Ordering::Relaxed),
        target,
        competitor,
        gap_threshold_us: args.gap_threshold_us,
        duration_s: (w1 - w0) as f64 / 1e9,
        target_runs: Quantiles::of_ns(&mut t.runs),
        competitor_waits: Quantiles::of_ns(&mut c.waits),
        competitor_runs: Quantiles::of_ns(&mut c.runs),
        target_share: share(0),
        competitor_share: share(1),
    };
    let q = |q: &Option<Quantiles>| {
        q.as_ref().map_or("none".into(), |q| {
            format!(
                "{} p50 {:.0} p99 {:.0} max {:.0} us",
                q.samples, q.p50_us, q.p99_us, q.max_us
            )
        })
    };
    println!(
        "eevdf-storm: {} changes of T by {} every {} us ({} failed): T runs {}, C waits {}, \
         C runs {}; shares T {:.3} C {:.3}",
        r.changes,
        r.driver,
        r.period_us,
        r.change_errors,
        q(&r.target_runs),
        q(&r.competitor_waits),
        q(&r.competitor_runs),
        r.target_share,
        r.competitor_share
    );
    println!("{}", Record::Storm(Box::new(r)).to_line());
    Ok(())
}
