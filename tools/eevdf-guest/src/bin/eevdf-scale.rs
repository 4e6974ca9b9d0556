//! Many runnable tasks on one CPU: the switch rate, and from it the wall time per switch.
//!
//! In `yield` mode each task loops on sched_yield(), so every switch is a pick among all
//! the CPU's tasks: the time per switch bounds the cost of a pick from above (it also holds
//! the syscall and the switch). In `spin` mode the tasks only spin, and switches come from
//! slice expiry at the tick. Counts come from `/proc/<pid>/status` and `/proc/schedstat`.
//! Ends with one `@@json` result line.
use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use eevdf_guest::{sys, Record, ScaleResult};

#[derive(Copy, Clone, Debug, ValueEnum)]
enum Mode {
    Yield,
    Spin,
}

/// What differs between the tasks: what decides where the earliest deadline sits in a
/// vruntime-ordered timeline, and so which path the pick takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Mix {
    /// Nice 0 and the base slice for all: the earliest deadline is the smallest vruntime.
    Uniform,
    /// Nice -10, -3 and 4 in turn (task k: `(7 k mod 21) - 10`; weights 9548, 1991 and
    /// 423), the base slice: deadlines advance at different rates, so the earliest deadline
    /// is rarely the smallest vruntime.
    Weights,
    /// Nice 0, `sched_setattr()` slices from 100 us to 100 ms (task k: the (k mod 10)-th of
    /// 100, 200, 500 us, 1, 2, 5, 10, 20, 50, 100 ms): short requests, early deadlines.
    Slices,
}

/// The slices of [`Mix::Slices`], ns.
const MIX_SLICES_NS: [u64; 10] = [
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
];

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Runnable tasks (processes) on the CPU. Each costs a process (a few hundred KiB).
    #[arg(long, default_value_t = 10)]
    tasks: u32,

    /// What the tasks do; see the description.
    #[arg(long, value_enum, default_value_t = Mode::Yield)]
    mode: Mode,

    /// What differs between the tasks (see the values): uniform tasks take the pick's O(1)
    /// path on both layouts; weights and slices are where a vruntime-ordered tree must
    /// find the earliest deadline away from its leftmost.
    #[arg(long, value_enum, default_value_t = Mix::Uniform)]
    mix: Mix,

    /// The CPU the tasks are pinned to.
    #[arg(long, default_value_t = 0)]
    cpu: u32,

    /// Settling time after the last fork, ms.
    #[arg(long, default_value_t = 100)]
    warmup_ms: u64,

    /// Measured time, ms.
    #[arg(long, default_value_t = 1000)]
    duration_ms: u64,
}

/// Task `k`'s nice value in [`Mix::Weights`].
fn mix_nice(k: usize) -> i32 {
    (7 * k % 21) as i32 - 10
}

/// Task `k`'s slice in [`Mix::Slices`], ns.
fn mix_slice_ns(k: usize) -> u64 {
    MIX_SLICES_NS[k % MIX_SLICES_NS.len()]
}

fn main() -> Result<()> {
    let args = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-scale")?;
    let own_policy = sys::getattr(0)
        .context("sched_getattr of eevdf-scale")?
        .sched_policy;
    let _ = sys::pin_to_cpu(0, if args.cpu == 0 { 1 } else { 0 });
    // The parent gives each child its CPU, nice value and slice before it reads them back:
    // a child that set its own could still be waiting for its first turn at the read-back
    // (CI saw one hold nice 0 after the warm-up on a loaded debug guest).
    let mut pids = Vec::new();
    let mut spawn = |k: usize| -> Result<()> {
        let mode = args.mode;
        let pid = sys::fork_child(move || {
            let mut x = 0u64;
            loop {
                match mode {
                    // SAFETY: sched_yield has no preconditions.
                    Mode::Yield => unsafe {
                        libc::sched_yield();
                    },
                    Mode::Spin => x = std::hint::black_box(x.wrapping_add(1)),
                }
            }
        })
        .context("fork")?;
        pids.push(pid);
        sys::pin_to_cpu(pid, args.cpu)
            .with_context(|| format!("pinning task {k} to CPU {}", args.cpu))?;
        // The uniform and weights mixes run at the base slice: a custom slice of this
        // process's would survive the fork, so the child's is reset (runtime 0, its policy).
        match args.mix {
            Mix::Uniform => sys::set_slice(pid, own_policy, 0),
            Mix::Weights => {
                sys::set_slice(pid, own_policy, 0).and_then(|()| sys::set_nice(pid, mix_nice(k)))
            }
            Mix::Slices => sys::set_slice(pid, sys::SCHED_OTHER, mix_slice_ns(k)),
        }
        .with_context(|| format!("giving task {k} (pid {pid}) its {:?} mix", args.mix))
    };
    let spawned = (0..args.tasks as usize).try_for_each(&mut spawn);
    if spawned.is_ok() {
        std::thread::sleep(std::time::Duration::from_millis(args.warmup_ms));
    }
    // Each task holds the nice value and slice its mix gives it (read back, so that the run
    // is the one its label names).
    let held = spawned.and_then(|()| {
        pids.iter().enumerate().try_for_each(|(k, &pid)| {
            let a = sys::getattr(pid).with_context(|| format!("task {k} (pid {pid}) is gone"))?;
            // sched_getattr() reports se.slice whether asked for or not: only the slices
            // mix names a value (the others' base slice was set above, runtime 0).
            let (nice, slice) = match args.mix {
                Mix::Uniform => (0, None),
                Mix::Weights => (mix_nice(k), None),
                Mix::Slices => (0, Some(mix_slice_ns(k))),
            };
            if a.sched_nice != nice || slice.is_some_and(|s| a.sched_runtime != s) {
                bail!(
                    "task {k} (pid {pid}) holds nice {} and slice {} ns, its mix wants nice \
                     {nice} and slice {slice:?} ns",
                    a.sched_nice,
                    a.sched_runtime
                );
            }
            Ok(())
        })
    });
    if let Err(e) = held {
        sys::reap(&pids);
        return Err(e);
    }
    let count = |pids: &[libc::pid_t]| -> Result<u64> {
        pids.iter()
            .map(|&p| sys::task_ctxsw(p).context("reading /proc/<pid>/status"))
            .sum()
    };
    let s0 = sys::cpu_schedstat(args.cpu);
    let c0 = count(&pids);
    let t0 = sys::now_ns();
    std::thread::sleep(std::time::Duration::from_millis(args.duration_ms));
    let c1 = count(&pids);
    let dt = (sys::now_ns() - t0) as f64 / 1e9;
    let s1 = sys::cpu_schedstat(args.cpu);
    sys::reap(&pids);
    let (c0, c1) = (c0?, c1?);
    let switches = c1 - c0;
    let (sched_count, run_delay_ns) = match (s0, s1) {
        (Some(a), Some(b)) => (Some(b.0 - a.0), Some(b.1 - a.1)),
        _ => (None, None),
    };
    let r = ScaleResult {
        tasks: args.tasks,
        mode: format!("{:?}", args.mode).to_lowercase(),
        mix: format!("{:?}", args.mix).to_lowercase(),
        duration_s: dt,
        switches,
        switches_per_s: switches as f64 / dt,
        ns_per_switch: dt * 1e9 / switches.max(1) as f64,
        sched_count,
        run_delay_ns,
        policy,
    };
    println!(
        "eevdf-scale: {} tasks ({}, {:?} mix): {:.0} switches/s, {:.0} ns per switch",
        r.tasks, r.mode, args.mix, r.switches_per_s, r.ns_per_switch
    );
    println!("{}", Record::Scale(r).to_line());
    Ok(())
}
