//! CPU hogs on one CPU, each with a nice value and optionally in a cgroup: measures each
//! one's share of the CPU (from the runtime in `/proc/<pid>/schedstat`) against the share its
//! weights promise (nice weights, cgroup v2 cpu.weight, multiplied down the hierarchy).
//! Ends with one `@@json` result line.
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::{ideal_shares, parse_group, parse_hog, sys, HogShare, Record, ShareResult};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// A hog: NICE or NICE@GROUP (GROUP as given to --group). Repeat for each hog.
    #[arg(long = "hog", required = true, allow_hyphen_values = true)]
    hogs: Vec<String>,

    /// A cgroup, PATH=WEIGHT (cgroup v2 cpu.weight, 1..=10000), created under
    /// /sys/fs/cgroup/eevdf-lab. Parents must be listed before children.
    #[arg(long = "group")]
    groups: Vec<String>,

    /// The CPU every hog is pinned to.
    #[arg(long, default_value_t = 0)]
    cpu: u32,

    /// Time before measuring, ms, so that lag and load averages settle (group weights
    /// follow load averages, which take tens of ms to converge).
    #[arg(long, default_value_t = 200)]
    warmup_ms: u64,

    /// Measured time, ms. Shares converge as 1/duration: a few hundred slices are enough.
    #[arg(long, default_value_t = 1000)]
    duration_ms: u64,
}

const CG_ROOT: &str = "/sys/fs/cgroup/eevdf-lab";

fn write(p: &Path, s: &str) -> Result<()> {
    std::fs::write(p, s).with_context(|| format!("writing '{s}' to {}", p.display()))
}

fn setup_groups(groups: &[(String, u32)]) -> Result<()> {
    if groups.is_empty() {
        return Ok(());
    }
    // Enable the cpu controller down to every level that has children.
    write(Path::new("/sys/fs/cgroup/cgroup.subtree_control"), "+cpu")?;
    std::fs::create_dir_all(CG_ROOT).context("creating the lab's cgroup")?;
    write(&Path::new(CG_ROOT).join("cgroup.subtree_control"), "+cpu")?;
    for (path, w) in groups {
        let dir = Path::new(CG_ROOT).join(path);
        std::fs::create_dir_all(&dir).with_context(|| format!("mkdir {}", dir.display()))?;
        write(&dir.join("cpu.weight"), &w.to_string())?;
        if groups
            .iter()
            .any(|(p, _)| p.starts_with(&format!("{path}/")))
        {
            write(&dir.join("cgroup.subtree_control"), "+cpu")?;
        }
    }
    Ok(())
}

fn teardown_groups(groups: &[(String, u32)]) {
    let mut dirs: Vec<PathBuf> = groups
        .iter()
        .map(|(p, _)| Path::new(CG_ROOT).join(p))
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
    let _ = std::fs::remove_dir(CG_ROOT);
}

/// Start the hogs (their pids go to `pids` as they are forked), let them settle, and read
/// their runtimes at the start and at the end of the measured time, with that time, s.
fn measure(
    args: &Args,
    hogs: &[(i32, String)],
    pids: &mut Vec<libc::pid_t>,
) -> Result<(Vec<u64>, Vec<u64>, f64)> {
    // The parent gives each hog its CPU and nice value: a hog that set its own could still
    // be waiting for its first turn when the measurement starts.
    for (nice, group) in hogs {
        let pid = sys::fork_child(|| {
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })?;
        pids.push(pid);
        sys::pin_to_cpu(pid, args.cpu)
            .and_then(|()| sys::set_nice(pid, *nice))
            .with_context(|| format!("giving hog {pid} CPU {} and nice {nice}", args.cpu))?;
        if !group.is_empty() {
            write(
                &Path::new(CG_ROOT).join(group).join("cgroup.procs"),
                &pid.to_string(),
            )?;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(args.warmup_ms));
    let runtimes = || -> Result<Vec<u64>> {
        pids.iter()
            .map(|&p| sys::task_runtime_ns(p).with_context(|| format!("hog {p}'s runtime")))
            .collect()
    };
    let r0 = runtimes()?;
    let t0 = sys::now_ns();
    std::thread::sleep(std::time::Duration::from_millis(args.duration_ms));
    let r1 = runtimes()?;
    Ok((r0, r1, (sys::now_ns() - t0) as f64 / 1e9))
}

fn main() -> Result<()> {
    let args = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-share")?;
    let hogs: Vec<(i32, String)> = args
        .hogs
        .iter()
        .map(|h| parse_hog(h))
        .collect::<Result<_, _>>()?;
    let groups: Vec<(String, u32)> = args
        .groups
        .iter()
        .map(|g| parse_group(g))
        .collect::<Result<_, _>>()?;
    for (_, g) in &hogs {
        if !g.is_empty() && !groups.iter().any(|(p, _)| p == g) {
            bail!("hog in group '{g}', which no --group declares");
        }
    }
    setup_groups(&groups)?;
    let ideal = ideal_shares(&hogs, &groups);
    // The parent stays off the measured CPU where it can.
    let _ = sys::pin_to_cpu(0, if args.cpu == 0 { 1 } else { 0 });
    // The hogs run only inside `measure`; they and the groups go on every path out of it.
    let mut pids = Vec::new();
    let measured = measure(&args, &hogs, &mut pids);
    sys::reap(&pids);
    teardown_groups(&groups);
    let (r0, r1, dt) = measured?;
    let d: Vec<u64> = r1.iter().zip(&r0).map(|(a, b)| a - b).collect();
    let total: u64 = d.iter().sum();
    let mut out = Vec::new();
    for (i, (nice, group)) in hogs.iter().enumerate() {
        let share = d[i] as f64 / total.max(1) as f64;
        println!(
            "eevdf-share: hog {i} nice {nice:>3} group '{group}': {:.3} (ideal {:.3})",
            share, ideal[i]
        );
        out.push(HogShare {
            nice: *nice,
            group: group.clone(),
            ideal: ideal[i],
            share,
            runtime_ns: d[i],
        });
    }
    let max_abs_err_pp = out
        .iter()
        .map(|h| (h.share - h.ideal).abs() * 100.0)
        .fold(0.0, f64::max);
    let r = Record::Share(ShareResult {
        duration_s: dt,
        hogs: out,
        max_abs_err_pp,
        policy,
    });
    println!("{}", r.to_line());
    Ok(())
}
