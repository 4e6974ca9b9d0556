// SPDX-License-Identifier: GPL-2.0

//! `pick-cost`: the pick alone, the core's `pick_eevdf()` against 6.12.117's own, on the
//! same runqueue states (Documentation/pick-cost.md).
//!
//! It drives fair.c's C (build.rs's extraction, through `c/driver.c`) and the core (its
//! `model` over the plain-Rust runqueue) with one workload, in lockstep, as
//! `tools/fair-c-diff.sh` does, and at every pick point (before each schedule, after each
//! wakeup's enqueue) calls each side's pure pick once, each from its own out-of-line
//! function: [`rust_pick`] and [`c_pick`], whose callee is fair.c's static
//! `pick_eevdf()`. Under `valgrind --tool=callgrind --toggle-collect=...` (see
//! `tools/pick-cost.sh`) their inclusive instruction counts divided by the number of
//! samples printed here are the instructions per pick. The run checks at every sample
//! that both sides picked the same task (or two eligible tasks with the same deadline:
//! the pinned tie rule of Documentation/c-parity.md, after which the core takes stock's
//! choice) and hold the same vruntimes and deadlines, and counts which path each pick
//! took.

use std::ffi::{c_int, c_ulong, CString};
use std::hint::black_box;

use anyhow::{bail, ensure};
use clap::{Parser, ValueEnum};
use fair_c_diff::ops::{Rng, TOGGLES};
use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

/// The driver's functions (tests/fair-c-diff/c/driver.c): the C keeps one runqueue in
/// globals, and this program is its only user.
use fair_c_diff::c::ffi;

/// The runqueue states a row builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mix {
    /// Every task nice 0 at the base slice; CPU-bound with occasional sleeps.
    Uniform,
    /// Every task with a `sched_setattr()` slice, log-uniform in 100 µs..100 ms.
    Slices,
    /// hackbench-like: short bursts, frequent sleeps and wakeups, so that tasks carry lag
    /// and partly used requests (earliest deadline often not eligible).
    Lag,
    /// Weights of nice -10..=10, the base slice, as `uniform`.
    Weights,
}

/// Instructions per pick, the core's against fair.c's, on the same states.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Tasks (the queue length at most picks; the `lag` mix has a few asleep).
    #[arg(long, default_value_t = 80)]
    tasks: usize,
    /// Which states.
    #[arg(long, value_enum, default_value_t = Mix::Lag)]
    mix: Mix,
    /// Pick samples to take (each side's pick called once per sample).
    #[arg(long, default_value_t = 4000)]
    samples: u64,
    /// Steps run before sampling starts, per task (spreads the vruntimes).
    #[arg(long, default_value_t = 20)]
    warmup_steps_per_task: u64,
    /// Seed of the workload: the same seed gives the same states.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// 6.12's defaults (features.h) among the toggles the harness knows: all on but
/// NEXT_BUDDY.
const DEFAULT_OFF: &[&str] = &["NEXT_BUDDY"];
/// One CPU's `sysctl_sched_base_slice` (0.75 ms), as the tiny kernels under icount.
const BASE_SLICE_NS: u32 = 750_000;
/// HZ=250.
const TICK_NSEC: u64 = 4_000_000;
/// `init_cfs_rq()`'s start, -2^20.
const ZERO_VRUNTIME: u64 = 0u64.wrapping_sub(1 << 20);

/// The core's pick, out of line: what callgrind counts for the core.
#[inline(never)]
fn rust_pick<'a>(rq: &UserRunqueue<'a>, cfg: Config) -> Option<UserSe<'a>> {
    pick_eevdf(rq, cfg)
}

/// fair.c's pick (its static `pick_eevdf()`, called by the driver's `fcd_pick_eevdf()`,
/// which callgrind counts for stock). The result goes through `black_box` so that this is
/// a call, not a tail jump, which callgrind's toggle would not see.
#[inline(never)]
fn c_pick() -> c_int {
    // SAFETY: the C's globals are this program's alone; the call only reads them.
    black_box(unsafe { ffi::fcd_pick_eevdf() })
}

/// Which path a pick took (the same tests on both sides up to the tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// One queued entity.
    Only,
    /// RUN_TO_PARITY kept an eligible, protected current.
    Parity,
    /// The O(1) case: the core's leftmost holds the root's `min_deadline` (then it is the
    /// pick if eligible, and no tree entity is eligible if it is not); stock's leftmost
    /// (earliest deadline) is eligible.
    Leftmost,
    /// The descent (the core's `pick_eevdf_tree`, stock's heap search).
    Descent,
}

#[derive(Default)]
struct Counts {
    only: u64,
    parity: u64,
    leftmost: u64,
    descent: u64,
}

impl Counts {
    fn add(&mut self, p: Path) {
        match p {
            Path::Only => self.only += 1,
            Path::Parity => self.parity += 1,
            Path::Leftmost => self.leftmost += 1,
            Path::Descent => self.descent += 1,
        }
    }
}

struct Bench<'a> {
    ents: &'a [UserEntity],
    rq: UserRunqueue<'a>,
    cfg: Config,
    flags: ffi::FcdFlags,
    need_resched: bool,
    /// Sampling is on (off during the warm-up, so that callgrind counts only samples).
    measure: bool,
    samples: u64,
    ties: u64,
    sum_nr: u64,
    /// Picks that reach the tree (past current's tests), and of those, picks whose tree's
    /// earliest deadline is eligible, and picks the core's shortcut (E) decides.
    tree_picks: u64,
    earliest_eligible: u64,
    shortcut: u64,
    rust: Counts,
    stock: Counts,
}

fn c_entity(i: usize) -> ffi::FcdEntity {
    let mut out = ffi::FcdEntity::default();
    // SAFETY: `i` is a task slot (checked against fcd_max_tasks() at start); `out` is a
    // valid out pointer.
    unsafe { ffi::fcd_entity(i as c_int, &mut out) };
    out
}

fn c_cfs_rq() -> ffi::FcdCfsRq {
    let mut out = ffi::FcdCfsRq::default();
    // SAFETY: `out` is a valid out pointer.
    unsafe { ffi::fcd_cfs_rq(&mut out) };
    out
}

fn c_eligible(i: usize) -> bool {
    // SAFETY: `i` is a task slot; reads only.
    unsafe { ffi::fcd_eligible(i as c_int) != 0 }
}

impl<'a> Bench<'a> {
    fn index(&self, se: UserSe<'a>) -> usize {
        self.ents
            .iter()
            .position(|e| std::ptr::eq(e, se.get()))
            .unwrap_or(usize::MAX)
    }

    fn c_curr(&self) -> Option<usize> {
        usize::try_from(c_cfs_rq().curr).ok()
    }

    /// The core's path, from the state (the tests of `pick_eevdf_fast`).
    fn rust_path(&self) -> Path {
        let rq = &self.rq;
        if rq.nr_queued() == 1 {
            return Path::Only;
        }
        let el = Eligibility::new(rq, self.cfg);
        if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
            if el.vruntime(c.vruntime())
                && self.cfg.feat(Features::RUN_TO_PARITY)
                && protect_slice(c, self.cfg.features)
            {
                return Path::Parity;
            }
        }
        match (rq.first(), rq.root()) {
            // The pick is the leftmost if it is eligible, else no tree entity is.
            (Some(f), Some(r)) if f.deadline() == r.min_deadline() => Path::Leftmost,
            (None, _) => Path::Parity,
            _ => Path::Descent,
        }
    }

    /// Stock's path: the same up to the tree, then whether its leftmost (the earliest
    /// deadline, first enqueued among equals) is eligible.
    fn stock_path(&self, rust: Path) -> Path {
        if matches!(rust, Path::Only | Path::Parity) {
            return rust;
        }
        // The leftmost of stock's tree: the earliest deadline among the queued entities
        // but current; among equal deadlines the first in tree order.
        let curr = self.c_curr();
        let queued: Vec<(usize, u64)> = (0..self.ents.len())
            .filter(|&i| Some(i) != curr)
            .map(|i| (i, c_entity(i)))
            .filter(|(_, e)| e.on_rq != 0)
            .map(|(i, e)| (i, e.deadline))
            .collect();
        let earliest = queued.iter().map(|&(_, d)| d).reduce(|a, d| {
            if (d.wrapping_sub(a) as i64) < 0 {
                d
            } else {
                a
            }
        });
        let mut ties = queued.iter().filter(|&&(_, d)| Some(d) == earliest);
        let first = match (ties.next(), ties.next()) {
            (Some(&(i, _)), None) => Some(i),
            _ => queued.iter().map(|&(i, _)| i).find(|&i| {
                // SAFETY: `i` is a task slot; reads only.
                Some(i) != curr && unsafe { ffi::fcd_tree_position(i as c_int) } == 0
            }),
        };
        match first {
            Some(i) if c_eligible(i) => Path::Leftmost,
            Some(_) => Path::Descent,
            None => Path::Parity,
        }
    }

    /// Both picks, once each, in this state; then the checks.
    fn sample(&mut self) -> anyhow::Result<()> {
        if !self.measure {
            return Ok(());
        }
        let r = black_box(rust_pick(black_box(&self.rq), black_box(self.cfg)));
        let c = black_box(c_pick());
        let r = r.map(|s| self.index(s));
        let c = usize::try_from(c).ok();
        if r != c && !self.tie(c, r) {
            bail!(
                "sample {}: fair.c picks {c:?}, the core {r:?}",
                self.samples
            );
        }
        self.check_state()?;
        let rp = self.rust_path();
        if rp == Path::Descent {
            self.earliest(true);
        } else if rp == Path::Leftmost {
            self.earliest(false);
        }
        self.rust.add(rp);
        self.stock.add(self.stock_path(rp));
        self.sum_nr += u64::from(self.rq.nr_queued());
        self.samples += 1;
        Ok(())
    }

    /// For a pick that reaches the tree: whether the tree's earliest deadline is eligible
    /// (then it is the pick), and, for one past the core's O(1) test (`descent`), whether
    /// the core's shortcut (E) of `pick_tree` took it: that deadline is eligible as a
    /// vruntime, and its holder is eligible.
    fn earliest(&mut self, descent: bool) {
        let rq = &self.rq;
        let Some(root) = rq.root() else { return };
        let md = root.min_deadline();
        let mut n = root;
        loop {
            match rq.left(n) {
                Some(l) if l.min_deadline() == md => n = l,
                _ if n.deadline() == md => break,
                _ => match rq.right(n) {
                    Some(r) => n = r,
                    None => break,
                },
            }
        }
        let el = Eligibility::new(rq, self.cfg);
        self.tree_picks += 1;
        if el.vruntime(n.vruntime()) {
            self.earliest_eligible += 1;
            if descent && el.vruntime(md) {
                self.shortcut += 1;
            }
        }
    }

    fn tie(&self, a: Option<usize>, b: Option<usize>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) if a != b => {
                c_eligible(a) && c_eligible(b) && c_entity(a).deadline == c_entity(b).deadline
            }
            _ => false,
        }
    }

    /// The two sides hold the same state (what the pick reads).
    fn check_state(&self) -> anyhow::Result<()> {
        let c = c_cfs_rq();
        ensure!(c.warnings == 0, "fair.c WARN at line {}", c.warn_line);
        ensure!(c.nr_running == self.rq.nr_queued(), "nr_running");
        ensure!(c.avg_vruntime == self.rq.avg_vruntime(), "avg_vruntime");
        ensure!(c.avg_load == self.rq.avg_load(), "avg_load");
        ensure!(c.zero_vruntime == self.rq.zero_vruntime(), "zero_vruntime");
        let rcurr = self.rq.curr().map(|s| self.index(s));
        ensure!(self.c_curr() == rcurr, "curr");
        for (i, e) in self.ents.iter().enumerate() {
            let (ce, se) = (c_entity(i), e.se());
            ensure!(
                (ce.on_rq != 0, ce.vruntime, ce.deadline)
                    == (se.on_rq(), se.vruntime(), se.deadline()),
                "task {i}: fair.c {ce:?}, the core {:?}",
                se.get()
            );
        }
        Ok(())
    }

    fn wake(&self, flags: WakeFlags) -> Wake {
        Wake {
            flags,
            wakee_idle: false,
            waker_ran_ns: 0,
            migration_cost_ns: 500_000,
        }
    }

    /// The wakeup check of task `i` on both sides (a tie decided differently takes
    /// stock's decision, as the harness does).
    fn decide(&mut self, i: usize, wf: c_int, wake: Wake) -> anyhow::Result<()> {
        // SAFETY: `i` is a task slot.
        unsafe { ffi::fcd_wakeup_preempt(i as c_int, wf) };
        let se = self.ents[i].se();
        if model::check_preempt_wakeup_fair(&mut self.rq, se, wake, self.need_resched, self.cfg) {
            self.need_resched = true;
        }
        let c = c_cfs_rq().need_resched != 0;
        if c != self.need_resched {
            let r = pick_eevdf(&self.rq, self.cfg).map(|s| self.index(s));
            // SAFETY: reads only.
            let cp = usize::try_from(unsafe { ffi::fcd_pick_eevdf() }).ok();
            ensure!(self.tie(cp, r), "wakeup of {i}: fair.c preempts: {c}");
            self.ties += 1;
            self.need_resched = c;
        }
        Ok(())
    }

    fn fork(&mut self, i: usize, lw: LoadWeight, slice: u64, custom: bool) -> anyhow::Result<()> {
        // SAFETY: `i` is a task slot.
        unsafe {
            ffi::fcd_new_task(
                i as c_int,
                lw.weight as c_ulong,
                lw.inv_weight,
                slice,
                custom.into(),
            );
            ffi::fcd_enqueue(i as c_int, self.flags.enqueue_initial);
        }
        let se = self.ents[i].se();
        se.set_load(lw);
        se.set_slice(slice);
        se.set_custom_slice(custom);
        model::enqueue_entity(&mut self.rq, se, EnqueueFlags::INITIAL, self.cfg);
        self.decide(i, self.flags.wf_fork, self.wake(WakeFlags::FORK))
    }

    fn tick(&mut self, d: u64) {
        // SAFETY: no index.
        unsafe { ffi::fcd_tick(d) };
        if model::update_curr(&mut self.rq, d, self.cfg) {
            self.need_resched = true;
        }
    }

    /// Task `i` wakes: a delayed one is requeued, a sleeping one enqueued.
    fn wakeup(&mut self, i: usize) -> anyhow::Result<()> {
        let se = self.ents[i].se();
        if se.sched_delayed() {
            // SAFETY: `i` is a task slot.
            unsafe { ffi::fcd_requeue_delayed(i as c_int) };
            model::requeue_delayed_entity(&mut self.rq, se, self.cfg);
            if self.c_curr() == Some(i) {
                return Ok(());
            }
        } else {
            // SAFETY: `i` is a task slot.
            unsafe { ffi::fcd_enqueue(i as c_int, self.flags.enqueue_wakeup) };
            model::enqueue_entity(&mut self.rq, se, EnqueueFlags::WAKEUP, self.cfg);
        }
        self.sample()?;
        self.decide(i, self.flags.wf_ttwu, self.wake(WakeFlags::NONE))
    }

    /// Current blocks (DELAY_DEQUEUE may keep it queued).
    fn sleep(&mut self) {
        let Some(c) = self.c_curr() else { return };
        // SAFETY: `c` is a task slot.
        unsafe { ffi::fcd_dequeue(c as c_int, self.flags.dequeue_sleep) };
        let se = self.ents[c].se();
        model::dequeue_entity(&mut self.rq, se, model::DequeueFlags::SLEEP, self.cfg);
    }

    /// `schedule()` on both sides, with the pick sampled first.
    fn schedule(&mut self) -> anyhow::Result<()> {
        let cfg = self.cfg;
        for _ in 0..=self.ents.len() {
            if self.rq.nr_queued() > 0 {
                self.sample()?;
            }
            let r = pick_eevdf(&self.rq, cfg).map(|s| self.index(s));
            // SAFETY: reads only.
            let cp = usize::try_from(unsafe { ffi::fcd_pick_eevdf() }).ok();
            let forced = self.tie(cp, r);
            let mut blocked = -1;
            // SAFETY: `blocked` is a valid out pointer.
            let c = unsafe { ffi::fcd_pick(&mut blocked) };
            let (c, blocked) = (usize::try_from(c).ok(), usize::try_from(blocked).ok());
            let r = if forced {
                self.ties += 1;
                match (c, blocked) {
                    (Some(i), _) => {
                        let se = self.ents[i].se();
                        model::set_next_entity(&mut self.rq, se, true, cfg);
                        Pick::Run(se)
                    }
                    (None, Some(i)) => {
                        let flags = model::DequeueFlags::SLEEP | model::DequeueFlags::DELAYED;
                        let se = self.ents[i].se();
                        model::dequeue_entity(&mut self.rq, se, flags, cfg);
                        Pick::Blocked(se)
                    }
                    (None, None) => {
                        model::put_prev_entity(&mut self.rq, cfg);
                        Pick::Idle
                    }
                }
            } else {
                model::pick_next_entity(&mut self.rq, cfg)
            };
            match (r, c, blocked) {
                (Pick::Blocked(se), None, Some(b)) if self.index(se) == b => continue,
                (Pick::Run(se), Some(i), _) if self.index(se) == i => {
                    // SAFETY: `i` is a task slot.
                    unsafe { ffi::fcd_switch(i as c_int) };
                    if !forced {
                        model::set_next_entity(&mut self.rq, se, true, cfg);
                    }
                }
                (Pick::Idle, None, None) => {
                    // SAFETY: -1 is idle.
                    unsafe { ffi::fcd_switch(-1) };
                    if !forced {
                        model::put_prev_entity(&mut self.rq, cfg);
                    }
                }
                _ => bail!("schedule: fair.c {c:?}/{blocked:?}, the core {r:?}"),
            }
            self.need_resched = false;
            return Ok(());
        }
        bail!("schedule picks blocked tasks forever")
    }
}

/// The mix's weight and slice for a new task.
fn task_params(mix: Mix, rng: &mut Rng) -> (LoadWeight, u64, bool) {
    let base = u64::from(BASE_SLICE_NS);
    match mix {
        Mix::Uniform | Mix::Lag => (LoadWeight::from_nice(0), base, false),
        Mix::Weights => (
            LoadWeight::from_nice(rng.range(0, 20) as i32 - 10),
            base,
            false,
        ),
        Mix::Slices => {
            // log-uniform in [100 µs, 100 ms]: 100 µs * 1000^u.
            let u = rng.below(1_000_001) as f64 / 1e6;
            let s = (100_000.0 * 1000f64.powf(u)) as u64;
            (
                LoadWeight::from_nice(0),
                s.clamp(100_000, 100_000_000),
                true,
            )
        }
    }
}

/// One step of the workload: current runs a burst, then may sleep; a sleeper may wake;
/// a reschedule request is served.
fn step(b: &mut Bench<'_>, mix: Mix, rng: &mut Rng, asleep: &mut Vec<usize>) -> anyhow::Result<()> {
    let lag = mix == Mix::Lag;
    if b.c_curr().is_none() {
        return b.schedule();
    }
    let burst = if lag {
        rng.range(5_000, 100_000)
    } else {
        rng.range(50_000, TICK_NSEC)
    };
    b.tick(burst);
    let (p_sleep, p_wake) = if lag { (40, 45) } else { (5, 6) };
    // Keep most tasks runnable: at most an eighth asleep.
    if rng.chance(p_sleep) && asleep.len() < b.ents.len() / 8 + 1 {
        if let Some(c) = b.c_curr() {
            b.sleep();
            asleep.push(c);
            b.schedule()?;
        }
    }
    if !asleep.is_empty() && rng.chance(p_wake) {
        let i = asleep.swap_remove(rng.below(asleep.len() as u64) as usize);
        b.wakeup(i)?;
    }
    if b.need_resched {
        b.schedule()?;
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(args.tasks >= 2, "at least 2 tasks");
    // SAFETY: reads a constant.
    let max = usize::try_from(unsafe { ffi::fcd_max_tasks() })?;
    ensure!(args.tasks <= max, "the C side has room for {max} tasks");

    let mut word = 0u64;
    let mut features = Features::EMPTY.with(Features::ELIGIBLE, true);
    for name in TOGGLES.iter().chain(["WAKEUP_PREEMPTION"].iter()) {
        let on = !DEFAULT_OFF.contains(name);
        let c = CString::new(*name)?;
        // SAFETY: `c` is NUL-terminated and outlives the call.
        let bit = u32::try_from(unsafe { ffi::fcd_feature_bit(c.as_ptr()) })?;
        if on {
            word |= 1 << bit;
        }
        if let Some(f) = Features::by_name(name) {
            features = features.with(f, on);
        }
    }
    let cfg = Config {
        features,
        base_slice_ns: u64::from(BASE_SLICE_NS),
        tick_nsec: TICK_NSEC,
        normalized_base_slice_ns: u64::from(BASE_SLICE_NS),
    };
    // SAFETY: initializes every global the C uses.
    unsafe { ffi::fcd_reset(word, BASE_SLICE_NS, TICK_NSEC, ZERO_VRUNTIME) };
    let ents: Vec<UserEntity> = (0..args.tasks)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let mut b = Bench {
        ents: &ents,
        rq: UserRunqueue::with_zero_vruntime(ZERO_VRUNTIME),
        cfg,
        // SAFETY: a constant initialized at load time.
        flags: unsafe { ffi::fcd_flags },
        need_resched: false,
        measure: false,
        samples: 0,
        ties: 0,
        sum_nr: 0,
        tree_picks: 0,
        earliest_eligible: 0,
        shortcut: 0,
        rust: Counts::default(),
        stock: Counts::default(),
    };
    let mut rng = Rng::new(args.seed);
    for i in 0..args.tasks {
        let (lw, slice, custom) = task_params(args.mix, &mut rng);
        b.fork(i, lw, slice, custom)?;
        if b.need_resched {
            b.schedule()?;
        }
    }
    let mut asleep = Vec::new();
    for _ in 0..args.warmup_steps_per_task * args.tasks as u64 {
        step(&mut b, args.mix, &mut rng, &mut asleep)?;
    }
    b.check_state()?;
    let warm_ties = b.ties;
    b.ties = 0;
    b.measure = true;
    while b.samples < args.samples {
        step(&mut b, args.mix, &mut rng, &mut asleep)?;
    }
    let pct = |n: u64| 100.0 * n as f64 / b.samples as f64;
    println!(
        "pick-cost: mix {:?}, {} tasks, {} samples (warm-up ties {warm_ties}), mean nr_running {:.1}, ties {}",
        args.mix,
        args.tasks,
        b.samples,
        b.sum_nr as f64 / b.samples as f64,
        b.ties
    );
    for (name, c) in [("rust", &b.rust), ("stock", &b.stock)] {
        println!(
            "{name}: only {:.1}%  parity {:.1}%  leftmost {:.1}%  descent {:.1}%",
            pct(c.only),
            pct(c.parity),
            pct(c.leftmost),
            pct(c.descent)
        );
    }
    println!(
        "tree: {} picks reach the tree; its earliest deadline is eligible in {:.1}% of them; the core's shortcut (E) decides {:.1}% of all picks",
        b.tree_picks,
        100.0 * b.earliest_eligible as f64 / b.tree_picks.max(1) as f64,
        pct(b.shortcut)
    );
    println!("samples {}", b.samples);
    Ok(())
}
