// SPDX-License-Identifier: GPL-2.0

//! Applies one operation sequence to the crate and to the reference model and compares
//! them after every step (used by the model-based proptest and by the fuzz target).

#![allow(dead_code)]

use super::reference::{RefEntity, RefPick, RefRq};
use super::weight_choice;
use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

#[derive(Clone, Debug)]
pub enum Op {
    /// Current runs this many ns.
    Tick(u64),
    /// Wake (or create, `initial`) entity i.
    Wake(usize, bool),
    /// Entity i leaves: 0 sleep, 1 sleep in a special state, 2 migrate away (non-sleep).
    Sleep(usize, u8),
    /// New weight for entity i.
    Reweight(usize, usize),
    /// sched_setattr(sched_runtime) for entity i.
    Slice(usize, u64),
    /// Reschedule.
    Schedule,
    /// Toggle a feature (index into the table).
    Flip(usize),
}

fn idx(ents: &[UserEntity], se: UserSe<'_>) -> usize {
    ents.iter()
        .position(|e| core::ptr::eq(e, se.get()))
        .expect("entity of this test")
}

struct Pair<'a> {
    ents: &'a [UserEntity],
    rq: UserRunqueue<'a>,
    model: RefRq,
    cfg: Config,
    /// Wakeups so far (they alternate between the two wakeup entry points).
    wakeups: u32,
    /// Lags saved by `Op::Sleep` that the limit clamped.
    clamps: usize,
}

impl<'a> Pair<'a> {
    fn se(&self, i: usize) -> UserSe<'a> {
        self.ents[i].se()
    }

    fn schedule(&mut self) {
        for _ in 0..=self.ents.len() {
            let a = match schedule(&mut self.rq, self.cfg) {
                Pick::Run(se) => RefPick::Run(idx(self.ents, se)),
                Pick::Blocked(se) => RefPick::Blocked(idx(self.ents, se)),
                Pick::Idle => RefPick::Idle,
            };
            let b = self.model.schedule(self.cfg);
            assert_eq!(a, b, "schedule");
            if !matches!(a, RefPick::Blocked(_)) {
                return;
            }
        }
        panic!("schedule kept returning Blocked");
    }

    pub fn apply(&mut self, op: &Op) {
        let cfg = self.cfg;
        match *op {
            Op::Tick(d) => {
                let a = update_curr(&mut self.rq, d, cfg);
                let b = self.model.update_curr(d, cfg);
                assert_eq!(a, b, "update_curr resched");
                if a {
                    self.schedule();
                }
            }
            Op::Wake(i, initial) => {
                let se = self.se(i);
                if se.sched_delayed() {
                    requeue_delayed_entity(&mut self.rq, se, cfg);
                    self.model.requeue_delayed_entity(i, cfg);
                } else if !se.on_rq() {
                    let flags = if initial {
                        EnqueueFlags::INITIAL
                    } else {
                        EnqueueFlags::WAKEUP
                    };
                    enqueue_entity(&mut self.rq, se, flags, cfg);
                    self.model.enqueue_entity(i, flags, cfg);
                } else {
                    return;
                }
                // The no_std O(n) reference (the kernel's VERIFY oracle uses it too) decides
                // from the state before the decision.
                let r = sched_eevdf::reference::wakeup_preempt(&self.rq, se, cfg.features);
                let b = self.model.check_preempt_wakeup(i, cfg);
                assert_eq!(
                    r,
                    b.preempts(),
                    "reference::wakeup_preempt, model says {b:?}"
                );
                // The kernel asks the reason only while counting, of the state the decision
                // left: every other wakeup does here, so that both sequences are run.
                let preempts = wakeup_preempt(&mut self.rq, se, cfg);
                assert_eq!(preempts, b.preempts(), "wakeup_preempt, model says {b:?}");
                if self.wakeups.is_multiple_of(2) {
                    let why = wakeup_reason(&self.rq, se, preempts, cfg);
                    assert_eq!(why, b, "wakeup preemption reason");
                }
                self.wakeups += 1;
                if preempts {
                    self.schedule();
                }
            }
            Op::Sleep(i, f) => {
                let se = self.se(i);
                if !se.on_rq() || se.sched_delayed() {
                    return;
                }
                let flags = match f {
                    0 => DequeueFlags::SLEEP,
                    1 => DequeueFlags::SLEEP | DequeueFlags::SPECIAL,
                    _ => DequeueFlags::SAVE,
                };
                // The no_std reference's lag limit (the kernel's VERIFY oracle has it too),
                // asked before the dequeue, of the state update_entity_lag() reads.
                let limit = sched_eevdf::reference::lag_limit(&self.rq, se, cfg);
                let v = avg_vruntime_peek(&self.rq);
                let a = dequeue_entity(&mut self.rq, se, flags, cfg);
                let b = self.model.dequeue_entity(i, flags, cfg);
                assert_eq!(a, b, "dequeue delayed?");
                if a {
                    let raw = vtime::vdelta(v, se.vruntime());
                    let lag = raw.clamp(-limit, limit);
                    assert_eq!(se.vlag(), lag, "saved lag against reference::lag_limit");
                    self.clamps += usize::from(lag != raw);
                }
                if self.rq.curr() == Some(se) {
                    self.schedule();
                }
            }
            Op::Reweight(i, w) => {
                let lw = weight_choice(w);
                let se = self.se(i);
                reweight_entity(&mut self.rq, se, lw, cfg);
                self.model.reweight_entity(i, lw, cfg);
            }
            Op::Slice(i, s) => {
                let se = self.se(i);
                sched_setattr_slice(&mut self.rq, se, s, cfg);
                self.model.setattr_slice(i, s, cfg);
            }
            Op::Schedule => self.schedule(),
            Op::Flip(k) => {
                let f = Features::TABLE[k].flag;
                self.cfg.features = cfg.features.with(f, !cfg.features.contains(f));
            }
        }
    }

    /// Compares the two after `op`; returns the core's pick reason.
    fn compare(&mut self, step: usize, op: &Op) -> PickReason {
        if let Err(e) = check_invariants(&self.rq) {
            panic!("step {step} {op:?}: invariant: {e}");
        }
        let pa = pick_eevdf(&self.rq, self.cfg);
        let why = pick_reason(&self.rq, pa, self.cfg);
        let pa = pa.map(|se| idx(self.ents, se));
        let pb = self.model.pick_eevdf(self.cfg);
        assert_eq!(pa, pb, "step {step} {op:?}: pick_eevdf");
        let pr =
            sched_eevdf::reference::pick(&self.rq, self.cfg.features).map(|se| idx(self.ents, se));
        assert_eq!(pr, pb, "step {step} {op:?}: reference::pick");
        assert_eq!(
            why,
            self.model.pick_reason(self.cfg),
            "step {step} {op:?}: pick reason"
        );
        assert_eq!(
            self.rq.curr().map(|se| idx(self.ents, se)),
            self.model.curr,
            "step {step}: curr"
        );
        assert_eq!(self.rq.nr_queued() as usize, self.model.nr_queued());
        let sums = (self.rq.zero_vruntime(), self.rq.avg_vruntime());
        let peek = avg_vruntime_peek(&self.rq);
        assert_eq!(
            sums,
            (self.rq.zero_vruntime(), self.rq.avg_vruntime()),
            "step {step}: avg_vruntime_peek wrote the runqueue"
        );
        let va = avg_vruntime(&mut self.rq);
        assert_eq!(peek, va, "step {step} {op:?}: avg_vruntime_peek");
        let vb = self.model.avg_vruntime();
        assert_eq!(va, vb, "step {step} {op:?}: V");
        for (i, e) in self.ents.iter().enumerate() {
            let (a, b) = (e.se(), &self.model.ents[i]);
            let got = (
                a.vruntime(),
                a.deadline(),
                a.vlag(),
                a.slice(),
                a.custom_slice(),
            );
            let want = (b.vruntime, b.deadline, b.vlag, b.slice, b.custom_slice);
            assert_eq!(
                got, want,
                "step {step} {op:?}: entity {i} (v, d, vlag, slice, custom)"
            );
            let got = (a.on_rq(), a.sched_delayed(), a.rel_deadline(), a.load());
            let want = (b.on_rq, b.sched_delayed, b.rel_deadline, b.load);
            assert_eq!(got, want, "step {step} {op:?}: entity {i} state");
        }
        why
    }
}

/// How often each [`PickReason`] came up in a [`run`] (index: `PickReason as usize`).
pub type ReasonTally = [usize; 5];

/// Runs `ops` on both and compares after every step; returns the pick reasons seen.
pub fn run(weights: &[usize], v0: u64, features: u32, ops: &[Op]) -> ReasonTally {
    run_counting_clamps(weights, v0, features, ops).0
}

/// [`run`], also returning how many lags saved by `Op::Sleep` were clamped.
pub fn run_counting_clamps(
    weights: &[usize],
    v0: u64,
    features: u32,
    ops: &[Op],
) -> (ReasonTally, usize) {
    let ents: Vec<UserEntity> = weights
        .iter()
        .map(|&w| UserEntity::new(weight_choice(w)))
        .collect();
    let model_ents = weights
        .iter()
        .map(|&w| RefEntity::new(weight_choice(w)))
        .collect();
    let mut cfg = Config::DEFAULT;
    for (k, info) in Features::TABLE.iter().enumerate() {
        if features & (1 << k) != 0 {
            cfg.features = cfg
                .features
                .with(info.flag, !cfg.features.contains(info.flag));
        }
    }
    let mut p = Pair {
        ents: &ents,
        rq: UserRunqueue::with_zero_vruntime(v0),
        model: RefRq::new(model_ents, v0),
        cfg,
        wakeups: 0,
        clamps: 0,
    };
    let mut tally = ReasonTally::default();
    for (step, op) in ops.iter().enumerate() {
        p.apply(op);
        let why = p.compare(step, op);
        if let Some(n) = tally.get_mut(why as usize) {
            *n += 1;
        }
    }
    (tally, p.clamps)
}
