// SPDX-License-Identifier: GPL-2.0

//! An O(n) reference model of the EEVDF core, written for clarity, not speed.
//!
//! Entities live in a `Vec`; nothing is cached: V, eligibility and the pick are
//! recomputed from all queued entities with exact `i128` arithmetic, in the lag form
//! `Σ_j w_j (v_j - v_i) (+ NICE_0_LOAD Σ r_j) >= 0` rather than the core's key form. The
//! timeline order is explicit: (vruntime, insertion sequence). It shares only
//! `calc_delta_fair()` and the table constants with the crate (the former is checked
//! against a u128 reference on its own).
//!
//! Slice protection is kept in `vprot` as the core keeps it. Beside it, `stash` is 6.12's
//! slot for it: `vlag`, which 6.12 overwrites with the deadline at a pick, with
//! `deadline + 1` at a cancel and with the lag wherever it saves one. While
//! RUN_TO_PARITY_MIN_SLICE and PROTECT_AT_PICK have been off for the whole run, every
//! reading of the protection asserts that `vprot` gives 6.12's answer: all flags off,
//! the decisions are 6.12's.

#![allow(dead_code)]

use sched_eevdf::{
    calc_delta_fair, sched_attr_slice, vtime::vdelta, Config, DequeueFlags, EnqueueFlags, Features,
    LoadWeight, PickReason, Wake, WakeFlags, WakeupPreempt,
};

#[derive(Clone, Debug)]
pub struct RefEntity {
    pub vruntime: u64,
    pub deadline: u64,
    pub slice: u64,
    pub custom_slice: bool,
    pub vlag: i64,
    /// Slice protection (the core's `vprot`).
    pub vprot: u64,
    /// 6.12's `vlag` slot, stash included.
    pub stash: i64,
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
            vprot: 0,
            stash: 0,
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

/// The reference's wakeup decision: the classification, and what NEXT_BUDDY did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefWake {
    pub why: WakeupPreempt,
    /// NEXT_BUDDY_EEVDF asked fair.c to make the wakee the buddy.
    pub set_buddy: bool,
    /// NEXT_BUDDY_EEVDF kept an older buddy with an earlier deadline.
    pub kept_buddy: bool,
}

impl RefWake {
    fn why(why: WakeupPreempt) -> RefWake {
        RefWake {
            why,
            set_buddy: false,
            kept_buddy: false,
        }
    }
}

pub struct RefRq {
    pub ents: Vec<RefEntity>,
    pub curr: Option<usize>,
    /// The next buddy (`cfs_rq->next`).
    pub next: Option<usize>,
    /// The last V computed (V of an empty runqueue stays there).
    pub last_v: u64,
    next_seq: u64,
    /// RUN_TO_PARITY_MIN_SLICE and PROTECT_AT_PICK have been off for the whole run: the
    /// `stash` mirror of 6.12 is valid.
    pub legacy: bool,
}

/// The flags under which the protection is not 6.12's.
const NEW_PROTECTION: [Features; 2] =
    [Features::RUN_TO_PARITY_MIN_SLICE, Features::PROTECT_AT_PICK];

impl RefRq {
    pub fn new(ents: Vec<RefEntity>, v0: u64) -> Self {
        RefRq {
            ents,
            curr: None,
            next: None,
            last_v: v0,
            next_seq: 0,
            legacy: true,
        }
    }

    /// Every operation calls this first: a step under a new protection flag ends the
    /// run's comparison with 6.12.
    fn note(&mut self, cfg: Config) {
        if NEW_PROTECTION.iter().any(|&f| cfg.features.contains(f)) {
            self.legacy = false;
        }
    }

    /// Writes the saved lag (and 6.12's slot, which holds it then). With 6.12's protection
    /// the core's `vprot` of current is that slot too (`save_vlag()` in ops.rs).
    fn set_vlag(&mut self, i: usize, vlag: i64, cfg: Config) {
        self.ents[i].vlag = vlag;
        self.ents[i].stash = vlag;
        if self.curr == Some(i) && Self::protect_6_12(cfg) {
            self.ents[i].vprot = vlag as u64;
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

    /// Protected: 6.17 while `v < vprot <= d`, 6.12 while the stash `vprot == deadline`
    /// holds.
    fn protect_slice(&self, i: usize, cfg: Config) -> bool {
        let e = &self.ents[i];
        if cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
            return vdelta(e.vruntime, e.vprot) < 0 && vdelta(e.vprot, e.deadline) <= 0;
        }
        let p = e.vprot == e.deadline;
        if self.legacy {
            assert_eq!(
                p,
                e.stash as u64 == e.deadline,
                "entity {i}: vprot and 6.12's stash disagree"
            );
        }
        p
    }

    /// RUN_TO_PARITY keeps an eligible current while this holds.
    fn keeps(&self, c: usize, cfg: Config) -> bool {
        (cfg.features.contains(Features::RUN_TO_PARITY)
            || cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE))
            && self.protect_slice(c, cfg)
    }

    /// 6.12's protection: neither of the new protection flags.
    fn protect_6_12(cfg: Config) -> bool {
        !NEW_PROTECTION.iter().any(|&f| cfg.features.contains(f))
    }

    /// An ended window: min(v, d - 1), wrap-safe.
    fn ended(&self, i: usize) -> u64 {
        let e = &self.ents[i];
        let d1 = e.deadline.wrapping_sub(1);
        if vdelta(d1, e.vruntime) < 0 {
            d1
        } else {
            e.vruntime
        }
    }

    fn cancel(&mut self, i: usize, cfg: Config) {
        if self.protect_slice(i, cfg) {
            let d = self.ents[i].deadline;
            self.ents[i].vprot = if Self::protect_6_12(cfg) {
                d.wrapping_add(1)
            } else {
                self.ended(i)
            };
            self.ents[i].stash = d.wrapping_add(1) as i64;
        }
    }

    /// A window past the deadline ends.
    fn within_deadline(&mut self, i: usize) {
        let e = &self.ents[i];
        if vdelta(e.vruntime, e.vprot) < 0 && vdelta(e.vprot, e.deadline) > 0 {
            self.ents[i].vprot = self.ended(i);
        }
    }

    /// The smallest slice of the queued entities other than `except` (u64::MAX when none).
    fn min_slice(&self, except: Option<usize>) -> u64 {
        self.queued()
            .filter(|&j| Some(j) != except)
            .map(|j| self.ents[j].slice)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// `a` or `b`, whichever is earlier (wrap-safe; `a` on a tie).
    fn vmin(a: u64, b: u64) -> u64 {
        if vdelta(b, a) < 0 {
            b
        } else {
            a
        }
    }

    /// set_next_entity()'s protection (i is out of the tree, not current yet). Returns
    /// whether PROTECT_AT_PICK kept an ended window.
    fn set_protect(&mut self, i: usize, first: bool, cfg: Config) -> bool {
        self.ents[i].stash = self.ents[i].deadline as i64;
        if !first && cfg.features.contains(Features::PROTECT_AT_PICK) {
            self.within_deadline(i);
            return !self.protect_slice(i, cfg);
        }
        let e = &self.ents[i];
        let mut vprot = e.deadline;
        if cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
            let q = if cfg.features.contains(Features::RUN_TO_PARITY) {
                self.min_slice(Some(i))
            } else {
                cfg.normalized_base_slice_ns
            }
            .min(e.slice);
            if q != e.slice {
                let end = e.vruntime.wrapping_add(calc_delta_fair(q, e.load));
                vprot = Self::vmin(vprot, end);
            }
            assert!(vdelta(vprot, e.deadline) <= 0, "entity {i}: window past d");
        }
        self.ents[i].vprot = vprot;
        false
    }

    /// The buddy the pick tests first: with NEXT_BUDDY_EEVDF and PICK_BUDDY, an eligible
    /// next buddy.
    fn eligible_buddy(&self, cfg: Config) -> Option<usize> {
        let f = cfg.features;
        if !f.contains(Features::NEXT_BUDDY_EEVDF) || !f.contains(Features::PICK_BUDDY) {
            return None;
        }
        self.next.filter(|&b| self.eligible(b, cfg))
    }

    /// Earliest eligible virtual deadline; ties by timeline order; current wins only with a
    /// strictly earlier deadline; RUN_TO_PARITY keeps a protected eligible current; an
    /// eligible buddy comes first under NEXT_BUDDY_EEVDF with PICK_BUDDY.
    pub fn pick_eevdf(&self, cfg: Config) -> Option<usize> {
        self.pick(cfg, true)
    }

    /// [`Self::pick_eevdf`], current's protection ignored unless `protect`.
    fn pick(&self, cfg: Config, protect: bool) -> Option<usize> {
        let curr = self.curr.filter(|&c| self.ents[c].on_rq);
        if self.nr_queued() == 1 {
            return self.queued().next();
        }
        if let Some(b) = self.eligible_buddy(cfg) {
            return Some(b);
        }
        let curr = curr.filter(|&c| self.eligible(c, cfg));
        if let Some(c) = curr {
            if protect && self.keeps(c, cfg) {
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
        if self.eligible_buddy(cfg).is_some() {
            return PickReason::Buddy;
        }
        if let Some(c) = self.curr.filter(|&c| self.ents[c].on_rq) {
            if c == p && self.eligible(c, cfg) && self.keeps(c, cfg) {
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
        let vlag = self.entity_lag(v, i, cfg);
        self.set_vlag(i, vlag, cfg);
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
        self.note(cfg);
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
        let resched = if cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE) {
            // 6.17: a resched at the end of the protected window.
            resched || !self.protect_slice(c, cfg)
        } else {
            resched
                || (cfg.features.contains(Features::PREEMPT_SHORT)
                    && !self.protect_slice(c, cfg)
                    && !self.eligible(c, cfg))
        };
        if resched {
            self.clear_buddy(c);
        }
        resched
    }

    fn clear_buddy(&mut self, i: usize) {
        if self.next == Some(i) {
            self.next = None;
        }
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
            // The window was made relative with the deadline.
            e.vprot = e.vprot.wrapping_add(e.vruntime);
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
        self.note(cfg);
        if self.ents[i].on_rq {
            return;
        }
        self.place_entity(i, flags, cfg);
        if self.curr != Some(i) {
            self.tree_insert(i);
        } else {
            // Current placed again: its window ends (6.12's stash is the saved lag now,
            // which is what `vprot` holds without RUN_TO_PARITY_MIN_SLICE).
            self.ents[i].vprot = if Self::protect_6_12(cfg) {
                self.ents[i].vlag as u64
            } else {
                self.ended(i)
            };
        }
        self.ents[i].on_rq = true;
    }

    pub fn dequeue_entity(&mut self, i: usize, flags: DequeueFlags, cfg: Config) -> bool {
        self.note(cfg);
        if !self.ents[i].on_rq {
            return true;
        }
        self.clear_buddy(i);
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
            e.vprot = e.vprot.wrapping_sub(e.vruntime);
            e.rel_deadline = true;
        }
        e.on_rq = false;
        if flags.contains(DequeueFlags::DELAYED) {
            e.sched_delayed = false;
            if cfg.features.contains(Features::DELAY_ZERO) && e.vlag > 0 {
                // finish_delayed_dequeue_entity(): the entity leaves, its protection
                // is not read again.
                e.vlag = 0;
                e.stash = 0;
            }
        }
        true
    }

    pub fn requeue_delayed_entity(&mut self, i: usize, cfg: Config) {
        self.note(cfg);
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
                self.set_vlag(i, 0, cfg);
                self.place_entity(i, EnqueueFlags::NONE, cfg);
                self.ents[i].on_rq = true;
                if !is_curr {
                    self.tree_insert(i);
                }
            }
        }
        self.ents[i].sched_delayed = false;
    }

    /// Returns whether PROTECT_AT_PICK kept an ended window.
    pub fn set_next_entity(&mut self, i: usize, first: bool, cfg: Config) -> bool {
        match self.curr {
            Some(c) if c == i => return false,
            Some(_) => self.put_prev_entity(),
            None => {}
        }
        self.clear_buddy(i);
        let mut kept = false;
        if self.ents[i].on_rq {
            kept = self.set_protect(i, first, cfg);
        }
        self.curr = Some(i);
        kept
    }

    pub fn put_prev_entity(&mut self) {
        if let Some(p) = self.curr.take() {
            if self.ents[p].on_rq {
                self.tree_insert(p);
            }
        }
    }

    pub fn schedule(&mut self, cfg: Config) -> RefPick {
        self.note(cfg);
        // pick_next_entity(): 6.12's PICK_BUDDY (the pick has it with NEXT_BUDDY_EEVDF).
        let f = cfg.features;
        if f.contains(Features::PICK_BUDDY) && !f.contains(Features::NEXT_BUDDY_EEVDF) {
            if let Some(b) = self.next.filter(|&b| self.eligible(b, cfg)) {
                self.set_next_entity(b, true, cfg);
                return RefPick::Run(b);
            }
        }
        let Some(i) = self.pick_eevdf(cfg) else {
            self.put_prev_entity();
            return RefPick::Idle;
        };
        if self.ents[i].sched_delayed {
            self.dequeue_entity(i, DequeueFlags::SLEEP | DequeueFlags::DELAYED, cfg);
            return RefPick::Blocked(i);
        }
        self.set_next_entity(i, true, cfg);
        RefPick::Run(i)
    }

    /// `check_preempt_wakeup_fair()` after `update_curr()`: 6.12's (NEXT_BUDDY marks the
    /// wakee first) or, with NEXT_BUDDY_EEVDF, 6.19's; the short wakee's rule is 6.17's
    /// with RUN_TO_PARITY_MIN_SLICE.
    pub fn check_preempt_wakeup(&mut self, p: usize, wake: Wake, cfg: Config) -> RefWake {
        self.note(cfg);
        let Some(c) = self.curr else {
            return RefWake::why(WakeupPreempt::Idle);
        };
        if c == p {
            return RefWake::why(WakeupPreempt::None);
        }
        let f = cfg.features;
        let fork = wake.flags.contains(WakeFlags::FORK);
        let shorter =
            f.contains(Features::PREEMPT_SHORT) && self.ents[p].slice < self.ents[c].slice;
        let min_slice = f.contains(Features::RUN_TO_PARITY_MIN_SLICE);
        if !f.contains(Features::NEXT_BUDDY_EEVDF) {
            if f.contains(Features::NEXT_BUDDY)
                && !fork
                && !self.ents[p].sched_delayed
                && !wake.wakee_idle
            {
                self.next = Some(p);
            }
            if min_slice {
                return RefWake::why(self.check_preempt_wakeup_6_17(p, c, cfg));
            }
            return RefWake::why(self.preempt_short_then_pick(p, c, shorter, cfg));
        }
        if shorter {
            if min_slice {
                return RefWake::why(self.check_preempt_wakeup_6_17(p, c, cfg));
            }
            return RefWake::why(self.preempt_short_then_pick(p, c, true, cfg));
        }
        if fork || self.ents[p].sched_delayed {
            return RefWake::why(WakeupPreempt::ForkOrDelayed);
        }
        let mut out = RefWake::why(WakeupPreempt::None);
        if f.contains(Features::NEXT_BUDDY) {
            let keep = self
                .next
                .is_some_and(|n| vdelta(self.ents[n].deadline, self.ents[p].deadline) < 0);
            if keep {
                out.kept_buddy = true;
            } else {
                out.set_buddy = true;
                if !wake.wakee_idle {
                    self.next = Some(p);
                }
                if wake.flags.contains(WakeFlags::SYNC) {
                    let mut threshold = wake.migration_cost_ns;
                    if wake.flags.contains(WakeFlags::RQ_SELECTED) {
                        threshold /= 4;
                    }
                    let earlier = vdelta(self.ents[p].deadline, self.ents[c].deadline) < 0;
                    out.why = if earlier && wake.waker_ran_ns >= threshold {
                        WakeupPreempt::SyncResched
                    } else {
                        WakeupPreempt::SyncNone
                    };
                    return out;
                }
            }
        }
        out.why = self.preempt_short_then_pick(p, c, false, cfg);
        // 6.19: a wakeup that does not preempt shrinks current's window (RUN_TO_PARITY).
        if min_slice && f.contains(Features::RUN_TO_PARITY) && !out.why.preempts() {
            self.shrink_window(c);
        }
        out
    }

    /// `update_protect_slice()`: current's window ends at most the smallest queued slice
    /// from now.
    fn shrink_window(&mut self, c: usize) {
        let q = self.min_slice(None);
        let e = &self.ents[c];
        let end = e.vruntime.wrapping_add(calc_delta_fair(q, e.load));
        self.ents[c].vprot = Self::vmin(e.vprot, end);
    }

    /// 6.12's PREEMPT_SHORT for a wakee with a shorter slice (`shorter`), then "preempt iff
    /// the pick is the wakee", classified.
    fn preempt_short_then_pick(
        &mut self,
        p: usize,
        c: usize,
        shorter: bool,
        cfg: Config,
    ) -> WakeupPreempt {
        let short = shorter
            && self.eligible(p, cfg)
            && (vdelta(self.ents[p].deadline, self.ents[c].deadline) < 0 || !self.eligible(c, cfg));
        if short {
            self.cancel(c, cfg);
        }
        let pick = self.pick_eevdf(cfg);
        if pick == Some(p) {
            return if self.pick_reason(cfg) == PickReason::Buddy {
                WakeupPreempt::Buddy
            } else if short {
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

    /// 6.17's wakeup decision: a shorter slice is enough to be short; the pick ignores
    /// current's protection for a short wakee, which cancels it only if it preempts and
    /// otherwise (RUN_TO_PARITY) limits it to the smallest queued slice.
    fn check_preempt_wakeup_6_17(&mut self, p: usize, c: usize, cfg: Config) -> WakeupPreempt {
        let short = cfg.features.contains(Features::PREEMPT_SHORT)
            && self.ents[p].slice < self.ents[c].slice;
        if self.pick(cfg, !short) == Some(p) {
            if short {
                self.cancel(c, cfg);
            }
            if self.pick_reason(cfg) == PickReason::Buddy {
                return WakeupPreempt::Buddy;
            }
            if short {
                return WakeupPreempt::ShortSlice;
            }
            return if !self.ents[c].on_rq || !self.eligible(c, cfg) {
                WakeupPreempt::CurrIneligible
            } else {
                WakeupPreempt::EarlierDeadline
            };
        }
        if short {
            if cfg.features.contains(Features::RUN_TO_PARITY) {
                self.shrink_window(c);
            }
            return WakeupPreempt::None;
        }
        if self.pick_reason(cfg) == PickReason::Parity
            && self.eligible(p, cfg)
            && vdelta(self.ents[c].deadline, self.ents[p].deadline) >= 0
        {
            return WakeupPreempt::RunToParity;
        }
        WakeupPreempt::None
    }

    pub fn reweight_entity(&mut self, i: usize, lw: LoadWeight, cfg: Config) {
        self.note(cfg);
        let old = self.ents[i].load.weight as i128;
        let new = lw.weight as i128;
        let is_curr = self.curr == Some(i);
        // PROTECT_AT_PICK: what is left of current's window, to scale like the deadline.
        let window = (self.ents[i].on_rq
            && is_curr
            && cfg.features.contains(Features::PROTECT_AT_PICK)
            && self.protect_slice(i, cfg))
        .then(|| vdelta(self.ents[i].vprot, self.ents[i].vruntime));
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
            if !is_curr {
                self.tree_insert(i);
            } else {
                let e = &self.ents[i];
                match window {
                    Some(rel) if cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE) => {
                        let rel = (rel.wrapping_mul(old64) as i128 / new64 as i128) as i64;
                        let vprot = e.vruntime.wrapping_add(rel as u64);
                        self.ents[i].vprot = Self::vmin(vprot, e.deadline);
                    }
                    Some(_) => self.ents[i].vprot = e.deadline,
                    None => {}
                }
                // 6.12 leaves its stash where it was.
                if !Self::protect_6_12(cfg) {
                    self.within_deadline(i);
                }
            }
        } else {
            let vlag = (self.ents[i].vlag as i128 * old / new) as i64;
            self.set_vlag(i, vlag, cfg);
        }
        self.ents[i].load = lw;
    }

    /// A sched_change: save, put, `change`, restore, set again (`first` false). Returns
    /// what set_next_entity() returned.
    fn sched_change(&mut self, i: usize, cfg: Config, change: impl FnOnce(&mut Self)) -> bool {
        self.note(cfg);
        let queued = self.ents[i].on_rq;
        let running = self.curr == Some(i);
        if queued {
            self.dequeue_entity(i, DequeueFlags::SAVE, cfg);
        }
        if running {
            self.put_prev_entity();
        }
        change(self);
        if queued {
            self.enqueue_entity(i, EnqueueFlags::RESTORE, cfg);
        }
        running && self.set_next_entity(i, false, cfg)
    }

    pub fn setattr_slice(&mut self, i: usize, runtime: u64, cfg: Config) -> bool {
        self.sched_change(i, cfg, |rq| {
            let (s, c) = sched_attr_slice(runtime, cfg.base_slice_ns);
            rq.ents[i].slice = s;
            rq.ents[i].custom_slice = c;
        })
    }

    pub fn renice(&mut self, i: usize, lw: LoadWeight, cfg: Config) -> bool {
        self.sched_change(i, cfg, |rq| rq.reweight_entity(i, lw, cfg))
    }
}
