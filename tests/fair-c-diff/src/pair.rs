// SPDX-License-Identifier: GPL-2.0

//! Both sides in lockstep: fair.c's C ([`CSide`]) and the Rust core driven by the model
//! of fair.c's outer logic over a plain-Rust runqueue ([`UserRunqueue`]). Each operation
//! is applied to both; then every observable is compared.

use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

use crate::c::{CPick, CSide, EntityState, Flags};
use crate::ops::{Arrival, Op, Setup, Weight, PLACE_REL_DEADLINE, TOGGLES};

/// Why the two sides differ, when they may.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Not explained: a divergence.
    Real,
    /// Two eligible entities share the earliest deadline and the sides pick different
    /// ones (stock: the first enqueued; the core: the smaller vruntime). Both sides then
    /// take stock's choice and go on.
    Tie,
    /// fair.c's 64-bit eligibility product `key * load` overflowed (the core computes it
    /// exactly). The sequence ends.
    Overflow,
    /// PLACE_REL_DEADLINE was switched off while a relative deadline was saved: stock keeps
    /// the stale flag, the core consumes it. The sequence ends.
    StaleRelDeadline,
    /// Stock's root `min_slice` is stale after a rotation (its callbacks copy only
    /// `min_vruntime`); the core's is the true minimum. Nothing else reads it here.
    StockMinSlice,
}

/// A difference between the sides after an operation.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// What differs.
    pub what: String,
    /// fair.c's value.
    pub c: String,
    /// The core's value.
    pub rust: String,
    /// Why, if known.
    pub class: Class,
}

/// The two sides.
pub struct Pair<'a> {
    c: CSide,
    flags: Flags,
    ents: &'a [UserEntity],
    rq: UserRunqueue<'a>,
    cfg: Config,
    need_resched: bool,
    toggles: u16,
    /// Task slots in use (created by [`Op::New`]).
    alive: Vec<bool>,
    /// Tasks moved away while queued ([`Op::MigrateOut`]), which arrive by
    /// [`Arrival::Attach`].
    away: Vec<bool>,
    /// Tie-broken picks seen (observations, not divergences).
    pub ties: u64,
    /// What the sequence reached.
    pub cov: Coverage,
}

/// What a run reached: how often the decisions were taken and compared.
#[derive(Clone, Copy, Debug, Default)]
pub struct Coverage {
    /// Wakeup decisions compared that preempted.
    pub preempted: u64,
    /// Wakeup decisions compared that did not.
    pub not_preempted: u64,
    /// Wakeup checks that found a reschedule pending (fair.c returns early).
    pub pending: u64,
    /// Picks by `schedule()` compared.
    pub picks: u64,
    /// Of those, picks that finished a delayed dequeue.
    pub blocked: u64,
    /// Sleeps that DELAY_DEQUEUE delayed.
    pub delayed: u64,
    /// Comparisons with current slice-protected.
    pub protected: u64,
    /// The largest `|v_i - V|` of a queued entity seen, in ns of virtual time.
    pub max_spread: u64,
}

impl Coverage {
    /// Adds `o`'s counts (the largest spread of both).
    pub fn add(&mut self, o: &Coverage) {
        self.preempted += o.preempted;
        self.not_preempted += o.not_preempted;
        self.pending += o.pending;
        self.picks += o.picks;
        self.blocked += o.blocked;
        self.delayed += o.delayed;
        self.protected += o.protected;
        self.max_spread = self.max_spread.max(o.max_spread);
    }
}

fn feature_word(toggles: u16) -> anyhow::Result<u64> {
    let mut word = 0u64;
    let bit = |name: &str| {
        CSide::feature_bit(name)
            .ok_or_else(|| anyhow::anyhow!("features.h of the tarball has no {name}"))
    };
    for (k, name) in TOGGLES.iter().enumerate() {
        if toggles & (1 << k) != 0 {
            word |= 1 << bit(name)?;
        }
    }
    word |= 1 << bit("WAKEUP_PREEMPTION")?;
    Ok(word)
}

fn rust_features(toggles: u16) -> anyhow::Result<Features> {
    let mut f = Features::EMPTY.with(Features::ELIGIBLE, true);
    for (k, name) in TOGGLES.iter().enumerate() {
        let flag = Features::by_name(name)
            .ok_or_else(|| anyhow::anyhow!("the feature table has no {name}"))?;
        f = f.with(flag, toggles & (1 << k) != 0);
    }
    Ok(f)
}

fn load_weight(w: Weight) -> LoadWeight {
    match w {
        Weight::Nice(n) => LoadWeight::from_nice(i32::from(n)),
        Weight::Shares(s) => LoadWeight {
            weight: s,
            inv_weight: 0,
        },
    }
}

impl<'a> Pair<'a> {
    /// Both sides at `setup`; `ents` are the Rust side's entities (`setup.tasks` of them).
    pub fn new(ents: &'a [UserEntity], setup: &Setup) -> anyhow::Result<Pair<'a>> {
        anyhow::ensure!(ents.len() == setup.tasks, "one entity per task");
        let c = CSide::new(
            setup.tasks,
            feature_word(setup.toggles)?,
            setup.base_slice_ns,
            setup.tick_nsec,
            setup.zero_vruntime,
        )?;
        let cfg = Config {
            features: rust_features(setup.toggles)?,
            base_slice_ns: u64::from(setup.base_slice_ns),
            tick_nsec: setup.tick_nsec,
            normalized_base_slice_ns: u64::from(setup.base_slice_ns),
        };
        Ok(Pair {
            c,
            flags: CSide::flags(),
            ents,
            rq: UserRunqueue::with_zero_vruntime(setup.zero_vruntime),
            cfg,
            need_resched: false,
            toggles: setup.toggles,
            alive: vec![false; setup.tasks],
            away: vec![false; setup.tasks],
            ties: 0,
            cov: Coverage::default(),
        })
    }

    fn se(&self, i: usize) -> UserSe<'a> {
        self.ents[i].se()
    }

    fn index(&self, se: UserSe<'a>) -> usize {
        self.ents
            .iter()
            .position(|e| std::ptr::eq(e, se.get()))
            .unwrap_or(usize::MAX)
    }

    fn rust_curr(&self) -> Option<usize> {
        self.rq.curr().map(|s| self.index(s))
    }

    /// Whether a reschedule is pending (the core's side; fair.c's is compared to it).
    pub fn need_resched(&self) -> bool {
        self.need_resched
    }

    /// The C's current task.
    pub fn curr(&self) -> Option<usize> {
        usize::try_from(self.c.cfs_rq().curr).ok()
    }

    /// fair.c's view of task `i`.
    pub(crate) fn entity(&self, i: usize) -> EntityState {
        self.c.entity(i)
    }

    /// Whether task `i` exists.
    pub fn alive(&self, i: usize) -> bool {
        self.alive[i]
    }

    /// Whether `op` can run in the current state (fair.c's, which the core's equals while
    /// nothing diverged). A shrunk sequence skips the operations that cannot.
    pub fn valid(&self, op: &Op) -> bool {
        let curr = self.curr();
        let on = |i: usize| self.alive[i] && self.c.entity(i).on_rq != 0;
        let delayed = |i: usize| self.c.entity(i).sched_delayed != 0;
        let curr_runs = curr.is_some_and(|c| on(c) && !delayed(c));
        match *op {
            Op::Tick(_) | Op::Schedule | Op::Flip(_) => true,
            // A fork is never current; a dequeued current that is queued again is a group
            // entity whose queue emptied and filled while it ran (Wake), not a new task.
            Op::New { i, .. } => i < self.alive.len() && !on(i) && curr != Some(i),
            // Current queued again is a group entity (see New), and those arrive with
            // ENQUEUE_WAKEUP only: enqueue_task_fair() passes no other flag up.
            Op::Wake { i, how, .. } => {
                self.alive[i]
                    && !on(i)
                    && (how == Arrival::Attach) == self.away[i]
                    && (how == Arrival::Wakeup || curr != Some(i))
            }
            Op::WakeDelayed { i } => on(i) && delayed(i),
            Op::Sleep { .. } | Op::Yield => curr_runs,
            Op::MigrateOut { i } => on(i) && !delayed(i) && curr != Some(i),
            Op::Reweight { i, .. } => self.alive[i],
            // A delayed task too: 6.12's sched_change dequeues it for good (DEQUEUE_SAVE is
            // not a sleep) and enqueues it again still marked delayed.
            Op::Renice { i, .. } | Op::Setattr { i, .. } => {
                self.alive[i] && (curr != Some(i) || curr_runs)
            }
        }
    }

    /// The wakeup check on both sides for woken task `i`.
    fn wakeup_preempt(&mut self, i: usize, wf: i32, wake: Wake) {
        self.c.wakeup_preempt(i, wf);
        let need = self.need_resched;
        let se = self.se(i);
        if model::check_preempt_wakeup_fair(&mut self.rq, se, wake, need, self.cfg) {
            self.need_resched = true;
        }
    }

    fn wake(&self, flags: WakeFlags) -> Wake {
        Wake {
            flags,
            wakee_idle: false,
            waker_ran_ns: 0,
            migration_cost_ns: 500_000,
        }
    }

    /// Applies `op` to both sides. Returns a mismatch of the schedule's pick or of a
    /// wakeup decision, which the step's own comparison cannot see afterwards.
    pub fn apply(&mut self, op: &Op) -> Option<Mismatch> {
        let f = self.flags;
        let cfg = self.cfg;
        match *op {
            Op::Tick(d) => {
                self.c.tick(d);
                if model::update_curr(&mut self.rq, d, cfg) {
                    self.need_resched = true;
                }
            }
            Op::New {
                i,
                weight,
                slice,
                custom,
            } => {
                let lw = load_weight(weight);
                self.c.new_task(i, lw.weight, lw.inv_weight, slice, custom);
                let se = self.se(i);
                se.set_vruntime(0);
                se.set_vlag(0);
                se.set_deadline(0);
                se.set_vprot(0);
                se.set_rel_deadline(false);
                se.set_sched_delayed(false);
                se.set_load(lw);
                se.set_slice(slice);
                se.set_custom_slice(custom);
                self.alive[i] = true;
                self.away[i] = false;
                self.c.enqueue(i, f.enqueue_initial);
                model::enqueue_entity(&mut self.rq, se, EnqueueFlags::INITIAL, cfg);
                return self.decide(i, f.wf_fork, self.wake(WakeFlags::FORK));
            }
            Op::Wake { i, how, sync } => {
                let (cflags, mut wf) = match how {
                    Arrival::Wakeup => (f.enqueue_wakeup, f.wf_ttwu),
                    Arrival::WakeupMigrated => (f.enqueue_wakeup | f.enqueue_migrated, f.wf_ttwu),
                    Arrival::Attach => (f.enqueue_migrated, 0),
                };
                let mut rf = WakeFlags::NONE;
                if sync {
                    wf |= f.wf_sync;
                    rf = WakeFlags::SYNC;
                }
                let rflags = if how == Arrival::Attach {
                    EnqueueFlags::NONE
                } else {
                    EnqueueFlags::WAKEUP
                };
                self.away[i] = false;
                self.c.enqueue(i, cflags);
                let se = self.se(i);
                model::enqueue_entity(&mut self.rq, se, rflags, cfg);
                return self.decide(i, wf, self.wake(rf));
            }
            Op::WakeDelayed { i } => {
                self.c.requeue_delayed(i);
                let se = self.se(i);
                model::requeue_delayed_entity(&mut self.rq, se, cfg);
                if self.curr() != Some(i) {
                    return self.decide(i, f.wf_ttwu, self.wake(WakeFlags::NONE));
                }
            }
            Op::Sleep { special } => {
                let c = self.curr()?;
                let (mut cf, mut rf) = (f.dequeue_sleep, model::DequeueFlags::SLEEP);
                if special {
                    cf |= f.dequeue_special;
                    rf = rf | model::DequeueFlags::SPECIAL;
                }
                if !self.c.dequeue(c, cf) {
                    self.cov.delayed += 1;
                }
                let se = self.se(c);
                model::dequeue_entity(&mut self.rq, se, rf, cfg);
            }
            Op::MigrateOut { i } => {
                self.away[i] = true;
                self.c.dequeue(i, 0);
                let se = self.se(i);
                model::dequeue_entity(&mut self.rq, se, model::DequeueFlags::NONE, cfg);
            }
            Op::Reweight { i, weight } => {
                self.c.reweight(i, weight);
                let se = self.se(i);
                reweight_entity(&mut self.rq, se, LoadWeight::from_weight(weight), cfg);
            }
            Op::Renice { i, nice } => {
                let lw = LoadWeight::from_nice(i32::from(nice));
                self.c.renice(i, lw.weight, lw.inv_weight);
                let se = self.se(i);
                model::renice(&mut self.rq, se, lw, cfg);
            }
            Op::Setattr { i, runtime } => {
                self.c.setattr(i, runtime);
                let se = self.se(i);
                model::sched_setattr_slice(&mut self.rq, se, runtime, cfg);
            }
            Op::Yield => {
                self.c.yield_curr();
                model::yield_task(&mut self.rq, cfg);
            }
            Op::Schedule => return self.schedule(),
            Op::Flip(k) => {
                self.toggles ^= 1 << k;
                match (feature_word(self.toggles), rust_features(self.toggles)) {
                    (Ok(w), Ok(r)) => {
                        self.c.set_features(w);
                        self.cfg.features = r;
                    }
                    (Err(e), _) | (_, Err(e)) => return Some(self.mismatch("features", e, "")),
                }
            }
        }
        None
    }

    /// The wakeup check for `i` on both sides, compared.
    fn decide(&mut self, i: usize, wf: i32, wake: Wake) -> Option<Mismatch> {
        if self.need_resched {
            self.cov.pending += 1;
        }
        self.wakeup_preempt(i, wf, wake);
        let c = self.c.cfs_rq().need_resched != 0;
        if c {
            self.cov.preempted += 1;
        } else {
            self.cov.not_preempted += 1;
        }
        if c == self.need_resched {
            return None;
        }
        // A tie of the pick decided differently: take stock's decision.
        let tie = self.tie(self.c.pick_eevdf(), self.rust_pick());
        self.need_resched = c;
        let mut m = self.mismatch("wakeup preemption (need_resched)", c, !c);
        if tie {
            self.ties += 1;
            m.class = Class::Tie;
        }
        Some(m)
    }

    fn rust_pick(&self) -> Option<usize> {
        pick_eevdf(&self.rq, self.cfg).map(|s| self.index(s))
    }

    /// Whether picks `a` (fair.c) and `b` (the core) differ only by the tie rule: both
    /// eligible, with the same deadline.
    fn tie(&self, a: Option<usize>, b: Option<usize>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) if a != b => {
                self.c.eligible(a)
                    && self.c.eligible(b)
                    && self.c.entity(a).deadline == self.c.entity(b).deadline
            }
            _ => false,
        }
    }

    /// `schedule()` on both sides. Where the pure picks differ by a tie, the core's
    /// side takes stock's outcome (counted in [`Pair::ties`]).
    fn schedule(&mut self) -> Option<Mismatch> {
        let cfg = self.cfg;
        for _ in 0..=self.ents.len() {
            let forced = self.tie(self.c.pick_eevdf(), self.rust_pick());
            let c = self.c.pick();
            self.cov.picks += 1;
            if matches!(c, CPick::Blocked(_)) {
                self.cov.blocked += 1;
            }
            let r = if forced {
                self.ties += 1;
                match c {
                    CPick::Idle => model::put_prev_entity(&mut self.rq, cfg),
                    CPick::Run(i) => {
                        let se = self.se(i);
                        model::set_next_entity(&mut self.rq, se, true, cfg);
                    }
                    CPick::Blocked(i) => {
                        let flags = model::DequeueFlags::SLEEP | model::DequeueFlags::DELAYED;
                        let se = self.se(i);
                        model::dequeue_entity(&mut self.rq, se, flags, cfg);
                    }
                }
                c
            } else {
                match model::pick_next_entity(&mut self.rq, cfg) {
                    Pick::Idle => CPick::Idle,
                    Pick::Run(se) => CPick::Run(self.index(se)),
                    Pick::Blocked(se) => CPick::Blocked(self.index(se)),
                }
            };
            if c != r {
                return Some(self.mismatch("schedule's pick", format!("{c:?}"), format!("{r:?}")));
            }
            match c {
                CPick::Blocked(_) => continue,
                CPick::Idle => {
                    self.c.switch(None);
                    if !forced {
                        model::put_prev_entity(&mut self.rq, cfg);
                    }
                }
                CPick::Run(i) => {
                    self.c.switch(Some(i));
                    if !forced {
                        let se = self.se(i);
                        model::set_next_entity(&mut self.rq, se, true, cfg);
                    }
                }
            }
            self.need_resched = false;
            return None;
        }
        Some(self.mismatch("schedule", "ends", "picks blocked tasks forever"))
    }

    fn mismatch(
        &self,
        what: impl ToString,
        c: impl std::fmt::Display,
        rust: impl std::fmt::Display,
    ) -> Mismatch {
        Mismatch {
            what: what.to_string(),
            c: c.to_string(),
            rust: rust.to_string(),
            class: Class::Real,
        }
    }

    /// Whether some eligibility test could overflow fair.c's 64-bit product
    /// `(v - v0) * load` (or the sum `avg + key * w` it adds current into).
    pub fn overflow_domain(&self) -> bool {
        let rq = &self.rq;
        let curr = rq.curr().filter(|c| c.on_rq());
        let mut load = rq.avg_load();
        let mut avg = Some(rq.avg_vruntime());
        if let Some(c) = curr {
            let w = c.load().weight_down();
            load = load.wrapping_add(w);
            avg = entity_key(rq, c)
                .checked_mul(w as i64)
                .and_then(|p| p.checked_add(rq.avg_vruntime()));
        }
        if avg.is_none() || i64::try_from(load).is_err() {
            return true;
        }
        let load = load as i64;
        self.ents.iter().any(|e| {
            let se = e.se();
            se.on_rq() && entity_key(rq, se).checked_mul(load).is_none()
        })
    }

    /// Every observable of both sides, compared; the first difference, classified.
    pub fn compare(&mut self) -> Option<Mismatch> {
        let m = self.first_difference()?;
        Some(self.classify(m))
    }

    fn classify(&mut self, mut m: Mismatch) -> Mismatch {
        if m.class != Class::Real {
            return m;
        }
        if self.overflow_domain() {
            m.class = Class::Overflow;
        } else if m.what.ends_with(".rel_deadline") && self.toggles & (1 << PLACE_REL_DEADLINE) == 0
        {
            m.class = Class::StaleRelDeadline;
        } else if m.what == "cfs_rq_min_slice" && m.rust == self.true_min_slice().to_string() {
            m.class = Class::StockMinSlice;
        }
        m
    }

    /// The smallest slice among the queued entities and a runnable current.
    fn true_min_slice(&self) -> u64 {
        (0..self.ents.len())
            .filter(|&i| self.alive[i])
            .map(|i| self.c.entity(i))
            .filter(|e| e.on_rq != 0)
            .map(|e| e.slice)
            .min()
            .unwrap_or(u64::MAX)
    }

    fn first_difference(&mut self) -> Option<Mismatch> {
        let c = self.c.cfs_rq();
        if c.warnings != 0 {
            return Some(self.mismatch(
                "fair.c WARN",
                format!("at line {} of the extracted unit", c.warn_line),
                "-",
            ));
        }
        if let Err(e) = check_invariants(&self.rq) {
            return Some(self.mismatch("the core's invariants", "-", format!("{e:?}")));
        }
        let rq = &self.rq;
        let rcurr = self.rust_curr().map_or(-1, |i| i as i32);
        let rnext = rq.next_buddy().map_or(-1, |s| self.index(s) as i32);
        macro_rules! eq {
            ($what:expr, $c:expr, $r:expr) => {
                if ($c) != ($r) {
                    return Some(self.mismatch($what, $c, $r));
                }
            };
        }
        eq!("curr", c.curr, rcurr);
        eq!("next buddy", c.next, rnext);
        eq!("nr_running", c.nr_running, rq.nr_queued());
        eq!("need_resched", c.need_resched != 0, self.need_resched);
        eq!("zero_vruntime", c.zero_vruntime, rq.zero_vruntime());
        eq!("avg_vruntime", c.avg_vruntime, rq.avg_vruntime());
        eq!("avg_load", c.avg_load, rq.avg_load());
        let v = self.c.avg_vruntime();
        eq!("V", v, avg_vruntime_peek(rq));
        for e in self.ents.iter().filter(|e| e.se().on_rq()) {
            let d = e.se().vruntime().wrapping_sub(v) as i64;
            self.cov.max_spread = self.cov.max_spread.max(d.unsigned_abs());
        }
        let f = self.cfg.features;
        if rq.curr().is_some_and(|c| c.on_rq() && protect_slice(c, f)) {
            self.cov.protected += 1;
        }
        for i in (0..self.ents.len()).filter(|&i| self.alive[i]) {
            if let Some(m) = self.compare_entity(i) {
                return Some(m);
            }
        }
        let (cp, rp) = (self.c.pick_eevdf(), self.rust_pick());
        if cp != rp {
            let mut m = self.mismatch("pick_eevdf", format!("{cp:?}"), format!("{rp:?}"));
            if self.tie(cp, rp) {
                self.ties += 1;
                m.class = Class::Tie;
            }
            return Some(m);
        }
        eq!("cfs_rq_min_slice", self.c.min_slice(), cfs_rq_min_slice(rq));
        None
    }

    fn compare_entity(&self, i: usize) -> Option<Mismatch> {
        let c = self.c.entity(i);
        let se = self.se(i);
        let is_curr = self.curr() == Some(i);
        macro_rules! eq {
            ($field:literal, $c:expr, $r:expr) => {
                if ($c) != ($r) {
                    return Some(self.mismatch(format!("#{i}.{}", $field), $c, $r));
                }
            };
        }
        eq!("on_rq", c.on_rq != 0, se.on_rq());
        eq!("sched_delayed", c.sched_delayed != 0, se.sched_delayed());
        eq!("rel_deadline", c.rel_deadline != 0, se.rel_deadline());
        eq!("custom_slice", c.custom_slice != 0, se.custom_slice());
        eq!("slice", c.slice, se.slice());
        eq!("weight", c.weight, se.load().weight);
        let inv = if c.inv_weight != 0 {
            c.inv_weight
        } else {
            LoadWeight::from_weight(c.weight).inv_weight
        };
        eq!("inv_weight", inv, se.load().effective_inv_weight());
        eq!("vruntime", c.vruntime, se.vruntime());
        eq!("deadline", c.deadline, se.deadline());
        if c.on_rq == 0 {
            // The saved lag (6.12 keeps current's slice protection in vlag).
            eq!("vlag", c.vlag, se.vlag());
        } else {
            eq!(
                "eligible",
                self.c.eligible(i),
                entity_eligible(&self.rq, se, self.cfg)
            );
        }
        if is_curr && c.on_rq != 0 {
            // 6.12's stash: vlag == deadline while protected; the core keeps it in vprot.
            eq!("protection stash", c.vlag as u64, se.vprot());
            eq!(
                "protect_slice",
                self.c.protected(i),
                protect_slice(se, self.cfg.features)
            );
        }
        None
    }
}
