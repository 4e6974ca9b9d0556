//! The scenario file of the kernel-faithful mode: TOML, read strictly.
//!
//! Unknown keys, a missing key, a value of the wrong type or out of range, two tasks with
//! one name or an unknown feature name are errors that name the key and the task. Units are
//! in the key names (`_ms`, `_us`) and converted to nanoseconds once, by the accessors here
//! and, for the tasks' keys, where the simulator plans the tasks (`plan` in `sim.rs`).
//!
//! ```toml
//! name = "nice -4 against nice 0"
//! duration_ms = 10000      # simulated time
//! hz = 250                 # tick rate (the kernel's CONFIG_HZ)
//! base_slice_us = 700      # sysctl_sched_base_slice
//! seed = 1                 # seeds every bursty task that has no seed of its own
//!
//! [features]               # the core's feature names; unnamed ones keep their default
//! ELIGIBLE = true
//!
//! [[task]]
//! name = "hog"
//! nice = -4                # or weight = 1024; neither means nice 0
//! behaviour = { kind = "hog" }
//!
//! [[task]]
//! name = "waker"
//! slice_us = 300           # sched_attr.sched_runtime; clamped by the core to [100 µs, 100 ms]
//! start_ms = 5             # fork-at-time
//! behaviour = { kind = "periodic", period_us = 1000, run_us = 50 }
//!
//! [[task]]
//! name = "tuned"
//! slice_us = 3000
//! setattr_every_us = 200   # sched_setattr(): slice 3001, 3000, ... µs (sched_change)
//! behaviour = { kind = "hog" }
//!
//! [[task]]
//! name = "worker"
//! count = 20               # twenty tasks worker.0 … worker.19
//! behaviour = { kind = "bursty", run = { dist = "exp", mean_us = 100 },
//!               sleep = { dist = "uniform", min_us = 10, max_us = 300 } }
//!
//! [[feature_change]]
//! at_ms = 5000
//! set = { ELIGIBLE = false }
//! ```

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// Nanoseconds per microsecond and per millisecond: the one place units are converted.
pub const NSEC_PER_USEC: u64 = 1_000;
/// See [`NSEC_PER_USEC`].
pub const NSEC_PER_MSEC: u64 = 1_000_000;

/// The tick rates the kernel offers (`CONFIG_HZ_*`).
pub const HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A title for reports and pictures.
    #[serde(default)]
    pub name: String,
    /// Free text: what the scenario checks and why.
    #[serde(default)]
    pub description: String,
    /// Simulated time, in milliseconds.
    pub duration_ms: u64,
    /// Tick rate; one of [`HZ_CHOICES`]. Default 250, the Debian kernel's.
    #[serde(default = "default_hz")]
    pub hz: u32,
    /// `sysctl_sched_base_slice`, in microseconds. Default 700, 6.12's value on one CPU.
    #[serde(default = "default_base_slice_us")]
    pub base_slice_us: u64,
    /// Seed of every bursty task that has no seed of its own (mixed with the task's index).
    #[serde(default)]
    pub seed: u64,
    /// `sysctl_sched_migration_cost`, in microseconds: NEXT_BUDDY_EEVDF's `preempt_sync()`
    /// threshold for WF_SYNC wakeups. Default 500, the kernel's.
    #[serde(default = "default_migration_cost_us")]
    pub migration_cost_us: u64,
    /// Feature flags by the core's names; a name not given keeps the core's default.
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
    /// The tasks.
    #[serde(default, rename = "task")]
    pub tasks: Vec<TaskSpec>,
    /// Feature changes at given times.
    #[serde(default, rename = "feature_change")]
    pub feature_changes: Vec<FeatureChange>,
}

fn default_hz() -> u32 {
    250
}

fn default_base_slice_us() -> u64 {
    700
}

fn default_migration_cost_us() -> u64 {
    500
}

/// One `[[task]]` table: one task, or `count` identical ones.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Name; with `count > 1` the tasks are `name.0`, `name.1`, ….
    pub name: String,
    /// How many identical tasks this table makes. Default 1.
    #[serde(default = "one")]
    pub count: u32,
    /// Nice value, −20 … 19. Mutually exclusive with `weight`.
    pub nice: Option<i32>,
    /// Load weight in the kernel's user-visible units (nice 0 = 1024), 2 … 88761·1024.
    pub weight: Option<u64>,
    /// `sched_attr.sched_runtime` in microseconds: a custom slice, which the core clamps to
    /// [100 µs, 100 ms]. Absent or 0: the base slice.
    #[serde(default)]
    pub slice_us: u64,
    /// Fork time, in milliseconds from the start. Default 0.
    #[serde(default)]
    pub start_ms: u64,
    /// Exit time, in milliseconds from the start. Default: never.
    pub stop_ms: Option<u64>,
    /// Every this many microseconds, a `sched_setattr()` of the task's slice from another
    /// CPU, alternately `slice_us + 1` and `slice_us` (the kernel ignores a call that
    /// changes nothing): a sched_change of the task (dequeue, put, enqueue, set again),
    /// what PROTECT_AT_PICK is about. Needs `slice_us`. Default: never.
    pub setattr_every_us: Option<u64>,
    /// What the task does when it runs.
    pub behaviour: Behaviour,
}

fn one() -> u32 {
    1
}

/// What a task does.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Behaviour {
    /// Never sleeps: `while (1) i++;`.
    Hog {},
    /// Wakes every `period_us` on an absolute timer and runs `run_us`, like cyclictest
    /// with a load. A period that is overrun wakes at once (the timer is already in the past).
    Periodic {
        /// Timer period, in microseconds.
        period_us: u64,
        /// CPU time needed per activation, in microseconds.
        run_us: u64,
        /// First expiry after the fork, in microseconds. Default: one period.
        offset_us: Option<u64>,
    },
    /// Alternates a run and a sleep drawn from two distributions, with its own PRNG.
    Bursty {
        /// CPU time per burst.
        run: Dist,
        /// Sleep after each burst.
        sleep: Dist,
        /// PRNG seed; default: the scenario's seed mixed with the task's index.
        seed: Option<u64>,
    },
    /// A messenger (schbench's message thread): runs from its fork with every worker's
    /// request queued; for each queued request it runs `run_us` and wakes that request's
    /// worker; with nothing queued it sleeps until a worker posts a request (and wakes it).
    /// Its workers are the tasks of the `[[task]]` table `wakes`. The wakeups both ways are
    /// WF_SYNC with `sync` (a pipe: the waker says it sleeps soon), plain without (futex
    /// wakeups, as schbench's).
    Messenger {
        /// CPU time per request, before it wakes the request's worker, in microseconds.
        run_us: u64,
        /// The `[[task]]` table of its `worker`s.
        wakes: String,
        /// Wake with WF_SYNC. Default false.
        #[serde(default)]
        sync: bool,
    },
    /// A worker (schbench's worker thread): asleep until its messenger wakes it, then runs
    /// a burst drawn from `run` (the request's work), posts its next request to the
    /// messenger (waking it if it sleeps) and sleeps again.
    Worker {
        /// CPU time per request.
        run: Dist,
        /// PRNG seed; default: the scenario's seed mixed with the task's index.
        seed: Option<u64>,
    },
}

/// A distribution of durations.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum Dist {
    /// Always `us` microseconds.
    Fixed {
        /// The duration, in microseconds.
        us: u64,
    },
    /// Uniform on [`min_us`, `max_us`] microseconds (nanosecond resolution).
    Uniform {
        /// Lower bound, in microseconds.
        min_us: u64,
        /// Upper bound, in microseconds.
        max_us: u64,
    },
    /// Exponential with mean `mean_us` microseconds, rounded to nanoseconds.
    Exp {
        /// Mean, in microseconds.
        mean_us: u64,
    },
}

/// One `[[feature_change]]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureChange {
    /// When, in milliseconds from the start.
    pub at_ms: u64,
    /// Flags to set or clear, by the core's names.
    pub set: BTreeMap<String, bool>,
}

/// The largest number of tasks a scenario may make.
pub const MAX_TASKS: u64 = 100_000;
/// The longest simulation, in milliseconds (one hour).
pub const MAX_DURATION_MS: u64 = 3_600_000;
/// Largest weight accepted: nice −20's 88761, scaled up by 1024 as cgroup shares may be.
pub const MAX_WEIGHT: u64 = 88761 * 1024;

impl Dist {
    fn check(&self, what: &str, zero_ok: bool) -> Result<()> {
        const LIMIT_US: u64 = 60_000_000;
        match *self {
            Dist::Fixed { us } => {
                if us == 0 && !zero_ok {
                    bail!("{what}: fixed duration must be > 0 µs");
                }
                if us > LIMIT_US {
                    bail!("{what}: {us} µs is longer than a minute");
                }
            }
            Dist::Uniform { min_us, max_us } => {
                if min_us > max_us {
                    bail!("{what}: min_us {min_us} > max_us {max_us}");
                }
                if max_us == 0 && !zero_ok {
                    bail!("{what}: max_us must be > 0");
                }
                if max_us > LIMIT_US {
                    bail!("{what}: {max_us} µs is longer than a minute");
                }
            }
            Dist::Exp { mean_us } => {
                if mean_us == 0 {
                    bail!("{what}: mean_us must be > 0");
                }
                if mean_us > LIMIT_US {
                    bail!("{what}: {mean_us} µs is longer than a minute");
                }
            }
        }
        Ok(())
    }
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading scenario {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("scenario {}", path.display()))
    }

    /// Parses and validates scenario text. Feature names are checked later, against the
    /// core's table, by [`crate::coreglue::FeatureSet::from_names`].
    pub fn parse(text: &str) -> Result<Self> {
        let s: Scenario = toml::from_str(text).context("malformed scenario")?;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<()> {
        if self.duration_ms == 0 || self.duration_ms > MAX_DURATION_MS {
            bail!(
                "duration_ms = {}: must be 1 … {MAX_DURATION_MS}",
                self.duration_ms
            );
        }
        if !HZ_CHOICES.contains(&self.hz) {
            bail!("hz = {}: must be one of {HZ_CHOICES:?}", self.hz);
        }
        if !(100..=100_000).contains(&self.base_slice_us) {
            bail!(
                "base_slice_us = {}: must be 100 … 100000",
                self.base_slice_us
            );
        }
        if self.migration_cost_us > 1_000_000 {
            bail!(
                "migration_cost_us = {}: must be 0 … 1000000",
                self.migration_cost_us
            );
        }
        if self.tasks.is_empty() {
            bail!("no [[task]]: a scenario needs at least one task");
        }
        let mut names = HashSet::new();
        let mut total: u64 = 0;
        for t in &self.tasks {
            let who = format!("task {:?}", t.name);
            if t.name.is_empty() || t.name.chars().any(|c| c.is_control()) {
                bail!("{who}: name must be non-empty printable text");
            }
            if !names.insert(t.name.as_str()) {
                bail!("{who}: two tasks have this name");
            }
            if t.count == 0 {
                bail!("{who}: count must be at least 1");
            }
            total += u64::from(t.count);
            match (t.nice, t.weight) {
                (Some(_), Some(_)) => bail!("{who}: give nice or weight, not both"),
                (Some(n), None) if !(-20..=19).contains(&n) => {
                    bail!("{who}: nice {n} is outside −20 … 19")
                }
                (None, Some(w)) if !(2..=MAX_WEIGHT).contains(&w) => {
                    bail!("{who}: weight {w} is outside 2 … {MAX_WEIGHT}")
                }
                _ => {}
            }
            if t.slice_us > 1_000_000 {
                bail!("{who}: slice_us {} is over a second", t.slice_us);
            }
            if t.start_ms >= self.duration_ms {
                bail!(
                    "{who}: start_ms {} is not before the end ({} ms)",
                    t.start_ms,
                    self.duration_ms
                );
            }
            if let Some(stop) = t.stop_ms {
                if stop <= t.start_ms {
                    bail!("{who}: stop_ms {stop} is not after start_ms {}", t.start_ms);
                }
            }
            if let Some(every) = t.setattr_every_us {
                if !(10..=60_000_000).contains(&every) {
                    bail!("{who}: setattr_every_us {every} must be 10 … 60000000");
                }
                if t.slice_us == 0 {
                    bail!("{who}: setattr_every_us needs a slice_us to set");
                }
            }
            match &t.behaviour {
                Behaviour::Hog {} => {}
                Behaviour::Periodic {
                    period_us, run_us, ..
                } => {
                    if *period_us == 0 || *run_us == 0 {
                        bail!("{who}: periodic needs period_us > 0 and run_us > 0");
                    }
                    if *period_us > 60_000_000 {
                        bail!("{who}: period_us {period_us} is longer than a minute");
                    }
                }
                Behaviour::Bursty { run, sleep, .. } => {
                    run.check(&format!("{who}: run"), false)?;
                    sleep.check(&format!("{who}: sleep"), true)?;
                }
                Behaviour::Messenger { run_us, wakes, .. } => {
                    if *run_us == 0 || *run_us > 60_000_000 {
                        bail!("{who}: messenger needs run_us of 1 µs … a minute");
                    }
                    if t.count != 1 {
                        bail!("{who}: a messenger table makes one task (count = 1)");
                    }
                    if self.tasks.iter().any(|o| {
                        o.name != t.name
                            && matches!(&o.behaviour, Behaviour::Messenger { wakes: w, .. } if w == wakes)
                    }) {
                        bail!("{who}: another messenger wakes {wakes:?} too");
                    }
                    let target = self.tasks.iter().find(|w| &w.name == wakes);
                    if !matches!(target.map(|w| &w.behaviour), Some(Behaviour::Worker { .. })) {
                        bail!("{who}: wakes = {wakes:?} is not a [[task]] of kind \"worker\"");
                    }
                }
                Behaviour::Worker { run, .. } => run.check(&format!("{who}: run"), false)?,
            }
        }
        if total > MAX_TASKS {
            bail!("{total} tasks: at most {MAX_TASKS}");
        }
        for (i, c) in self.feature_changes.iter().enumerate() {
            if c.at_ms >= self.duration_ms {
                bail!(
                    "feature_change #{i}: at_ms {} is not before the end ({} ms)",
                    c.at_ms,
                    self.duration_ms
                );
            }
            if c.set.is_empty() {
                bail!("feature_change #{i}: `set` names no feature");
            }
        }
        Ok(())
    }

    /// Simulated time, in nanoseconds.
    pub fn duration_ns(&self) -> u64 {
        self.duration_ms * NSEC_PER_MSEC
    }

    /// The tick period, in nanoseconds (`TICK_NSEC`).
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.hz)
    }

    /// The base slice, in nanoseconds.
    pub fn base_slice_ns(&self) -> u64 {
        self.base_slice_us * NSEC_PER_USEC
    }

    /// `sysctl_sched_migration_cost`, in nanoseconds.
    pub fn migration_cost_ns(&self) -> u64 {
        self.migration_cost_us * NSEC_PER_USEC
    }
}
