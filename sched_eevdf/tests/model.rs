// SPDX-License-Identifier: GPL-2.0

//! Model-based tests: random operation sequences applied to the crate (O(log n) tree,
//! incremental sums) and to the O(n) reference model must give identical picks, V, lags
//! and entity states; the invariant checker runs after every operation.

mod common;

use common::reference::{RefEntity, RefPick, RefRq};
use common::{weight_choice, WEIGHT_CHOICES};
use proptest::prelude::*;
use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

#[derive(Clone, Debug)]
enum Op {
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

fn arb_op(n: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop_oneof![Just(0u64), 1u64..200_000, 200_000u64..20_000_000].prop_map(Op::Tick),
        4 => (0..n, any::<bool>()).prop_map(|(i, b)| Op::Wake(i, b)),
        3 => (0..n, 0u8..3).prop_map(|(i, f)| Op::Sleep(i, f)),
        1 => (0..n, 0..WEIGHT_CHOICES).prop_map(|(i, w)| Op::Reweight(i, w)),
        1 => (0..n, prop_oneof![Just(0u64), 1u64..300_000_000]).prop_map(|(i, s)| Op::Slice(i, s)),
        2 => Just(Op::Schedule),
        1 => (0..Features::TABLE.len()).prop_map(Op::Flip),
    ]
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

    fn apply(&mut self, op: &Op) {
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
                let a = check_preempt_wakeup_fair(&mut self.rq, se, cfg);
                let b = self.model.check_preempt_wakeup(i, cfg);
                assert_eq!(a, b, "wakeup preemption");
                if a.preempts() {
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
                let a = dequeue_entity(&mut self.rq, se, flags, cfg);
                let b = self.model.dequeue_entity(i, flags, cfg);
                assert_eq!(a, b, "dequeue delayed?");
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

    fn compare(&mut self, step: usize, op: &Op) {
        if let Err(e) = check_invariants(&self.rq) {
            panic!("step {step} {op:?}: invariant: {e}");
        }
        let pa = pick_eevdf(&self.rq, self.cfg).map(|se| idx(self.ents, se));
        let pb = self.model.pick_eevdf(self.cfg);
        assert_eq!(pa, pb, "step {step} {op:?}: pick_eevdf");
        assert_eq!(
            self.rq.curr().map(|se| idx(self.ents, se)),
            self.model.curr,
            "step {step}: curr"
        );
        assert_eq!(self.rq.nr_queued() as usize, self.model.nr_queued());
        let va = avg_vruntime(&mut self.rq);
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
    }
}

fn run(weights: &[usize], v0: u64, features: u32, ops: &[Op]) {
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
    };
    for (step, op) in ops.iter().enumerate() {
        p.apply(op);
        p.compare(step, op);
    }
}

fn arb_case() -> impl Strategy<Value = (Vec<usize>, u64, u32, Vec<Op>)> {
    (1usize..12).prop_flat_map(|n| {
        (
            prop::collection::vec(0..WEIGHT_CHOICES, n),
            prop_oneof![
                Just(0u64),
                Just(u64::MAX - 3_000_000_000),
                Just(1u64 << 63),
                any::<u64>()
            ],
            // Mostly defaults, sometimes a few flags flipped from the start.
            prop_oneof![3 => Just(0u32), 1 => any::<u32>()],
            prop::collection::vec(arb_op(n), 1..300),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 768 },
        max_shrink_iters: 10_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn model_matches_reference((weights, v0, features, ops) in arb_case()) {
        run(&weights, v0, features, &ops);
    }
}

/// A fixed regression sequence exercising delayed dequeue, wakeup preemption and
/// reweight of the running entity near the u64 wrap.
#[test]
fn model_fixed_sequence() {
    use Op::*;
    let ops = [
        Wake(0, true),
        Wake(1, true),
        Wake(2, false),
        Schedule,
        Tick(3_000_000),
        Sleep(1, 0),
        Tick(500_000),
        Wake(1, false),
        Reweight(0, 5),
        Slice(2, 100_000),
        Tick(7_000_000),
        Sleep(0, 0),
        Schedule,
        Wake(0, false),
        Tick(1),
        Sleep(2, 2),
        Wake(2, false),
        Flip(8),
        Tick(2_000_000),
        Flip(7),
        Tick(2_000_000),
        Schedule,
    ];
    run(&[20, 0, 45], u64::MAX - 10_000_000, 0, &ops);
}
