// SPDX-License-Identifier: GPL-2.0

//! The operations both sides run, a sequence's set-up, and the random generator.

use std::fmt;

/// 6.12's EEVDF toggles, as features.h names them: every combination is a sequence's
/// start, and [`Op::Flip`] toggles one mid-sequence. WAKEUP_PREEMPTION stays on (it
/// gates `check_preempt_wakeup_fair()` before any EEVDF step); the project's own flags
/// are fixed: ELIGIBLE on, BIAS_ELIGIBLE and the post-6.12 ones off.
pub const TOGGLES: [&str; 9] = [
    "PLACE_LAG",
    "PLACE_DEADLINE_INITIAL",
    "PLACE_REL_DEADLINE",
    "RUN_TO_PARITY",
    "PREEMPT_SHORT",
    "NEXT_BUDDY",
    "PICK_BUDDY",
    "DELAY_DEQUEUE",
    "DELAY_ZERO",
];

/// The index of PLACE_REL_DEADLINE in [`TOGGLES`].
pub const PLACE_REL_DEADLINE: usize = 2;

/// A task's weight: from a nice level (`set_load_weight()`, with the table's inverse) or a
/// group entity's share (high resolution, the inverse computed lazily).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    /// Nice -20..=19.
    Nice(i8),
    /// `scale_load(shares)`, shares in 2..=2^18.
    Shares(u64),
}

/// How a task that is not queued arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// `try_to_wake_up()` on its previous CPU: ENQUEUE_WAKEUP.
    Wakeup,
    /// `try_to_wake_up()` onto another CPU: ENQUEUE_WAKEUP | ENQUEUE_MIGRATED.
    WakeupMigrated,
    /// Moved here while queued (`attach_task()` after [`Op::MigrateOut`]): ENQUEUE_MIGRATED
    /// and a wakeup check with no flags.
    Attach,
}

/// One operation, applied to both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The clock moves by this many ns and current is charged (`update_curr()`).
    Tick(u64),
    /// Task `i` is forked (its slice and custom flag inherited) and woken:
    /// ENQUEUE_INITIAL, then the wakeup check with WF_FORK.
    New {
        /// The task.
        i: usize,
        /// Its weight.
        weight: Weight,
        /// Its slice (ns).
        slice: u64,
        /// The slice is a `sched_setattr()` one.
        custom: bool,
    },
    /// Task `i`, not queued, arrives; then the wakeup check (WF_SYNC if `sync`).
    Wake {
        /// The task.
        i: usize,
        /// How.
        how: Arrival,
        /// The waker says it sleeps soon.
        sync: bool,
    },
    /// Delayed task `i` is woken: `requeue_delayed_entity()`, then the wakeup check unless
    /// it is current.
    WakeDelayed {
        /// The task.
        i: usize,
    },
    /// Current blocks: DEQUEUE_SLEEP (| DEQUEUE_SPECIAL, which is never delayed).
    Sleep {
        /// A special task state.
        special: bool,
    },
    /// Queued task `i`, not current, is moved to another CPU (a non-sleep dequeue).
    MigrateOut {
        /// The task.
        i: usize,
    },
    /// Group entity `i` gets a new share (`reweight_entity()`), queued, current or not.
    Reweight {
        /// The entity.
        i: usize,
        /// `scale_load(shares)`.
        weight: u64,
    },
    /// `set_user_nice()` of task `i`.
    Renice {
        /// The task.
        i: usize,
        /// The new nice level.
        nice: i8,
    },
    /// `sched_setattr()` of task `i` with `sched_runtime` ns (0: the base slice).
    Setattr {
        /// The task.
        i: usize,
        /// `sched_attr::sched_runtime`.
        runtime: u64,
    },
    /// Current yields (`yield_task_fair()`).
    Yield,
    /// `schedule()`: the pick and the switch, again while the pick finishes a delayed
    /// dequeue.
    Schedule,
    /// Toggle [`TOGGLES`]`[k]`.
    Flip(usize),
}

impl Op {
    /// The operation's kind, for the summary's counts.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Tick(_) => "tick",
            Op::New { .. } => "new",
            Op::Wake {
                how: Arrival::Attach,
                ..
            } => "attach",
            Op::Wake { .. } => "wake",
            Op::WakeDelayed { .. } => "wake delayed",
            Op::Sleep { .. } => "sleep",
            Op::MigrateOut { .. } => "migrate out",
            Op::Reweight { .. } => "reweight",
            Op::Renice { .. } => "renice",
            Op::Setattr { .. } => "setattr",
            Op::Yield => "yield",
            Op::Schedule => "schedule",
            Op::Flip(_) => "flip",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Op::Tick(d) => write!(f, "tick {d} ns"),
            Op::New {
                i,
                weight,
                slice,
                custom,
            } => write!(f, "new #{i} {weight:?} slice {slice} ns custom {custom}"),
            Op::Wake { i, how, sync } => write!(f, "wake #{i} {how:?} sync {sync}"),
            Op::WakeDelayed { i } => write!(f, "wake delayed #{i}"),
            Op::Sleep { special } => write!(f, "current sleeps (special {special})"),
            Op::MigrateOut { i } => write!(f, "migrate #{i} away"),
            Op::Reweight { i, weight } => write!(f, "reweight #{i} to {weight}"),
            Op::Renice { i, nice } => write!(f, "renice #{i} to {nice}"),
            Op::Setattr { i, runtime } => write!(f, "setattr #{i} sched_runtime {runtime} ns"),
            Op::Yield => write!(f, "current yields"),
            Op::Schedule => write!(f, "schedule"),
            Op::Flip(k) => write!(f, "flip {}", TOGGLES[k]),
        }
    }
}

/// A sequence's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Task slots.
    pub tasks: usize,
    /// Bit k: [`TOGGLES`]`[k]` on.
    pub toggles: u16,
    /// `sysctl_sched_base_slice` (ns).
    pub base_slice_ns: u32,
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
    /// The runqueue's initial `zero_vruntime`.
    pub zero_vruntime: u64,
    /// Long runs between schedules (up to about 17 s), which spread the vruntimes far
    /// from V (up to about 2^40 with a light task) and reach fair.c's 64-bit limits.
    pub spread: bool,
}

impl fmt::Display for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} tasks, base slice {} ns, tick {} ns, zero_vruntime {:#x}, spread {}, features:",
            self.tasks, self.base_slice_ns, self.tick_nsec, self.zero_vruntime, self.spread
        )?;
        for (k, name) in TOGGLES.iter().enumerate() {
            let no = if self.toggles & (1 << k) != 0 {
                ""
            } else {
                "NO_"
            };
            write!(f, " {no}{name}")?;
        }
        Ok(())
    }
}

/// splitmix64: small, seedable, and the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `pct`%.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Log-uniform in `[2^lo_exp, 2^(hi_exp+1))`.
    pub fn log_uniform(&mut self, lo_exp: u32, hi_exp: u32) -> u64 {
        let e = self.range(u64::from(lo_exp), u64::from(hi_exp)) as u32;
        (1u64 << e) + self.below(1u64 << e)
    }
}

/// The set-up of sequence `k`: the toggles walk through all 512 combinations in order,
/// the rest is random. Most sequences are small; some have 40, 80, 200 or 1,000 tasks.
pub fn setup(k: u64, rng: &mut Rng, max_tasks: usize) -> Setup {
    let tasks = match rng.below(100) {
        0..=29 => rng.range(2, 4),
        30..=64 => rng.range(5, 12),
        65..=84 => rng.range(13, 40),
        85..=93 => 80,
        94..=97 => 200,
        _ => 1000,
    } as usize;
    Setup {
        tasks: tasks.min(max_tasks),
        toggles: (k % (1 << TOGGLES.len())) as u16,
        base_slice_ns: [700_000, 2_100_000, 3_000_000][rng.below(3) as usize],
        tick_nsec: [1_000_000, 4_000_000, 10_000_000][rng.below(3) as usize],
        zero_vruntime: match rng.below(4) {
            // init_cfs_rq()'s start.
            0 => (-(1i64 << 20)) as u64,
            // Near the wrap.
            1 => u64::MAX - rng.below(1 << 40),
            _ => rng.next_u64(),
        },
        spread: rng.chance(10),
    }
}

/// A weight: mostly nice levels (the table's 15 to 88761), some group shares.
pub fn weight(rng: &mut Rng) -> Weight {
    if rng.chance(75) {
        Weight::Nice(if rng.chance(50) {
            0
        } else {
            rng.range(0, 39) as i8 - 20
        })
    } else {
        Weight::Shares(
            match rng.below(4) {
                0 => 2,
                1 => 1 << 18,
                _ => rng.range(2, 1 << 18),
            } << 10,
        )
    }
}

/// A slice request for `sched_setattr()`: 0 (reset), below, inside and above the clamp.
pub fn sched_runtime(rng: &mut Rng) -> u64 {
    match rng.below(10) {
        0 => 0,
        1 => rng.range(1, 99_999),
        2 => rng.range(100_000_001, 1_000_000_000),
        3 => 100_000,
        4 => 100_000_000,
        _ => rng.range(100_000, 100_000_000),
    }
}

/// How long current runs before the next event: mostly 1 µs to 4 ms, sometimes 1 ns to
/// about 8 s; in a `spread` sequence mostly 1 ms to 17 s.
pub fn tick(rng: &mut Rng, spread: bool) -> u64 {
    if spread && rng.chance(70) {
        rng.log_uniform(20, 33)
    } else if rng.chance(80) {
        rng.range(1_000, 4_000_000)
    } else {
        rng.log_uniform(0, 32)
    }
}
