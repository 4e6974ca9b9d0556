#![doc = include_str!("help.txt")]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use eevdf_sim::coreglue::{EntitySpec, SeedMode};
use eevdf_sim::scenario::{Scenario, HZ_CHOICES, NSEC_PER_MSEC};
use eevdf_sim::seed;
use eevdf_sim::sim::{RunOptions, Sim};

#[derive(Parser, Debug)]
#[command(
    name = "eevdf-sim",
    version,
    about = "EEVDF simulator on the sched_eevdf core: the LKML thread's program, and a kernel-faithful mode",
    long_about = include_str!("help.txt"),
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(flatten)]
    seed: SeedArgs,

    #[command(subcommand)]
    command: Option<Command>,
}

/// The seed program's flags.
#[derive(Args, Debug)]
struct SeedArgs {
    /// Add an entity: initial vruntime (vtu), weight (1024 = nice 0) and request (real time
    /// units). Letters A, B, C, ... in order; at most 8. The request sets both the deadline
    /// distance ⌊1024·r/w⌋ and, for -b, the bias: a long request makes an entity eligible
    /// earlier under BIAS_ELIGIBLE.
    #[arg(short = 'e', long = "entity", value_name = "V,W,R")]
    entities: Vec<EntitySpec>,

    /// Keep stepping while the V a step printed is below this many vtu. Larger values show
    /// more of the schedule; the picture's ruler ends at 43, past which the run stops with
    /// "Whoopsie! out of time".
    #[arg(
        short = 'v',
        long = "v-limit-vtu",
        value_name = "V_LIM",
        default_value_t = 20
    )]
    v_limit_vtu: u64,

    /// No eligibility test (EVDF, ELIGIBLE off): the earliest deadline always wins. Fewer
    /// switches for short requests, at the price of worse lag bounds and long stalls behind
    /// long requests.
    #[arg(short = 'n', long = "no-eligible")]
    no_eligible: bool,

    /// BIAS_ELIGIBLE as the core defines it: the eligibility threshold moves right by one
    /// average request (W·v_i ≤ Σ w_j·v_j + 1024·Σ r_j). Eases short requests in, but one
    /// large request lifts the threshold for everybody.
    #[arg(short = 'b', long = "bias-eligible")]
    bias_eligible: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario file (TOML) through the core as the kernel would, on one CPU.
    Run(RunArgs),
}

#[derive(Args, Debug)]
struct RunArgs {
    /// The scenario file.
    scenario: PathBuf,

    /// Print the report as JSON on standard output instead of the table. Machine-readable,
    /// same numbers; the table is easier to read.
    #[arg(long)]
    json: bool,

    /// Set (NAME) or clear (NO_NAME) a feature after the file's [features]; repeatable.
    /// Handy for A/B runs of one file, but the file no longer says everything about the run.
    #[arg(long = "feature", value_name = "NAME|NO_NAME")]
    features: Vec<String>,

    /// Override the file's simulated time, in ms. Longer runs give steadier shares and
    /// rarer tail latencies, and cost proportionally more wall time.
    #[arg(long)]
    duration_ms: Option<u64>,

    /// Override the file's base slice (sysctl_sched_base_slice), in µs. Longer slices mean
    /// fewer switches and longer waits.
    #[arg(long)]
    base_slice_us: Option<u64>,

    /// Override the file's tick rate, in Hz (100, 250, 300 or 1000). A faster tick notices
    /// used-up slices sooner, at more events per simulated second.
    #[arg(long)]
    hz: Option<u32>,

    /// Override the file's PRNG seed. Different seeds show how much of a result is luck.
    #[arg(long)]
    seed: Option<u64>,

    /// Write the timeline picture as SVG to this path (vector, for the docs).
    #[arg(long, value_name = "PATH")]
    svg_out: Option<PathBuf>,

    /// Write the timeline picture as PNG to this path (a raster for quick viewing).
    #[arg(long, value_name = "PATH")]
    png_out: Option<PathBuf>,

    /// Where the picture's window starts, in ms of simulated time.
    #[arg(long, default_value_t = 0)]
    picture_from_ms: u64,

    /// How long the picture's window is, in ms. Wider windows show more but squeeze short
    /// runs below one pixel.
    #[arg(long, default_value_t = 40)]
    picture_len_ms: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("eevdf-sim: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None => run_seed(&cli.seed),
        Some(Command::Run(a)) => run_scenario(&a),
    }
}

fn run_seed(a: &SeedArgs) -> Result<ExitCode> {
    let mode = SeedMode {
        eligible: !a.no_eligible,
        bias: a.bias_eligible,
    };
    let (out, _end) = seed::run(&a.entities, a.v_limit_vtu, mode)?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes()).context("writing output")?;
    stdout.flush().context("writing output")?;
    Ok(ExitCode::SUCCESS)
}

fn run_scenario(a: &RunArgs) -> Result<ExitCode> {
    let mut sc = Scenario::load(&a.scenario)?;
    if let Some(d) = a.duration_ms {
        sc.duration_ms = d;
    }
    if let Some(b) = a.base_slice_us {
        sc.base_slice_us = b;
    }
    if let Some(h) = a.hz {
        if !HZ_CHOICES.contains(&h) {
            bail!("--hz {h}: must be one of {HZ_CHOICES:?}");
        }
        sc.hz = h;
    }
    if let Some(s) = a.seed {
        sc.seed = s;
    }
    // Re-validate after the overrides.
    let sc = Scenario::parse(&toml::to_string(&sc).context("re-serialising the scenario")?)
        .context("after the command-line overrides")?;
    let mut overrides = Vec::new();
    for f in &a.features {
        let (name, on) = match f.strip_prefix("NO_") {
            Some(n) => (n.to_string(), false),
            None => (f.clone(), true),
        };
        overrides.push((name, on));
    }
    let want_picture = a.svg_out.is_some() || a.png_out.is_some();
    if want_picture && a.picture_len_ms == 0 {
        bail!("--picture-len-ms must be > 0 when a picture is asked for");
    }
    let opts = RunOptions {
        picture_from_ns: a.picture_from_ms * NSEC_PER_MSEC,
        picture_len_ns: if want_picture {
            a.picture_len_ms * NSEC_PER_MSEC
        } else {
            0
        },
        feature_overrides: overrides,
        check_invariants: false,
    };
    let res = Sim::run(&sc, &opts)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&res.report).context("JSON")?
        );
    } else {
        print!("{}", res.report.table());
    }
    if let Some(mut tl) = res.timeline {
        tl.notes = eevdf_sim::sim::picture_notes(&res.report);
        let pic = eevdf_sim::render::timeline(&tl);
        if let Some(p) = &a.svg_out {
            std::fs::write(p, pic.to_svg()).with_context(|| format!("writing {}", p.display()))?;
        }
        if let Some(p) = &a.png_out {
            std::fs::write(p, pic.to_png()?).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
