//! Seed 004's throughput test without a compiler: a `make -jN`-shaped, fork-heavy,
//! CPU-bound job.
//!
//! Alfred Chen's sanity test times a kernel build at 100% and 300% load (`make -j` at one
//! and three times the CPU count). A kernel build does not fit in the guest's initramfs,
//! and its time would mostly measure the page cache and the compiler. What the scheduler
//! sees of it is kept: `--jobs` slots, each forking one short-lived process per "file"
//! until `--files` are done; each file burns its own CPU time (the compile) and exits.
//! File costs vary deterministically between `--work-min-us` and `--work-max-us` (a
//! linear congruential sequence seeded by `--seed`), so every kernel gets the same files
//! in the same order. The result is the completion time (the make's wall time) and the
//! files per second; run `cyclictest --policy=other` beside it for the interactivity half.
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{sys, ForkJobResult, Record};

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Parallel job slots (`make -j`): the CPU count for 100% load, three times it for 300%.
    /// More slots than CPUs adds runnable tasks and so wakeup and preemption decisions.
    #[arg(long)]
    jobs: u32,

    /// Files to compile in all. The run's length: with the default costs about
    /// files × 30 ms / CPUs of CPU-bound wall time.
    #[arg(long, default_value_t = 200)]
    files: u32,

    /// Least CPU time a file costs, µs.
    #[arg(long, default_value_t = 10_000)]
    work_min_us: u64,

    /// Most CPU time a file costs, µs. A wider spread makes the slots finish out of step,
    /// as a real build's do.
    #[arg(long, default_value_t = 50_000)]
    work_max_us: u64,

    /// Seed of the file costs.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Nice value of the job (the seed's interactivity test ran its build at nice 19).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    nice: i32,
}

/// The CPU time of file `i`, ns: a 64-bit LCG step from the seed, mapped to the range.
fn file_cost_ns(seed: u64, i: u32, min_us: u64, max_us: u64) -> u64 {
    let x = seed
        .wrapping_add(u64::from(i))
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let span = max_us - min_us + 1;
    (min_us + (x >> 33) % span) * 1000
}

fn main() -> Result<()> {
    let a = Args::parse();
    if a.jobs == 0 || a.files == 0 {
        bail!("--jobs and --files must be at least 1");
    }
    if a.work_min_us == 0 || a.work_min_us > a.work_max_us {
        bail!("need 0 < --work-min-us <= --work-max-us");
    }
    sys::set_nice(0, a.nice).context("setting the job's nice value")?;
    let policy = eevdf_guest::fair_policy("eevdf-forkjob")?;
    let t0 = sys::now_ns();
    let (mut next, mut running, mut done) = (0u32, 0u32, 0u32);
    let mut cpu_ns = 0u64;
    while done < a.files {
        while running < a.jobs && next < a.files {
            let cost = file_cost_ns(a.seed, next, a.work_min_us, a.work_max_us);
            sys::fork_child(move || {
                let end = sys::clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0) + cost;
                while sys::clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(u64::MAX) < end {
                    std::hint::spin_loop();
                }
                0
            })
            .context("fork")?;
            cpu_ns += cost;
            next += 1;
            running += 1;
        }
        let mut status = 0;
        // SAFETY: `status` is a valid int to write into; -1 waits for any child.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid < 0 {
            return Err(std::io::Error::last_os_error()).context("waitpid");
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            bail!("a file's process {pid} failed (status {status:#x})");
        }
        running -= 1;
        done += 1;
    }
    let elapsed_s = (sys::now_ns() - t0) as f64 / 1e9;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    println!(
        "eevdf-forkjob: {} files on {} slots ({}% of {} CPUs): {:.3} s, {:.1} files/s, \
         {:.3} s of CPU asked",
        a.files,
        a.jobs,
        a.jobs * 100 / cpus,
        cpus,
        elapsed_s,
        f64::from(a.files) / elapsed_s,
        cpu_ns as f64 / 1e9
    );
    let r = Record::ForkJob(ForkJobResult {
        policy,
        jobs: a.jobs,
        cpus,
        files: a.files,
        nice: a.nice,
        cpu_s: cpu_ns as f64 / 1e9,
        elapsed_s,
    });
    println!("{}", r.to_line());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::file_cost_ns;

    #[test]
    fn costs_are_in_range_and_spread() {
        let c: Vec<u64> = (0..1000)
            .map(|i| file_cost_ns(1, i, 10_000, 50_000))
            .collect();
        assert!(c.iter().all(|&x| (10_000_000..=50_000_000).contains(&x)));
        let mean = c.iter().sum::<u64>() as f64 / 1000.0 / 1e6;
        assert!((25.0..35.0).contains(&mean), "mean {mean} ms");
        assert_ne!(c[0], c[1]);
    }
}
