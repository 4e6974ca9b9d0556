//! The experiment lab: build the Rust and stock kernels (same tree, same config but
//! CONFIG_SCHED_EEVDF_RUST), boot each under QEMU, run the seeds' experiments in them and
//! report medians with 95% intervals and Rust/stock ratios. The pair is tinyconfig-based
//! (builds `rust`, `stock`) or, with `--kernels distro`, Debian's config (builds `distro`,
//! `distro-stock`).
//!
//! Experiments (each cell is kernel × sched_feat set × workload):
//!   latency     hackbench in the background, a periodic waker (eevdf-waker, 1 ms period)
//!               whose SCHED_OTHER slice is 10x, 1x, 0.1x the base slice; EEVDF, EVDF
//!               (NO_ELIGIBLE), BIAS_ELIGIBLE, NO_RUN_TO_PARITY, NO_PLACE_LAG (seed 000);
//!   throughput  hackbench (processes/threads, pipes/sockets, groups) and pipe ping-pong;
//!   fairness    nice -4 vs 0, N equal hogs, nested cgroups: CPU share against ideal;
//!   scale       10/100/1000 yielding tasks on one CPU: switch rate and time per switch.
//!
//! Boots alternate kernels (A B A B ...) and each boot runs a batch of cells several times.
//! Counts come from /proc (per task) and, for the scale cells only, schedstat.
//! Feature sets a kernel lacks are reported as "not available on this kernel".
//!
//! Output: `results/<UTC timestamp>/` with raw.json, summary.json, report.md, PNG plots, and
//! each boot's script, guest output and console log. The tables are printed at the end.
//! `--quick` (the default) finishes in under 10 minutes on a 2-core host with TCG.
//! Documentation/lab.md says how to read the report.

mod feature;
mod insnprof;
mod main_matrix;
mod merge;
mod metrics;
mod next;
mod next_report;
mod parse;
mod plan;
mod plot;
mod process;
mod progress;
mod protocol;
mod readback;
mod report;
mod seeds;
mod seeds_report;
mod stats;
mod studies;
mod verdict;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use feature::StandIn;
use hostkit::paths::{cache_dir, repo_root};
use plan::{Boot, Cell, Experiment, Kernel, KernelChoice, MatrixKind, Pair};
use process::{Vm, VmCommand};
use progress::{fmt_dur, BootLabel, BootProgress, Eta};
use report::{BootRun, KernelInfo, Raw};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The experiment lab: one subcommand a study.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    study: Study,
}

#[derive(Subcommand, Debug)]
enum Study {
    /// The main matrix (latency against throughput, throughput, fairness, scale), rust
    /// against stock. `--quick` (the default): every experiment, fewer parameters, shorter
    /// runs, under 10 minutes here, 10 runs a cell: enough to see a 5% difference on a
    /// quiet host, not a 1% one.
    Run {
        /// The cut-down matrix (the default).
        #[arg(long, conflicts_with_all = ["full", "smoke"])]
        quick: bool,
        /// The whole matrix (about an hour under TCG): narrower intervals.
        #[arg(long, conflicts_with = "smoke")]
        full: bool,
        /// A handful of cells, one boot per kernel: checks the pipeline (CI), no statistics.
        #[arg(long)]
        smoke: bool,
        #[command(flatten)]
        common: Common,
    },
    /// The performance bar decided: the waker's latency cells (EEVDF, against hackbench -l
    /// 700 and inside its share for 5.2 s, slices 10x, 1x, 0.1x), 6 boots x 2 runs a
    /// kernel, so that each pools over 50,000 wakeups a kernel, with the throughput and
    /// yield cells and the scheduler's instructions per switch. Tails (p99) pass at
    /// rust/stock <= 1.00 with the interval's upper end <= 1.05 here only. About half an
    /// hour on a 2-core host.
    Bar {
        /// Skip the scheduler's instructions per switch (tools/insnprof under the ping-pong
        /// after the boots: about a minute, and a few GB of QEMU logs, deleted, a kernel).
        /// Without them the report has the guest's instructions per switch only.
        #[arg(long)]
        skip_insnprof: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Upstream's post-6.12 EEVDF changes (RUN_TO_PARITY_MIN_SLICE, LAG_CLAMP_MAX_SLICE,
    /// NEXT_BUDDY_EEVDF, PROTECT_AT_PICK), each off against on, on the rust kernel only:
    /// rt-app-shaped lag checks, long sleepers with mixed slices, schbench-shaped wakeups
    /// and hackbench, a sched_change storm; sched_eevdf's counters read around every cell.
    /// 6 boots x 2 runs a cell (about 17 minutes estimated on a 2-core host): 12 runs give
    /// 95% intervals of a few percent for hackbench and the msgr quantiles, wide ones for
    /// the rt-app tails. A kernel that lacks a feature is an error before anything runs
    /// (see --feature-stand-in).
    Next {
        /// One short pair of cells a feature, one boot: checks the pipeline.
        #[arg(long)]
        smoke: bool,
        /// Write sched_feat NAME as OTHER in every cell (`NAME=OTHER`; `NAME=NO_X` writes X
        /// inverted), so that the pipeline runs on a kernel without NAME. Repeatable. The
        /// report says so at its top: its numbers are then OTHER's, not NAME's.
        #[arg(long = "feature-stand-in", value_parser = StandIn::parse)]
        stand_ins: Vec<StandIn>,
        #[command(flatten)]
        common: Common,
    },
    /// The experiments of seeds 001 to 004 on the booted kernels, rust against stock where
    /// stock can run them: a partial-slice sleeper beside 2-8 hogs and the seed's own pipe
    /// job (001), massive_intr against an interactive load under, near and over its share
    /// under `perf sched record`, for EEVDF and EVDF, EVDF + NO_RUN_TO_PARITY over the share
    /// and EEVDF at a 3 ms base slice near and over it (002; the EVDF sets on rust alone), a long
    /// sleeper that wakes on another CPU at 2 and 4 vCPUs (003), a fork-heavy job at 100%
    /// and 300% load with cyclictest beside it (004). 3 boots x 2 runs a cell. Seed 000's
    /// 2-vCPU cells run 8 times the loops of its 1-vCPU ones, for 50,000 wakeups a pool
    /// (38 to 77 min of a host core for each set's 3 cells on one kernel, measured): `--only
    /// seed000@2cpu/SET` with `--kernels` runs such a part, `--only
    /// seed000@1cpu,seed001,seed002,seed003,seed004` the rest, `report A B ...` makes one
    /// page (Documentation/lab.md has the recipe).
    Seeds {
        /// One short cell of each seed, one boot a guest shape: checks the pipeline.
        #[arg(long)]
        smoke: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Regenerate a run's report from its raw.json (into that run's directory), with the
    /// current verdicts; or one report from several runs of one study (`report A B`, oldest
    /// first), into `merged/` in the last run's directory (with the merged raw.json, which
    /// `report` renders again). A later run replaces the earlier runs' outcomes of every
    /// cell in its matrix (by cell ID): on the kernels it booted where both runs define the
    /// cell alike, on every kernel where they do not; the other cells keep theirs. For a
    /// study too long for one session: `seeds --only seed000@1cpu,seed001,seed002,seed003,
    /// seed004`, then `seeds --only seed000@2cpu` (or its parts, `seed000@2cpu/EEVDF` with
    /// `--kernels rust` beside `--kernels stock`, ...), then `report` of them all. Runs of
    /// different matrix
    /// kinds, kernel pairs, --cpus, timing or bootstrap settings are refused (exit 2,
    /// nothing written); different kernel builds are merged, the page's Kernels table
    /// showing a row for each with the runs that booted it.
    Report {
        /// The runs' raw.json files (`results/<stamp>/raw.json`), oldest first.
        #[arg(required = true, num_args = 1..)]
        raws: Vec<PathBuf>,
        /// Also write the report as this Markdown page, its plots beside it.
        #[arg(long, alias = "markdown")]
        results_page: Option<PathBuf>,
    },
}

/// What every study's run takes.
#[derive(clap::Args, Debug)]
struct Common {
    /// Boots per kernel (default: smoke 1, quick 5, full 8, bar 6, next 6, seeds 3). Boots are the independent
    /// samples that catch boot-to-boot variation; each costs about 10 s of boot.
    #[arg(long)]
    boots_per_kernel: Option<u32>,

    /// Runs of every cell inside each boot (default: smoke 1, otherwise 2). Cheaper than
    /// boots, but runs in one boot share its state, so they under-state the variance.
    #[arg(long)]
    inner_reps: Option<u32>,

    /// Only these experiments (comma-separated: `run` and `bar`: latency, throughput,
    /// fairness, scale; `next`: run_to_parity_min_slice, lag_clamp_max_slice,
    /// next_buddy_eevdf, protect_at_pick; `seeds`: seed000 to seed004). `EXP@Ncpu` keeps
    /// only the experiment's cells on N vCPUs (a cell's own `@Ncpu`, or `--cpus` for the
    /// others): `seeds --only seed000@2cpu` runs seed 000's 2-vCPU cells alone (38 to 77
    /// min of a host core a set and kernel), `--only
    /// seed000@1cpu,seed001,seed002,seed003,seed004` the rest of the study.
    /// The trade-off: such a run's raw.json holds part of the study, so its page alone
    /// lacks the other cells and says nothing of them; `report RAW RAW` merges it with a
    /// run of the rest. A shape on which the experiment has no cell is an error.
    /// `EXP@Ncpu/SET` keeps one feature set's cells (`seeds --only seed000@2cpu/EVDF`): a
    /// long study in parts that fit a session, or one part a core, merged by `report`.
    #[arg(long, value_delimiter = ',', value_parser = parse_only)]
    only: Vec<Only>,

    /// Kernels to compare (comma-separated), from one of two pairs of builds. `rust,stock`
    /// (the default): the tiny pair, tinyconfig + the base fragment (HZ_1000, full
    /// preemption, little beyond what the cells need); a kernel builds in 6 to 10 minutes
    /// here and boots fast, but it is not a kernel anyone runs. `distro`: both roles on the
    /// distro pair, Debian's 6.12 config (modules off) + the distro fragment, builds
    /// `distro` and `distro-stock`: the kernel users boot (HZ_250, voluntary preemption by
    /// default, and the scheduler-path options the tiny pair leaves out: PSI, CFS
    /// bandwidth, autogroup, NO_HZ_FULL), at 21 to 23 minutes per kernel to build here.
    /// `distro-rust` or `distro-stock` alone, like `rust` or `stock` alone, runs one role
    /// (no ratios). Mixing the pairs is an error: a ratio across configurations would
    /// measure the configurations.
    #[arg(long, value_delimiter = ',', value_parser = KernelChoice::parse, default_value = "rust,stock")]
    kernels: Vec<KernelChoice>,

    /// Guest vCPUs. 1 (the default) measures one runqueue's EEVDF decisions: under icount
    /// hackbench then repeats to about 0.5% (measured: `hackbench -g 2 -l 70`, 6 runs a
    /// kernel, interval 1.51-1.58 s). 2 or more adds migration and load balancing (the same
    /// C code in both kernels) and QEMU's round-robin interleaving of the vCPUs, which
    /// spreads hackbench 5-10% and hides 1% differences. Under realtime TCG each vCPU is a
    /// host thread: more than the host's cores makes latencies measure the host's scheduler.
    #[arg(long, default_value_t = 1)]
    cpus: u32,

    /// How guest time runs. `icount` (the default): QEMU's `-icount shift=N,sleep=off`, the
    /// guest clock advances 2^N ns per executed instruction, so every time the guest
    /// measures counts instructions and the host's load does not enter; runs repeat to
    /// about 1% (ping-pong 0.5%, hackbench 3%) where `realtime` spreads 20-50%. Costs
    /// speed (one host thread for all vCPUs) and realism (every instruction costs the
    /// same; no caches, no real device latency). `realtime`: plain multi-threaded TCG,
    /// wall-clock guest time, what a user's intuition expects but noisy.
    #[arg(long, value_enum, default_value_t = report::Timing::Icount)]
    timing: report::Timing,

    /// With `--timing icount`: the guest's virtual CPU runs 1000/2^N million instructions
    /// per second. Smaller is a faster virtual CPU (shorter guest times for the same work,
    /// more wall time per guest second); 3 gives 125 MIPS.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10))]
    icount_shift: u32,

    /// Guest memory, MiB (1000 tasks of the scale experiment need about 300).
    #[arg(long, default_value_t = 512)]
    mem_mib: u32,

    /// Most estimated seconds of cells in one boot; longer batches are split into several
    /// boots. Larger batches boot less; smaller ones lose less when a guest dies.
    #[arg(long, default_value_t = 240)]
    batch_budget_s: u64,

    /// Where the timestamped results directory goes (default: results/ in the repository).
    /// A run that starts in the same second as another there gets `<stamp>-2` (and so on).
    #[arg(long)]
    out_dir: Option<PathBuf>,

    /// Also write the report as this Markdown page (e.g. Documentation/reports/results.md), with its
    /// plots in a directory named after it beside it (`results/`); `next`: the page of the
    /// four features (Documentation/reports/next.md); `bar`: Documentation/reports/bar.md;
    /// `seeds`: Documentation/reports/seeds.md.
    #[arg(long, alias = "markdown")]
    results_page: Option<PathBuf>,

    /// Do not build: use the kernels and guest programs as they are.
    #[arg(long)]
    no_build: bool,

    /// Print the plan and the time estimate, run nothing.
    #[arg(long)]
    dry_run: bool,

    /// Bootstrap resamples for the ratios' intervals. More is smoother and slower (2000
    /// take milliseconds per row).
    #[arg(long, default_value_t = 2000)]
    bootstrap_resamples: usize,

    /// Seed of the bootstrap, so that a report regenerates identically.
    #[arg(long, default_value_t = 0x5eed)]
    seed: u64,
}

/// A study's run, as the subcommand asked for it.
#[derive(Debug)]
struct Args {
    kind: MatrixKind,
    stand_ins: Vec<StandIn>,
    skip_insnprof: bool,
    common: Common,
}

impl Args {
    /// The run a subcommand asks for, or the raw.json `report` regenerates from.
    fn from_cli(cli: Cli) -> Result<Args, (Vec<PathBuf>, Option<PathBuf>)> {
        use MatrixKind as M;
        // A study without flags of its own beyond `--smoke` (--full and --smoke conflict).
        let plain = |kind, common| Args {
            kind,
            stand_ins: vec![],
            skip_insnprof: false,
            common,
        };
        Ok(match cli.study {
            Study::Run {
                full: true, common, ..
            } => plain(M::Full, common),
            Study::Run {
                smoke: true,
                common,
                ..
            } => plain(M::Smoke, common),
            Study::Run { common, .. } => plain(M::Quick, common),
            Study::Bar {
                skip_insnprof,
                common,
            } => Args {
                skip_insnprof,
                ..plain(M::Bar, common)
            },
            Study::Next {
                smoke,
                stand_ins,
                common,
            } => Args {
                stand_ins,
                ..plain(if smoke { M::NextSmoke } else { M::Next }, common)
            },
            Study::Seeds { smoke, common } => {
                plain(if smoke { M::SeedsSmoke } else { M::Seeds }, common)
            }
            Study::Report { raws, results_page } => return Err((raws, results_page)),
        })
    }
}

fn parse_experiment(s: &str) -> Result<Experiment, String> {
    Experiment::ALL
        .into_iter()
        .find(|e| format!("{e:?}").eq_ignore_ascii_case(s))
        .or_else(|| next::NextFeature::parse(s).map(Experiment::Next))
        .or_else(|| seeds::parse(s))
        .ok_or_else(|| {
            format!(
                "unknown experiment '{s}' (latency, throughput, fairness, scale; with next: \
                 run_to_parity_min_slice, lag_clamp_max_slice, next_buddy_eevdf, \
                 protect_at_pick; with seeds: seed000, seed001, seed002, seed003, seed004; \
                 any of them @Ncpu for its cells on N vCPUs, /SET for one feature set's)"
            )
        })
}

/// One `--only` item: an experiment, on every guest shape or on N vCPUs only (`@Ncpu`), with
/// every feature set or with one only (`/SET`, the set's name as in the cell's ID).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Only {
    experiment: Experiment,
    cpus: Option<u32>,
    set: Option<String>,
    /// As written, for errors.
    text: String,
}

/// `latency`, `seed000`, `seed000@2cpu`, `seed000/EVDF`, `seed000@2cpu/EVDF`.
fn parse_only(s: &str) -> Result<Only, String> {
    let (s_exp, set) = match s.split_once('/') {
        Some((e, set)) if !set.is_empty() && !set.contains(char::is_whitespace) => {
            (e, Some(set.to_string()))
        }
        Some(_) => {
            return Err(format!(
                "bad feature set in '{s}': write EXPERIMENT/SET with the set's name as in a \
                 cell's ID, e.g. seed000@2cpu/EVDF"
            ))
        }
        None => (s, None),
    };
    let (name, shape) = match s_exp.split_once('@') {
        Some((n, sh)) => (n, Some(sh)),
        None => (s_exp, None),
    };
    let experiment = parse_experiment(name)?;
    let cpus = shape
        .map(|sh| {
            sh.strip_suffix("cpu")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    format!(
                        "bad guest shape '@{sh}' in '{s}': write EXPERIMENT@Ncpu with N >= 1, \
                         e.g. seed000@2cpu"
                    )
                })
        })
        .transpose()?;
    Ok(Only {
        experiment,
        cpus,
        set,
        text: s.to_string(),
    })
}

/// The experiments `only` names, each once, in order.
fn only_experiments(only: &[Only]) -> Vec<Experiment> {
    stats::first_seen(only.iter().map(|o| o.experiment))
}

/// Keeps the cells `only`'s guest shapes and feature sets allow: a cell of an experiment
/// that `only` names stays when one of the experiment's items allows it, an item allowing
/// the cells on its N vCPUs (`@Ncpu`: the cell's own vCPU count, or `cpus` for a cell
/// without one) with its feature set (`/SET`), or on any shape and set where it names none;
/// other cells stay. An item that keeps no cell is an error naming the shapes or sets its
/// experiment has.
fn restrict_shapes(cells: &mut Vec<Cell>, only: &[Only], cpus: u32) -> Result<()> {
    let on = |c: &Cell| c.cpus.unwrap_or(cpus);
    let allows = |o: &Only, c: &Cell| {
        c.experiment == o.experiment
            && o.cpus.is_none_or(|n| n == on(c))
            && o.set.as_deref().is_none_or(|s| s == c.features.name())
    };
    let of_experiment = |e: Experiment| cells.iter().filter(move |c| c.experiment == e);
    for o in only {
        if let Some(set) = &o.set {
            if !cells.iter().any(|c| allows(o, c)) {
                let sets = sorted_once(of_experiment(o.experiment).map(|c| c.features.name()));
                if !sets.is_empty() && !sets.contains(&set.as_str()) {
                    bail!(
                        "--only {}: the experiment has no feature set '{set}' in this matrix \
                         (its sets: {})",
                        o.text,
                        sets.join(", ")
                    );
                }
            }
        }
        let Some(n) = o.cpus else { continue };
        if !of_experiment(o.experiment).any(|c| on(c) == n) {
            let shapes = sorted_once(of_experiment(o.experiment).map(on));
            let shapes: Vec<String> = shapes.iter().map(u32::to_string).collect();
            if shapes.is_empty() {
                bail!(
                    "--only {}: this matrix has no cell of that experiment",
                    o.text
                );
            }
            bail!(
                "--only {}: no cell of that experiment runs on {n} vCPUs in this matrix (its \
                 cells run on {} vCPUs)",
                o.text,
                shapes.join(", ")
            );
        }
    }
    for o in only {
        if !cells.iter().any(|c| allows(o, c)) {
            bail!("--only {}: keeps no cell of this matrix", o.text);
        }
    }
    cells.retain(|c| {
        let mut items = only
            .iter()
            .filter(|o| o.experiment == c.experiment)
            .peekable();
        items.peek().is_none() || items.any(|o| allows(o, c))
    });
    Ok(())
}

/// `items` sorted, each once.
fn sorted_once<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// UTC "YYYY-MM-DD HH:MM:SS" from the system clock (days-to-civil, no time zone data).
fn utc_now() -> (String, String) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    (
        format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
        format!("{y:04}{m:02}{d:02}-{h:02}{mi:02}{s:02}"),
    )
}

fn run_checked(cmd: &mut Command, what: &str) -> Result<()> {
    let st = cmd.status().with_context(|| format!("starting {what}"))?;
    if !st.success() {
        bail!("{what} failed ({st})");
    }
    Ok(())
}

fn build(root: &Path, pair: Pair, kernels: &[Kernel], perf: bool) -> Result<()> {
    for &k in kernels {
        let build = pair.build(k);
        eprintln!(
            "==> eevdf-lab: building the {} kernel of the {} pair (tools/build-kernel.sh {build})",
            k.name(),
            pair.name()
        );
        run_checked(
            Command::new("bash")
                .arg(root.join("tools/build-kernel.sh"))
                .arg(build),
            &format!("tools/build-kernel.sh {build}"),
        )?;
    }
    if perf {
        eprintln!("==> eevdf-lab: building perf for the guest (tools/build-perf.sh)");
        run_checked(
            Command::new("bash").arg(root.join("tools/build-perf.sh")),
            "tools/build-perf.sh",
        )?;
    }
    eprintln!("==> eevdf-lab: building eevdf-vm and the static guest programs");
    let manifest = root.join("Cargo.toml");
    let targets: [&[&str]; 2] = [
        &["-p", "eevdf-vm"],
        &["--target", "x86_64-unknown-linux-musl", "-p", "eevdf-guest"],
    ];
    for args in targets {
        run_checked(
            Command::new("cargo")
                .args(["build", "--quiet", "--release", "--locked"])
                .args(args)
                .arg("--manifest-path")
                .arg(&manifest),
            &format!("cargo build {}", args.join(" ")),
        )?;
    }
    Ok(())
}

/// The files tools/build-kernel.sh hashes into a build's `.fragments`, in its order:
/// Debian's config (distro pair only: `$DEBIAN_CONFIG`), the config fragments, the patch
/// series stamp in the tree of `$KERNEL_VERSION`. Both pins come from tools/lib.sh; without
/// them, None.
fn config_inputs(root: &Path, cache: &Path, pair: Pair, k: Kernel) -> Option<Vec<PathBuf>> {
    let pin = |name| hostkit::paths::lib_sh_value(root, name).ok();
    let mut files = Vec::new();
    // tools/build-kernel.sh starts the distro pair's builds from Debian's config.
    if pair == Pair::Distro {
        files.push(PathBuf::from(pin("DEBIAN_CONFIG")?));
    }
    files.extend(
        pair.fragments(k)
            .iter()
            .map(|f| root.join("kernel/configs").join(format!("{f}.config"))),
    );
    files.push(
        cache
            .join(format!("src/linux-{}", pin("KERNEL_VERSION")?))
            .join(".sched_eevdf-series"),
    );
    Some(files)
}

/// Whether the build in `dir` was configured from the repository's current fragments and
/// patch series (and, for the distro pair, Debian's config): tools/build-kernel.sh stores
/// that hash in `.fragments` (a `--no-build` run may boot an image built from an older
/// series). None when an input or the stored hash is missing.
fn build_is_current(root: &Path, pair: Pair, k: Kernel, dir: &Path) -> Option<bool> {
    let files = config_inputs(root, &cache_dir(), pair, k)?;
    if !files.iter().all(|f| f.is_file()) {
        return None;
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg("cat \"$@\" | sha256sum | cut -c1-16")
        .arg("sh")
        .args(&files)
        .output()
        .ok()?;
    let stored = std::fs::read_to_string(dir.join(".fragments")).ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim() == stored.trim())
}

fn kernel_info(root: &Path, pair: Pair, k: Kernel) -> KernelInfo {
    let dir = cache_dir().join("build").join(pair.build(k));
    let config = std::fs::read_to_string(dir.join(".config")).ok();
    KernelInfo {
        kernel: k,
        image: dir.join("arch/x86/boot/bzImage").display().to_string(),
        config_sched_eevdf_rust: config
            .map(|c| c.lines().any(|l| l == "CONFIG_SCHED_EEVDF_RUST=y")),
        build_current: build_is_current(root, pair, k, &dir),
    }
}

struct Ctx<'a> {
    root: &'a Path,
    pair: Pair,
    dir: &'a Path,
    args: &'a Args,
    cells: &'a [Cell],
    boots: &'a [Boot],
    boots_per_kernel: u32,
    t0: Instant,
}

/// Boots `cx.boots[n]`: writes its guest script, runs eevdf-vm on it while following its
/// cells ([`progress`]), saves its output and parses it into the boot's outcomes.
fn run_boot(cx: &Ctx<'_>, n: usize, eta: &mut Eta) -> Result<BootRun> {
    let b = &cx.boots[n];
    let build = cx.pair.build(b.kernel);
    let stem = format!("boot-{:02}-{build}", n + 1);
    let script = cx.dir.join(format!("{stem}.sh"));
    std::fs::write(&script, plan::guest_script(b, cx.cells)).context("writing the guest script")?;
    let est: f64 = eta.boot(b, cx.cells, 0);
    let mut vm = Vm::spawn(&VmCommand {
        root: cx.root,
        build,
        cpus: b.cpus.unwrap_or(cx.args.cpus),
        mem_mib: cx.args.mem_mib,
        timeout_s: (est * 4.0) as u64 + 180,
        icount_shift: match cx.args.timing {
            report::Timing::Icount => Some(cx.args.icount_shift),
            report::Timing::Realtime => None,
        },
        log: cx.dir.join(format!("{stem}.console")),
        script: &script,
        perf: b.perf,
    })?;
    let label = BootLabel {
        n,
        boots: cx.boots.len(),
        build,
        // The builds' names, padded to the longest, keep the progress lines' columns.
        build_w: cx
            .boots
            .iter()
            .map(|b| cx.pair.build(b.kernel).len())
            .max()
            .unwrap_or(5),
        boots_per_kernel: cx.boots_per_kernel,
    };
    let mut progress = BootProgress::new(eta, cx.boots, cx.cells, label, cx.t0);
    let out = vm.read_stdout(|line| progress.line(line))?;
    let (status, err) = vm.wait()?;
    let wall_s = progress.finish();
    std::fs::write(cx.dir.join(format!("{stem}.out")), &out)?;
    let (info, mut outcomes) = parse::parse_boot(&out);
    readback::check_boot(cx.cells, &info, &mut outcomes);
    if !status.success() {
        eprintln!(
            "    boot {} ({build}) FAILED: eevdf-vm {status}; see {}\n{}",
            n + 1,
            cx.dir.join(format!("{stem}.console")).display(),
            err.lines()
                .filter(|l| l.contains("FAIL") || l.contains("error"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    Ok(BootRun {
        kernel: b.kernel,
        rep: b.rep,
        batch: b.batch,
        wall_s,
        exit: status.code(),
        info,
        outcomes,
    })
}

/// Boots `k` once to read its sched features and checks that it has every feature the
/// cells write: a kernel without one is an error that names it, before any cell runs.
fn preflight(
    root: &Path,
    pair: Pair,
    k: Kernel,
    cells: &[Cell],
    args: &Args,
    dir: &Path,
) -> Result<()> {
    let build = pair.build(k);
    let script = dir.join(format!("preflight-{build}.sh"));
    std::fs::write(
        &script,
        "#!/bin/sh
echo \"@@features $(cat /sys/kernel/debug/sched/features)\"\n",
    )?;
    eprintln!("==> eevdf-lab: checking the {build} kernel's sched features");
    let mut vm = Vm::spawn(&VmCommand {
        root,
        build,
        cpus: args.cpus,
        mem_mib: args.mem_mib,
        timeout_s: 180,
        icount_shift: None,
        log: dir.join(format!("preflight-{build}.console")),
        script: &script,
        perf: false,
    })?;
    let out = vm.read_stdout(|_| {})?;
    let (status, err) = vm.wait()?;
    let (info, _) = parse::parse_boot(&out);
    if !status.success() || info.features.is_empty() {
        bail!("the {build} kernel did not boot to read its features ({status}): {err}");
    }
    let missing = missing_features(cells, &info.features);
    if missing.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(f, ids)| format!("{f} (cells {})", ids.join(", ")))
        .collect();
    bail!(
        "the {build} kernel has no sched_feat {}: its features are `{}`. Build a kernel \
         with them (the kernel side of upstream's post-6.12 features), or check the pipeline with \
         --feature-stand-in NAME=OTHER",
        list.join("; "),
        info.features
    )
}

/// The features the cells need that `features` (the features file's line) lacks, each with
/// the IDs of the cells that need it.
fn missing_features(cells: &[Cell], features: &str) -> Vec<(String, Vec<String>)> {
    let has = |f: &str| {
        features
            .split_whitespace()
            .any(|t| t == f || t.strip_prefix("NO_") == Some(f))
    };
    let mut missing: Vec<(String, Vec<String>)> = Vec::new();
    for c in cells {
        for f in c.features.needs() {
            if has(f) {
                continue;
            }
            match missing.iter_mut().find(|(m, _)| m == f) {
                Some((_, ids)) => ids.push(c.id()),
                None => missing.push((f.to_string(), vec![c.id()])),
            }
        }
    }
    missing
}

/// The run's report, by its study, and whether every cell and boot succeeded.
fn finish(raw: &Raw, dir: &Path, results_page: Option<&Path>) -> Result<bool> {
    studies::finish(raw, dir, results_page)?;
    Ok(cells_ok(raw))
}

/// Says which cells failed; true when none did and every boot exited 0.
fn cells_ok(raw: &Raw) -> bool {
    let failed_cells: Vec<String> = raw
        .boots
        .iter()
        .flat_map(|b| b.outcomes.iter().map(move |o| (b, o)))
        .filter_map(|(b, o)| match &o.status {
            parse::Status::Failed(why) => {
                Some(format!("{} on {}: {why}", o.id, raw.pair.build(b.kernel)))
            }
            _ => None,
        })
        .collect();
    for f in &failed_cells {
        eprintln!("eevdf-lab: cell failed: {f}");
    }
    failed_cells.is_empty() && raw.boots.iter().all(|b| b.exit == Some(0))
}

fn main() -> std::process::ExitCode {
    match real_main() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("eevdf-lab: error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

impl std::ops::Deref for Args {
    type Target = Common;
    fn deref(&self) -> &Common {
        &self.common
    }
}

/// This run's command line as raw.json records it: `target/release/eevdf-lab` and its
/// arguments.
fn command_line() -> String {
    std::iter::once("target/release/eevdf-lab".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `eevdf-lab report RAW [RAW ...]`: the run's report again from its records, into its
/// directory; several runs' merged ([`merge::merge`]) into `merged/` in the last one's
/// directory, beside the merged record.
/// A new directory for a run's results under `base`, named `stamp`, or `stamp-2`, `stamp-3`,
/// ... when a run that started in the same second (two runs on one host, one a core) has
/// taken it: two runs never write into one directory.
fn fresh_dir(base: &Path, stamp: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(base).with_context(|| format!("creating {}", base.display()))?;
    let mut n = 1;
    loop {
        let dir = match n {
            1 => base.join(stamp),
            _ => base.join(format!("{stamp}-{n}")),
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
}

fn report_from_raws(paths: &[PathBuf], results_page: Option<&Path>) -> Result<bool> {
    let mut runs = Vec::new();
    for p in paths {
        let raw: Raw = serde_json::from_str(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| format!("parsing {}", p.display()))?;
        runs.push((p.display().to_string(), raw));
    }
    let last = paths.last().context("report needs a raw.json")?;
    let dir = last.parent().unwrap_or(Path::new("."));
    if paths.len() == 1 {
        let (_, mut raw) = runs.pop().context("report needs a raw.json")?;
        raw.merge_command = command_line();
        return finish(&raw, dir, results_page);
    }
    let raw = merge::merge(runs, &command_line())?;
    let dir = dir.join("merged");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("raw.json"), serde_json::to_string(&raw)?)?;
    eprintln!(
        "==> eevdf-lab: merged {} runs into {}",
        raw.merged.len(),
        dir.display()
    );
    finish(&raw, &dir, results_page)
}

fn real_main() -> Result<bool> {
    let args = match Args::from_cli(Cli::parse()) {
        Ok(a) => a,
        Err((p, page)) => return report_from_raws(&p, page.as_deref()),
    };
    let kind = args.kind;
    let boots_per_kernel = args.boots_per_kernel.unwrap_or(match kind {
        MatrixKind::Smoke | MatrixKind::NextSmoke | MatrixKind::SeedsSmoke => 1,
        MatrixKind::Next => 6,
        MatrixKind::Seeds => 3,
        MatrixKind::Quick => 5,
        MatrixKind::Full => 8,
        MatrixKind::Bar => main_matrix::BAR_BOOTS,
    });
    let smoke = matches!(
        kind,
        MatrixKind::Smoke | MatrixKind::NextSmoke | MatrixKind::SeedsSmoke
    );
    let inner_reps = args.inner_reps.unwrap_or(match kind {
        _ if smoke => 1,
        MatrixKind::Bar => main_matrix::BAR_INNER_REPS,
        _ => 2,
    });
    if boots_per_kernel == 0 || inner_reps == 0 || args.kernels.is_empty() {
        bail!("--boots-per-kernel, --inner-reps and --kernels must be non-empty");
    }
    let (pair, mut kernels) = plan::resolve_kernels(&args.kernels).map_err(anyhow::Error::msg)?;
    if kind.is_next() {
        // The features are the Rust core's: the stock kernel has none of them.
        kernels.retain(|&k| k == Kernel::Rust);
        if kernels.is_empty() {
            bail!(
                "next runs on the rust kernel only (its features are the Rust core's): \
                 --kernels rust or --kernels distro-rust"
            );
        }
    }
    let root = repo_root();
    let mut cells = studies::matrix(kind, &only_experiments(&args.only));
    restrict_shapes(&mut cells, &args.only, args.cpus)?;
    if cells.is_empty() {
        bail!("the matrix is empty (check --only)");
    }
    for x in &args.stand_ins {
        for c in &mut cells {
            c.features = c.features.with_stand_in(&x.feature, &x.written_as);
        }
    }
    let boots = plan::plan_boots(
        &cells,
        &kernels,
        boots_per_kernel,
        inner_reps,
        args.batch_budget_s as f64,
    );
    let mut eta = Eta::new(12.0);
    let est: f64 = boots.iter().map(|b| eta.boot(b, &cells, 0)).sum();
    eprintln!(
        "==> eevdf-lab: {kind:?} matrix: {} cells x {} kernels ({}), {} boots ({} per kernel x {} batches), {} runs per cell per boot; estimated {} once built",
        cells.len(),
        kernels.len(),
        kernels
            .iter()
            .map(|&k| format!("{} = {}", k.name(), pair.build(k)))
            .collect::<Vec<_>>()
            .join(", "),
        boots.len(),
        boots_per_kernel,
        boots.iter().map(|b| b.batch).max().unwrap_or(0) + 1,
        inner_reps,
        fmt_dur(est)
    );
    if args.dry_run {
        for (i, b) in boots.iter().enumerate() {
            println!(
                "boot {:>2}: {:<12} rep {} batch {}: {} cells x {}, {} vCPUs{}",
                i + 1,
                pair.build(b.kernel),
                b.rep + 1,
                b.batch + 1,
                b.cells.len(),
                b.inner_reps,
                b.cpus.unwrap_or(args.cpus),
                if b.perf { ", perf" } else { "" }
            );
        }
        for c in &cells {
            let f = &c.features;
            let tunables = f.tunables().iter().map(|t| t.write());
            let writes: Vec<String> = f.writes().iter().cloned().chain(tunables).collect();
            println!("  {:<28} [{}] {}", c.id(), writes.join(" "), c.command());
        }
        return Ok(true);
    }
    let t0 = Instant::now();
    if !args.no_build {
        build(&root, pair, &kernels, cells.iter().any(Cell::needs_perf))?;
        eprintln!(
            "==> eevdf-lab: built in {}",
            fmt_dur(t0.elapsed().as_secs_f64())
        );
    }
    let (started_utc, stamp) = utc_now();
    let base = args.out_dir.clone().unwrap_or_else(|| root.join("results"));
    let dir = fresh_dir(&base, &stamp)?;
    eprintln!("==> eevdf-lab: results in {}", dir.display());
    if kind.is_next() {
        for &k in &kernels {
            preflight(&root, pair, k, &cells, &args, &dir)?;
        }
    }
    let mut raw = Raw {
        started_utc,
        command: command_line(),
        matrix: kind,
        boots_per_kernel,
        inner_reps,
        cpus: args.cpus,
        timing: match args.timing {
            report::Timing::Icount => Some(report::TimingInfo::Icount {
                shift: args.icount_shift,
            }),
            report::Timing::Realtime => Some(report::TimingInfo::Realtime),
        },
        confidence: 0.95,
        bootstrap_resamples: args.bootstrap_resamples,
        seed: args.seed,
        cells: cells.clone(),
        pair,
        kernels: kernels
            .iter()
            .map(|&k| kernel_info(&root, pair, k))
            .collect(),
        boots: Vec::new(),
        stand_ins: args.stand_ins.clone(),
        insnprof: Vec::new(),
        merged: Vec::new(),
        merge_command: String::new(),
    };
    let t_run = Instant::now();
    let cx = Ctx {
        root: &root,
        pair,
        dir: &dir,
        args: &args,
        cells: &cells,
        boots: &boots,
        boots_per_kernel,
        t0: t_run,
    };
    for n in 0..boots.len() {
        eprintln!(
            "==> eevdf-lab: boot {}/{}: {} kernel ({}), rep {}, batch {}",
            n + 1,
            boots.len(),
            boots[n].kernel.name(),
            pair.build(boots[n].kernel),
            boots[n].rep + 1,
            boots[n].batch + 1
        );
        let run = run_boot(&cx, n, &mut eta)?;
        raw.boots.push(run);
        // Partial results survive an interrupted run.
        std::fs::write(dir.join("raw.json"), serde_json::to_string(&raw)?)?;
    }
    eprintln!(
        "==> eevdf-lab: ran {} boots in {}",
        boots.len(),
        fmt_dur(t_run.elapsed().as_secs_f64())
    );
    // The scheduler's instructions per switch, in the lab's own setting (icount, 1 vCPU).
    if kind == MatrixKind::Bar
        && !args.skip_insnprof
        && args.cpus == 1
        && matches!(args.timing, report::Timing::Icount)
    {
        for &k in &kernels {
            match insnprof::profile(&root, &cache_dir(), pair, k) {
                Ok(p) => raw.insnprof.push(p),
                Err(e) => eprintln!(
                    "eevdf-lab: insnprof of the {} kernel failed: {e:#}",
                    k.name()
                ),
            }
        }
        std::fs::write(dir.join("raw.json"), serde_json::to_string(&raw)?)?;
    }
    std::io::stderr().flush()?;
    finish(&raw, &dir, args.results_page.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_started_in_one_second_get_their_own_directories() {
        let base = std::env::temp_dir().join(format!("eevdf-lab-fresh-{}", std::process::id()));
        let dirs: Vec<PathBuf> = (0..3)
            .map(|_| fresh_dir(&base, "20261204-150453").unwrap())
            .collect();
        let names: Vec<&str> = dirs
            .iter()
            .map(|d| d.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["20261204-150453", "20261204-150453-2", "20261204-150453-3"]
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn utc_format() {
        let (a, b) = utc_now();
        assert_eq!(a.len(), 19);
        assert_eq!(b.len(), 15);
        assert!(a.starts_with("20"));
    }

    /// The run that `eevdf-lab ARGS` asks for (an error for `report`, or a bad line).
    fn parse_args(args: &[&str]) -> Result<Args, String> {
        let argv = std::iter::once("eevdf-lab").chain(args.iter().copied());
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        Args::from_cli(cli).map_err(|(p, _)| {
            let p: Vec<String> = p.iter().map(|p| p.display().to_string()).collect();
            format!("report {}", p.join(" "))
        })
    }

    /// [`parse_args`] of `line` split at blanks.
    fn parse(line: &str) -> Result<Args, String> {
        parse_args(&line.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn cli_parses() {
        let a = parse("run --only latency,scale --kernels stock").unwrap();
        assert_eq!(
            only_experiments(&a.only),
            [Experiment::Latency, Experiment::Scale]
        );
        assert!(parse("run --quick --full").is_err());
        assert!(parse("run --only nope").is_err());
        assert!(parse("run --kernels debug").is_err());
        // No study named: an error, not a default.
        assert!(parse("").is_err());
        // The old mode flags are gone.
        assert!(parse("--bar").is_err());
        // --kernels names one pair; a mix parses item by item, and resolving it is the
        // error (exit 2, before any build).
        let pair_of = |line: &str| plan::resolve_kernels(&parse(line).unwrap().kernels);
        use Kernel::{Rust, Stock};
        for (line, pair, kernels) in [
            ("run", Pair::Tiny, &[Rust, Stock][..]),
            ("run --kernels distro", Pair::Distro, &[Rust, Stock]),
            ("run --kernels distro-stock", Pair::Distro, &[Stock]),
            ("run --only scale --kernels stock", Pair::Tiny, &[Stock]),
        ] {
            assert_eq!(pair_of(line), Ok((pair, kernels.to_vec())), "{line}");
        }
        let e = pair_of("run --kernels rust,distro-stock").unwrap_err();
        assert!(e.contains("mixes the tiny pair (rust) with the distro pair (distro-stock)"));
    }

    #[test]
    fn cli_studies() {
        let kind = |line: &str| parse(line).map(|a| a.kind);
        assert_eq!(kind("next").unwrap(), MatrixKind::Next);
        assert_eq!(kind("next --smoke").unwrap(), MatrixKind::NextSmoke);
        assert_eq!(kind("run --smoke").unwrap(), MatrixKind::Smoke);
        assert_eq!(kind("run").unwrap(), MatrixKind::Quick);
        assert_eq!(kind("run --full").unwrap(), MatrixKind::Full);
        assert_eq!(kind("bar").unwrap(), MatrixKind::Bar);
        assert_eq!(kind("seeds").unwrap(), MatrixKind::Seeds);
        assert_eq!(kind("seeds --smoke").unwrap(), MatrixKind::SeedsSmoke);
        // A study's own flags belong to it alone.
        assert!(kind("bar --quick").is_err());
        assert!(kind("next --full").is_err());
        assert!(kind("run --skip-insnprof").is_err());
        assert!(kind("run --feature-stand-in A=B").is_err());
        assert!(parse("bar --skip-insnprof").unwrap().skip_insnprof);
        let a = parse(
            "next --feature-stand-in NEXT_BUDDY_EEVDF=NEXT_BUDDY --only \
             next_buddy_eevdf,PROTECT_AT_PICK --markdown Documentation/reports/next.md",
        )
        .unwrap();
        assert_eq!(a.stand_ins[0].written_as, "NEXT_BUDDY");
        assert_eq!(
            only_experiments(&a.only),
            [
                Experiment::Next(next::NextFeature::NextBuddyEevdf),
                Experiment::Next(next::NextFeature::ProtectAtPick)
            ]
        );
        assert_eq!(
            a.results_page.as_deref(),
            Some(Path::new("Documentation/reports/next.md"))
        );
        assert!(parse("next --feature-stand-in a=b").is_err());
        // `report` names its raw.json, or several to merge; none is an error.
        for line in ["report x/raw.json", "report a/raw.json b/raw.json"] {
            assert_eq!(parse(line).unwrap_err(), line);
        }
        assert!(parse("report").unwrap_err().contains("required"));
    }

    /// `--only EXP@Ncpu` keeps the experiment's cells on N vCPUs; a bad shape, or one the
    /// experiment has no cell on, is an error that says so.
    #[test]
    fn only_takes_a_guest_shape() {
        use crate::verdict::has;
        let a = parse("seeds --only seed000@2cpu").unwrap();
        assert_eq!(a.only[0].cpus, Some(2));
        let cells_of = |only: &[Only], cpus: u32| {
            let mut c = studies::matrix(MatrixKind::Seeds, &only_experiments(only));
            restrict_shapes(&mut c, only, cpus).map(|()| c)
        };
        let two = cells_of(&a.only, 1).unwrap();
        assert_eq!(two.len(), 9);
        assert!(two
            .iter()
            .all(|c| c.experiment == Experiment::Seed(0) && c.cpus == Some(2)));
        assert!(two[0].command().contains("hackbench -g 2 -l 10400"));
        // The rest of the study: seed 000 at 1 vCPU, every other seed whole.
        let a = parse("seeds --only seed000@1cpu,seed001,seed002,seed003,seed004").unwrap();
        let rest = cells_of(&a.only, 1).unwrap();
        let all = cells_of(&[], 1).unwrap();
        assert_eq!(rest.len() + two.len(), all.len());
        assert!(rest
            .iter()
            .all(|c| c.experiment != Experiment::Seed(0) || c.cpus.is_none()));
        // Both shapes named: both kept.
        let a = parse("seeds --only seed000@1cpu,seed000@2cpu").unwrap();
        assert_eq!(cells_of(&a.only, 1).unwrap().len(), 18);
        // At --cpus 2, the cells without their own count run on 2 too, and none on 1.
        let a2 = parse("seeds --only seed000@2cpu").unwrap();
        assert_eq!(cells_of(&a2.only, 2).unwrap().len(), 18);
        assert!(cells_of(&a.only, 2).is_err());
        // No cell on that shape.
        let a = parse("seeds --only seed000@4cpu").unwrap();
        let e = cells_of(&a.only, 1).unwrap_err().to_string();
        has(&e, "--only seed000@4cpu");
        has(&e, "1, 2 vCPUs");
        // An experiment of another study.
        let a = parse("seeds --only latency@2cpu,seed001").unwrap();
        let e = cells_of(&a.only, 1).unwrap_err().to_string();
        assert_eq!(
            e,
            "--only latency@2cpu: this matrix has no cell of that experiment"
        );
        // Bad shapes.
        for bad in "seed000@2 seed000@0cpu seed000@twocpu seed000@2cpus".split(' ') {
            let e = parse_args(&["seeds", "--only", bad]).unwrap_err();
            assert!(e.contains("bad guest shape"), "{bad}: {e}");
        }
        assert!(parse("seeds --only seed009@2cpu")
            .unwrap_err()
            .contains("unknown experiment 'seed009'"));
        // A feature set: the shape's cells of that set alone; the three sets' parts make
        // the shape whole.
        let mut parts = 0;
        for set in ["EEVDF", "EVDF", "BIAS_ELIGIBLE"] {
            let item = format!("seed000@2cpu/{set}");
            let a = parse_args(&["seeds", "--only", &item]).unwrap();
            assert_eq!(a.only[0].set.as_deref(), Some(set));
            let part = cells_of(&a.only, 1).unwrap();
            assert_eq!(part.len(), 3, "{item}");
            assert!(part
                .iter()
                .all(|c| c.cpus == Some(2) && c.features.name() == set));
            parts += part.len();
        }
        assert_eq!(parts, two.len());
        // Other experiments stay whole beside a set item.
        let a = parse("seeds --only seed000/EVDF,seed001").unwrap();
        let kept = cells_of(&a.only, 1).unwrap();
        assert!(kept.iter().any(|c| c.experiment == Experiment::Seed(1)));
        assert!(kept
            .iter()
            .filter(|c| c.experiment == Experiment::Seed(0))
            .all(|c| c.features.name() == "EVDF"));
        // A set the experiment does not have, and a set and shape that meet in no cell.
        let a = parse("seeds --only seed000@2cpu/CFS").unwrap();
        let e = cells_of(&a.only, 1).unwrap_err().to_string();
        has(&e, "no feature set 'CFS'");
        has(&e, "BIAS_ELIGIBLE, EEVDF, EVDF");
        for bad in ["seed000/", "seed000@2cpu/ EVDF"] {
            let e = parse_args(&["seeds", "--only", bad]).unwrap_err();
            assert!(e.contains("bad feature set"), "{bad}: {e}");
        }
    }

    #[test]
    fn missing_features_are_named_with_their_cells() {
        let cells = studies::matrix(MatrixKind::NextSmoke, &[]);
        // 6.12.117 with patch 0002: none of the four.
        let old = "PLACE_LAG RUN_TO_PARITY PREEMPT_SHORT ELIGIBLE NO_BIAS_ELIGIBLE NO_NEXT_BUDDY";
        let m = missing_features(&cells, old);
        let names: Vec<&str> = m.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            names,
            [
                "RUN_TO_PARITY_MIN_SLICE",
                "LAG_CLAMP_MAX_SLICE",
                "NEXT_BUDDY_EEVDF",
                "PROTECT_AT_PICK"
            ]
        );
        assert!(m[0].1.contains(&"rt-short-among-long/RTP/off".to_string()));
        // Shown off (NO_X) counts as present; so does on.
        let new = format!(
            "{old} NO_RUN_TO_PARITY_MIN_SLICE LAG_CLAMP_MAX_SLICE NO_NEXT_BUDDY_EEVDF \
             NO_PROTECT_AT_PICK"
        );
        assert!(missing_features(&cells, &new).is_empty());
        // A prefix is not the feature.
        let m = missing_features(&cells, "RUN_TO_PARITY NEXT_BUDDY PLACE_LAG PREEMPT_SHORT");
        assert!(m.iter().any(|(f, _)| f == "NEXT_BUDDY_EEVDF"));
    }

    #[test]
    fn config_inputs_follow_build_kernel_sh() {
        // A repository whose tools/lib.sh pins the versions, as the real one does.
        let dir = std::env::temp_dir().join(format!("eevdf-lab-pins-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("tools")).unwrap();
        std::fs::write(
            dir.join("tools/lib.sh"),
            "KERNEL_VERSION=6.99.1\nDEBIAN_CONFIG=/d/config.xz\n",
        )
        .unwrap();
        let (root, cache) = (dir.as_path(), Path::new("/c"));
        let series = "/c/src/linux-6.99.1/.sched_eevdf-series";
        let r = |f: &str| format!("{}/kernel/configs/{f}", dir.display());
        let names = |pair, k| -> Vec<String> {
            config_inputs(root, cache, pair, k)
                .unwrap()
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        let (deb, series) = ("/d/config.xz".to_string(), series.to_string());
        let tiny = [r("base.config"), r("eevdf.config"), series.clone()];
        assert_eq!(names(Pair::Tiny, Kernel::Rust), tiny);
        let distro = |f: &str| [deb.clone(), r("distro.config"), r(f), series.clone()];
        assert_eq!(names(Pair::Distro, Kernel::Rust), distro("eevdf.config"));
        assert_eq!(names(Pair::Distro, Kernel::Stock), distro("stock.config"));
        // Without the pins there are no inputs to compare, and no claim of currency.
        std::fs::write(dir.join("tools/lib.sh"), "KSRC=$HOME\n").unwrap();
        assert_eq!(config_inputs(root, cache, Pair::Tiny, Kernel::Rust), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
