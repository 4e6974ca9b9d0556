//! The experiment matrix (kernel × feature set × workload), how its cells are batched into
//! boots, and the guest script each boot runs. The `next` matrix's cells are in
//! `next.rs`.

use crate::feature::{valid_write, NextFeature};
use crate::stats::first_seen;
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

    /// The pair's HZ: the base fragment's 1000, Debian's 250.
    pub fn hz(self) -> u64 {
        match self {
            Pair::Tiny => 1000,
            Pair::Distro => 250,
        }
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
    // Each pair's first item, for the error.
    let first_of = |p| choices.iter().find(|c| c.pair == p);
    if let (Some(tiny), Some(distro)) = (first_of(Pair::Tiny), first_of(Pair::Distro)) {
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
    let roles = first_seen(choices.iter().flat_map(|c| c.roles).copied());
    Ok((first.pair, roles))
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Experiment {
    Latency,
    Throughput,
    Fairness,
    Scale,
    /// `next`: one of upstream's post-6.12 EEVDF features, off against on.
    Next(NextFeature),
    /// `seeds`: seed N's experiment (1 to 4; seed 000's is the latency experiment).
    Seed(u8),
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
            Experiment::Next(f) => f.name(),
            Experiment::Seed(0) => {
                "Seed 000: a waker's slice against hackbench, EEVDF against EVDF (LKML)"
            }
            Experiment::Seed(1) => "Seed 001: a partial-slice sleeper beside hogs (FreeBSD ULE)",
            Experiment::Seed(2) => {
                "Seed 002: massive_intr against an interactive load (EEVDF, EVDF)"
            }
            Experiment::Seed(3) => "Seed 003: a long sleeper that wakes on another CPU",
            Experiment::Seed(4) => {
                "Seed 004: a fork-heavy job at 100% and 300% load, cyclictest beside it"
            }
            Experiment::Seed(_) => "Seed (unknown)",
        }
    }
}

/// The sched_feat settings a cell runs under: writes to /sys/kernel/debug/sched/features,
/// in order, on top of the boot's defaults, which are restored after the cell. Before the
/// writes the guest checks that the kernel has each feature they name.
///
/// # Invariants
///
/// Every write is `NAME` or `NO_NAME` with NAME of `A-Z`, `0-9` and `_` only: it goes into a
/// shell script unquoted.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "FeatureSetRepr")]
pub struct FeatureSet {
    /// What the tables and the cell IDs call it (`EEVDF`, `EVDF`, `on`, `RTP/off`): no
    /// blanks.
    name: String,
    /// `NAME` sets a feature, `NO_NAME` clears it.
    writes: Vec<String>,
    /// Scheduler tunables the set also writes, after the features: a file of
    /// /sys/kernel/debug/sched (`migration_cost_ns`, `base_slice_ns`) and its value. The
    /// guest reads each back into the run's record, and a run that did not hold them fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tunables: Vec<Tunable>,
}

/// One scheduler tunable of a feature set: a file of /sys/kernel/debug/sched and the value
/// the cell writes to it.
///
/// # Invariants
///
/// `file` is of `a-z` and `_` only: it goes into a shell script unquoted.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Tunable {
    pub file: String,
    pub value: u64,
}

impl Tunable {
    /// `file=value`, as the guest writes and reads it back.
    pub fn write(&self) -> String {
        format!("{}={}", self.file, self.value)
    }
}

/// Whether `name` can name a feature set: not empty, no blanks.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(char::is_whitespace)
}

/// Whether `f` can name a tunable: `a-z` and `_`, not empty.
fn valid_tunable(f: &str) -> bool {
    !f.is_empty() && f.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// How raw.json spells a feature set: a name and its writes, or (runs from before the
/// writes were kept) the name of one of the seeds' five sets.
#[derive(Deserialize)]
#[serde(untagged)]
enum FeatureSetRepr {
    Writes {
        name: String,
        writes: Vec<String>,
        #[serde(default)]
        tunables: Vec<Tunable>,
    },
    Seed(SeedSet),
}

/// The five feature sets of the seeds' latency experiment, as raw.json named them when the
/// feature set was an enum, in [`FeatureSet::seeds`]'s order.
#[derive(Copy, Clone, Deserialize)]
enum SeedSet {
    Eevdf,
    Evdf,
    Bias,
    NoRunToParity,
    NoPlaceLag,
}

impl From<FeatureSetRepr> for FeatureSet {
    fn from(r: FeatureSetRepr) -> FeatureSet {
        match r {
            // A write that breaks the invariant (a hand-edited raw.json) is dropped and
            // shows in the name only: the report reads a raw.json, it never runs one.
            FeatureSetRepr::Writes {
                name,
                writes,
                tunables,
            } => FeatureSet {
                name,
                writes: writes.into_iter().filter(|w| valid_write(w)).collect(),
                tunables: tunables
                    .into_iter()
                    .filter(|t| valid_tunable(&t.file))
                    .collect(),
            },
            // SeedSet lists the five in FeatureSet::seeds()'s order.
            FeatureSetRepr::Seed(s) => FeatureSet::seeds()[s as usize].clone(),
        }
    }
}

impl FeatureSet {
    /// A feature set called `name` that makes `writes`. Panics on a write that is not
    /// `NAME`/`NO_NAME` or a name with blanks: the lab's own tables are the only callers
    /// with untrusted strings, and they check with [`valid_write`] first.
    pub fn new(name: &str, writes: &[&str]) -> FeatureSet {
        assert!(valid_name(name), "{name:?}");
        assert!(writes.iter().all(|w| valid_write(w)), "{writes:?}");
        // INVARIANT: checked just above.
        FeatureSet {
            name: name.to_string(),
            writes: writes.iter().map(|w| w.to_string()).collect(),
            tunables: Vec::new(),
        }
    }

    /// The same set, renamed `name`, that also writes `value` to the scheduler tunable
    /// `file` (of /sys/kernel/debug/sched). Panics on a file name that is not `a-z_`: the
    /// lab's own tables are the callers.
    pub fn with_tunable(mut self, name: &str, file: &str, value: u64) -> FeatureSet {
        assert!(valid_tunable(file), "{file:?}");
        assert!(valid_name(name), "{name:?}");
        self.name = name.to_string();
        // INVARIANT: checked just above.
        self.tunables.push(Tunable {
            file: file.to_string(),
            value,
        });
        self
    }

    /// The tunables the set writes after its features, in order.
    pub fn tunables(&self) -> &[Tunable] {
        &self.tunables
    }

    /// The base slice the set writes, ns (None: the kernel's default).
    pub fn base_slice_ns(&self) -> Option<u64> {
        let t = self.tunables.iter().find(|t| t.file == "base_slice_ns")?;
        Some(t.value)
    }

    /// The defaults.
    pub fn eevdf() -> FeatureSet {
        FeatureSet::new("EEVDF", &[])
    }

    /// NO_ELIGIBLE: pick by deadline alone (the seeds' "EVDF").
    pub fn evdf() -> FeatureSet {
        FeatureSet::new("EVDF", &["NO_ELIGIBLE"])
    }

    /// BIAS_ELIGIBLE.
    pub fn bias() -> FeatureSet {
        FeatureSet::new("BIAS_ELIGIBLE", &["BIAS_ELIGIBLE"])
    }

    pub fn no_run_to_parity() -> FeatureSet {
        FeatureSet::new("NO_RUN_TO_PARITY", &["NO_RUN_TO_PARITY"])
    }

    /// The seeds' five sets, in the latency tables' order.
    pub fn seeds() -> [FeatureSet; 5] {
        [
            FeatureSet::eevdf(),
            FeatureSet::evdf(),
            FeatureSet::bias(),
            FeatureSet::no_run_to_parity(),
            FeatureSet::new("NO_PLACE_LAG", &["NO_PLACE_LAG"]),
        ]
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The writes, in order.
    pub fn writes(&self) -> &[String] {
        &self.writes
    }

    /// The features the kernel must have for the writes: each write without `NO_`, once,
    /// in order.
    pub fn needs(&self) -> Vec<&str> {
        first_seen(
            self.writes
                .iter()
                .map(|w| w.strip_prefix("NO_").unwrap_or(w)),
        )
    }

    /// The same set with feature `from` written as `to` instead (`to` may itself be
    /// `NO_X`, which inverts: `from` on becomes X off). For checking the pipeline on a
    /// kernel that lacks `from`; the name stays, the report says what ran instead.
    pub fn with_stand_in(&self, from: &str, to: &str) -> FeatureSet {
        let (to_name, inverted) = to.strip_prefix("NO_").map_or((to, false), |n| (n, true));
        let writes = self
            .writes
            .iter()
            .map(|w| {
                let (name, on) = w
                    .strip_prefix("NO_")
                    .map_or((w.as_str(), true), |n| (n, false));
                if name != from {
                    w.clone()
                } else if on != inverted {
                    to_name.to_string()
                } else {
                    format!("NO_{to_name}")
                }
            })
            .collect();
        FeatureSet {
            writes,
            ..self.clone()
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
    /// The periodic waker with its slice at `slice_x` times the base slice, against
    /// hackbench in the background (`hogs` none; `hb_groups`, `hb_loops`), or pinned to CPU
    /// 0 beside nice-0 hogs there (`hogs`; the hackbench fields 0).
    ///
    /// The two are the waker's two regimes. Against hackbench's 40 tasks a group
    /// its share of a CPU is about 1/41 of a CPU per group and vCPU, less than the ~4% it
    /// needs (its run per wakeup over its 1 ms period), so it leaves every sleep with
    /// negative lag and waits for V to catch up whatever its slice: fairness, not the slice,
    /// sets its latency. Beside two hogs its share is 1/3, far more than it needs, and its
    /// slice decides how soon a wakeup preempts them.
    ///
    /// `load_slice_x`: the load's slice, a multiple of the base slice (1: the base slice
    /// itself), set in the load before its exec (`eevdf-waker --load-slice-base-x`). `None`
    /// in runs from before the load-slice fix, whose load inherited the waker's slice across fork.
    Latency {
        slice_x: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load_slice_x: Option<f64>,
        hb_groups: u32,
        hb_loops: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hogs: Option<Hogs>,
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
    /// eevdf-rtapp: periodic tasks, sleepers and hogs on CPU 0.
    RtApp {
        /// A short name for the ID (`short-among-long`).
        case: String,
        /// The case in words, for the tables.
        what: String,
        /// `--task` specs.
        tasks: Vec<String>,
        /// `--hog` specs.
        hogs: Vec<String>,
        duration_ms: u64,
    },
    /// eevdf-msgr: messengers waking workers by futex.
    Msgr {
        messengers: u32,
        workers: u32,
        work_us: u64,
        duration_ms: u64,
    },
    /// eevdf-storm: a target hog changed every 200 µs while it runs, against a competitor.
    Storm {
        change: StormChange,
        duration_ms: u64,
    },
    /// Seed 002: eevdf-mixed on CPU 0 (`compute` massive_intr-shaped processes, 8 ms run /
    /// 1 ms sleep, against `interactive` ones that burn `interactive_burst_us` of CPU time a
    /// [`MIXED_FRAME_US`] frame) under `perf sched record`; the guest prints `perf sched
    /// latency` and the first `timehist_lines` lines of `perf sched timehist` (`@@perf`
    /// lines).
    ///
    /// `interactive_burst_us`: `None` in runs from before the load was a dimension, whose
    /// interactive tasks burned eevdf-mixed's default, [`MIXED_LEGACY_BURST_US`], and whose
    /// outcomes carry the ID without the load ([`MixedLoad`]).
    Mixed {
        compute: u32,
        interactive: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interactive_burst_us: Option<u64>,
        duration_ms: u64,
        timehist_lines: u32,
    },
    /// Seed 003: eevdf-migrate's sleeper, moved by affinity from CPU 0 to CPU `to` while
    /// it sleeps `sleep_ms` (a hog on each, at `hog_nice`), `rounds` times; its share is
    /// measured over the `after_ms` after each wakeup (500 in runs from before it was
    /// kept). Nice-19 hogs (weight 15) run V ahead 68 times faster than real time.
    Migrate {
        to: u32,
        rounds: u32,
        sleep_ms: u64,
        #[serde(default = "migrate_after_ms_default")]
        after_ms: u64,
        #[serde(default)]
        hog_nice: i32,
    },
    /// Seed 003: hackbench, with eevdf-migrate's unpinned sleeper beside it for
    /// `sleeper_rounds` rounds (`--move natural`), or alone (0).
    MigrateHackbench {
        groups: u32,
        loops: u32,
        sleeper_rounds: u32,
    },
    /// Seed 004: eevdf-forkjob's `jobs` slots over `files` files at `nice`, with
    /// `cyclictest --policy=other` beside it on CPU 0 (stopped when the job ends); with no
    /// jobs, cyclictest alone for as long (the idle baseline).
    ForkJob {
        jobs: u32,
        files: u32,
        #[serde(default)]
        nice: i32,
    },
    /// Seed 001's own case: eevdf-pipejob, a CPU-bound pipe consumer on CPU 1 fed by a
    /// producer on CPU 0 (`mib` MiB), timed alone and then beside the hogs `hogs` on CPU 1
    /// (an eevdf-pipejob `--hog` spec: `nice=19`, `count=4`), the consumer at its
    /// `consumer_slice_us` (0: the base slice).
    PipeJob {
        hogs: String,
        consumer_slice_us: u64,
        mib: u64,
    },
}

/// A pipe-job cell's hogs in words and as an ID part: `one nice 19 hog` / `n19`, `4
/// nice-0 hogs` / `h4`.
pub fn pipejob_hogs(spec: &str) -> (String, String) {
    let field = |k: &str| {
        spec.split(',')
            .find_map(|f| f.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
    };
    let count = field("count")
        .and_then(|c| c.parse::<u32>().ok())
        .unwrap_or(1);
    let nice = field("nice")
        .and_then(|c| c.parse::<i32>().ok())
        .unwrap_or(0);
    let words = match (count, nice) {
        (1, n) => format!("one nice {n} hog"),
        (c, n) => format!("{c} nice {n} hogs"),
    };
    let id = if nice != 0 {
        format!("n{nice}x{count}")
    } else {
        format!("h{count}")
    };
    (words, id)
}

/// eevdf-mixed's frame, µs (`--frame-us`: 60 frames a second).
pub const MIXED_FRAME_US: u64 = 16_667;

/// eevdf-mixed's `--burst-us` default, the seed 002 cells' interactive burst before it was a
/// dimension: 12% of a CPU a task.
pub const MIXED_LEGACY_BURST_US: u64 = 2000;

/// A seed 002 cell's interactive load against its fair share.
///
/// On one CPU with `compute + interactive` nice-0 tasks, every task's fair share is
/// `1 / (compute + interactive)` of the CPU; an interactive task needs `burst / frame` of
/// it. Within 10% of the share the load is *near* it: the frames then need what fairness
/// gives, and the lag each frame's wakeup carries decides how late it starts.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MixedLoad {
    /// An interactive task's need, % of a CPU.
    pub need_pct: f64,
    /// Its fair share, % of a CPU.
    pub share_pct: f64,
}

/// Where a [`MixedLoad`] stands against its share.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Against {
    Under,
    Near,
    Over,
}

impl Against {
    /// `under`, `near`, `over`.
    pub fn word(self) -> &'static str {
        match self {
            Against::Under => "under",
            Against::Near => "near",
            Against::Over => "over",
        }
    }
}

impl MixedLoad {
    /// The load of `interactive` tasks burning `burst_us` a frame beside `compute` ones.
    pub fn new(compute: u32, interactive: u32, burst_us: u64) -> MixedLoad {
        MixedLoad {
            need_pct: 100.0 * burst_us as f64 / MIXED_FRAME_US as f64,
            share_pct: 100.0 / (compute + interactive).max(1) as f64,
        }
    }

    /// The burst, µs a frame, that makes the need `x` times the share (rounded to the µs).
    pub fn burst_us_at(compute: u32, interactive: u32, x: f64) -> u64 {
        (MIXED_FRAME_US as f64 * x / (compute + interactive).max(1) as f64).round() as u64
    }

    /// Under, near (within 10%) or over the share.
    pub fn against(&self) -> Against {
        let r = self.need_pct / self.share_pct;
        if r < 0.9 {
            Against::Under
        } else if r > 1.1 {
            Against::Over
        } else {
            Against::Near
        }
    }

    /// `interactive 20% (near its share)`, for labels and tables.
    pub fn name(&self) -> String {
        format!(
            "interactive {:.0}% ({} its share)",
            self.need_pct,
            self.against().word()
        )
    }

    /// `near20pct`, for IDs.
    pub fn id(&self) -> String {
        format!("{}{:.0}pct", self.against().word(), self.need_pct)
    }
}

/// A seed 002 cell's load: `None` for other workloads.
pub fn mixed_load(w: &Workload) -> Option<MixedLoad> {
    match *w {
        Workload::Mixed {
            compute,
            interactive,
            interactive_burst_us,
            ..
        } => Some(MixedLoad::new(
            compute,
            interactive,
            interactive_burst_us.unwrap_or(MIXED_LEGACY_BURST_US),
        )),
        _ => None,
    }
}

/// A latency cell's slices as its name says them: `waker 0.1x, load 1x`; for a run from
/// before the load-slice fix (`load` None), whose load inherited the waker's slice, `waker 0.1x, load
/// 0.1x (inherited)`. A cell whose two slices are equal is uniform, and so named.
pub fn slices_name(waker_x: f64, load_x: Option<f64>) -> String {
    match load_x {
        Some(l) => format!("waker {waker_x}x, load {l}x"),
        None => format!("waker {waker_x}x, load {waker_x}x (inherited)"),
    }
}

/// The slices' part of a latency cell's ID: `w0.1x-l1x`; `0.1x` for a run from before
/// the load-slice fix (`load` None), whose outcomes carry that ID.
pub fn slices_id(waker_x: f64, load_x: Option<f64>) -> String {
    match load_x {
        Some(l) => format!("w{waker_x}x-l{l}x"),
        None => format!("{waker_x}x"),
    }
}

/// `--load-slice-base-x X ` for eevdf-waker (nothing for `None`: runs from before the flag).
fn load_slice_arg(load_x: Option<f64>) -> String {
    load_x.map_or(String::new(), |l| format!("--load-slice-base-x {l} "))
}

/// The in-share latency cells' background: `n` nice-0 hogs (eevdf-share) pinned to CPU 0
/// with the waker, for `duration_ms`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hogs {
    pub n: u32,
    pub duration_ms: u64,
}

/// What eevdf-storm changes (`--change`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StormChange {
    /// sched_setattr() of the target's slice (3 ms and 3 ms + 1 µs alternately).
    Slice,
    /// setpriority(), nice 0 and 1 alternately.
    Nice,
    /// A move between two threaded cgroups (`sched_move_task()`).
    Cgroup,
}

impl StormChange {
    pub fn arg(self) -> &'static str {
        match self {
            StormChange::Slice => "slice",
            StormChange::Nice => "nice",
            StormChange::Cgroup => "cgroup",
        }
    }
}

/// Which side of a `next` feature's pair a cell is: the two cells of a pair differ only
/// in that feature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ab {
    /// What the pair's two cells share besides the workload (`RUN_TO_PARITY`,
    /// `MIN_SLICE on`; empty when nothing): pairs are matched by it.
    pub context: String,
    /// The feature is on in this cell.
    pub on: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub experiment: Experiment,
    pub features: FeatureSet,
    pub workload: Workload,
    /// The `next` cells' side of their pair (None in the other matrices, and in runs
    /// from before `next`).
    #[serde(default)]
    pub ab: Option<Ab>,
    /// The guest's vCPUs for this cell; None: the run's `--cpus`. Cells with their own
    /// count boot apart from the others (the multi-CPU cells of `--full`, seed 003's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
}

impl Cell {
    pub fn new(experiment: Experiment, features: FeatureSet, workload: Workload) -> Cell {
        Cell {
            experiment,
            features,
            workload,
            ab: None,
            cpus: None,
        }
    }

    /// The same cell on a guest of `cpus` vCPUs.
    pub fn on_cpus(mut self, cpus: u32) -> Cell {
        self.cpus = Some(cpus);
        self
    }

    /// The vCPUs the cell runs on, in a run of `run_cpus` (`--cpus`).
    pub fn cpus_in(&self, run_cpus: u32) -> u32 {
        self.cpus.unwrap_or(run_cpus)
    }

    /// Whether the guest needs Debian's perf (`eevdf-vm --perf`) for this cell.
    pub fn needs_perf(&self) -> bool {
        matches!(self.workload, Workload::Mixed { .. })
    }

    /// The workload's name without the feature set (what a table row is labelled with),
    /// its ID's stem, without spaces, and the guest command line: one arm a workload says
    /// all three.
    fn names(&self) -> (String, String, String) {
        let on_off = |b: bool, on: &str, off: &str| if b { on } else { off }.to_string();
        match &self.workload {
            // The waker pinned beside hogs on CPU 0, or against hackbench: one command but
            // for the pin and the load.
            Workload::Latency {
                slice_x,
                load_slice_x,
                hb_groups,
                hb_loops,
                hogs,
            } => {
                let (load_name, hogs_id, pin, load) = match hogs {
                    Some(h) => (
                        format!("pinned beside {} hogs on CPU 0", h.n),
                        format!("hogs{}-", h.n),
                        "--cpu 0 ",
                        format!(
                            "eevdf-share --cpu 0 --duration-ms {} {}",
                            h.duration_ms,
                            vec!["--hog 0"; h.n as usize].join(" ")
                        ),
                    ),
                    None => {
                        let hb = format!("hackbench -g {hb_groups} -l {hb_loops}");
                        (hb.clone(), String::new(), "", hb)
                    }
                };
                (
                    format!("{} ({load_name})", slices_name(*slice_x, *load_slice_x)),
                    format!("lat-{hogs_id}{}", slices_id(*slice_x, *load_slice_x)),
                    format!(
                        "eevdf-waker {pin}--interval-us {WAKER_PERIOD_US} --slice-base-x {slice_x} \
                         {}--readback-load-procs 2 --duration-ms 600000 -- {load}",
                        load_slice_arg(*load_slice_x)
                    ),
                )
            }
            Workload::Hackbench {
                threads,
                pipe,
                groups,
                loops,
            } => (
                format!(
                    "hackbench {} {} -g {groups}",
                    on_off(*threads, "threads", "processes"),
                    on_off(*pipe, "pipe", "socket")
                ),
                format!(
                    "hb-{}-{}-g{groups}",
                    on_off(*threads, "thread", "process"),
                    on_off(*pipe, "pipe", "socket")
                ),
                format!(
                    "hackbench {}{}-g {groups} -l {loops}",
                    on_off(*threads, "-T ", "-P "),
                    on_off(*pipe, "-p ", "")
                ),
            ),
            Workload::PingPong { duration_ms } => (
                "pipe ping-pong (1 CPU)".into(),
                "pingpong".into(),
                format!("eevdf-pingpong --cpu 0 --duration-ms {duration_ms}"),
            ),
            Workload::Share { kind, duration_ms } => {
                let (name, id, hogs) = match kind {
                    ShareKind::NiceSplit => (
                        "nice -4 vs 0 (1 CPU)".into(),
                        "share-nice".into(),
                        "--hog -4 --hog 0".to_string(),
                    ),
                    ShareKind::Equal(n) => (
                        format!("{n} equal hogs (1 CPU)"),
                        format!("share-equal{n}"),
                        vec!["--hog 0"; *n as usize].join(" "),
                    ),
                    ShareKind::Cgroups => (
                        "nested cgroups a=200{x=100,y=300} b=100".into(),
                        "share-cgroups".into(),
                        "--group a=200 --group b=100 --group a/x=100 --group a/y=300 --hog \
                         0@a/x --hog 0@a/y --hog 0@b"
                            .to_string(),
                    ),
                };
                let command = format!("eevdf-share --cpu 0 --duration-ms {duration_ms} {hogs}");
                (name, id, command)
            }
            Workload::Scale { tasks, duration_ms } => (
                format!("{tasks} yielding tasks (1 CPU)"),
                format!("scale-{tasks}"),
                format!(
                    "eevdf-scale --cpu 0 --mode yield --tasks {tasks} --duration-ms {duration_ms}"
                ),
            ),
            Workload::RtApp {
                what,
                case,
                tasks,
                hogs,
                duration_ms,
            } => {
                let mut c = format!("eevdf-rtapp --cpu 0 --duration-ms {duration_ms}");
                for t in tasks {
                    c.push_str(&format!(" --task {t}"));
                }
                for h in hogs {
                    c.push_str(&format!(" --hog {h}"));
                }
                (what.clone(), format!("rt-{case}"), c)
            }
            Workload::Msgr {
                messengers,
                workers,
                work_us,
                duration_ms,
            } => (
                format!("{messengers} messengers x {workers} workers, {work_us} us of work"),
                format!("msgr-{messengers}x{workers}"),
                format!(
                    "eevdf-msgr --messengers {messengers} --workers {workers} --work-us {work_us} \
                     --duration-ms {duration_ms}"
                ),
            ),
            Workload::Storm {
                change,
                duration_ms,
            } => (
                match change {
                    StormChange::Slice => "T's slice set every 200 us (sched_setattr)",
                    StormChange::Nice => "T reniced 0/1 every 200 us",
                    StormChange::Cgroup => "T moved between two cgroups every 200 us",
                }
                .into(),
                format!("storm-{}", change.arg()),
                format!(
                    "eevdf-storm --cpu 0 --driver self --change {} --duration-ms {duration_ms}",
                    change.arg()
                ),
            ),
            Workload::Mixed {
                compute,
                interactive,
                interactive_burst_us,
                duration_ms,
                timehist_lines,
            } => {
                let load = interactive_burst_us.map(|b| MixedLoad::new(*compute, *interactive, b));
                // Runs from before the load was kept: no load in the name or the ID.
                let (what, load_id) = match load {
                    Some(l) => (l.name(), format!("-{}", l.id())),
                    None => ("interactive".to_string(), String::new()),
                };
                let name = format!("{compute} massive_intr vs {interactive} {what} (CPU 0)");
                let id = format!("mixed-{compute}c{interactive}i{load_id}");
                let command = format!(
                    "/tmp/eevdf-perfsched {timehist_lines} {} eevdf-mixed --cpus 0 --compute \
                     {compute} --interactive {interactive} --frame-us {MIXED_FRAME_US} --burst-us {} \
                     --warmup-ms {MIXED_WARMUP_MS} --duration-ms {duration_ms}",
                    u8::from(self.counters()),
                    interactive_burst_us.unwrap_or(MIXED_LEGACY_BURST_US)
                );
                (name, id, command)
            }
            Workload::Migrate {
                to,
                rounds,
                sleep_ms,
                after_ms,
                hog_nice,
            } => {
                let (name, id, nice) = match hog_nice {
                    0 => ("a hog".to_string(), String::new(), String::new()),
                    n => (
                        format!("a nice-{n} hog"),
                        format!("-hognice{n}"),
                        format!(" --hog-nice {n}"),
                    ),
                };
                (
                    format!("sleeper moved CPU 0 -> {to} ({name} on each)"),
                    format!("migrate-0to{to}{id}"),
                    format!(
                        "eevdf-migrate --move affinity --from 0 --to {to} --rounds {rounds} \
                         --sleep-ms {sleep_ms} --after-ms {after_ms}{nice}"
                    ),
                )
            }
            Workload::MigrateHackbench {
                groups,
                loops,
                sleeper_rounds: 0,
            } => (
                format!("hackbench -g {groups} alone"),
                format!("hbmig-g{groups}-alone"),
                format!("hackbench -g {groups} -l {loops}"),
            ),
            Workload::MigrateHackbench {
                groups,
                loops,
                sleeper_rounds,
            } => (
                format!("hackbench -g {groups} with an unpinned long sleeper"),
                format!("hbmig-g{groups}-sleeper"),
                format!(
                    "/tmp/eevdf-beside wait 'eevdf-migrate --move natural --rounds \
                     {sleeper_rounds} --run-before-ms 50 --sleep-ms 300 --after-ms 200' \
                     hackbench -g {groups} -l {loops}"
                ),
            ),
            // The idle baseline: cyclictest for about as long as the 100% job takes.
            Workload::ForkJob { jobs: 0, files, .. } => (
                "cyclictest alone (the idle baseline)".into(),
                "cyclictest-idle".into(),
                format!(
                    "/tmp/eevdf-beside stop 'cyclictest --policy=other -q -t 1 -a 0 -i 1000' \
                     sleep {}",
                    (*files as u64 * 30 / 2 / 1000).max(1)
                ),
            ),
            Workload::ForkJob { jobs, files, nice } => {
                let (at, id) = match nice {
                    0 => (String::new(), String::new()),
                    n => (format!(" at nice {n}"), format!("-n{n}")),
                };
                (
                    format!("fork job -j {jobs}{at}, {files} files, cyclictest beside"),
                    format!("forkjob-j{jobs}{id}"),
                    format!(
                        "/tmp/eevdf-beside stop 'cyclictest --policy=other -q -t 1 -a 0 -i 1000' \
                         eevdf-forkjob --jobs {jobs} --files {files} --nice {nice}"
                    ),
                )
            }
            Workload::PipeJob {
                hogs,
                consumer_slice_us,
                mib,
            } => {
                let (hogs_name, hogs_id) = pipejob_hogs(hogs);
                let (slice, slice_id) = match consumer_slice_us {
                    0 => ("the base slice".to_string(), "base".to_string()),
                    us => (format!("a {us} us slice"), format!("s{us}")),
                };
                (
                    format!("pipe job beside {hogs_name}, the consumer at {slice}"),
                    format!("pipejob-{hogs_id}-{slice_id}"),
                    format!(
                        "eevdf-pipejob --mib {mib} --consumer-slice-us {consumer_slice_us} --hog {hogs}"
                    ),
                )
            }
        }
    }

    /// The workload's name without the feature set: what a table row is labelled with.
    pub fn label(&self) -> String {
        let l = self.names().0;
        match self.cpus {
            Some(n) => format!("{l}, {n} vCPUs"),
            None => l,
        }
    }

    /// Unique in a matrix, without spaces: the guest prints it and the parser keys on it.
    pub fn id(&self) -> String {
        let w = self.names().1;
        match self.cpus {
            Some(n) => format!("{w}@{n}cpu/{}", self.features.name()),
            None => format!("{w}/{}", self.features.name()),
        }
    }

    /// The guest command line.
    pub fn command(&self) -> String {
        self.names().2
    }

    /// A first guess of the cell's time under TCG on a 2-core host, seconds; the ETA
    /// replaces it with measured times as cells complete.
    pub fn estimate_s(&self) -> f64 {
        match &self.workload {
            // Measured (TCG, a host busy with kernel builds): hackbench -g 2 -l 70 with the waker
            // takes 1.0-1.5 s; a whole quick boot of 34 cell runs took about 30 s.
            // The waker measures while eevdf-share's hogs run; their start is quick.
            Workload::Latency { hogs: Some(h), .. } => 0.2 + h.duration_ms as f64 / 1000.0,
            Workload::Latency {
                hb_groups,
                hb_loops,
                ..
            } => 0.3 + 0.008 * (*hb_groups * *hb_loops) as f64,
            // With schedstats on (the --next cells: counting, and the counters read around
            // the run) hackbench took 1.6 times as long here.
            Workload::Hackbench { groups, loops, .. } => {
                let slower = if self.schedstats() { 1.6 } else { 1.0 };
                (0.2 + 0.007 * (*groups * *loops) as f64) * slower
            }
            Workload::PingPong { duration_ms } => 0.2 + *duration_ms as f64 / 1000.0,
            Workload::Share { duration_ms, .. } => 0.4 + *duration_ms as f64 / 1000.0,
            Workload::Scale { tasks, duration_ms } => {
                0.3 + *duration_ms as f64 / 1000.0 + 0.002 * *tasks as f64
            }
            // The three --next workloads warm up for 300 ms, then measure. Under icount
            // their guest time ran faster than wall time on an idle host (busy loops are
            // cheap to translate): measured 1.4-1.6 s for 3.3 s of rt-app, 0.85 s for 2.3 s
            // of storm, 1.65 s for 3.4 s of msgr; half the guest time, rounded up.
            Workload::RtApp { duration_ms, .. } | Workload::Storm { duration_ms, .. } => {
                0.2 + 0.5 * (0.3 + *duration_ms as f64 / 1000.0)
            }
            // Calibration: about 0.1 s more.
            Workload::Msgr { duration_ms, .. } => 0.3 + 0.5 * (0.4 + *duration_ms as f64 / 1000.0),
            // perf's record, then its latency and timehist passes over the data.
            Workload::Mixed { duration_ms, .. } => {
                8.0 + 0.5 * (MIXED_WARMUP_MS + *duration_ms) as f64 / 1000.0
            }
            // Each round: 100 ms beside the hog, the sleep, the window after it.
            Workload::Migrate {
                rounds,
                sleep_ms,
                after_ms,
                ..
            } => 0.5 + 0.5 * *rounds as f64 * (0.1 + (*sleep_ms + *after_ms) as f64 / 1000.0),
            Workload::MigrateHackbench {
                groups,
                loops,
                sleeper_rounds,
            } => (0.3 + 0.007 * (*groups * *loops) as f64).max(0.5 * *sleeper_rounds as f64 * 0.55),
            // 10-50 ms of CPU a file over the vCPUs, at half of wall time under icount.
            Workload::ForkJob { files, .. } => 1.0 + 0.5 * 0.03 * *files as f64 / 2.0,
            // 25 us of the producer's CPU a KiB, alone and then loaded (up to a few times
            // longer), and the hogs' 200 ms head start; at half of wall time under icount.
            Workload::PipeJob { mib, .. } => 0.5 + 0.5 * 5.0 * 0.025 * 1.024 * *mib as f64,
        }
    }

    /// Whether the cell runs with schedstats on (`kernel.sched_schedstats=1`): the `next`
    /// cells and seed 002's, because sched_eevdf's counters, whose deltas those cells
    /// report, count only then (both cells of a pair, and both kernels and every feature set
    /// of seed 002, pay the same cost; the Rust kernel's counting is its own). Every other
    /// cell runs with them
    /// off, the kernels' default: schedstats cost both kernels instructions on every switch
    /// and make the Rust kernel also classify and count its decisions
    /// (Documentation/debugfs.md). The waker's run delay is sched_info, kept either way; the
    /// scale cells count switches from `/proc/<pid>/status` (their /proc/schedstat figures
    /// are then 0, and no row reads them), so their ns and instructions a switch measure
    /// the scheduler without the counters (the bar's deterministic rows).
    pub fn schedstats(&self) -> bool {
        self.counters()
    }

    /// Whether the guest reads sched_eevdf's counters before and after the cell (the
    /// `next` cells, which report their deltas, and seed 002's, which report
    /// `picks_ineligible_earliest`; they run with schedstats on, without which the counters
    /// do not count). Seed 002 reads them around `perf sched record` alone
    /// ([`Cell::counters_in_command`]).
    pub fn counters(&self) -> bool {
        self.ab.is_some() || matches!(self.workload, Workload::Mixed { .. })
    }

    /// Whether the cell's command reads the counters itself: seed 002's, around `perf sched
    /// record`, so that perf's passes over its data afterwards (seconds of one task alone,
    /// each of its switches a pick) do not dilute the workload's picks.
    pub fn counters_in_command(&self) -> bool {
        self.counters() && matches!(self.workload, Workload::Mixed { .. })
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
    /// `next`: upstream's post-6.12 EEVDF features, each off against on, on the rust
    /// kernel only (src/next.rs).
    Next,
    /// `next --smoke`: one pair of short cells per feature, one boot.
    NextSmoke,
    /// `bar`: the performance bar decided: the waker's latency cells (EEVDF,
    /// against hackbench and inside its share, three slices) long enough to pool at least
    /// `main_matrix::BAR_WAKEUPS` wakeups a kernel and cell, and the throughput cells.
    Bar,
    /// `seeds`: the experiments of seeds 001 to 004 on the booted kernels (src/seeds.rs).
    Seeds,
    /// `seeds --smoke`: one short cell of each, one boot a guest shape.
    SeedsSmoke,
}

/// eevdf-migrate's `--after-ms` default: the window of runs from before the lab kept it.
pub fn migrate_after_ms_default() -> u64 {
    500
}

/// eevdf-mixed's warm-up in the seed 002 cells, ms.
pub const MIXED_WARMUP_MS: u64 = 300;

/// The latency cells' waker wakes this often, µs (`eevdf-waker --interval-us`): its need is
/// its CPU per wakeup over this period.
pub const WAKER_PERIOD_US: u64 = 1000;

impl MatrixKind {
    /// The `next` matrices.
    pub fn is_next(self) -> bool {
        matches!(self, MatrixKind::Next | MatrixKind::NextSmoke)
    }

    /// The `seeds` matrices.
    pub fn is_seeds(self) -> bool {
        matches!(self, MatrixKind::Seeds | MatrixKind::SeedsSmoke)
    }
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
    /// The guest's vCPUs, when the batch's cells ask for their own (None: `--cpus`).
    #[serde(default)]
    pub cpus: Option<u32>,
    /// Boot with Debian's perf in the guest (`eevdf-vm --perf`).
    #[serde(default)]
    pub perf: bool,
}

/// What a boot's guest must be for its cells: its vCPUs (None: `--cpus`), and whether perf
/// is in its initramfs.
type GuestShape = (Option<u32>, bool);

/// Split the matrix into boots. Cells that need a different guest (their own vCPU count,
/// or perf in the initramfs) never share a boot: the cells are grouped by that, in the
/// order the groups first appear. Each group is split into the fewest batches of about
/// `budget_s` estimated seconds or less (a batch may overrun by one cell); then the boots
/// are ordered batch by batch, repetition by repetition, alternating the kernels inside
/// each repetition: A B A B ...
pub fn plan_boots(
    cells: &[Cell],
    kernels: &[Kernel],
    boots_per_kernel: u32,
    inner_reps: u32,
    budget_s: f64,
) -> Vec<Boot> {
    let mut groups: Vec<(GuestShape, Vec<usize>)> = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let key = (c.cpus, c.needs_perf());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    // As few batches as the budget allows, filled evenly (not greedily, which would leave a
    // last batch of one cell that still costs a boot per kernel and repetition).
    let cost = |i: usize| cells[i].estimate_s() * inner_reps as f64;
    let mut batches: Vec<(GuestShape, Vec<usize>)> = Vec::new();
    for (key, members) in groups {
        let total: f64 = members.iter().map(|&i| cost(i)).sum();
        let n_batches = (total / budget_s.max(1.0)).ceil().max(1.0);
        let target = total / n_batches;
        let (mut cur, mut cur_s, mut made) = (Vec::new(), 0.0, 0.0);
        for i in members {
            cur.push(i);
            cur_s += cost(i);
            if cur_s >= target - 1e-9 && made < n_batches - 1.0 {
                batches.push((key, std::mem::take(&mut cur)));
                cur_s = 0.0;
                made += 1.0;
            }
        }
        if !cur.is_empty() {
            batches.push((key, cur));
        }
    }
    let mut boots = Vec::new();
    for (b, ((cpus, perf), batch)) in batches.iter().enumerate() {
        for rep in 0..boots_per_kernel {
            for &k in kernels {
                boots.push(Boot {
                    kernel: k,
                    rep,
                    batch: b,
                    cells: batch.clone(),
                    inner_reps,
                    cpus: *cpus,
                    perf: *perf,
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
ST=/sys/kernel/debug/sched/eevdf/stats
echo "@@info uname=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) base_slice_ns=$(cat /sys/kernel/debug/sched/base_slice_ns)"
echo "@@features $(cat $F)"
ORIG=$(cat $F)
# has NAME: the kernel has sched_feat NAME (shown as NAME or NO_NAME).
has() { for f in $(cat $F); do [ "$f" = "$1" ] || [ "$f" = "NO_$1" ] && return 0; done; return 1; }
# shows W: the features file now shows W (NAME when on, NO_NAME when off).
shows() { for f in $(cat $F); do [ "$f" = "$1" ] && return 0; done; return 1; }
# setf W...: write each W and check that it took; BAD is the first that did not.
setf() { for w; do { echo "$w" > $F && shows "$w"; } 2>/dev/null || { BAD=$w; return 1; }; done; }
restore() { for f in $ORIG; do echo "$f" > $F 2>/dev/null; done; restoret; }
# sett FILE=VALUE...: write each tunable of /sys/kernel/debug/sched and check that it took
# (the old value is kept for restoret); BAD is the first that did not.
T=/sys/kernel/debug/sched
sett() {
	for t; do
		f=${t%%=*} v=${t#*=}
		[ -w "$T/$f" ] || { BAD=$t; return 1; }
		echo "$f $(cat "$T/$f")" >> /tmp/eevdf-tunables.orig
		{ echo "$v" > "$T/$f" && [ "$(cat "$T/$f")" = "$v" ]; } 2>/dev/null || { BAD=$t; return 1; }
	done
}
restoret() {
	[ -f /tmp/eevdf-tunables.orig ] || return 0
	while read -r f v; do echo "$v" > "$T/$f"; done < /tmp/eevdf-tunables.orig
	rm -f /tmp/eevdf-tunables.orig
}
# tunables FILE...: the tunables as they are now, for the run's record.
tunables() { s="@@tunables"; for f; do s="$s $f=$(cat "$T/$f")"; done; echo "$s"; }
# /tmp/eevdf-counters WHEN: sched_eevdf's counters summed over the CPUs, NAME=VALUE, if the
# kernel has them (counters WHEN in this script).
cat > /tmp/eevdf-counters <<'EOF'
#!/bin/sh
ST=${ST:-/sys/kernel/debug/sched/eevdf/stats}
[ -r $ST ] && awk -v w="$1" '$1 == "cpu" { for (i = 2; i <= NF; i++) n[i] = $i }
	$1 == "all" { s = "@@counters " w; for (i = 2; i <= NF; i++) s = s " " n[i] "=" $i; print s }' $ST
exit 0
EOF
counters() { ST=$ST /tmp/eevdf-counters "$1"; }
SS=/proc/sys/kernel/sched_schedstats
echo 0 > $SS
# /tmp/eevdf-beside stop|wait 'BG' CMD...: the command line BG in the background while CMD
# runs; when CMD ends, BG is stopped with SIGINT (stop: cyclictest then prints its summary)
# or waited for (wait); BG's output follows CMD's. The status is CMD's, then (wait) BG's.
cat > /tmp/eevdf-beside <<'EOF'
#!/bin/sh
how=$1 bg=$2
shift 2
sh -c "exec $bg" >/tmp/eevdf-beside.out 2>&1 &
p=$!
"$@"
rc=$?
[ "$how" = stop ] && kill -INT $p 2>/dev/null
wait $p
brc=$?
cat /tmp/eevdf-beside.out
[ $rc = 0 ] || exit $rc
[ "$how" = stop ] || exit $brc
EOF
# /tmp/eevdf-perfsched N C CMD...: CMD under `perf sched record` (with C 1, sched_eevdf's
# counters read just before and after the record); then `perf sched latency` of it and the
# first N lines of `perf sched timehist`, as @@perf lines.
cat > /tmp/eevdf-perfsched <<'EOF'
#!/bin/sh
n=$1 c=$2
shift 2
[ -d /sys/kernel/tracing/events/sched ] || mount -t tracefs none /sys/kernel/tracing
[ "$c" = 1 ] && /tmp/eevdf-counters before
perf sched record -q -o /tmp/perf.data -- "$@" || exit $?
[ "$c" = 1 ] && /tmp/eevdf-counters after
perf sched latency -i /tmp/perf.data --sort=runtime 2>&1 | sed 's/^/@@perf latency /'
[ "$n" -gt 0 ] && perf sched timehist -i /tmp/perf.data 2>/dev/null | head -n "$n" | sed 's/^/@@perf timehist /'
rm -f /tmp/perf.data
exit 0
EOF
chmod +x /tmp/eevdf-beside /tmp/eevdf-perfsched /tmp/eevdf-counters
"#;

/// The guest script for one boot. Each cell run: its `begin` line; for each feature its
/// writes name, an `unavailable` line if the kernel lacks it; the writes, each checked (an
/// `end rc=99` line naming the first that did not take); the command, with schedstats on
/// and sched_eevdf's counters read before and after if the cell asks for them; its `end`
/// line; and the boot's features restored.
pub fn guest_script(boot: &Boot, cells: &[Cell]) -> String {
    let mut s = String::from(PRELUDE);
    for r in 0..boot.inner_reps {
        for &i in &boot.cells {
            let c = &cells[i];
            let id = c.id();
            s.push_str(&format!("echo \"@@cell {id} begin rep={r}\"\n"));
            let mut run = format!(
                "timeout -s KILL {} {} 2>&1\nrc=$?\n",
                c.timeout_s(),
                c.command()
            );
            if c.counters() && !c.counters_in_command() {
                run = format!("counters before\n{run}counters after\n");
            }
            if c.schedstats() {
                run = format!("echo 1 > $SS\n{run}echo 0 > $SS\n");
            }
            let tunables = c.features.tunables();
            if !tunables.is_empty() {
                let files: Vec<&str> = tunables.iter().map(|t| t.file.as_str()).collect();
                run.push_str(&format!("tunables {}\n", files.join(" ")));
            }
            run.push_str(&format!("echo \"@@cell {id} end rc=$rc\"\n"));
            let writes = c.features.writes();
            if writes.is_empty() && tunables.is_empty() {
                s.push_str(&run);
                continue;
            }
            let mut guard = String::new();
            for (n, need) in c.features.needs().iter().enumerate() {
                let kw = if n == 0 { "if" } else { "elif" };
                guard.push_str(&format!(
                    "{kw} ! has {need}; then\n\techo \"@@cell {id} unavailable {need}\"\n"
                ));
            }
            let kw = if guard.is_empty() { "if" } else { "elif" };
            let mut sets = format!("setf {}", writes.join(" "));
            if !tunables.is_empty() {
                let t: Vec<String> = tunables.iter().map(Tunable::write).collect();
                sets = format!("{sets} || ! sett {}", t.join(" "));
            }
            s.push_str(&format!(
                "{guard}{kw} ! {sets}; then\n\techo \"@@cell {id} end rc=99 (writing $BAD \
                 failed)\"\nelse\n{}fi\nrestore\n",
                run.lines().map(|l| format!("\t{l}\n")).collect::<String>()
            ));
        }
    }
    s.push_str("echo @@done\n");
    s
}

/// A latency cell of the main matrices' shape for the tests' fixtures: the waker at `slice_x`
/// against `hackbench -g 2 -l 70`, its load at `load_slice_x`.
#[cfg(test)]
pub(crate) fn latency_for_test(slice_x: f64, load_slice_x: Option<f64>, f: FeatureSet) -> Cell {
    let (hb_groups, hb_loops, hogs) = (2, 70, None);
    let w = Workload::Latency {
        slice_x,
        load_slice_x,
        hb_groups,
        hb_loops,
        hogs,
    };
    Cell::new(Experiment::Latency, f, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The script of one boot that runs `cells` `reps` times.
    fn script(cells: &[Cell], reps: u32) -> String {
        guest_script(&plan_boots(cells, &[Kernel::Rust], 1, reps, 1e9)[0], cells)
    }

    /// The pair and roles of `--kernels LIST`.
    fn kernels(list: &str) -> Result<(Pair, Vec<Kernel>), String> {
        let items = list.split(',').filter(|s| !s.is_empty());
        resolve_kernels(
            &items
                .map(KernelChoice::parse)
                .collect::<Result<Vec<_>, _>>()?,
        )
    }

    #[test]
    fn kernel_lists_resolve_to_one_pair() {
        use Kernel::{Rust, Stock};
        use Pair::{Distro, Tiny};
        // Each role once, first mention first.
        for (list, pair, roles) in [
            ("rust,stock", Tiny, &[Rust, Stock][..]),
            ("stock", Tiny, &[Stock]),
            ("distro", Distro, &[Rust, Stock]),
            ("distro-stock", Distro, &[Stock]),
            ("distro-stock,distro-rust,distro", Distro, &[Stock, Rust]),
            ("rust,stock,rust", Tiny, &[Rust, Stock]),
        ] {
            assert_eq!(kernels(list), Ok((pair, roles.to_vec())), "{list}");
        }
        for mix in ["rust,distro", "distro,rust,stock"] {
            let e = kernels(mix).unwrap_err();
            assert!(e.contains("mixes the tiny pair"), "{mix}: {e}");
        }
        assert_eq!(
            kernels("distro-rust,stock").unwrap_err(),
            "--kernels mixes the tiny pair (stock) with the distro pair (distro): the two \
             roles must be builds of one configuration (--kernels rust,stock or --kernels distro)"
        );
        assert!(kernels("debug")
            .unwrap_err()
            .contains("unknown kernel 'debug'"));
        assert!(kernels("").is_err());
    }

    #[test]
    fn builds_per_role_and_pair() {
        use Kernel::{Rust, Stock};
        // The builds, and tools/build-kernel.sh's configurations.
        for (pair, role, build, fragments) in [
            (Pair::Tiny, Rust, "rust", ["base", "eevdf"]),
            (Pair::Tiny, Stock, "stock", ["base", "stock"]),
            (Pair::Distro, Rust, "distro", ["distro", "eevdf"]),
            (Pair::Distro, Stock, "distro-stock", ["distro", "stock"]),
        ] {
            assert_eq!((pair.build(role), pair.fragments(role)), (build, fragments));
        }
        assert_eq!(Pair::default(), Pair::Tiny);
        assert_eq!(serde_json::to_string(&Pair::Distro).unwrap(), "\"distro\"");
    }

    /// Latency cells are named by both slices: the waker's and the load's,
    /// which the load is started with; a uniform cell only where both are planned so, and
    /// a run from before (its load inherited the waker's slice) says so, under its old ID.
    #[test]
    fn latency_cells_name_both_slices() {
        assert_eq!(slices_name(0.1, Some(1.0)), "waker 0.1x, load 1x");
        assert_eq!(slices_name(10.0, Some(10.0)), "waker 10x, load 10x");
        assert_eq!(slices_name(0.1, None), "waker 0.1x, load 0.1x (inherited)");
        assert_eq!(slices_id(0.1, Some(1.0)), "w0.1x-l1x");
        assert_eq!(slices_id(0.1, None), "0.1x");
        // A cell of a raw.json from before the load-slice fix has no load_slice_x: it keeps the ID
        // its outcomes carry, says its load inherited the waker's slice, and its command
        // (for --dry-run of such a plan) passes no load slice.
        let old: Workload =
            serde_json::from_str(r#"{"Latency":{"slice_x":0.1,"hb_groups":2,"hb_loops":70}}"#)
                .unwrap();
        let c = Cell::new(Experiment::Latency, FeatureSet::eevdf(), old);
        assert_eq!(c.id(), "lat-0.1x/EEVDF");
        assert_eq!(
            c.label(),
            "waker 0.1x, load 0.1x (inherited) (hackbench -g 2 -l 70)"
        );
        assert!(!c.command().contains("--load-slice-base-x"));
        // A new cell writes its load slice into raw.json and reads it back.
        let new = latency_for_test(0.1, Some(1.0), FeatureSet::eevdf()).workload;
        let json = serde_json::to_string(&new).unwrap();
        assert!(json.contains(r#""load_slice_x":1.0"#), "{json}");
        assert_eq!(serde_json::from_str::<Workload>(&json).unwrap(), new);
    }

    #[test]
    fn script_guards_features_and_brackets_cells() {
        let cells = vec![
            latency_for_test(0.1, Some(1.0), FeatureSet::eevdf()),
            latency_for_test(0.1, Some(1.0), FeatureSet::evdf()),
        ];
        let s = script(&cells, 2);
        // The EEVDF cell's ID and the EVDF one's.
        let (eid, id) = (cells[0].id(), cells[1].id());
        assert!(s.contains(&format!(
            "if ! has ELIGIBLE; then\n\techo \"@@cell {id} unavailable ELIGIBLE\"\n\
             elif ! setf NO_ELIGIBLE; then\n\techo \"@@cell {id} end rc=99 (writing $BAD \
             failed)\"\nelse\n\ttimeout -s KILL "
        )));
        assert!(s.contains(&format!("\techo \"@@cell {id} end rc=$rc\"\nfi\nrestore\n")));
        assert_eq!(s.matches(" begin rep=").count(), cells.len() * 2);
        assert!(s.contains("--slice-base-x 0.1 "));
        assert!(s.ends_with("echo @@done\n"));
        // The default set writes nothing, checks nothing and restores nothing; schedstats
        // stay off and no counters are read in the latency cells.
        let at = s.find(&format!("@@cell {eid} begin rep=0")).unwrap();
        let block = &s[at..s[at..].find(" end rc=$rc").unwrap() + at];
        assert!(!block.contains("has ") && !block.contains("setf") && !block.contains("$SS"));
        assert!(!s[PRELUDE.len()..].contains("counters before"));
        // The scale cells run with schedstats off too, as the kernels boot: their
        // instructions a switch must not include the Rust kernel's counters.
        let scale = Workload::Scale {
            tasks: 10,
            duration_ms: 300,
        };
        let s = script(
            &[Cell::new(Experiment::Scale, FeatureSet::eevdf(), scale)],
            1,
        );
        assert!(!s.contains("echo 1 > $SS") && !s[PRELUDE.len()..].contains("counters before"));
    }

    /// The prelude from `start` through the first `end` after it.
    fn prelude_part(start: &str, end: &str) -> &'static str {
        let at = PRELUDE.find(start).unwrap();
        &PRELUDE[at..at + PRELUDE[at..].find(end).unwrap() + end.len()]
    }

    /// `sh -c script sh arg` with `ST` set to `st`: its standard output (it must succeed).
    fn sh(script: &str, arg: &str, st: &str) -> String {
        let out = std::process::Command::new("sh")
            .args(["-c", script, "sh", arg])
            .env("ST", st)
            .output()
            .expect("sh");
        assert!(out.status.success(), "{script}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// A scratch directory of this test process, named after `name`.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("eevdf-lab-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The script the prelude writes to /tmp/eevdf-counters reads the counters by name.
    #[test]
    fn prelude_reads_counters_by_name() {
        let dir = scratch("test");
        let st = dir.join("stats");
        std::fs::write(&st, "cpu picks lag_clamped\n0 10 1\n1 5 2\nall 15 3\n").unwrap();
        let open = "cat > /tmp/eevdf-counters <<'EOF'\n";
        let script = &prelude_part(open, "\nexit 0\n")[open.len()..];
        assert_eq!(
            sh(script, "before", &st.display().to_string()),
            "@@counters before picks=15 lag_clamped=3\n"
        );
        // No file (stock kernel, or stats off): nothing printed, and no failure.
        assert_eq!(sh(script, "after", "/nonexistent"), "");
        // The guest script's `counters` runs it with the script's ST.
        assert!(PRELUDE.contains("counters() { ST=$ST /tmp/eevdf-counters \"$1\"; }"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// sett writes and checks each tunable, restoret puts the old values back, and
    /// tunables reads them for the record; a file that is not there fails and names itself.
    #[test]
    fn prelude_writes_checks_and_restores_tunables() {
        let dir = scratch("tun");
        std::fs::write(dir.join("migration_cost_ns"), "500000\n").unwrap();
        let _ = std::fs::remove_file("/tmp/eevdf-tunables.orig");
        let fns = [
            ("sett() {", "\n}\n"),
            ("restoret() {", "\n}\n"),
            ("tunables() {", "; }\n"),
        ]
        .map(|(f, end)| prelude_part(f, end))
        .concat();
        let sh = |body: &str| sh(&format!("T={}\n{fns}{body}", dir.display()), "", "");
        assert_eq!(
            sh(
                "sett migration_cost_ns=0 && tunables migration_cost_ns; restoret; \
                tunables migration_cost_ns"
            ),
            "@@tunables migration_cost_ns=0\n@@tunables migration_cost_ns=500000\n"
        );
        assert_eq!(
            sh(
                "sett migration_cost_ns=7 no_such_ns=1 || echo \"bad $BAD\"; restoret; \
                tunables migration_cost_ns"
            ),
            "bad no_such_ns=1\n@@tunables migration_cost_ns=500000\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A seed 002 cell of a raw.json from before the load was kept: 2 ms a frame, and the
    /// ID its outcomes carry.
    #[test]
    fn old_mixed_cells_keep_their_load_and_id() {
        let json = r#"{"experiment":{"Seed":2},"features":{"name":"EEVDF","writes":[]},
            "workload":{"Mixed":{"compute":3,"interactive":2,"duration_ms":3000,
            "timehist_lines":40}}}"#;
        let c: Cell = serde_json::from_str(json).unwrap();
        assert_eq!(c.id(), "mixed-3c2i/EEVDF");
        assert_eq!(c.label(), "3 massive_intr vs 2 interactive (CPU 0)");
        assert!(c.command().contains("--burst-us 2000 "));
        assert_eq!(mixed_load(&c.workload).unwrap().id(), "under12pct");
        // A new one names its load, and says it in its JSON.
        let mut n = c.clone();
        let Workload::Mixed {
            interactive_burst_us,
            ..
        } = &mut n.workload
        else {
            unreachable!()
        };
        *interactive_burst_us = Some(5000);
        assert_eq!(n.id(), "mixed-3c2i-over30pct/EEVDF");
        let back: Cell = serde_json::from_str(&serde_json::to_string(&n).unwrap()).unwrap();
        assert_eq!(back, n);
    }

    #[test]
    fn a_feature_set_with_tunables_writes_them_after_its_features() {
        let f = FeatureSet::new("NB/on", &["NEXT_BUDDY"]);
        let f = f.with_tunable("NB+sync/on", "migration_cost_ns", 0);
        assert_eq!(f.name(), "NB+sync/on");
        assert_eq!(f.tunables()[0].write(), "migration_cost_ns=0");
        let pp = |f: FeatureSet| {
            let c = Cell::new(
                Experiment::Throughput,
                f,
                Workload::PingPong { duration_ms: 100 },
            );
            (c.id(), script(&[c], 1))
        };
        let (id, s) = pp(f);
        assert!(s.contains(&format!(
            "elif ! setf NEXT_BUDDY || ! sett migration_cost_ns=0; then\n\techo \"@@cell {id} \
             end rc=99 (writing $BAD failed)\""
        )));
        assert!(s.contains("\ttunables migration_cost_ns\n\techo \"@@cell "));
        // Tunables alone still guard the run.
        let t = FeatureSet::eevdf().with_tunable("EEVDF-bs3ms", "base_slice_ns", 3_000_000);
        let s = pp(t.clone()).1;
        assert!(s.contains("if ! setf  || ! sett base_slice_ns=3000000; then"));
        // raw.json keeps them, and a run recorded without them reads as none.
        let back: FeatureSet = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        let old: FeatureSet =
            serde_json::from_str(r#"{"name":"on","writes":["NEXT_BUDDY"]}"#).unwrap();
        assert!(old.tunables().is_empty());
    }

    #[test]
    fn feature_sets_write_needs_and_stand_ins() {
        let f = FeatureSet::new("RTP/on", &["RUN_TO_PARITY", "NO_PLACE_LAG", "PLACE_LAG"]);
        assert_eq!(f.needs(), ["RUN_TO_PARITY", "PLACE_LAG"]);
        let off = FeatureSet::new("off", &["NO_NEXT_BUDDY", "NO_NEXT_BUDDY_EEVDF"]);
        let on = FeatureSet::new("on", &["NEXT_BUDDY", "NEXT_BUDDY_EEVDF"]);
        let s = |f: &FeatureSet, to| f.with_stand_in("NEXT_BUDDY_EEVDF", to).writes().to_vec();
        assert_eq!(s(&off, "NEXT_BUDDY"), ["NO_NEXT_BUDDY", "NO_NEXT_BUDDY"]);
        assert_eq!(s(&on, "NEXT_BUDDY"), ["NEXT_BUDDY", "NEXT_BUDDY"]);
        // NO_X inverts: the feature on is X off.
        assert_eq!(s(&on, "NO_PLACE_LAG"), ["NEXT_BUDDY", "NO_PLACE_LAG"]);
        assert_eq!(s(&off, "NO_PLACE_LAG"), ["NO_NEXT_BUDDY", "PLACE_LAG"]);
        assert_eq!(on.with_stand_in("NEXT_BUDDY_EEVDF", "X").name(), "on");
    }

    #[test]
    fn feature_sets_load_from_old_and_new_raw_json() {
        // Runs from before the writes were kept named one of the seeds' five sets.
        let old: Vec<FeatureSet> =
            serde_json::from_str(r#"["Eevdf","Evdf","Bias","NoRunToParity","NoPlaceLag"]"#)
                .unwrap();
        assert_eq!(old, FeatureSet::seeds());
        let f = FeatureSet::new("RTP/off", &["RUN_TO_PARITY", "NO_RUN_TO_PARITY_MIN_SLICE"]);
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(
            json,
            r#"{"name":"RTP/off","writes":["RUN_TO_PARITY","NO_RUN_TO_PARITY_MIN_SLICE"]}"#
        );
        assert_eq!(serde_json::from_str::<FeatureSet>(&json).unwrap(), f);
        // A write that could not go into the script is dropped on load.
        let bad: FeatureSet =
            serde_json::from_str(r#"{"name":"x","writes":["A; reboot","B"]}"#).unwrap();
        assert_eq!(bad.writes(), ["B"]);
        assert!(serde_json::from_str::<FeatureSet>(r#""Nope""#).is_err());
    }
}
