// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_eevdf`: the core, compiled with the kernel's flags
//! (overflow checks included), runs a seeded mixed workload on a private
//! runqueue and passes its invariant checker after every mutation.
//!
//! This exercises the core's own userspace tree inside the kernel;
//! `kunit_bindings.rs` runs the core through the kernel's rbtree bindings on a
//! private `cfs_rq`.

use crate::kunit::{check, Rng, Test};
use crate::sched_eevdf::{
    dequeue_entity, enqueue_entity, entity_eligible, pick_eevdf, reweight_entity, schedule,
    update_curr, user::UserEntity, user::UserRunqueue, vtime, Config, DequeueFlags, EnqueueFlags,
    Entity, LoadWeight, Pick, Runqueue,
};

/// Entities in the workload; they live on the stack of the test.
const N: usize = 24;
/// Steps of the workload.
const STEPS: u32 = 4000;

/// The load weight of a nice level in -20..=19.
fn weight(rng: &mut Rng) -> LoadWeight {
    LoadWeight::from_nice(rng.below(40) as i32 - 20)
}

/// The pick is eligible and no eligible queued entity has an earlier deadline.
fn check_pick(
    t: &mut Test,
    rq: &UserRunqueue<'_>,
    ents: &[UserEntity],
    cfg: Config,
    step: u32,
) -> bool {
    let Some(p) = pick_eevdf(rq, cfg) else {
        return true;
    };
    if !entity_eligible(rq, p, cfg) && rq.curr() != Some(p) {
        t.fail(format_args!("step {step}: picked an ineligible entity"));
        return false;
    }
    for e in ents {
        let se = e.se();
        if se.on_rq()
            && rq.curr() != Some(se)
            && entity_eligible(rq, se, cfg)
            && vtime::vruntime_before(se.deadline(), p.deadline())
            && rq.curr() != Some(p)
        {
            t.fail(format_args!(
                "step {step}: an eligible entity has an earlier deadline than the pick"
            ));
            return false;
        }
    }
    true
}

fn mixed_workload(t: &mut Test) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let cfg = Config::DEFAULT;
    let ents: [UserEntity; N] =
        core::array::from_fn(|i| UserEntity::new(weight(&mut Rng(i as u64 + 1))));
    let mut rq = UserRunqueue::new();
    let (mut enq, mut deq, mut picks) = (0u32, 0u32, 0u32);
    for step in 0..STEPS {
        let e = &ents[rng.below(N as u64) as usize];
        let se = e.se();
        match rng.below(8) {
            0 | 1 if !se.on_rq() => {
                enqueue_entity(&mut rq, se, EnqueueFlags::WAKEUP, cfg);
                enq += 1;
                if !check(t, &rq, step, "enqueue") {
                    return;
                }
            }
            2 if se.on_rq() && rq.curr() != Some(se) => {
                dequeue_entity(&mut rq, se, DequeueFlags::SLEEP, cfg);
                deq += 1;
                if !check(t, &rq, step, "dequeue") {
                    return;
                }
            }
            3 if se.on_rq() => {
                reweight_entity(&mut rq, se, weight(&mut rng), cfg);
                if !check(t, &rq, step, "reweight") {
                    return;
                }
            }
            _ => {
                update_curr(&mut rq, 100_000 + rng.below(3_000_000), cfg);
                if !check_pick(t, &rq, &ents, cfg, step) {
                    return;
                }
                if let Pick::Run(_) = schedule(&mut rq, cfg) {
                    picks += 1;
                }
                if !check(t, &rq, step, "schedule") {
                    return;
                }
            }
        }
    }
    t.info(format_args!(
        "{STEPS} steps: {enq} enqueues, {deq} dequeues, {picks} picks, invariants held"
    ));
}

crate::kunit_suite!(sched_eevdf_suite, c"sched_eevdf", [c"mixed_workload" => super::mixed_workload]);
