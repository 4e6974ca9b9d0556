// SPDX-License-Identifier: GPL-2.0

//! Extremes, with overflow checks on: vruntime across the u64 wrap, spreads of 2^53,
//! weights 2..=88761, 100k entities, 100 µs and 100 ms slices mixed. No panic, no
//! overflow, invariants hold.

mod common;

use common::weight_choice;
use sched_eevdf::user::{UserEntity, UserRunqueue};
use sched_eevdf::*;

fn drive<'a>(
    rq: &mut UserRunqueue<'a>,
    ents: &'a [UserEntity],
    steps: usize,
    q: u64,
    cfg: Config,
    mut seed: u64,
) {
    for step in 0..steps {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let e = ents[(seed >> 33) as usize % ents.len()].se();
        match (seed >> 8) % 8 {
            0 => {
                if e.sched_delayed() {
                    requeue_delayed_entity(rq, e, cfg);
                } else {
                    enqueue_entity(rq, e, EnqueueFlags::WAKEUP, cfg);
                }
                if wakeup_preempt(rq, e, cfg) {
                    while let Pick::Blocked(_) = schedule(rq, cfg) {}
                }
            }
            1 => {
                if !e.sched_delayed() {
                    dequeue_entity(rq, e, DequeueFlags::SLEEP, cfg);
                }
            }
            2 => reweight_entity(rq, e, weight_choice((seed >> 20) as usize % 46), cfg),
            3 => sched_setattr_slice(
                rq,
                e,
                if seed & 1 == 0 { 100_000 } else { 100_000_000 },
                cfg,
            ),
            _ => {
                if update_curr(rq, q, cfg) || rq.curr().is_none_or(|c| !c.on_rq()) {
                    while let Pick::Blocked(_) = schedule(rq, cfg) {}
                }
            }
        }
        if step % 64 == 0 {
            check_invariants(rq).unwrap_or_else(|err| panic!("step {step}: {err}"));
        }
    }
    check_invariants(rq).unwrap();
}

/// Virtual time crosses the u64 wrap many times over; lags stay clamped.
#[test]
fn vruntime_across_the_wrap() {
    let ents: Vec<UserEntity> = (0..64)
        .map(|i| UserEntity::new(weight_choice(i % 46)))
        .collect();
    let mut rq = UserRunqueue::with_zero_vruntime(u64::MAX - 10_000_000);
    let cfg = Config::DEFAULT;
    for e in &ents {
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, cfg);
    }
    let start = rq.zero_vruntime();
    drive(
        &mut rq,
        &ents,
        if cfg!(miri) { 200 } else { 30_000 },
        4_000_000,
        cfg,
        1,
    );
    // V has moved past the wrap (it advances ~10^8 in this run).
    let v = avg_vruntime(&mut rq);
    assert!(v < start, "V {v} did not wrap from {start}");
    for e in ents.iter().filter(|e| e.se().on_rq()) {
        assert!(vtime::vdelta(v, e.se().vruntime()).unsigned_abs() < 1 << 45);
    }
}

/// Spreads of 2^53 between entities (as in production crash dumps): no panic, and the
/// exact eligibility test still answers right where `key * load` exceeds 64 bits.
#[test]
fn spread_of_2_pow_53() {
    let cfg = Config::DEFAULT;
    // 100 nice -20 entities around V and one weight-2 group entity 2^53 ahead.
    let heavy: Vec<UserEntity> = (0..100)
        .map(|_| UserEntity::new(LoadWeight::from_nice(-20)))
        .collect();
    let light = UserEntity::new(LoadWeight::from_weight(scale_load(2)));
    let mut rq = UserRunqueue::with_zero_vruntime(1 << 62);
    for (k, e) in heavy.iter().enumerate() {
        e.se().set_vruntime((1u64 << 62) + k as u64);
        e.se().set_deadline(e.se().vruntime() + 1_000_000);
        e.se().set_on_rq(true);
        __enqueue_entity(&mut rq, e.se(), cfg.features);
        rq.set_nr_queued(rq.nr_queued() + 1);
    }
    light.se().set_vruntime((1u64 << 62) + (1 << 53));
    light.se().set_deadline((1u64 << 62) + 1); // the earliest deadline of all
    light.se().set_on_rq(true);
    __enqueue_entity(&mut rq, light.se(), cfg.features);
    rq.set_nr_queued(rq.nr_queued() + 1);
    check_invariants(&rq).unwrap();
    // key * load = 2^53 * (100 * 88761 + 2) > 2^76: C's wrapped product is meaningless.
    assert!(!entity_eligible(&rq, light.se(), cfg));
    assert!(entity_eligible(&rq, heavy[0].se(), cfg));
    assert_ne!(pick_eevdf(&rq, cfg), Some(light.se()));
    // 2^53 behind instead: eligible, and (earliest deadline) picked.
    __dequeue_entity(&mut rq, light.se(), cfg.features);
    light.se().set_vruntime((1u64 << 62) - (1 << 53));
    __enqueue_entity(&mut rq, light.se(), cfg.features);
    assert!(entity_eligible(&rq, light.se(), cfg));
    assert_eq!(pick_eevdf(&rq, cfg), Some(light.se()));
    // Keep running with such spreads: wrapping sums, no panic, invariants hold.
    drive(
        &mut rq,
        &heavy,
        if cfg!(miri) { 100 } else { 5_000 },
        1_000_000,
        cfg,
        2,
    );
}

/// Random spreads up to 2^53 with all weights and features flipping: no panic.
#[test]
fn random_spreads_all_weights() {
    let n = if cfg!(miri) { 16 } else { 500 };
    let ents: Vec<UserEntity> = (0..n)
        .map(|i| UserEntity::new(weight_choice(i % 46)))
        .collect();
    let mut rq = UserRunqueue::with_zero_vruntime(u64::MAX - (1 << 52));
    let mut x = 99u64;
    for e in &ents {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        e.se().set_vlag(((x >> 11) as i64) - (1 << 52)); // |vlag| < 2^53
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::NONE, Config::DEFAULT);
    }
    check_invariants(&rq).unwrap();
    for (k, info) in Features::TABLE.iter().enumerate() {
        let cfg = Config {
            features: Features::DEFAULT.with(info.flag, !info.default),
            ..Config::DEFAULT
        };
        drive(
            &mut rq,
            &ents,
            if cfg!(miri) { 50 } else { 2_000 },
            3_000_000,
            cfg,
            k as u64,
        );
    }
}

/// 100k entities, 100 µs and 100 ms slices mixed, BIAS_ELIGIBLE on: Σ r_j stays exact
/// (<= 10^13 < 2^44) and the bias 1024 Σ r_j < 2^54 fits.
#[test]
fn hundred_thousand_entities_mixed_slices() {
    let n = if cfg!(miri) { 64 } else { 100_000 };
    let cfg = Config {
        features: Features::DEFAULT.with(Features::BIAS_ELIGIBLE, true),
        ..Config::DEFAULT
    };
    let ents: Vec<UserEntity> = (0..n)
        .map(|i| UserEntity::new(weight_choice(i % 46)))
        .collect();
    let mut rq = UserRunqueue::new();
    for (i, e) in ents.iter().enumerate() {
        sched_setattr_slice(
            &mut rq,
            e.se(),
            if i % 2 == 0 { 100_000 } else { 100_000_000 },
            cfg,
        );
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, cfg);
    }
    let stats = check_invariants(&rq).unwrap();
    assert_eq!(stats.nodes as usize, n);
    assert!(rq.sum_slice() <= 100_000 * 100_000_000);
    assert_eq!(
        rq.sum_slice(),
        (n as u64 / 2) * 100_000 + (n as u64 - n as u64 / 2) * 100_000_000
    );
    assert_eq!(cfs_rq_min_slice(&rq), 100_000);
    // Run: every pick is eligible under the bias and has the earliest deadline among
    // the first few thousand leftmost (spot check of the O(log n) pick).
    for _ in 0..if cfg!(miri) { 20 } else { 3000 } {
        if update_curr(&mut rq, 1_000_000, cfg) || rq.curr().is_none() {
            while let Pick::Blocked(_) = schedule(&mut rq, cfg) {}
        }
    }
    check_invariants(&rq).unwrap();
    for e in ents.iter().step_by(7) {
        dequeue_entity(
            &mut rq,
            e.se(),
            DequeueFlags::SLEEP | DequeueFlags::SPECIAL,
            cfg,
        );
    }
    check_invariants(&rq).unwrap();
}
