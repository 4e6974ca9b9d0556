// SPDX-License-Identifier: GPL-2.0

//! `fair-c-diff`: drives 6.12.117's own fair.c EEVDF code and the Rust core with the same
//! random operation sequences and compares them after every step. Exits 1 on a
//! divergence, after printing the first one with a shrunk reproducer.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use fair_c_diff::ops::{self, Rng};
use fair_c_diff::pair::Class;
use fair_c_diff::{run_sequence, shrink, Source};

/// fair.c as the judge of the Rust EEVDF core (Documentation/c-parity.md).
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Sequences to run. Sequence k starts with the k-th combination (mod 512) of 6.12's
    /// nine EEVDF toggles, so 512 sequences start from each once; more sequences find
    /// rarer paths and take proportionally longer (about 1 ms a sequence of 300 small
    /// operations, far more with the occasional 1,000 tasks).
    #[arg(long, default_value_t = 2000)]
    seqs: u64,
    /// Seed of the random sequences: the same seed gives the same sequences.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random operations per sequence, after its tasks are forked. Longer sequences reach
    /// states further from the start (large spreads, stale stashes) at the same cost per
    /// operation.
    #[arg(long, default_value_t = 300)]
    ops_per_seq: usize,
    /// Replays the shrinker may spend on the first divergence. More finds a shorter
    /// reproducer, at the cost of a replay each.
    #[arg(long, default_value_t = 3000)]
    shrink_replays: usize,
    /// Replay one input of the fuzz target (tests/fair-c-diff/fuzz, e.g. a crash
    /// artifact) instead of random sequences: prints its operations and, on a divergence,
    /// the shrunk reproducer.
    #[arg(long, value_name = "FILE")]
    replay_fuzz_input: Option<std::path::PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(path) = &args.replay_fuzz_input {
        let data = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
        let (setup, ops) = fair_c_diff::decode(&data);
        let r = run_sequence(&setup, Source::Replay(&ops))?;
        println!("{setup}");
        for (i, op) in r.ops.iter().enumerate() {
            println!("  {i:>4}  {op}");
        }
        let Some((step, m)) = r.divergence else {
            println!(
                "fair-c-diff: 1 sequence, {} operations, 0 divergences",
                r.ops.len()
            );
            return Ok(());
        };
        println!(
            "fair-c-diff: 1 sequence, {} operations, 1 divergences",
            r.ops.len()
        );
        report(&setup, &r.ops[..=step], &m, args.shrink_replays)?;
        std::process::exit(1);
    }
    let t0 = Instant::now();
    let mut rng = Rng::new(args.seed);
    let (mut ops_total, mut divergences) = (0u64, 0u64);
    let (mut ties, mut stale_min_slice) = (0u64, 0u64);
    let (mut overflow_ends, mut rel_ends) = (0u64, 0u64);
    let mut first = None;
    let mut kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut cov = fair_c_diff::pair::Coverage::default();
    let mut last_progress = Instant::now();
    for k in 0..args.seqs {
        let mut seq_rng = Rng::new(rng.next_u64());
        let setup = ops::setup(k, &mut seq_rng, 1000);
        let r = run_sequence(&setup, Source::Random(&mut seq_rng, args.ops_per_seq))
            .with_context(|| format!("sequence {k}"))?;
        ops_total += r.ops.len() as u64;
        for op in &r.ops {
            *kinds.entry(op.kind()).or_default() += 1;
        }
        cov.add(&r.cov);
        ties += r.ties;
        stale_min_slice += r.stale_min_slice;
        match r.ended_by {
            Some(Class::Overflow) => overflow_ends += 1,
            Some(Class::StaleRelDeadline) => rel_ends += 1,
            _ => {}
        }
        if let Some((step, m)) = r.divergence {
            divergences += 1;
            if first.is_none() {
                first = Some((k, setup, r.ops[..=step].to_vec(), m));
            }
        }
        if last_progress.elapsed().as_secs() >= 5 {
            eprintln!(
                "fair-c-diff: {}/{} sequences, {ops_total} operations, {divergences} divergences, {:.0} s",
                k + 1,
                args.seqs,
                t0.elapsed().as_secs_f64()
            );
            last_progress = Instant::now();
        }
    }
    println!(
        "fair-c-diff: {} sequences, {ops_total} operations, {divergences} divergences",
        args.seqs
    );
    println!("  pinned differences (Documentation/c-parity.md):");
    println!(
        "    steps and decisions where the picks differed only by a tie (stock's taken): {ties}"
    );
    println!("    steps where stock's min_slice was stale after a rotation: {stale_min_slice}");
    println!(
        "    sequences ended where fair.c's 64-bit eligibility product overflowed: {overflow_ends}"
    );
    println!(
        "    sequences ended on a stale rel_deadline (PLACE_REL_DEADLINE switched off): {rel_ends}"
    );
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!("  operations: {}", kinds.join(", "));
    println!(
        "  compared: {} wakeup decisions ({} preempted, {} with a reschedule pending), {} picks \
         ({} finishing a delayed dequeue), {} delayed sleeps, {} steps with current protected; \
         largest |v - V| of a queued entity: 2^{:.1} ns",
        cov.preempted + cov.not_preempted,
        cov.preempted,
        cov.pending,
        cov.picks,
        cov.blocked,
        cov.delayed,
        cov.protected,
        (cov.max_spread.max(1) as f64).log2()
    );
    println!(
        "  seed {}, {} operations a sequence, {:.1} s",
        args.seed,
        args.ops_per_seq,
        t0.elapsed().as_secs_f64()
    );
    let Some((k, setup, ops, m)) = first else {
        return Ok(());
    };
    println!("\nfirst divergence: sequence {k}");
    report(&setup, &ops, &m, args.shrink_replays)?;
    std::process::exit(1);
}

/// The divergence at the last of `ops`, and its shrunk reproducer.
fn report(
    setup: &ops::Setup,
    ops: &[ops::Op],
    m: &fair_c_diff::pair::Mismatch,
    shrink_replays: usize,
) -> anyhow::Result<()> {
    println!("operation {}: {}", ops.len() - 1, ops[ops.len() - 1]);
    println!("  {}: fair.c {} / Rust core {}", m.what, m.c, m.rust);
    let short = shrink(setup, ops, &m.what, shrink_replays)?;
    println!(
        "shrunk reproducer ({} of {} operations) from: {setup}",
        short.len(),
        ops.len()
    );
    for (i, op) in short.iter().enumerate() {
        println!("  {i:>4}  {op}");
    }
    let last = run_sequence(setup, Source::Replay(&short))?;
    if let Some((_, m)) = last.divergence {
        println!(
            "  after the last: {}: fair.c {} / Rust core {}",
            m.what, m.c, m.rust
        );
    }
    Ok(())
}
