//! Seed 003's question on a booted kernel: what a long sleeper that wakes on another CPU
//! gets there.
//!
//! Under CFS a sleeper's vruntime had to be renormalised between CPUs' min_vruntime; a bug
//! there either starves it (placed far right) or lets it run unopposed (placed far left).
//! EEVDF carries lag instead: the sleeper is placed at `V - lag` on the new CPU, with the
//! lag clamped at dequeue. This measures that from user space, on any kernel:
//!
//! 1. The sleeper S runs `--run-before-ms` on CPU `--from` beside a hog there, then sleeps
//!    `--sleep-ms` while that hog runs the CPU's virtual time far ahead.
//! 2. While it sleeps, the parent moves it to CPU `--to`, where another hog H runs
//!    (`--move affinity`); or S is never pinned and wakes where the kernel puts it
//!    (`--move natural`, with a load such as hackbench started beside it: then no hog and
//!    no lag estimate, and the share is S's CPU time over the window's wall time).
//! 3. S wakes (at an absolute time; the lateness is its wait for the CPU) and spins
//!    `--after-ms`, sampling its own CPU time and H's every `--sample-ms`.
//!
//! With two equal-weight tasks, `V = (v_S + v_H) / 2`, so S's lag after placement is
//! `(v_H - v_S) / 2`, and S runs ahead of H by `v_H - v_S` of CPU time until the two
//! vruntimes meet. Hence the lag at placement, in ns of CPU time at nice 0:
//!
//! ```text
//!   lag ≈ max over the samples of ((S's CPU time - H's CPU time) since the wakeup) / 2
//! ```
//!
//! (a negative lag shows as H running ahead: the minimum instead). The bound it is held
//! to is the clamp of `update_entity_lag()`, max(2 × slice, tick) on 6.12; the lab
//! computes it. After that, S's share of the CPU over the window should be its fair
//! share, 1/2: neither starved nor boosted.
//!
//! With `--hog-nice 19` the hogs weigh 15 against S's 1024: a hog alone on a CPU runs V
//! ahead 68 times faster than real time, the case where CFS's renormalised vruntime went
//! wrong, and S's lag is inflated by (W + w) / W = 69 at placement. The CPU-time estimate
//! assumes equal weights, so it is left out then; the vruntime read weighs the two
//! (`lag = w_H (v_H - v_S) / (w_S + w_H)`), and S's fair share is w_S / (w_S + w_H).
//!
//! On a sched_eevdf kernel the lag at placement is also read as the kernel saw it: the
//! parent clears and switches on the record of placements
//! (`/sys/kernel/debug/sched/eevdf/place`), S reads its own placements right after it
//! wakes (after the vruntimes), and the parent switches the record off at the end. Ends
//! with one `@@json` result line.
use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use eevdf_guest::{debugfs, sys, MigrateResult, MigrateRound, Record, TaskReadback};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Move {
    /// sched_setaffinity() from `--from` to `--to` while S sleeps: a measured lag.
    Affinity,
    /// No pinning and no hogs; S wakes where the kernel places it, among whatever load
    /// runs beside it (hackbench, started by the caller).
    Natural,
}

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// How S changes CPU while it sleeps.
    #[arg(long, value_enum, default_value_t = Move::Affinity)]
    r#move: Move,

    /// The CPU S sleeps on (with a hog), for `--move affinity`.
    #[arg(long, default_value_t = 0)]
    from: u32,

    /// The CPU S wakes on (with another hog), for `--move affinity`.
    #[arg(long, default_value_t = 1)]
    to: u32,

    /// S's run beside the hog before it sleeps, ms: long enough for its lag to reach
    /// the steady state of two equal tasks.
    #[arg(long, default_value_t = 100)]
    run_before_ms: u64,

    /// S's sleep, ms: the virtual time its old CPU runs ahead by meanwhile (1000 ms of
    /// one hog is 1000 ms of virtual time at nice 0).
    #[arg(long, default_value_t = 1000)]
    sleep_ms: u64,

    /// How long S spins after waking, ms: the window of the share.
    #[arg(long, default_value_t = 500)]
    after_ms: u64,

    /// Sampling period of the CPU times after the wakeup, ms. Shorter resolves the lag
    /// better but S's reads of /proc cost S's own CPU time.
    #[arg(long, default_value_t = 2)]
    sample_ms: u64,

    /// Rounds (each a sleep and a wakeup).
    #[arg(long, default_value_t = 5)]
    rounds: u32,

    /// The hogs' nice, for `--move affinity`: 19 makes V run far ahead while S sleeps.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    hog_nice: i32,
}

/// The kernel's record of placements, if this kernel has one.
fn place_path() -> Option<String> {
    let p = format!("{}/{}", debugfs::SCHED_DEBUGFS, debugfs::PLACE);
    std::path::Path::new(&p).exists().then_some(p)
}

/// The record's placements of `pid`.
fn placements_of(path: &str, pid: i32) -> Result<Vec<debugfs::Placement>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    Ok(debugfs::Placements::parse(&text)
        .with_context(|| format!("parsing {path}"))?
        .of_pid(pid))
}

/// Writes `what` to the record (`0`, `on`, `off`).
fn place_write(path: &str, what: &str) -> Result<()> {
    std::fs::write(path, what).with_context(|| format!("writing '{what}' to {path}"))
}

/// A process that spins forever at `nice`, pinned to `cpu` (or unpinned). The caller sets
/// both, so that they hold from the hog's first turn, however late that comes.
fn hog(cpu: Option<u32>, nice: i32) -> Result<libc::pid_t> {
    let pid = sys::fork_child(|| {
        let mut x = 0u64;
        loop {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    })?;
    let set = cpu
        .map_or(Ok(()), |c| sys::pin_to_cpu(pid, c))
        .and_then(|()| {
            if nice != 0 {
                sys::set_nice(pid, nice)
            } else {
                Ok(())
            }
        });
    if let Err(e) = set {
        sys::reap(&[pid]);
        let on = cpu.map_or("no CPU".to_string(), |c| format!("CPU {c}"));
        bail!("giving hog {pid} {on} and nice {nice}: {e}");
    }
    Ok(pid)
}

fn spin_ms(ms: u64) {
    let end = sys::now_ns() + ms * 1_000_000;
    while sys::now_ns() < end {
        std::hint::spin_loop();
    }
}

/// One round in the sleeper: its run, its sleep, its wakeup and the window after it. `h`
/// is the hog beside it after the wakeup (0: none); `place`, the kernel's record of
/// placements, if there is one.
fn sleeper_round(
    a: &Args,
    h: libc::pid_t,
    wake_at: u64,
    place: Option<&str>,
) -> Result<MigrateRound> {
    spin_ms(a.run_before_ms);
    sys::sleep_until_ns(wake_at);
    let woke = sys::now_ns();
    // The vruntimes first, before S's own reads of its CPU time run its update_curr():
    // V = (w_S v_S + w_H v_H) / (w_S + w_H), so lag = V - v_S = w_H (v_H - v_S) / (w_S + w_H).
    let w_h = eevdf_guest::nice_to_weight(a.hog_nice);
    let w_s = eevdf_guest::nice_to_weight(0);
    let lag_vruntime_us = if h > 0 {
        let own = sys::own_proc_sched().and_then(|p| p.vruntime_ns);
        let hog = sys::proc_sched(h).and_then(|p| p.vruntime_ns);
        own.zip(hog)
            .map(|(s, hv)| hv.wrapping_sub(s) as f64 * w_h / (w_s + w_h) / 1000.0)
    } else {
        None
    };
    // Then the placement as the kernel saw it: the ring of the new CPU keeps its last 32.
    let placements = match place {
        // SAFETY: getpid() takes no arguments.
        Some(p) => placements_of(p, unsafe { libc::getpid() })?,
        None => Vec::new(),
    };
    let (s0, _) = sys::own_schedstat_ns()?;
    let h0 = if h > 0 { sys::task_runtime_ns(h)? } else { 0 };
    let mut cpu = 0;
    // SAFETY: sched_getcpu takes no arguments.
    let c = unsafe { libc::sched_getcpu() };
    if c >= 0 {
        cpu = c as u32;
    }
    let (mut max_d, mut min_d) = (0i64, 0i64);
    let (mut share_100, mut s1, mut h1) = (f64::NAN, s0, h0);
    let end = woke + a.after_ms * 1_000_000;
    let mut next = woke + a.sample_ms * 1_000_000;
    while sys::now_ns() < end {
        while sys::now_ns() < next {
            std::hint::spin_loop();
        }
        next += a.sample_ms * 1_000_000;
        (s1, _) = sys::own_schedstat_ns()?;
        if h > 0 {
            h1 = sys::task_runtime_ns(h)?;
        }
        let d = (s1 - s0) as i64 - (h1 - h0) as i64;
        max_d = max_d.max(d);
        min_d = min_d.min(d);
        if share_100.is_nan() && sys::now_ns() >= woke + 100_000_000 {
            share_100 = if h > 0 {
                (s1 - s0) as f64 / ((s1 - s0) + (h1 - h0)).max(1) as f64
            } else {
                (s1 - s0) as f64 / (sys::now_ns() - woke) as f64
            };
        }
    }
    let share = if h > 0 {
        (s1 - s0) as f64 / ((s1 - s0) + (h1 - h0)).max(1) as f64
    } else {
        (s1 - s0) as f64 / (sys::now_ns() - woke) as f64
    };
    // No sample after the first 100 ms: S did not run between then and the window's end
    // (it samples only while it runs), so its last sample holds all it got in the first
    // 100 ms (beside a hog, whose CPU time at 100 ms is then unknown, the window's share:
    // a lower bound). Without this the round's record held a NaN (JSON null) and failed.
    if share_100.is_nan() {
        share_100 = if h > 0 {
            share
        } else {
            (s1 - s0) as f64 / (a.after_ms.min(100) * 1_000_000).max(1) as f64
        };
    }
    Ok(MigrateRound {
        woke_on: cpu,
        wake_latency_us: (woke - wake_at) as f64 / 1000.0,
        lag_us: if h > 0 && a.hog_nice == 0 {
            Some(if max_d >= -min_d { max_d } else { min_d } as f64 / 2.0 / 1000.0)
        } else {
            None
        },
        lag_vruntime_us,
        placements,
        share_first_100ms: share_100,
        share,
    })
}

/// The rounds, beside two hogs (`--move affinity`; their pids go to `hogs` as they start)
/// and with the record of placements at `place` cleared and on.
fn run_rounds(
    a: &Args,
    place: Option<&str>,
    hogs: &mut Vec<libc::pid_t>,
) -> Result<Vec<MigrateRound>> {
    let affinity = a.r#move == Move::Affinity;
    if affinity {
        hogs.push(hog(Some(a.from), a.hog_nice)?);
        hogs.push(hog(Some(a.to), a.hog_nice)?);
    }
    if let Some(p) = place {
        place_write(p, "0")?;
        place_write(p, "on")?;
    }
    // The rounds' results come back through a pipe, one JSON line each.
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe() to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe");
    }
    let h = if affinity { hogs[1] } else { 0 };
    let mut rounds = Vec::new();
    for _ in 0..a.rounds {
        let t = sys::now_ns() + (a.run_before_ms + a.sleep_ms) * 1_000_000 + 50_000_000;
        let (from, wfd) = (a.from, fds[1]);
        let args = a;
        let s = sys::fork_child(|| {
            if affinity && sys::pin_to_cpu(0, from).is_err() {
                return 1;
            }
            match sleeper_round(args, h, t, place) {
                Ok(r) => {
                    let line = serde_json::to_string(&r).unwrap_or_default() + "\n";
                    // SAFETY: writes `line`'s bytes to the pipe's write end.
                    let n = unsafe { libc::write(wfd, line.as_ptr().cast(), line.len()) };
                    i32::from(n != line.len() as isize)
                }
                Err(_) => 2,
            }
        })?;
        if affinity {
            // Move S while it sleeps: halfway through its sleep.
            sys::sleep_until_ns(t - a.sleep_ms * 500_000);
            if let Err(e) = sys::pin_to_cpu(s, a.to) {
                sys::reap(&[s]);
                return Err(e).context("moving the sleeper");
            }
        }
        if sys::wait_pid(s, true) != Some(0) {
            bail!("the sleeper of a round failed");
        }
        let mut buf = vec![0u8; 65536];
        // SAFETY: reads at most buf.len() bytes into `buf` from the pipe's read end.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            bail!("no result from the sleeper");
        }
        let r: MigrateRound =
            serde_json::from_slice(&buf[..n as usize]).context("parsing the sleeper's result")?;
        let at_place = r
            .placements
            .iter()
            .rfind(|p| p.flags & debugfs::ENQUEUE_WAKEUP != 0)
            .map_or("-".to_string(), |p| {
                format!(
                    "vlag {:.1} us, applied {:.1} us, limit {:.1} us, flags {}",
                    p.vlag as f64 / 1000.0,
                    p.lag as f64 / 1000.0,
                    p.limit as f64 / 1000.0,
                    p.flag_letters()
                )
            });
        println!(
            "eevdf-migrate: woke on CPU {} after {:.1} us; lag {} (from the vruntimes: {}; \
             at placement: {at_place}); share {:.3} over the first 100 ms, {:.3} over {} ms",
            r.woke_on,
            r.wake_latency_us,
            r.lag_us.map_or("-".to_string(), |l| format!("{l:.1} us")),
            r.lag_vruntime_us
                .map_or("-".to_string(), |l| format!("{l:.1} us")),
            r.share_first_100ms,
            r.share,
            a.after_ms
        );
        rounds.push(r);
    }
    Ok(rounds)
}

fn main() -> Result<()> {
    let a = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-migrate")?;
    if a.r#move == Move::Affinity && a.from == a.to {
        bail!("--from and --to are the same CPU");
    }
    let affinity = a.r#move == Move::Affinity;
    if !affinity && a.hog_nice != 0 {
        bail!("--hog-nice is for --move affinity (there are no hogs otherwise)");
    }
    // The record of placements, on for the run and off again at the end; the hogs are
    // killed on every path out of the rounds.
    let place = place_path();
    let mut hogs = Vec::new();
    let rounds = run_rounds(&a, place.as_deref(), &mut hogs);
    // What the hogs ran with, as the kernel holds it: the lab checks their nice.
    let hog_attrs: Vec<TaskReadback> = hogs
        .iter()
        .filter_map(|&p| TaskReadback::read("hog", p))
        .collect();
    sys::reap(&hogs);
    let off = place.as_deref().map_or(Ok(()), |p| place_write(p, "off"));
    let rounds = rounds?;
    off?;
    let r = Record::Migrate(MigrateResult {
        policy,
        mode: format!("{:?}", a.r#move).to_lowercase(),
        sleep_ms: a.sleep_ms,
        after_ms: a.after_ms,
        hog_nice: a.hog_nice,
        place_record: place.is_some(),
        rounds,
        hogs: hog_attrs,
    });
    println!("{}", r.to_line());
    Ok(())
}
