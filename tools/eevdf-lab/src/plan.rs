//! The experiment matrix (kernel × feature set × workload), how its cells are batched into
//! boots, and the guest script each boot runs.

use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    Rust,
    Stock,
}

impl Kernel {
    /// The role's name: what the tables' columns and the ratios (rust/stock) call it.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Rust => "rust",
            Kernel::Stock => "stock",
        }
    }
}

/// Which pair of builds plays the two roles: the same tree configured two ways, once with
/// `CONFIG_SCHED_EEVDF_RUST` (the eevdf fragment) and once without (the stock fragment).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pair {
    /// tinyconfig + the base fragment (HZ_1000, full preemption): builds `rust` and
    /// `stock`. Runs from before the pair was recorded used it.
    #[default]
    Tiny,
    /// Debian's 6.12 config (`config.amd64_none_amd64`, modules off) + the distro fragment:
    /// builds `distro` and `distro-stock`.
    Distro,
}

impl Pair {
    pub fn name(self) -> &'static str {
        match self {
            Pair::Tiny => "tiny",
            Pair::Distro => "distro",
        }
    }

    /// For the report, after the name: which configuration, and the builds it names.
    pub fn describe(self) -> &'static str {
        match self {
            Pair::Tiny => {
                "tinyconfig + the base fragment: HZ_1000, full preemption; \
                 builds `rust` and `stock`"
            }
            Pair::Distro => {
                "Debian's 6.12 config, config.amd64_none_amd64 without modules, + the \
                 distro fragment: the kernel users boot, HZ_250, voluntary preemption; builds \
                 `distro` and `distro-stock`"
            }
        }
    }

    /// The build that plays `role` in this pair: the name tools/build-kernel.sh, the build
    /// directory and `eevdf-vm --kernel` know it by.
    pub fn build(self, role: Kernel) -> &'static str {
        match (self, role) {
            (Pair::Tiny, Kernel::Rust) => "rust",
            (Pair::Tiny, Kernel::Stock) => "stock",
            (Pair::Distro, Kernel::Rust) => "distro",
            (Pair::Distro, Kernel::Stock) => "distro-stock",
        }
    }

    /// Whether tools/build-kernel.sh starts the pair's builds from Debian's config (else
    /// from tinyconfig).
    pub fn starts_from_debian(self) -> bool {
        self == Pair::Distro
    }

    /// The config fragments (kernel/configs/NAME.config) of `role`'s build, in
    /// tools/build-kernel.sh's order.
    pub fn fragments(self, role: Kernel) -> [&'static str; 2] {
        let first = match self {
            Pair::Tiny => "base",
            Pair::Distro => "distro",
        };
        match role {
            Kernel::Rust => [first, "eevdf"],
            Kernel::Stock => [first, "stock"],
        }
    }
}

/// One item of `--kernels`: a pair and the roles it runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KernelChoice {
    pub pair: Pair,
    pub roles: &'static [Kernel],
}

impl KernelChoice {
    /// `rust`, `stock` (the tiny pair's builds), `distro` (both roles on the distro pair),
    /// `distro-rust`, `distro-stock`.
    pub fn parse(s: &str) -> Result<KernelChoice, String> {
        let (pair, roles): (Pair, &'static [Kernel]) = match s {
            "rust" => (Pair::Tiny, &[Kernel::Rust]),
            "stock" => (Pair::Tiny, &[Kernel::Stock]),
            "distro" => (Pair::Distro, &[Kernel::Rust, Kernel::Stock]),
            "distro-rust" => (Pair::Distro, &[Kernel::Rust]),
            "distro-stock" => (Pair::Distro, &[Kernel::Stock]),
            _ => {
                return Err(format!(
                    "unknown kernel '{s}' (rust, stock, distro, distro-rust, distro-stock)"
                ))
            }
        };
        Ok(KernelChoice { pair, roles })
    }
}

/// The pair and the roles of a whole `--kernels` list: each role once, in the order given.
/// Every item must name the same pair: a ratio across configurations would measure the
/// configurations, not the scheduler.
pub fn resolve_kernels(choices: &[KernelChoice]) -> Result<(Pair, Vec<Kernel>), String> {
    let Some(first) = choices.first() else {
        return Err("--kernels is empty".into());
    };
    if let Some(other) = choices.iter().find(|c| c.pair != first.pair) {
        let (tiny, distro) = if first.pair == Pair::Tiny {
            (first, other)
        } else {
            (other, first)
        };
        let names = |c: &KernelChoice| {
            c.roles
                .iter()
                .map(|&k| c.pair.build(k))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(format!(
            "--kernels mixes the tiny pair ({}) with the distro pair ({}): the two roles \
             must be builds of one configuration (--kernels rust,stock or --kernels distro)",
            names(tiny),
            names(distro)
        ));
    }
    let mut roles: Vec<Kernel> = Vec::new();
    for &k in choices.iter().flat_map(|c| c.roles) {
        if !roles.contains(&k) {
            roles.push(k);
        }
    }
    Ok((first.pair, roles))
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Experiment {
    Latency,
    Throughput,
    Fairness,
    Scale,
}

impl Experiment {
    pub const ALL: [Experiment; 4] = [
        Experiment::Latency,
        Experiment::Throughput,
        Experiment::Fairness,
        Experiment::Scale,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Experiment::Latency => "Latency against throughput (seed 000)",
            Experiment::Throughput => "Throughput",
            Experiment::Fairness => "Fairness",
            Experiment::Scale => "Scale",
        }
    }
}

/// The sched_feat settings a cell runs under, written to /sys/kernel/debug/sched/features.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FeatureSet {
    /// The defaults.
    Eevdf,
    /// NO_ELIGIBLE: pick by deadline alone (the seeds' "EVDF").
    Evdf,
    /// BIAS_ELIGIBLE.
    Bias,
    NoRunToParity,
    NoPlaceLag,
}

impl FeatureSet {
    pub const ALL: [FeatureSet; 5] = [
        FeatureSet::Eevdf,
        FeatureSet::Evdf,
        FeatureSet::Bias,
        FeatureSet::NoRunToParity,
        FeatureSet::NoPlaceLag,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Eevdf => "EEVDF",
            FeatureSet::Evdf => "EVDF",
            FeatureSet::Bias => "BIAS_ELIGIBLE",
            FeatureSet::NoRunToParity => "NO_RUN_TO_PARITY",
            FeatureSet::NoPlaceLag => "NO_PLACE_LAG",
        }
    }

    /// The writes to the features file, and the feature each needs the kernel to have.
    pub fn writes(self) -> Option<(&'static str, &'static str)> {
        match self {
            FeatureSet::Eevdf => None,
            FeatureSet::Evdf => Some(("NO_ELIGIBLE", "ELIGIBLE")),
            FeatureSet::Bias => Some(("BIAS_ELIGIBLE", "BIAS_ELIGIBLE")),
            FeatureSet::NoRunToParity => Some(("NO_RUN_TO_PARITY", "RUN_TO_PARITY")),
            FeatureSet::NoPlaceLag => Some(("NO_PLACE_LAG", "PLACE_LAG")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ShareKind {
    /// nice -4 against nice 0.
    NiceSplit,
    /// N equal nice-0 hogs.
    Equal(u32),
    /// Hogs in nested cgroups with different cpu.weight values.
    Cgroups,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Workload {
    /// hackbench in the background, the periodic waker with its slice at `slice_x` times
    /// the base slice.
    Latency {
        slice_x: f64,
        hb_groups: u32,
        hb_loops: u32,
    },
    Hackbench {
        threads: bool,
        pipe: bool,
        groups: u32,
        loops: u32,
    },
    PingPong {
        duration_ms: u64,
    },
    Share {
        kind: ShareKind,
        duration_ms: u64,
    },
    Scale {
        tasks: u32,
        duration_ms: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub experiment: Experiment,
    pub features: FeatureSet,
    pub workload: Workload,
}

impl Cell {
    fn new(experiment: Experiment, features: FeatureSet, workload: Workload) -> Cell {
        Cell {
            experiment,
            features,
            workload,
        }
    }

    /// The workload's name without the feature set: what a table row is labelled with.
    pub fn label(&self) -> String {
        match &self.workload {
            Workload::Latency {
                slice_x,
                hb_groups,
                hb_loops,
            } => format!("slice={slice_x}x (hackbench -g {hb_groups} -l {hb_loops})"),
            Workload::Hackbench {
                threads,
                pipe,
                groups,
                ..
            } => format!(
                "hackbench {} {} -g {groups}",
                if *threads { "threads" } else { "processes" },
                if *pipe { "pipe" } else { "socket" }
            ),
            Workload::PingPong { .. } => "pipe ping-pong (1 CPU)".into(),
            Workload::Share { kind, .. } => match kind {
                ShareKind::NiceSplit => "nice -4 vs 0 (1 CPU)".into(),
                ShareKind::Equal(n) => format!("{n} equal hogs (1 CPU)"),
                ShareKind::Cgroups => "nested cgroups a=200{x=100,y=300} b=100".into(),
            },
            Workload::Scale { tasks, .. } => format!("{tasks} yielding tasks (1 CPU)"),
        }
    }

    /// Unique in a matrix, without spaces: the guest prints it and the parser keys on it.
    pub fn id(&self) -> String {
        let w = match &self.workload {
            Workload::Latency { slice_x, .. } => format!("lat-{slice_x}x"),
            Workload::Hackbench {
                threads,
                pipe,
                groups,
                ..
            } => format!(
                "hb-{}-{}-g{groups}",
                if *threads { "thread" } else { "process" },
                if *pipe { "pipe" } else { "socket" }
            ),
            Workload::PingPong { .. } => "pingpong".into(),
            Workload::Share { kind, .. } => match kind {
                ShareKind::NiceSplit => "share-nice".into(),
                ShareKind::Equal(n) => format!("share-equal{n}"),
                ShareKind::Cgroups => "share-cgroups".into(),
            },
            Workload::Scale { tasks, .. } => format!("scale-{tasks}"),
        };
        format!("{w}/{}", self.features.name())
    }

    /// The guest command line.
    pub fn command(&self) -> String {
        match &self.workload {
            Workload::Latency {
                slice_x,
                hb_groups,
                hb_loops,
            } => format!(
                "eevdf-waker --interval-us 1000 --slice-base-x {slice_x} --duration-ms 600000 -- \
                 hackbench -g {hb_groups} -l {hb_loops}"
            ),
            Workload::Hackbench {
                threads,
                pipe,
                groups,
                loops,
            } => format!(
                "hackbench {}{}-g {groups} -l {loops}",
                if *threads { "-T " } else { "-P " },
                if *pipe { "-p " } else { "" }
            ),
            Workload::PingPong { duration_ms } => {
                format!("eevdf-pingpong --cpu 0 --duration-ms {duration_ms}")
            }
            Workload::Share { kind, duration_ms } => {
                let hogs = match kind {
                    ShareKind::NiceSplit => "--hog -4 --hog 0".to_string(),
                    ShareKind::Equal(n) => vec!["--hog 0"; *n as usize].join(" "),
                    ShareKind::Cgroups => "--group a=200 --group b=100 --group a/x=100 \
                                           --group a/y=300 --hog 0@a/x --hog 0@a/y --hog 0@b"
                        .to_string(),
                };
                format!("eevdf-share --cpu 0 --duration-ms {duration_ms} {hogs}")
            }
            Workload::Scale { tasks, duration_ms } => {
                format!(
                    "eevdf-scale --cpu 0 --mode yield --tasks {tasks} --duration-ms {duration_ms}"
                )
            }
        }
    }

    /// A first guess of the cell's time under TCG on a 2-core host, seconds; the ETA
    /// replaces it with measured times as cells complete.
    pub fn estimate_s(&self) -> f64 {
        match &self.workload {
            // Measured (TCG, a host busy with kernel builds): hackbench -g 2 -l 70 with the waker
            // takes 1.0-1.5 s; a whole quick boot of 34 cell runs took about 30 s.
            Workload::Latency {
                hb_groups,
                hb_loops,
                ..
            } => 0.3 + 0.008 * (*hb_groups * *hb_loops) as f64,
            Workload::Hackbench { groups, loops, .. } => 0.2 + 0.007 * (*groups * *loops) as f64,
            Workload::PingPong { duration_ms } => 0.2 + *duration_ms as f64 / 1000.0,
            Workload::Share { duration_ms, .. } => 0.4 + *duration_ms as f64 / 1000.0,
            Workload::Scale { tasks, duration_ms } => {
                0.3 + *duration_ms as f64 / 1000.0 + 0.002 * *tasks as f64
            }
        }
    }

    /// Whether the cell runs with schedstats on (`kernel.sched_schedstats=1`): the scale
    /// cells report the CPU's `sched_count` from /proc/schedstat. Every other cell runs with
    /// them off, the kernels' default, because schedstats cost both kernels instructions on
    /// every switch and make the Rust kernel also classify and count its decisions
    /// (Documentation/debugfs.md); the waker's run delay is sched_info, kept either way.
    pub fn schedstats(&self) -> bool {
        matches!(self.workload, Workload::Scale { .. })
    }

    /// Hard limit for the cell inside the guest, seconds.
    pub fn timeout_s(&self) -> u64 {
        (self.estimate_s() * 20.0).ceil() as u64 + 30
    }
}

/// Which matrix to run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum MatrixKind {
    /// A few cells, one boot per kernel: checks the whole pipeline in about a minute.
    Smoke,
    /// The cut-down matrix: every experiment, fewer parameters, shorter runs (< 10 min).
    Quick,
    /// Everything the issue lists.
    Full,
}

/// The cells of a matrix, in run order, limited to `only` experiments (all when empty).
pub fn matrix(kind: MatrixKind, only: &[Experiment]) -> Vec<Cell> {
    use Experiment as E;
    use FeatureSet as F;
    let mut cells = Vec::new();
    let (lat_sets, slices, hb): (&[F], &[f64], (u32, u32)) = match kind {
        MatrixKind::Smoke => (&[F::Eevdf], &[1.0], (1, 20)),
        MatrixKind::Quick => (&[F::Eevdf, F::Evdf, F::Bias], &[10.0, 1.0, 0.1], (2, 70)),
        MatrixKind::Full => (&F::ALL, &[10.0, 1.0, 0.1], (4, 60)),
    };
    for &slice_x in slices {
        for &f in lat_sets {
            cells.push(Cell::new(
                E::Latency,
                f,
                Workload::Latency {
                    slice_x,
                    hb_groups: hb.0,
                    hb_loops: hb.1,
                },
            ));
        }
    }
    let hackbench: Vec<(bool, bool, u32, u32)> = match kind {
        MatrixKind::Smoke => vec![(false, true, 1, 20)],
        MatrixKind::Quick => vec![(false, true, 2, 70), (true, false, 2, 70)],
        MatrixKind::Full => {
            let mut v = Vec::new();
            for threads in [false, true] {
                for pipe in [true, false] {
                    for g in [1, 2, 4, 8] {
                        v.push((threads, pipe, g, 200 / g));
                    }
                }
            }
            v
        }
    };
    for (threads, pipe, groups, loops) in hackbench {
        cells.push(Cell::new(
            E::Throughput,
            F::Eevdf,
            Workload::Hackbench {
                threads,
                pipe,
                groups,
                loops,
            },
        ));
    }
    let (pp_ms, share_ms, scale_ms) = match kind {
        MatrixKind::Smoke => (300, 300, 300),
        MatrixKind::Quick => (600, 600, 600),
        MatrixKind::Full => (2000, 2000, 1000),
    };
    cells.push(Cell::new(
        E::Throughput,
        F::Eevdf,
        Workload::PingPong { duration_ms: pp_ms },
    ));
    let shares: Vec<(ShareKind, F)> = match kind {
        MatrixKind::Smoke => vec![(ShareKind::NiceSplit, F::Eevdf)],
        MatrixKind::Quick => vec![
            (ShareKind::NiceSplit, F::Eevdf),
            (ShareKind::Equal(3), F::Eevdf),
            (ShareKind::Cgroups, F::Eevdf),
        ],
        MatrixKind::Full => vec![
            (ShareKind::NiceSplit, F::Eevdf),
            (ShareKind::NiceSplit, F::Evdf),
            (ShareKind::Equal(4), F::Eevdf),
            (ShareKind::Cgroups, F::Eevdf),
        ],
    };
    for (k, f) in shares {
        cells.push(Cell::new(
            E::Fairness,
            f,
            Workload::Share {
                kind: k,
                duration_ms: share_ms,
            },
        ));
    }
    let tasks: &[u32] = match kind {
        MatrixKind::Smoke => &[10],
        MatrixKind::Quick => &[10, 100],
        MatrixKind::Full => &[10, 100, 1000],
    };
    for &n in tasks {
        cells.push(Cell::new(
            E::Scale,
            F::Eevdf,
            Workload::Scale {
                tasks: n,
                duration_ms: scale_ms,
            },
        ));
    }
    cells.retain(|c| only.is_empty() || only.contains(&c.experiment));
    cells
}

/// One VM boot: a kernel, which repetition, and the cells it runs (indices into the matrix,
/// each run `inner_reps` times in a row of the whole batch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Boot {
    pub kernel: Kernel,
    pub rep: u32,
    pub batch: usize,
    pub cells: Vec<usize>,
    pub inner_reps: u32,
}

/// Split the matrix into the fewest batches of about `budget_s` estimated seconds or less
/// (a batch may overrun by one cell), then order the boots batch by batch, repetition by repetition,
/// alternating the kernels inside each repetition: A B A B ...
pub fn plan_boots(
    cells: &[Cell],
    kernels: &[Kernel],
    boots_per_kernel: u32,
    inner_reps: u32,
    budget_s: f64,
) -> Vec<Boot> {
    // As few batches as the budget allows, filled evenly (not greedily, which would leave a
    // last batch of one cell that still costs a boot per kernel and repetition).
    let cost = |c: &Cell| c.estimate_s() * inner_reps as f64;
    let total: f64 = cells.iter().map(cost).sum();
    let n_batches = (total / budget_s.max(1.0)).ceil().max(1.0);
    let target = total / n_batches;
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut cur = Vec::new();
    let mut cur_s = 0.0;
    for (i, c) in cells.iter().enumerate() {
        cur.push(i);
        cur_s += cost(c);
        if cur_s >= target - 1e-9 && (batches.len() as f64) < n_batches - 1.0 {
            batches.push(std::mem::take(&mut cur));
            cur_s = 0.0;
        }
    }
    if !cur.is_empty() {
        batches.push(cur);
    }
    let mut boots = Vec::new();
    for (b, batch) in batches.iter().enumerate() {
        for rep in 0..boots_per_kernel {
            for &k in kernels {
                boots.push(Boot {
                    kernel: k,
                    rep,
                    batch: b,
                    cells: batch.clone(),
                    inner_reps,
                });
            }
        }
    }
    boots
}

/// Helpers every boot's script starts with.
const PRELUDE: &str = r#"#!/bin/sh
# Generated by eevdf-lab: one boot's cells. Protocol lines start with @@.
F=/sys/kernel/debug/sched/features
echo "@@info uname=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) base_slice_ns=$(cat /sys/kernel/debug/sched/base_slice_ns)"
echo "@@features $(cat $F)"
ORIG=$(cat $F)
# has NAME: the kernel has sched_feat NAME (shown as NAME or NO_NAME).
has() { for f in $(cat $F); do [ "$f" = "$1" ] || [ "$f" = "NO_$1" ] && return 0; done; return 1; }
restore() { for f in $ORIG; do echo "$f" > $F 2>/dev/null; done; }
SS=/proc/sys/kernel/sched_schedstats
echo 0 > $SS
"#;

/// The guest script for one boot.
pub fn guest_script(boot: &Boot, cells: &[Cell]) -> String {
    let mut s = String::from(PRELUDE);
    for r in 0..boot.inner_reps {
        for &i in &boot.cells {
            let c = &cells[i];
            let id = c.id();
            s.push_str(&format!("echo \"@@cell {id} begin rep={r}\"\n"));
            let mut run = format!(
                "timeout -s KILL {} {} 2>&1; echo \"@@cell {id} end rc=$?\"\n",
                c.timeout_s(),
                c.command()
            );
            if c.schedstats() {
                run = format!("echo 1 > $SS\n{run}echo 0 > $SS\n");
            }
            match c.features.writes() {
                None => s.push_str(&run),
                Some((write, need)) => s.push_str(&format!(
                    "if has {need}; then\n  echo {write} > $F || echo \"@@cell {id} end rc=99 (writing {write} failed)\"\n  {run}  restore\nelse\n  echo \"@@cell {id} unavailable {need}\"\nfi\n"
                )),
            }
        }
    }
    s.push_str("echo @@done\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernels(list: &[&str]) -> Result<(Pair, Vec<Kernel>), String> {
        let choices = list
            .iter()
            .map(|s| KernelChoice::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        resolve_kernels(&choices)
    }

    #[test]
    fn kernel_lists_resolve_to_one_pair() {
        use Kernel::{Rust, Stock};
        assert_eq!(
            kernels(&["rust", "stock"]),
            Ok((Pair::Tiny, vec![Rust, Stock]))
        );
        assert_eq!(kernels(&["stock"]), Ok((Pair::Tiny, vec![Stock])));
        assert_eq!(kernels(&["distro"]), Ok((Pair::Distro, vec![Rust, Stock])));
        assert_eq!(kernels(&["distro-stock"]), Ok((Pair::Distro, vec![Stock])));
        assert_eq!(
            kernels(&["distro-stock", "distro-rust", "distro"]),
            Ok((Pair::Distro, vec![Stock, Rust])),
            "each role once, first mention first"
        );
        assert_eq!(
            kernels(&["rust", "stock", "rust"]),
            Ok((Pair::Tiny, vec![Rust, Stock]))
        );
        for mix in [
            &["rust", "distro"][..],
            &["distro-rust", "stock"],
            &["distro", "rust", "stock"],
        ] {
            let e = kernels(mix).unwrap_err();
            assert!(e.contains("mixes the tiny pair"), "{mix:?}: {e}");
        }
        assert_eq!(
            kernels(&["distro-rust", "stock"]).unwrap_err(),
            "--kernels mixes the tiny pair (stock) with the distro pair (distro): the two \
             roles must be builds of one configuration (--kernels rust,stock or --kernels distro)"
        );
        assert!(kernels(&["debug"])
            .unwrap_err()
            .contains("unknown kernel 'debug'"));
        assert!(kernels(&[]).is_err());
    }

    #[test]
    fn builds_per_role_and_pair() {
        use Kernel::{Rust, Stock};
        assert_eq!(Pair::Tiny.build(Rust), "rust");
        assert_eq!(Pair::Tiny.build(Stock), "stock");
        assert_eq!(Pair::Distro.build(Rust), "distro");
        assert_eq!(Pair::Distro.build(Stock), "distro-stock");
        // tools/build-kernel.sh's configurations.
        assert_eq!(Pair::Tiny.fragments(Rust), ["base", "eevdf"]);
        assert_eq!(Pair::Tiny.fragments(Stock), ["base", "stock"]);
        assert_eq!(Pair::Distro.fragments(Rust), ["distro", "eevdf"]);
        assert_eq!(Pair::Distro.fragments(Stock), ["distro", "stock"]);
        assert!(Pair::Distro.starts_from_debian() && !Pair::Tiny.starts_from_debian());
        assert_eq!(Pair::default(), Pair::Tiny);
        assert_eq!(serde_json::to_string(&Pair::Distro).unwrap(), "\"distro\"");
    }

    #[test]
    fn ids_are_unique_and_spaceless() {
        for kind in [MatrixKind::Smoke, MatrixKind::Quick, MatrixKind::Full] {
            let cells = matrix(kind, &[]);
            let mut ids: Vec<String> = cells.iter().map(Cell::id).collect();
            assert!(ids.iter().all(|i| !i.contains(' ')));
            let n = ids.len();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), n, "{kind:?}");
        }
    }

    #[test]
    fn matrices_cover_the_issue() {
        let full = matrix(MatrixKind::Full, &[]);
        let lat = full
            .iter()
            .filter(|c| c.experiment == Experiment::Latency)
            .count();
        assert_eq!(lat, 5 * 3, "5 feature sets x 3 slices");
        assert!(full
            .iter()
            .any(|c| matches!(c.workload, Workload::Scale { tasks: 1000, .. })));
        let hb = full
            .iter()
            .filter(|c| matches!(c.workload, Workload::Hackbench { .. }))
            .count();
        assert_eq!(hb, 2 * 2 * 4);
        let quick = matrix(MatrixKind::Quick, &[]);
        for e in Experiment::ALL {
            assert!(quick.iter().any(|c| c.experiment == e), "{e:?}");
        }
        let only = matrix(MatrixKind::Quick, &[Experiment::Scale]);
        assert!(only.iter().all(|c| c.experiment == Experiment::Scale) && !only.is_empty());
    }

    #[test]
    fn quick_fits_its_budget() {
        // Under 10 minutes: 10 boots x (cells x reps + ~15 s boot) with the rust kernel running
        // every latency cell (once ELIGIBLE and BIAS_ELIGIBLE exist).
        let cells = matrix(MatrixKind::Quick, &[]);
        let per_boot: f64 = cells.iter().map(Cell::estimate_s).sum::<f64>() * 2.0 + 15.0;
        assert!(per_boot * 10.0 < 600.0, "{per_boot}");
    }

    #[test]
    fn boots_alternate_kernels_and_respect_the_budget() {
        let cells = matrix(MatrixKind::Full, &[]);
        let boots = plan_boots(&cells, &[Kernel::Rust, Kernel::Stock], 3, 2, 120.0);
        let batches = boots.iter().map(|b| b.batch).max().unwrap() + 1;
        assert!(batches > 1);
        assert_eq!(boots.len(), batches * 3 * 2);
        for pair in boots.chunks(2) {
            assert_eq!(pair[0].kernel, Kernel::Rust);
            assert_eq!(pair[1].kernel, Kernel::Stock);
            assert_eq!(pair[0].cells, pair[1].cells);
        }
        // Every cell runs in exactly one batch.
        let mut seen = vec![0; cells.len()];
        for b in boots
            .iter()
            .filter(|b| b.rep == 0 && b.kernel == Kernel::Rust)
        {
            let t: f64 = b.cells.iter().map(|&i| cells[i].estimate_s() * 2.0).sum();
            let biggest = b
                .cells
                .iter()
                .map(|&i| cells[i].estimate_s() * 2.0)
                .fold(0.0, f64::max);
            assert!(t <= 120.0 + biggest, "{t}");
            assert!(t >= 30.0, "batches are balanced, not greedy: {t}");
            for &i in &b.cells {
                seen[i] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn script_guards_features_and_brackets_cells() {
        let cells = matrix(MatrixKind::Quick, &[Experiment::Latency]);
        let boots = plan_boots(&cells, &[Kernel::Stock], 1, 2, 1e9);
        let s = guest_script(&boots[0], &cells);
        let evdf = cells
            .iter()
            .find(|c| c.features == FeatureSet::Evdf)
            .unwrap();
        assert!(s.contains(&format!("@@cell {} unavailable ELIGIBLE", evdf.id())));
        assert!(s.contains("if has ELIGIBLE; then\n  echo NO_ELIGIBLE > $F"));
        assert_eq!(s.matches(" begin rep=").count(), cells.len() * 2);
        assert!(s.contains("--slice-base-x 0.1 "));
        assert!(s.ends_with("echo @@done\n"));
    }
}
