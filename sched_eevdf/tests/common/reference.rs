// SPDX-License-Identifier: GPL-2.0

//! An O(n) reference model of the EEVDF core, written for clarity, not speed.
//!
//! Entities live in a `Vec`; nothing is cached: V, eligibility and the pick are
//! recomputed from all queued entities with exact `i128` arithmetic, in the lag form
//! `Σ_j w_j (v_j - v_i) (+ NICE_0_LOAD Σ r_j) >= 0` rather than the core's key form. The
//! timeline order is explicit: (vruntime, insertion sequence). It shares only
//! `calc_delta_fair()` and the table constants with the crate (the former is checked
//! against a u128 reference on its own).

#![allow(dead_code)]

use sched_eevdf::{
    calc_delta_fair, sched_attr_slice, vtime::vdelta, Config, DequeueFlags, EnqueueFlags, Features,
    LoadWeight, PickReason, WakeupPreempt,
};

#[derive(Clone, Debug)]
pub struct RefEntity {
    pub vruntime: u64,
    pub deadline: u64,
    pub slice: u64,
    pub custom_slice: bool,
    pub vlag: i64,
    pub load: LoadWeight,
    pub on_rq: bool,
    pub sched_delayed: bool,
    pub rel_deadline: bool,
    /// Position among equal vruntimes: the timeline insertion sequence number.
    pub seq: u64,
}

impl RefEntity {
    pub fn new(load: LoadWeight) -> Self {
        RefEntity {
            vruntime: 0,
            deadline: 0,
            slice: 0,
            custom_slice: false,
            vlag: 0,
            load,
            on_rq: false,
            sched_delayed: false,
            rel_deadline: false,
            seq: 0,
        }
    }
    fn w(&self) -> i128 {
        self.load.weight_down() as i128
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefPick {
    Run(usize),
    Blocked(usize),
    Idle,
}

pub struct RefRq {
    pub ents: Vec<RefEntity>,
    pub curr: Option<usize>,
    /// The last V computed (V of an empty runqueue stays there).
    pub last_v: u64,
    next_seq: u64,
}

impl RefRq {
    pub fn new(ents: Vec<RefEntity>, v0: u64) -> Self {
        RefRq {
            ents,
            curr: None,
            last_v: v0,
            next_seq: 0,
        }
    }

    /// Queued entities (the current one included when on_rq).
    fn queued(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.ents.len()).filter(|&i| self.ents[i].on_rq)
    }

    /// Entities in the timeline: queued but not current.
    fn in_tree(&self) -> impl Iterator<Item = usize> + '_ {
        self.queued().filter(move |&i| Some(i) != self.curr)
    }

    pub fn nr_queued(&self) -> usize {
        self.queued().count()
    }

    fn rel(&self, v: u64) -> i128 {
        vdelta(v, self.last_v) as i128
    }

    /// V = floor(Σ w_i v_i / Σ w_i) over the queued entities; unchanged when none.
    pub fn avg_vruntime(&mut self) -> u64 {
        let (mut num, mut den) = (0i128, 0i128);
        for i in self.queued() {
            num += self.ents[i].w() * self.rel(self.ents[i].vruntime);
            den += self.ents[i].w();
        }
        if den != 0 {
            let v = num.div_euclid(den);
            self.last_v = self.last_v.wrapping_add(v as i64 as u64);
        }
        self.last_v
    }

    /// lag_i >= 0: Σ_j w_j (v_j - v_i) (+ 1024 Σ_j r_j) >= 0.
    pub fn eligible(&self, i: usize, cfg: Config) -> bool {
        if !cfg.features.contains(Features::ELIGIBLE) {
            return true;
        }
        let vi = self.rel(self.ents[i].vruntime);
        let mut s = 0i128;
        let mut r = 0i128;
        for j in self.queued() {
            s += self.ents[j].w() * (self.rel(self.ents[j].vruntime) - vi);
            r += self.ents[j].slice as i128;
        }
        if cfg.features.contains(Features::BIAS_ELIGIBLE) {
            s += 1024 * r;
        }
        s >= 0
    }

    fn protect_slice(&self, i: usize) -> bool {
        self.ents[i].vlag as u64 == self.ents[i].deadline
    }

    /// Earliest eligible virtual deadline; ties by timeline order; current wins only with a
    /// strictly earlier deadline; RUN_TO_PARITY keeps a protected eligible current.
    pub fn pick_eevdf(&self, cfg: Config) -> Option<usize> {
        let curr = self.curr.filter(|&c| self.ents[c].on_rq);
        if self.nr_queued() == 1 {
            return self.queued().next();
        }
        let curr = curr.filter(|&c| self.eligible(c, cfg));
        if let Some(c) = curr {
            if cfg.features.contains(Features::RUN_TO_PARITY) && self.protect_slice(c) {
                return Some(c);
            }
        }
        let mut tree: Vec<usize> = self.in_tree().collect();
        tree.sort_by_key(|&i| (self.rel(self.ents[i].vruntime), self.ents[i].seq));
        let mut best: Option<usize> = None;
        for &i in &tree {
            if !self.eligible(i, cfg) {
                continue;
            }
            match best {
                Some(b) if vdelta(self.ents[i].deadline, self.ents[b].deadline) >= 0 => {}
                _ => best = Some(i),
            }
        }
        match (best, curr) {
            (Some(b), Some(c)) if vdelta(self.ents[c].deadline, self.ents[b].deadline) < 0 => {
                Some(c)
            }
            (None, c) => c,
            (b, _) => b,
        }
    }

    /// Why [`Self::pick_eevdf`] picked, from the definitions by linear scan: a single
    /// runnable entity; RUN_TO_PARITY keeping current; or whether some runnable entity has a
    /// strictly earlier deadline than the pick (which must then be ineligible).
    pub fn pick_reason(&self, cfg: Config) -> PickReason {
        let Some(p) = self.pick_eevdf(cfg) else {
            return PickReason::Idle;
        };
        if self.nr_queued() == 1 {
            return PickReason::Only;
        }
        if let Some(c) = self.curr.filter(|&c| self.ents[c].on_rq) {
            if c == p
                && self.eligible(c, cfg)
                && cfg.features.contains(Features::RUN_TO_PARITY)
                && self.protect_slice(c)
            {
                return PickReason::Parity;
            }
        }
        let earlier: Vec<usize> = self
            .queued()
            .filter(|&j| vdelta(self.ents[j].deadline, self.ents[p].deadline) < 0)
            .collect();
        if earlier.is_empty() {
            return PickReason::Earliest;
        }
        for j in earlier {
            assert!(
                !self.eligible(j, cfg),
                "entity {j} has an earlier deadline than the pick {p} and is eligible"
            );
        }
        PickReason::EarliestIneligible
    }

    fn tree_insert(&mut self, i: usize) {
        self.ents[i].seq = self.next_seq;
        self.next_seq += 1;
    }

    /// The lag limit's span: 6.12's `max(2 r_i, TICK)`, or with LAG_CLAMP_MAX_SLICE
    /// upstream 7.0's `r_max + TICK`, `r_max` the largest slice of the queued entities, i
    /// among them (every caller asks while i is queued, as upstream's do).
    fn lag_span(&self, i: usize, cfg: Config) -> u64 {
        assert!(
            self.ents[i].on_rq,
            "the lag of entity {i} taken while not queued"
        );
        if cfg.features.contains(Features::LAG_CLAMP_MAX_SLICE) {
            let r_max = self.queued().map(|j| self.ents[j].slice).max().unwrap();
            r_max + cfg.tick_nsec
        } else {
            (2 * self.ents[i].slice).max(cfg.tick_nsec)
        }
    }

    fn entity_lag(&self, v: u64, i: usize, cfg: Config) -> i64 {
        let e = &self.ents[i];
        let vlag = vdelta(v, e.vruntime);
        let limit = calc_delta_fair(self.lag_span(i, cfg), e.load) as i64;
        vlag.clamp(-limit, limit)
    }

    fn update_entity_lag(&mut self, i: usize, cfg: Config) {
        let v = self.avg_vruntime();
        self.ents[i].vlag = self.entity_lag(v, i, cfg);
    }

    fn update_deadline(&mut self, i: usize, cfg: Config) -> bool {
        if vdelta(self.ents[i].vruntime, self.ents[i].deadline) < 0 {
            return false;
        }
        if !self.ents[i].custom_slice {
            self.ents[i].slice = cfg.base_slice_ns;
        }
        let e = &mut self.ents[i];
        e.deadline = e.vruntime.wrapping_add(calc_delta_fair(e.slice, e.load));
        self.avg_vruntime();
        true
    }

    pub fn update_curr(&mut self, delta: u64, cfg: Config) -> bool {
        let Some(c) = self.curr else { return false };
        if delta == 0 {
            return false;
        }
        let e = &mut self.ents[c];
        e.vruntime = e.vruntime.wrapping_add(calc_delta_fair(delta, e.load));
        let resched = self.update_deadline(c, cfg);
        if self.nr_queued() == 1 {
            return false;
        }
        resched
            || (cfg.features.contains(Features::PREEMPT_SHORT)
                && !self.protect_slice(c)
                && !self.eligible(c, cfg))
    }

    fn place_entity(&mut self, i: usize, flags: EnqueueFlags, cfg: Config) {
        let v = self.avg_vruntime();
        if !self.ents[i].custom_slice {
            self.ents[i].slice = cfg.base_slice_ns;
        }
        let mut vslice = calc_delta_fair(self.ents[i].slice, self.ents[i].load);
        let mut lag: i128 = 0;
        if cfg.features.contains(Features::PLACE_LAG) && self.nr_queued() != 0 {
            // W: the queued entities other than i (i is not queued yet).
            let load: i128 = self.queued().map(|j| self.ents[j].w()).sum();
            lag = self.ents[i].vlag as i128;
            if load != 0 {
                // vl_i = (W + w_i) vl'_i / W, truncated toward zero like div_s64().
                let num = lag * (load + self.ents[i].w());
                lag = num / load;
            }
        }
        let e = &mut self.ents[i];
        e.vruntime = v.wrapping_sub(lag as i64 as u64);
        if e.rel_deadline {
            e.rel_deadline = false;
            if cfg.features.contains(Features::PLACE_REL_DEADLINE) {
                e.deadline = e.deadline.wrapping_add(e.vruntime);
                return;
            }
        }
        if cfg.features.contains(Features::PLACE_DEADLINE_INITIAL)
            && flags.contains(EnqueueFlags::INITIAL)
        {
            vslice /= 2;
        }
        e.deadline = e.vruntime.wrapping_add(vslice);
    }

    pub fn enqueue_entity(&mut self, i: usize, flags: EnqueueFlags, cfg: Config) {
        if self.ents[i].on_rq {
            return;
        }
        self.place_entity(i, flags, cfg);
        if self.curr != Some(i) {
            self.tree_insert(i);
        }
        self.ents[i].on_rq = true;
    }

    pub fn dequeue_entity(&mut self, i: usize, flags: DequeueFlags, cfg: Config) -> bool {
        if !self.ents[i].on_rq {
            return true;
        }
        let sleep = flags.contains(DequeueFlags::SLEEP);
        if !flags.contains(DequeueFlags::DELAYED) {
            let delay = sleep && !flags.contains(DequeueFlags::SPECIAL);
            if cfg.features.contains(Features::DELAY_DEQUEUE) && delay && !self.eligible(i, cfg) {
                self.ents[i].sched_delayed = true;
                return false;
            }
        }
        self.update_entity_lag(i, cfg);
        let e = &mut self.ents[i];
        if cfg.features.contains(Features::PLACE_REL_DEADLINE) && !sleep {
            e.deadline = e.deadline.wrapping_sub(e.vruntime);
            e.rel_deadline = true;
        }
        e.on_rq = false;
        if flags.contains(DequeueFlags::DELAYED) {
            e.sched_delayed = false;
            if cfg.features.contains(Features::DELAY_ZERO) && e.vlag > 0 {
                e.vlag = 0;
            }
        }
        true
    }

    pub fn requeue_delayed_entity(&mut self, i: usize, cfg: Config) {
        if !self.ents[i].sched_delayed || !self.ents[i].on_rq {
            return;
        }
        if cfg.features.contains(Features::DELAY_ZERO) {
            self.update_entity_lag(i, cfg);
            if self.ents[i].vlag > 0 {
                // Take it out (current stays counted, as in fair.c), place at lag 0, put
                // it back.
                let is_curr = self.curr == Some(i);
                if !is_curr {
                    self.ents[i].on_rq = false;
                }
                self.ents[i].vlag = 0;
                self.place_entity(i, EnqueueFlags::NONE, cfg);
                self.ents[i].on_rq = true;
                if !is_curr {
                    self.tree_insert(i);
                }
            }
        }
        self.ents[i].sched_delayed = false;
    }

    pub fn set_next_entity(&mut self, i: usize) {
        match self.curr {
            Some(c) if c == i => return,
            Some(_) => self.put_prev_entity(),
            None => {}
        }
        if self.ents[i].on_rq {
            self.ents[i].vlag = self.ents[i].deadline as i64;
        }
        self.curr = Some(i);
    }

    pub fn put_prev_entity(&mut self) {
        if let Some(p) = self.curr.take() {
            if self.ents[p].on_rq {
                self.tree_insert(p);
            }
        }
    }

    pub fn schedule(&mut self, cfg: Config) -> RefPick {
        let Some(i) = self.pick_eevdf(cfg) else {
            self.put_prev_entity();
            return RefPick::Idle;
        };
        if self.ents[i].sched_delayed {
            self.dequeue_entity(i, DequeueFlags::SLEEP | DequeueFlags::DELAYED, cfg);
            return RefPick::Blocked(i);
        }
        self.set_next_entity(i);
        RefPick::Run(i)
    }

    pub fn check_preempt_wakeup(&mut self, p: usize, cfg: Config) -> WakeupPreempt {
        let Some(c) = self.curr else {
            return WakeupPreempt::Idle;
        };
        if c == p {
            return WakeupPreempt::None;
        }
        let short = cfg.features.contains(Features::PREEMPT_SHORT)
            && self.ents[p].slice < self.ents[c].slice
            && self.eligible(p, cfg)
            && (vdelta(self.ents[p].deadline, self.ents[c].deadline) < 0 || !self.eligible(c, cfg));
        if short && self.protect_slice(c) {
            self.ents[c].vlag = self.ents[c].deadline.wrapping_add(1) as i64;
        }
        let pick = self.pick_eevdf(cfg);
        if pick == Some(p) {
            return if short {
                WakeupPreempt::ShortSlice
            } else if !self.ents[c].on_rq || !self.eligible(c, cfg) {
                WakeupPreempt::CurrIneligible
            } else {
                WakeupPreempt::EarlierDeadline
            };
        }
        // RUN_TO_PARITY kept current against an eligible wakee whose deadline is not later.
        if self.pick_reason(cfg) == PickReason::Parity
            && self.eligible(p, cfg)
            && vdelta(self.ents[c].deadline, self.ents[p].deadline) >= 0
        {
            return WakeupPreempt::RunToParity;
        }
        WakeupPreempt::None
    }

    pub fn reweight_entity(&mut self, i: usize, lw: LoadWeight, cfg: Config) {
        let old = self.ents[i].load.weight as i128;
        let new = lw.weight as i128;
        if self.ents[i].on_rq {
            let v = self.avg_vruntime();
            // fair.c's reweight_eevdf() multiplies in s64 (`vlag * old_weight`,
            // `vslice * old_weight`) and wraps when a stale deadline or an unclamped
            // lag is large; the reference does the same, so that it stays the
            // kernel's semantics (see Documentation/eevdf-math.md, overflow bounds).
            let (old64, new64) = (old as i64, new as i64);
            if v != self.ents[i].vruntime {
                let vlag =
                    (self.entity_lag(v, i, cfg).wrapping_mul(old64) as i128 / new64 as i128) as i64;
                self.ents[i].vruntime = v.wrapping_sub(vlag as u64);
            }
            let vslice = (vdelta(self.ents[i].deadline, v).wrapping_mul(old64) as i128
                / new64 as i128) as i64;
            self.ents[i].deadline = v.wrapping_add(vslice as u64);
            if self.curr != Some(i) {
                self.tree_insert(i);
            }
        } else {
            self.ents[i].vlag = (self.ents[i].vlag as i128 * old / new) as i64;
        }
        self.ents[i].load = lw;
    }

    pub fn setattr_slice(&mut self, i: usize, runtime: u64, cfg: Config) {
        let queued = self.ents[i].on_rq;
        let running = self.curr == Some(i);
        if queued {
            self.dequeue_entity(i, DequeueFlags::SAVE, cfg);
        }
        if running {
            self.put_prev_entity();
        }
        let (s, c) = sched_attr_slice(runtime, cfg.base_slice_ns);
        self.ents[i].slice = s;
        self.ents[i].custom_slice = c;
        if queued {
            self.enqueue_entity(i, EnqueueFlags::RESTORE, cfg);
        }
        if running {
            self.set_next_entity(i);
        }
    }
}
