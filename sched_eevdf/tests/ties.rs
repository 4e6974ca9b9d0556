// SPDX-License-Identifier: GPL-2.0

//! Ties on equal deadlines: the one decision where this core and 6.12's fair.c follow
//! different rules (Documentation/c-parity.md#ties-on-equal-deadlines). 6.12 sorts its
//! tree by deadline and inserts equal keys to the right, so the first enqueued of the
//! eligible entities sharing the earliest deadline wins; this core's tree is sorted by
//! vruntime, so the smaller vruntime wins. This fixes today's behaviour and the live
//! oracle's count of such picks (`oracle::pick_is_tie`).

use sched_eevdf::user::{UserEntity, UserRunqueue};
use sched_eevdf::*;

/// Queues entities with the given (vruntime, deadline), in this order, nice 0.
fn queue<'a>(rq: &mut UserRunqueue<'a>, ents: &'a [UserEntity], vd: &[(u64, u64)]) {
    for (e, &(v, d)) in ents.iter().zip(vd) {
        let se = e.se();
        se.set_vruntime(v);
        se.set_deadline(d);
        se.set_slice(d - v);
        se.set_on_rq(true);
        __enqueue_entity(rq, se, Features::DEFAULT);
        rq.set_nr_queued(rq.nr_queued() + 1);
    }
    check_invariants(rq).unwrap();
}

fn entities(n: usize) -> Vec<UserEntity> {
    (0..n)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect()
}

#[test]
fn equal_deadlines_go_to_the_smaller_vruntime() {
    let ents = entities(3);
    let mut rq = UserRunqueue::new();
    // a is enqueued first (6.12 would pick it), b has the smaller vruntime; c, far ahead,
    // puts V at 216 so that both a and b are eligible.
    queue(&mut rq, &ents, &[(100, 1000), (50, 1000), (500, 5000)]);
    let (a, b) = (ents[0].se(), ents[1].se());
    let f = Features::DEFAULT;
    assert!(entity_eligible(&rq, a, Config::DEFAULT) && entity_eligible(&rq, b, Config::DEFAULT));
    assert_eq!(pick_eevdf(&rq, Config::DEFAULT), Some(b));
    assert_eq!(oracle::pick(&rq, f), Some(b));
    assert!(oracle::pick_is_tie(&rq, f, Some(b)));
    assert!(oracle::pick_is_tie(&rq, f, Some(a)));
}

#[test]
fn distinct_or_ineligible_deadlines_are_no_tie() {
    let f = Features::DEFAULT;
    // Distinct deadlines.
    let ents = entities(3);
    let mut rq = UserRunqueue::new();
    queue(&mut rq, &ents, &[(100, 1000), (50, 999), (500, 5000)]);
    let pick = pick_eevdf(&rq, Config::DEFAULT);
    assert_eq!(pick, Some(ents[1].se()));
    assert!(!oracle::pick_is_tie(&rq, f, pick));
    // The same deadline, held by an entity that is not eligible.
    let ents = entities(3);
    let mut rq = UserRunqueue::new();
    queue(&mut rq, &ents, &[(10, 1000), (400, 1000), (20, 5000)]);
    assert!(!entity_eligible(&rq, ents[1].se(), Config::DEFAULT));
    let pick = pick_eevdf(&rq, Config::DEFAULT);
    assert_eq!(pick, Some(ents[0].se()));
    assert!(!oracle::pick_is_tie(&rq, f, pick));
    // No pick, no tie.
    assert!(!oracle::pick_is_tie(&rq, f, None));
    // Equal vruntimes and deadlines (tasks forked at the same V): both trees order them by
    // enqueue, so no tie is counted.
    let ents = entities(3);
    let mut rq = UserRunqueue::new();
    queue(&mut rq, &ents, &[(100, 1000), (100, 1000), (500, 5000)]);
    let pick = pick_eevdf(&rq, Config::DEFAULT);
    assert_eq!(pick, Some(ents[0].se()), "the first enqueued");
    assert!(!oracle::pick_is_tie(&rq, f, pick));
}
