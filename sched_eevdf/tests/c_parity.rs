// SPDX-License-Identifier: GPL-2.0

//! Where this core parts from 6.12.117's fair.c on purpose, outside any state
//! tests/fair-c-diff can reach (Documentation/c-parity.md): today's behaviour, fixed.

use sched_eevdf::user::{UserEntity, UserRunqueue};
use sched_eevdf::*;

/// A zero weight is ignored (fair.c would divide by it: `div_s64(vlag * old, 0)`). The
/// kernel never asks for one: a task's weight is a table value, a group's at least
/// `scale_load(MIN_SHARES)`.
#[test]
fn reweight_to_zero_changes_nothing() {
    let cfg = Config::DEFAULT;
    let (a, b) = (
        UserEntity::new(LoadWeight::from_nice(0)),
        UserEntity::new(LoadWeight::from_nice(5)),
    );
    let mut rq = UserRunqueue::new();
    enqueue_entity(&mut rq, a.se(), EnqueueFlags::INITIAL, cfg);
    enqueue_entity(&mut rq, b.se(), EnqueueFlags::INITIAL, cfg);
    let Pick::Run(_) = schedule(&mut rq, cfg) else {
        panic!("no pick")
    };
    update_curr(&mut rq, 300_000, cfg);
    for e in [&a, &b] {
        let se = e.se();
        let before = (se.vruntime(), se.deadline(), se.vlag(), se.load());
        let sums = (rq.avg_vruntime(), rq.avg_load(), rq.zero_vruntime());
        reweight_entity(
            &mut rq,
            se,
            LoadWeight {
                weight: 0,
                inv_weight: 0,
            },
            cfg,
        );
        assert_eq!((se.vruntime(), se.deadline(), se.vlag(), se.load()), before);
        assert_eq!((rq.avg_vruntime(), rq.avg_load(), rq.zero_vruntime()), sums);
        check_invariants(&rq).unwrap();
    }
}

/// PLACE_LAG's inflation is `vl + vl*w/W`, with a 64-bit divisor. fair.c computes
/// `vl*(W + w)/W` through `div_s64()`, whose divisor is an `s32`: the same value while W
/// fits (the two forms agree under truncating division), garbage once W >= 2^31, which
/// takes some 24,000 queued entities of the heaviest weight. Here W = 2^31 + 3072.
#[test]
fn lag_inflation_with_a_weight_sum_past_2_pow_31() {
    let cfg = Config::DEFAULT;
    let e = UserEntity::new(LoadWeight::from_nice(-20));
    let mut rq = UserRunqueue::new();
    let w_sum: u64 = (1 << 31) + 3 * 1024;
    rq.set_avg_load(w_sum);
    rq.set_nr_queued(1);
    let se = e.se();
    let vl: i64 = -3_000_000;
    se.set_vlag(vl);
    let lag = place_entity(&mut rq, se, EnqueueFlags::WAKEUP, cfg);
    let w = i64::from(88761);
    let want = vl + vl * w / w_sum as i64;
    assert_eq!(lag, want);
    assert_eq!(se.vruntime(), rq.zero_vruntime().wrapping_sub(want as u64));
    // fair.c's s32 divisor: (s32)(2^31 + 3072) = -2^31 + 3072, the sign flipped.
    let c = vl * (w_sum as i64 + w) / i64::from(w_sum as i32);
    assert!(
        c.signum() != want.signum(),
        "fair.c would place it ahead of V"
    );
}
