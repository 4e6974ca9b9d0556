// SPDX-License-Identifier: GPL-2.0

//! Applies one operation sequence to the crate and to the reference model and compares
//! them after every step (used by the model-based proptest and by the fuzz target).

#![allow(dead_code)]

use super::test_model::{RefEntity, RefPick, RefRq};
use super::weight_choice;
use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::vtime::vdelta;
use sched_eevdf::*;

#[derive(Clone, Debug)]
pub enum Op {
    /// Current runs this many ns.
    Tick(u64),
    /// Wake entity i; the bits of the `u8`: 1 create it (`ENQUEUE_INITIAL`, WF_FORK),
    /// 2 WF_SYNC, 4 WF_RQ_SELECTED, 8 the waker ran 0.2 ms (fair.c computes 0), 16
    /// migration cost 0 (else 0.5 ms), 32 | 64 both: the wakee is idle (no buddy).
    Wake(usize, u8),
    /// Entity i leaves: 0 sleep, 1 sleep in a special state, 2 migrate away (non-sleep).
    Sleep(usize, u8),
    /// New weight for entity i.
    Reweight(usize, usize),
    /// sched_setattr(sched_runtime) for entity i.
    Slice(usize, u64),
    /// set_user_nice() for entity i: a sched_change around a new weight.
    Renice(usize, usize),
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
    /// Wakeups so far (they alternate between the wakeup entry points).
    wakeups: u32,
    tally: Tally,
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

    /// `check_preempt_wakeup_fair()` for the enqueued entity `i`: the core's decision, the
    /// no_std reference's (the kernel's VERIFY oracle) and the model's must agree. Returns
    /// whether current is preempted.
    fn wakeup(&mut self, i: usize, se: UserSe<'a>, wake: Wake) -> bool {
        let cfg = self.cfg;
        let eevdf = cfg.features.contains(Features::NEXT_BUDDY_EEVDF);
        let b = self.model.check_preempt_wakeup(i, wake, cfg);
        if let Some(n) = self.tally.wakeups.get_mut(b.why as usize) {
            *n += 1;
        }
        self.tally.buddies_set += usize::from(b.set_buddy);
        self.tally.buddies_kept += usize::from(b.kept_buddy);
        // The no_std O(n) reference decides from the state before the decision. fair.c
        // (and the model) set 6.12's NEXT_BUDDY buddy before it.
        let mut want = (b.why.preempts(), b.set_buddy);
        if !eevdf {
            let curr = self.rq.curr();
            if cfg.features.contains(Features::NEXT_BUDDY)
                && curr.is_some_and(|c| c != se)
                && !wake.flags.contains(WakeFlags::FORK)
                && !se.sched_delayed()
                && !wake.wakee_idle
            {
                self.rq.set_next_buddy(Some(se));
            }
            let r = sched_eevdf::oracle::wakeup_preempt(&self.rq, se, cfg.features);
            assert_eq!(r, want.0, "oracle::wakeup_preempt, model says {b:?}");
            want.1 = false;
        } else {
            let r = sched_eevdf::oracle::wakeup_preempt_buddy(&self.rq, se, wake, cfg.features);
            assert_eq!(r, want, "oracle::wakeup_preempt_buddy, model says {b:?}");
        }
        // Every third wakeup goes through the model's check_preempt_wakeup_fair() (the
        // outer logic, decision only); the others through the operations, and of those
        // every other one asks the reason (the kernel asks it only while counting, of the
        // state the decision left), so that each sequence is run.
        let k = self.wakeups % 3;
        if k == 2 {
            if !eevdf && self.rq.next_buddy() == Some(se) {
                // The model sets 6.12's buddy itself: undo the hand-made one.
                self.rq.set_next_buddy(None);
            }
            let got = check_preempt_wakeup_fair(&mut self.rq, se, wake, false, cfg);
            assert_eq!(
                got, want.0,
                "model::check_preempt_wakeup_fair, model says {b:?}"
            );
            return got;
        }
        if !eevdf {
            let vprot = self.rq.curr().map(|c| c.vprot());
            let preempts = wakeup_preempt(&mut self.rq, se, cfg);
            if self.rq.curr().map(|c| c.vprot()) != vprot
                && !preempts
                && cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE)
            {
                self.tally.shrunk += 1;
            }
            assert_eq!(preempts, want.0, "wakeup_preempt, model says {b:?}");
            if k == 0 {
                let why = wakeup_reason(&self.rq, se, preempts, cfg);
                assert_eq!(why, b.why, "wakeup preemption reason");
            }
            return preempts;
        }
        let act = wakeup_preempt_buddy(&mut self.rq, se, wake, cfg);
        assert_eq!(
            (act.preempt, act.set_buddy, act.kept_buddy),
            (want.0, want.1, b.kept_buddy),
            "wakeup_preempt_buddy {act:?}, model says {b:?}"
        );
        if k == 0 {
            let why = wakeup_buddy_reason(&self.rq, se, act, cfg);
            assert_eq!(
                why, b.why,
                "wakeup preemption reason (NEXT_BUDDY_EEVDF), {act:?}"
            );
        }
        act.preempt
    }

    pub fn apply(&mut self, op: &Op) {
        let cfg = self.cfg;
        match *op {
            Op::Tick(d) => {
                let deadline = self.rq.curr().map(|c| c.deadline());
                let a = update_curr(&mut self.rq, d, cfg);
                let b = self.model.update_curr(d, cfg);
                assert_eq!(a, b, "update_curr resched");
                if let Some(c) = self.rq.curr() {
                    if a && cfg.features.contains(Features::RUN_TO_PARITY_MIN_SLICE)
                        && deadline == Some(c.deadline())
                        && entity_eligible(&self.rq, c, cfg)
                    {
                        self.tally.expired += 1;
                    }
                }
                if a {
                    self.schedule();
                }
            }
            Op::Wake(i, bits) => {
                let se = self.se(i);
                let initial = bits & 1 != 0;
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
                let wake = Wake {
                    flags: [
                        (1, WakeFlags::FORK),
                        (2, WakeFlags::SYNC),
                        (4, WakeFlags::RQ_SELECTED),
                    ]
                    .into_iter()
                    .filter(|&(b, _)| bits & b != 0)
                    .fold(WakeFlags::NONE, |a, (_, f)| a | f),
                    wakee_idle: bits & 96 == 96,
                    waker_ran_ns: if bits & 8 != 0 { 200_000 } else { 0 },
                    migration_cost_ns: if bits & 16 != 0 { 0 } else { 500_000 },
                };
                let preempts = self.wakeup(i, se, wake);
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
                let limit = sched_eevdf::oracle::lag_limit(&self.rq, se, cfg);
                let v = avg_vruntime_peek(&self.rq);
                let a = dequeue_entity(&mut self.rq, se, flags, cfg);
                let b = self.model.dequeue_entity(i, flags, cfg);
                assert_eq!(a, b, "dequeue delayed?");
                if a {
                    let raw = vtime::vdelta(v, se.vruntime());
                    let lag = raw.clamp(-limit, limit);
                    assert_eq!(se.vlag(), lag, "saved lag against oracle::lag_limit");
                    self.clamps += usize::from(lag != raw);
                }
                if self.rq.curr() == Some(se) {
                    self.schedule();
                }
            }
            Op::Reweight(i, w) => {
                let lw = weight_choice(w);
                let se = self.se(i);
                if self.window(i).is_some()
                    && cfg.features.contains(Features::PROTECT_AT_PICK)
                    && protect_slice(se, cfg.features)
                {
                    self.tally.scaled += 1;
                }
                reweight_entity(&mut self.rq, se, lw, cfg);
                self.model.reweight_entity(i, lw, cfg);
            }
            Op::Slice(i, s) => {
                let se = self.se(i);
                let before = self.window(i);
                let a = sched_change(&mut self.rq, se, cfg, |_, se| {
                    let (slice, custom) = sched_attr_slice(s, cfg.base_slice_ns);
                    se.set_slice(slice);
                    se.set_custom_slice(custom);
                });
                let b = self.model.setattr_slice(i, s, cfg);
                assert_eq!(a, b, "sched_change: window kept from being restored");
                self.check_kept(i, before, a, cfg);
            }
            Op::Renice(i, w) => {
                let lw = weight_choice(w);
                let se = self.se(i);
                let before = self.window(i);
                renice(&mut self.rq, se, lw, cfg);
                let b = self.model.renice(i, lw, cfg);
                self.check_kept(i, before, b, cfg);
            }
            Op::Schedule => self.schedule(),
            Op::Flip(k) => {
                let f = Features::TABLE[k].flag;
                if f == Features::RUN_TO_PARITY_MIN_SLICE
                    && self
                        .rq
                        .curr()
                        .is_some_and(|c| protect_slice(c, cfg.features))
                {
                    self.tally.toggled += 1;
                }
                self.cfg.features = cfg.features.with(f, !cfg.features.contains(f));
            }
        }
    }

    /// Entity `i`'s slice protection as a sched_change should keep it: whether it runs
    /// and is queued, and its window relative to its vruntime (`vprot - v`).
    fn window(&self, i: usize) -> Option<i64> {
        let se = self.se(i);
        (self.rq.curr() == Some(se) && se.on_rq()).then(|| vdelta(se.vprot(), se.vruntime()))
    }

    /// After a sched_change of entity `i`, whose window was `before` ([`Self::window`]):
    /// set_next_entity() says it kept an ended window exactly when PROTECT_AT_PICK kept a
    /// window that reads ended; with PLACE_REL_DEADLINE (which carries the deadline and
    /// the window relative to the vruntime) the window kept is the one before, to the
    /// nanosecond.
    fn check_kept(&mut self, i: usize, before: Option<i64>, kept: bool, cfg: Config) {
        let se = self.se(i);
        let Some(before) = before else {
            assert!(!kept, "entity {i}: kept a window without being set again");
            return;
        };
        if !cfg.features.contains(Features::PROTECT_AT_PICK) {
            assert!(!kept, "entity {i}: PROTECT_AT_PICK off keeps nothing");
            return;
        }
        self.tally.kept[usize::from(kept)] += 1;
        assert_eq!(
            kept,
            !protect_slice(se, cfg.features),
            "entity {i}: kept an ended window?"
        );
        if cfg.features.contains(Features::PLACE_REL_DEADLINE) {
            let got = vdelta(se.vprot(), se.vruntime());
            // Kept to the nanosecond, unless the window reached past the deadline (a 6.12
            // stash that a reweight left behind): that one ends.
            let end = se.vruntime().wrapping_add(before as u64);
            let past = before > 0 && vdelta(end, se.deadline()) > 0;
            assert!(
                got == before || (past && !protect_slice(se, cfg.features)),
                "entity {i}: the window a sched_change kept: {got}, before {before}"
            );
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
            sched_eevdf::oracle::pick(&self.rq, self.cfg.features).map(|se| idx(self.ents, se));
        assert_eq!(pr, pb, "step {step} {op:?}: oracle::pick");
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
        assert_eq!(
            self.rq.next_buddy().map(|se| idx(self.ents, se)),
            self.model.next,
            "step {step} {op:?}: next buddy"
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
                a.vprot(),
            );
            let want = (
                b.vruntime,
                b.deadline,
                b.vlag,
                b.slice,
                b.custom_slice,
                b.vprot,
            );
            assert_eq!(
                got, want,
                "step {step} {op:?}: entity {i} (v, d, vlag, slice, custom, vprot)"
            );
            let got = (a.on_rq(), a.sched_delayed(), a.rel_deadline(), a.load());
            let want = (b.on_rq, b.sched_delayed, b.rel_deadline, b.load);
            assert_eq!(got, want, "step {step} {op:?}: entity {i} state");
        }
        why
    }
}

/// What a [`run`] reached, so that a test can show that its checks were not vacuous.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Per [`PickReason`] (index: `PickReason as usize`).
    pub picks: [usize; 6],
    /// Per [`WakeupPreempt`] (index: `WakeupPreempt as usize`).
    pub wakeups: [usize; 10],
    /// NEXT_BUDDY_EEVDF made the wakee the buddy.
    pub buddies_set: usize,
    /// NEXT_BUDDY_EEVDF kept an older buddy.
    pub buddies_kept: usize,
    /// RUN_TO_PARITY_MIN_SLICE: wakeups that shrank current's window.
    pub shrunk: usize,
    /// RUN_TO_PARITY_MIN_SLICE: update_curr() reschedules at the end of a window, current
    /// still eligible and its deadline not renewed.
    pub expired: usize,
    /// PROTECT_AT_PICK: sched_changes of current that kept a window, [protected, ended].
    pub kept: [usize; 2],
    /// PROTECT_AT_PICK: reweights of a protected current.
    pub scaled: usize,
    /// Toggles of RUN_TO_PARITY_MIN_SLICE while current was protected.
    pub toggled: usize,
}

impl Tally {
    /// Adds `o` to `self`.
    pub fn add(&mut self, o: &Tally) {
        for (a, b) in self.picks.iter_mut().zip(o.picks) {
            *a += b;
        }
        for (a, b) in self.wakeups.iter_mut().zip(o.wakeups) {
            *a += b;
        }
        self.buddies_set += o.buddies_set;
        self.buddies_kept += o.buddies_kept;
        self.shrunk += o.shrunk;
        self.expired += o.expired;
        self.kept[0] += o.kept[0];
        self.kept[1] += o.kept[1];
        self.scaled += o.scaled;
        self.toggled += o.toggled;
    }
}

/// The `features` argument of [`run`] that flips the named rows of the feature table.
pub fn flips(names: &[&str]) -> u32 {
    names
        .iter()
        .map(|n| {
            let k = Features::TABLE
                .iter()
                .position(|i| i.name == *n)
                .expect("a row of the table");
            1u32 << k
        })
        .fold(0, |a, b| a | b)
}

/// Runs `ops` on both and compares after every step; returns what it reached. `features`
/// flips the rows of the feature table (bit k: row k) from their defaults.
pub fn run(weights: &[usize], v0: u64, features: u32, ops: &[Op]) -> Tally {
    run_counting_clamps(weights, v0, features, ops).0
}

/// [`run`], also returning how many lags saved by `Op::Sleep` were clamped.
pub fn run_counting_clamps(
    weights: &[usize],
    v0: u64,
    features: u32,
    ops: &[Op],
) -> (Tally, usize) {
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
        tally: Tally::default(),
        clamps: 0,
    };
    for (step, op) in ops.iter().enumerate() {
        p.apply(op);
        let why = p.compare(step, op);
        if let Some(n) = p.tally.picks.get_mut(why as usize) {
            *n += 1;
        }
    }
    (p.tally, p.clamps)
}
