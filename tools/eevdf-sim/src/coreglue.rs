//! The only module that talks to the `sched_eevdf` core.
//!
//! Two runqueues are built on the core's userspace implementation of its [`Runqueue`]
//! trait:
//!
//! - [`SeedRq`] for the seed model (section 1): every entity queued, none current; its
//!   inputs, [`EntitySpec`] and [`SeedMode`], are defined here too, so that the seed model
//!   depends on this module and not the other way round;
//! - [`FairRq`] for the kernel-faithful mode (section 2): fair.c's call sequence.
//!
//! Neither computes V, eligibility, a pick, a deadline, a placement or a lag: they call
//! `avg_vruntime`, `pick_eevdf`, `update_curr`, `enqueue_entity` (`place_entity`),
//! `dequeue_entity`, `requeue_delayed_entity`, `check_preempt_wakeup_fair`, `schedule`
//! (`pick_next_entity`, then `put_prev_entity` and `set_next_entity`) and
//! `sched_attr_slice` (the seed model moves its entities in the tree with `__enqueue_entity`
//! and `__dequeue_entity`), and report what the core answered; a lag is `V − v_i` with the
//! core's `avg_vruntime` and wrap-safe `vdelta`.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Result};

use sched_eevdf::load::{scale_load, LoadWeight, SCHED_PRIO_TO_WEIGHT};
use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::Features;
use sched_eevdf::{self as eevdf, Config, DequeueFlags, EnqueueFlags, Pick, Wake, WakeFlags};
use sched_eevdf::{Entity, Runqueue};

/// A feature set built from names, checked against the core's one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureSet(pub Features);

impl FeatureSet {
    /// Checks that `name` is in the core's feature table.
    pub fn check_name(name: &str) -> Result<Features> {
        Features::by_name(name).ok_or_else(|| {
            let known: Vec<&str> = Features::TABLE.iter().map(|i| i.name).collect();
            anyhow!(
                "unknown feature {name:?}; the core's features are: {}",
                known.join(" ")
            )
        })
    }

    /// The core's defaults with the named flags set or cleared.
    pub fn from_names(names: &BTreeMap<String, bool>) -> Result<Self> {
        let mut f = FeatureSet(Features::DEFAULT);
        for (n, on) in names {
            f.set(n, *on)?;
        }
        Ok(f)
    }

    /// Sets or clears one flag by name.
    pub fn set(&mut self, name: &str, on: bool) -> Result<()> {
        let flag = Self::check_name(name)?;
        self.0 = self.0.with(flag, on);
        Ok(())
    }

    /// Every flag with its state, in table order.
    pub fn list(&self) -> Vec<(String, bool)> {
        Features::TABLE
            .iter()
            .map(|i| (i.name.to_string(), self.0.contains(i.flag)))
            .collect()
    }

    /// The core's default for a flag, `None` for an unknown name.
    pub fn default_of(name: &str) -> Option<bool> {
        Features::TABLE
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.default)
    }
}

/// One entity of the seed model, as [`SeedRq`] queues it (the command line's `-e v,w,r`,
/// parsed in [`crate::seed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntitySpec {
    /// Initial virtual runtime, in the seed's virtual time units.
    pub vruntime: u64,
    /// Weight; 1024 is nice 0.
    pub weight: u64,
    /// Request length, in the seed's real time units.
    pub request: u64,
}

impl EntitySpec {
    /// `d_i = ⌊1024·r_i / w_i⌋`, the virtual length of one request.
    pub fn vslice(&self) -> u64 {
        1024 * self.request / self.weight
    }
}

/// The seed program's flags as a feature choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedMode {
    /// `ELIGIBLE` (cleared by `-n`).
    pub eligible: bool,
    /// `BIAS_ELIGIBLE` (set by `-b`).
    pub bias: bool,
}

impl FeatureSet {
    fn seed(mode: SeedMode) -> Features {
        Features::DEFAULT
            .with(Features::ELIGIBLE, mode.eligible)
            .with(Features::BIAS_ELIGIBLE, mode.bias)
    }
}

/// The index of an entity in its arena (handles are references into one slice).
fn index_in(arena: &[UserEntity], se: UserSe<'_>) -> usize {
    let base = arena.as_ptr() as usize;
    let p = se.get() as *const UserEntity as usize;
    (p - base) / std::mem::size_of::<UserEntity>()
}

/// The seed model's runqueue: every entity queued in the core's tree, none current.
///
/// # Units and the tie-break
///
/// The core receives the seed's vruntimes multiplied by [`SeedRq::SCALE`] (16), its
/// requests (slices) multiplied by the same factor, and its deadlines as
/// `16·deadline + index`. Then:
///
/// - eligibility, `Σ w_j·(v_j − v_i) + 1024·Σ r_j ≥ 0`, is the seed's test multiplied by
///   16 on both sides, so it gives the same answer (BIAS_ELIGIBLE's term included);
/// - `V_core = ⌊16·Σ w·v / Σ w⌋`, and `⌊V_core / 16⌋ = ⌊Σ w·v / Σ w⌋`, the seed's `V`;
/// - deadlines keep their order, and two equal seed deadlines differ in the core by their
///   indices (< 16), so the core's "earliest deadline" is the seed's "earliest deadline,
///   lowest index on a tie". Without this the core would break the tie by tree order
///   (smaller vruntime first), which is not the seed's rule.
///
/// Weights go in as high-resolution weights (`scale_load(w)`), so the core's scaled-down
/// weight is the seed's `w` (which must therefore be at least 2, the kernel's minimum).
pub struct SeedRq<'a> {
    arena: &'a [UserEntity],
    rq: UserRunqueue<'a>,
    cfg: Config,
    /// Seed-unit state: vruntime, deadline, d_i, weight.
    state: Vec<(u64, u64, u64, u64)>,
}

impl<'a> SeedRq<'a> {
    /// The scale factor between the seed's units and the core's (> 8 entities' indices).
    pub const SCALE: u64 = 16;

    /// The entities' storage; build it first, then [`SeedRq::new`] borrows it.
    pub fn arena(specs: &[EntitySpec]) -> Vec<UserEntity> {
        specs
            .iter()
            .map(|s| UserEntity::new(LoadWeight::from_weight(scale_load(s.weight))))
            .collect()
    }

    /// Queues every entity at `v_i` with deadline `v_i + d_i`.
    pub fn new(arena: &'a [UserEntity], specs: &[EntitySpec], mode: SeedMode) -> Result<Self> {
        if arena.len() != specs.len() {
            bail!("internal: arena and entity list differ");
        }
        let cfg = Config {
            features: FeatureSet::seed(mode),
            ..Config::DEFAULT
        };
        let mut rq = UserRunqueue::new();
        let mut state = Vec::new();
        for (i, (e, s)) in arena.iter().zip(specs).enumerate() {
            if s.weight < 2 {
                bail!(
                    "entity {}: weight {} is below the kernel's minimum scaled-down weight 2",
                    i,
                    s.weight
                );
            }
            let d = s.vslice();
            let se = e.se();
            se.set_slice(s.request * Self::SCALE);
            se.set_custom_slice(true);
            state.push((s.vruntime, s.vruntime + d, d, s.weight));
            Self::load_fields(se, s.vruntime, s.vruntime + d, i);
            eevdf::__enqueue_entity(&mut rq, se, cfg.features);
            se.set_on_rq(true);
        }
        rq.set_nr_queued(specs.len() as u32);
        Ok(SeedRq {
            arena,
            rq,
            cfg,
            state,
        })
    }

    fn load_fields(se: UserSe<'_>, v: u64, dl: u64, i: usize) {
        se.set_vruntime(v * Self::SCALE);
        se.set_deadline(dl * Self::SCALE + i as u64);
    }

    /// The core's `avg_vruntime()`, in seed units: `⌊Σ w·v / Σ w⌋`.
    pub fn avg_vruntime(&mut self) -> u64 {
        eevdf::avg_vruntime(&mut self.rq) / Self::SCALE
    }

    /// The core's `pick_eevdf()`, as an index.
    pub fn pick(&self) -> Option<usize> {
        eevdf::pick_eevdf(&self.rq, self.cfg).map(|se| index_in(self.arena, se))
    }

    /// Entity `i`'s vruntime, seed units.
    pub fn vruntime(&self, i: usize) -> u64 {
        self.state[i].0
    }

    /// Entity `i`'s deadline, seed units.
    pub fn deadline(&self, i: usize) -> u64 {
        self.state[i].1
    }

    /// The seed model's run: entity `i` runs its whole request. Returns the real time it
    /// took, `⌊(deadline − v)·w / 1024⌋`; its vruntime becomes its deadline and the
    /// deadline moves on by `d_i`. The entity is re-keyed in the core's tree
    /// (`__dequeue_entity` / `__enqueue_entity` keep the core's sums).
    pub fn run_request(&mut self, i: usize) -> u64 {
        let (v, dl, d, w) = self.state[i];
        let ran = (dl - v) * w / 1024;
        self.state[i] = (dl, dl + d, d, w);
        let se = self.arena[i].se();
        eevdf::__dequeue_entity(&mut self.rq, se, self.cfg.features);
        Self::load_fields(se, dl, dl + d, i);
        eevdf::__enqueue_entity(&mut self.rq, se, self.cfg.features);
        ran
    }

    /// The core's invariant checker over this runqueue (tests).
    pub fn check(&self) -> Result<()> {
        sched_eevdf::check_invariants(&self.rq)
            .map(|_| ())
            .map_err(|e| anyhow!("core invariant: {e:?}"))
    }
}

/// How a task's weight was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightSpec {
    /// A nice value: `set_load_weight()` with the precomputed inverse.
    Nice(i32),
    /// A user-visible weight (nice 0 = 1024), scaled up like a cgroup share.
    Weight(u64),
}

/// The user-visible weight of a nice value (`sched_prio_to_weight[]`).
pub fn nice_to_weight(nice: i32) -> u64 {
    let idx = (nice.clamp(-20, 19) + 20) as usize;
    u64::from(SCHED_PRIO_TO_WEIGHT[idx])
}

/// The kernel-faithful mode's runqueue: the core's [`UserRunqueue`] over an arena of
/// entities, one per task, driven in fair.c's order by [`crate::sim`].
///
/// Each method names the fair.c function it stands for. `delta_ns` arguments are the
/// running task's execution time since the last `update_curr`, which the method hands to
/// the core's `update_curr` where fair.c calls it.
pub struct FairRq<'a> {
    arena: &'a [UserEntity],
    rq: UserRunqueue<'a>,
    cfg: Config,
    initial: Features,
    /// Per task: dequeues whose saved lag was a lag error (the core's `lag_error`, what the
    /// kernel's `lag_error` counter counts).
    lag_errors: Vec<u64>,
    migration_cost_ns: u64,
    /// Per task: lags the core's limit clamped when it saved them, `[positive, negative]`
    /// (the kernel's `lag_clamped_pos` / `lag_clamped_neg`).
    clamps: Vec<[u64; 2]>,
}

impl<'a> FairRq<'a> {
    /// The entities' storage, one per task: weight and `sched_attr.sched_runtime` (ns, 0
    /// for the base slice; the core clamps a custom slice to [100 µs, 100 ms]).
    pub fn arena(tasks: &[(WeightSpec, u64)], base_slice_ns: u64) -> Vec<UserEntity> {
        tasks
            .iter()
            .map(|&(w, runtime)| {
                let lw = match w {
                    WeightSpec::Nice(n) => LoadWeight::from_nice(n),
                    WeightSpec::Weight(w) => LoadWeight::from_weight(scale_load(w)),
                };
                let e = UserEntity::new(lw);
                let (slice, custom) = eevdf::sched_attr_slice(runtime, base_slice_ns);
                e.se().set_slice(slice);
                e.se().set_custom_slice(custom);
                e
            })
            .collect()
    }

    /// An empty runqueue over `arena`; `migration_cost_ns` is `sysctl_sched_migration_cost`
    /// (NEXT_BUDDY_EEVDF's `preempt_sync()` reads it).
    pub fn new(
        arena: &'a [UserEntity],
        base_slice_ns: u64,
        tick_ns: u64,
        migration_cost_ns: u64,
        features: FeatureSet,
    ) -> Self {
        FairRq {
            arena,
            rq: UserRunqueue::new(),
            cfg: Config {
                features: features.0,
                base_slice_ns,
                tick_nsec: tick_ns,
                // One CPU: the kernel's scaling factor is 1.
                normalized_base_slice_ns: base_slice_ns,
            },
            initial: features.0,
            lag_errors: vec![0; arena.len()],
            migration_cost_ns,
            clamps: vec![[0; 2]; arena.len()],
        }
    }

    /// Counts a lag error of task `i` if its lag `V - v_i` (not clamped, `v` the `V` the
    /// dequeue saves it against) is one; call it for every dequeue that saves a lag.
    fn count_lag_error(&mut self, i: usize, v: u64) {
        let se = self.se(i);
        let lag = sched_eevdf::vtime::vdelta(v, se.vruntime());
        if eevdf::lag_error(lag, se, self.cfg) {
            self.lag_errors[i] += 1;
        }
    }

    /// Task `i`'s lag errors so far.
    pub fn lag_errors(&self, i: usize) -> u64 {
        self.lag_errors[i]
    }

    /// Counts a clamp if the core's lag limit clamps task `i`'s lag now: asked right
    /// before a core operation that saves the lag (`update_entity_lag()`), of the state it
    /// reads, with the core's own `entity_lag()` against the unclamped `V − v_i`.
    fn count_lag_clamp(&mut self, i: usize) {
        let se = self.se(i);
        let v = eevdf::avg_vruntime_peek(&self.rq);
        let raw = sched_eevdf::vtime::vdelta(v, se.vruntime());
        if eevdf::entity_lag(&self.rq, v, se, self.cfg) != raw {
            self.clamps[i][usize::from(raw < 0)] += 1;
        }
    }

    /// Task `i`'s clamped lags so far, `[positive, negative]`.
    pub fn lag_clamps(&self, i: usize) -> [u64; 2] {
        self.clamps[i]
    }

    fn se(&self, i: usize) -> UserSe<'a> {
        self.arena[i].se()
    }

    /// `update_curr()`: returns the core's resched answer.
    pub fn update_curr(&mut self, delta_ns: u64) -> bool {
        eevdf::update_curr(&mut self.rq, delta_ns, self.cfg)
    }

    /// `task_fork_fair()` + `wake_up_new_task()`: `update_curr`, then
    /// `enqueue_entity(ENQUEUE_INITIAL)` (PLACE_DEADLINE_INITIAL's half slice). Returns the
    /// resched answer of `update_curr`.
    pub fn enqueue_new(&mut self, i: usize, delta_ns: u64) -> bool {
        let r = self.update_curr(delta_ns);
        let se = self.se(i);
        eevdf::enqueue_entity(&mut self.rq, se, EnqueueFlags::INITIAL, self.cfg);
        r
    }

    /// `try_to_wake_up()`'s enqueue: a delayed entity is requeued
    /// (`requeue_delayed_entity`, no `update_curr` on that path), any other is enqueued
    /// with `ENQUEUE_WAKEUP` after `update_curr` (PLACE_LAG restores its saved lag).
    /// Returns the resched answer of `update_curr`.
    pub fn wake(&mut self, i: usize, delta_ns: u64) -> bool {
        let se = self.se(i);
        if se.sched_delayed() && se.on_rq() {
            if self.cfg.feat(Features::DELAY_ZERO) {
                self.count_lag_clamp(i);
            }
            eevdf::requeue_delayed_entity(&mut self.rq, se, self.cfg);
            false
        } else {
            let r = self.update_curr(delta_ns);
            eevdf::enqueue_entity(&mut self.rq, se, EnqueueFlags::WAKEUP, self.cfg);
            r
        }
    }

    /// `check_preempt_wakeup_fair()` for task `i`, woken with `flags` by the running task
    /// (or an interrupt): unless a reschedule is pending (`need_resched`, which ends it
    /// early, after 6.12's NEXT_BUDDY marking), `update_curr`, then the core's decision
    /// (the model's `check_preempt_wakeup_fair`: 6.12's, or 6.19's with NEXT_BUDDY_EEVDF).
    /// `waker_ran_ns` is what `preempt_sync()` reads. True if current must be rescheduled
    /// (either answer).
    pub fn check_preempt_wakeup(
        &mut self,
        i: usize,
        delta_ns: u64,
        flags: WakeFlags,
        waker_ran_ns: u64,
        need_resched: bool,
    ) -> bool {
        let r = !need_resched && self.update_curr(delta_ns);
        let wake = Wake {
            flags,
            wakee_idle: false,
            waker_ran_ns,
            migration_cost_ns: self.migration_cost_ns,
        };
        let se = self.se(i);
        let p = eevdf::check_preempt_wakeup_fair(&mut self.rq, se, wake, need_resched, self.cfg);
        r || p
    }

    /// `sched_setattr()` of task `i`'s `sched_runtime` (ns): `__sched_setscheduler()`'s
    /// sched_change, `update_curr` of the running task first, then
    /// [`eevdf::sched_setattr_slice`] (`set_next_entity()` with `first` false for a running
    /// task). Returns the resched answer of `update_curr`.
    pub fn sched_change(&mut self, i: usize, delta_ns: u64, runtime_ns: u64) -> bool {
        let r = self.update_curr(delta_ns);
        let se = self.se(i);
        eevdf::sched_setattr_slice(&mut self.rq, se, runtime_ns, self.cfg);
        r
    }

    /// `dequeue_entity(DEQUEUE_SLEEP)` of the running task, after `update_curr`. Returns
    /// whether DELAY_DEQUEUE kept it queued (delayed).
    pub fn dequeue_sleep(&mut self, i: usize, delta_ns: u64) -> bool {
        self.update_curr(delta_ns);
        let se = self.se(i);
        let v = eevdf::avg_vruntime_peek(&self.rq);
        let before = self.clamps[i];
        self.count_lag_clamp(i);
        let left = eevdf::dequeue_entity(&mut self.rq, se, DequeueFlags::SLEEP, self.cfg);
        if left {
            self.count_lag_error(i, v);
        } else {
            // Kept queued: no lag was saved.
            self.clamps[i] = before;
        }
        !left
    }

    /// An exit: the task leaves the runqueue for good (never delayed: `DEQUEUE_SPECIAL`;
    /// a delayed entity finishes its delayed dequeue). `delta_ns` is used if it is current.
    pub fn dequeue_exit(&mut self, i: usize, delta_ns: u64) {
        let se = self.se(i);
        if self.rq.curr() == Some(se) {
            self.update_curr(delta_ns);
        }
        if se.on_rq() {
            let flags = if se.sched_delayed() {
                DequeueFlags::SLEEP | DequeueFlags::DELAYED
            } else {
                DequeueFlags::SLEEP | DequeueFlags::SPECIAL
            };
            let v = eevdf::avg_vruntime_peek(&self.rq);
            self.count_lag_clamp(i);
            eevdf::dequeue_entity(&mut self.rq, se, flags, self.cfg);
            self.count_lag_error(i, v);
        }
    }

    /// `pick_task_fair()` + `put_prev_entity()` / `set_next_entity()`: `update_curr` for a
    /// still-queued current, then the core's `schedule()` until it returns a task or idle
    /// (a delayed pick is dequeued for real by the core and the pick repeats). Returns the
    /// new current.
    pub fn pick_next(&mut self, delta_ns: u64) -> Option<usize> {
        if self.rq.curr().is_some_and(|c| c.on_rq()) {
            self.update_curr(delta_ns);
        }
        loop {
            // A delayed pick is dequeued for real, its lag saved against this V.
            let v = eevdf::avg_vruntime_peek(&self.rq);
            // A delayed pick is dequeued for real, its lag saved: the same pick, asked first.
            if let Some(se) = eevdf::pick_eevdf(&self.rq, self.cfg).filter(|se| se.sched_delayed())
            {
                self.count_lag_clamp(index_in(self.arena, se));
            }
            match eevdf::schedule(&mut self.rq, self.cfg) {
                Pick::Run(se) => return Some(index_in(self.arena, se)),
                Pick::Blocked(se) => self.count_lag_error(index_in(self.arena, se), v),
                Pick::Idle => return None,
            }
        }
    }

    /// Task `i`'s virtual lag `V − v_i` (not clamped), with `V` from the core's
    /// `avg_vruntime()`, in virtual ns.
    pub fn lag(&mut self, i: usize) -> i64 {
        let v = eevdf::avg_vruntime(&mut self.rq);
        sched_eevdf::vtime::vdelta(v, self.se(i).vruntime())
    }

    /// Task `i`'s current slice (request), ns.
    pub fn slice_ns(&self, i: usize) -> u64 {
        self.se(i).slice()
    }

    /// Whether task `i` is a delayed (sleeping but queued) entity.
    pub fn is_delayed(&self, i: usize) -> bool {
        self.se(i).sched_delayed()
    }

    /// Sets or clears a feature from now on.
    pub fn set_feature(&mut self, name: &str, on: bool) -> Result<()> {
        let mut f = FeatureSet(self.cfg.features);
        f.set(name, on)?;
        self.cfg.features = f.0;
        Ok(())
    }

    /// The feature set the run started with.
    pub fn initial_features(&self) -> Vec<(String, bool)> {
        FeatureSet(self.initial).list()
    }

    /// The core's invariant checker (tests and `debug_assertions` runs).
    pub fn check(&self) -> Result<()> {
        sched_eevdf::check_invariants(&self.rq)
            .map(|_| ())
            .map_err(|e| anyhow!("core invariant: {e:?}"))
    }
}
