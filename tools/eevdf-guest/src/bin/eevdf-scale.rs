//! Many runnable tasks on one CPU: the switch rate, and from it the wall time per switch.
//!
//! In `yield` mode each task loops on sched_yield(), so every switch is a pick among all
//! the CPU's tasks: the time per switch bounds the cost of a pick from above (it also holds
//! the syscall and the switch). In `spin` mode the tasks only spin, and switches come from
//! slice expiry at the tick. Counts come from `/proc/<pid>/status` and `/proc/schedstat`.
//! Ends with one `@@json` result line.
use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use eevdf_guest::{sys, Record, ScaleResult};

#[derive(Copy, Clone, Debug, ValueEnum)]
enum Mode {
    Yield,
    Spin,
}

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Runnable tasks (processes) on the CPU. Each costs a process (a few hundred KiB).
    #[arg(long, default_value_t = 10)]
    tasks: u32,

    /// What the tasks do; see the description.
    #[arg(long, value_enum, default_value_t = Mode::Yield)]
    mode: Mode,

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

fn main() -> Result<()> {
    let args = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-scale")?;
    let _ = sys::pin_to_cpu(0, if args.cpu == 0 { 1 } else { 0 });
    let mut pids = Vec::new();
    for _ in 0..args.tasks {
        let (cpu, mode) = (args.cpu, args.mode);
        let pid = sys::fork_child(move || {
            if sys::pin_to_cpu(0, cpu).is_err() {
                return 1;
            }
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
    }
    std::thread::sleep(std::time::Duration::from_millis(args.warmup_ms));
    let count = |pids: &[libc::pid_t]| -> Result<u64> {
        pids.iter()
            .map(|&p| sys::task_ctxsw(p).context("reading /proc/<pid>/status"))
            .sum()
    };
    let s0 = sys::cpu_schedstat(args.cpu);
    let c0 = count(&pids)?;
    let t0 = sys::now_ns();
    std::thread::sleep(std::time::Duration::from_millis(args.duration_ms));
    let c1 = count(&pids)?;
    let dt = (sys::now_ns() - t0) as f64 / 1e9;
    let s1 = sys::cpu_schedstat(args.cpu);
    for &p in &pids {
        sys::kill(p, libc::SIGKILL);
    }
    for &p in &pids {
        sys::wait_pid(p, true);
    }
    let switches = c1 - c0;
    let (sched_count, run_delay_ns) = match (s0, s1) {
        (Some(a), Some(b)) => (Some(b.0 - a.0), Some(b.1 - a.1)),
        _ => (None, None),
    };
    let r = ScaleResult {
        tasks: args.tasks,
        mode: format!("{:?}", args.mode).to_lowercase(),
        duration_s: dt,
        switches,
        switches_per_s: switches as f64 / dt,
        ns_per_switch: dt * 1e9 / switches.max(1) as f64,
        sched_count,
        run_delay_ns,
        policy,
    };
    println!(
        "eevdf-scale: {} tasks ({}): {:.0} switches/s, {:.0} ns per switch",
        r.tasks, r.mode, r.switches_per_s, r.ns_per_switch
    );
    println!("{}", Record::Scale(r).to_line());
    Ok(())
}
