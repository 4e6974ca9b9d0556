// SPDX-License-Identifier: GPL-2.0

//! The properties stated as theorems in Documentation/eevdf-math.md, with their bounds.

mod common;

use common::weight_choice;
use proptest::prelude::*;
use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

/// Real-time lag of a queued entity in ns of service: lag_i = w_i (V - v_i) / NICE_0_LOAD.
fn lag_ns(v: u64, e: &UserEntity) -> f64 {
    vtime::vdelta(v, e.se().vruntime()) as f64 * e.se().load().weight_down() as f64 / 1024.0
}

fn run_to_resched(rq: &mut UserRunqueue<'_>, q: u64, cfg: Config) {
    while let Pick::Blocked(_) = schedule(rq, cfg) {}
    let _ = update_curr(rq, q, cfg);
}

/// One step of a random run: a wakeup, a sleep, `d` ns of running, or a schedule.
fn random_step<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>, kind: u8, d: u64, cfg: Config) {
    match kind {
        0 => enqueue_entity(rq, se, EnqueueFlags::WAKEUP, cfg),
        1 => {
            dequeue_entity(rq, se, DequeueFlags::SLEEP, cfg);
        }
        2 => {
            let _ = update_curr(rq, d, cfg);
        }
        _ => {
            let _ = schedule(rq, cfg);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 48 }, ..ProptestConfig::default() })]

    /// Theorem 1 (lag bound). Closed system, ELIGIBLE on, all entities joined at lag 0
    /// (PLACE_LAG off), preemption at ticks of q, requests that are whole multiples of q
    /// (so a request ends exactly at a tick and fair.c's `vd = v + r/w` equals the paper's
    /// `vd = ve + r/w`): for every entity at every tick,
    /// -r_max <= lag_i <= max(r_max, q), plus 1 µs for the rounding of V and of
    /// calc_delta_fair(). (Requests shorter than a tick break the premise: see the docs.)
    #[test]
    fn lag_bound_closed_system(
        ws in prop::collection::vec(0usize..46, 2..12),
        slices in prop::collection::vec(1u64..=20, 12),
        q in prop_oneof![Just(100_000u64), Just(1_000_000u64), Just(4_000_000u64)],
        rtp in any::<bool>(),
    ) {
        let cfg = Config {
            features: Features::DEFAULT
                .with(Features::PLACE_LAG, false)
                .with(Features::RUN_TO_PARITY, rtp),
            tick_nsec: q,
            ..Config::DEFAULT
        };
        let ents: Vec<UserEntity> = ws.iter().map(|&w| UserEntity::new(weight_choice(w))).collect();
        let mut rq = UserRunqueue::with_zero_vruntime(u64::MAX - 50_000_000_000);
        let slices: Vec<u64> = slices.iter().map(|k| (k * q).clamp(100_000, 100_000_000) / q * q).collect();
        for (e, s) in ents.iter().zip(&slices) {
            sched_setattr_slice(&mut rq, e.se(), *s, cfg);
            enqueue_entity(&mut rq, e.se(), EnqueueFlags::NONE, cfg);
        }
        let r_max = slices[..ents.len()].iter().copied().max().unwrap() as f64;
        let (lo, hi) = (-r_max - 1000.0, r_max.max(q as f64) + 1000.0);
        for t in 0..if cfg!(miri) { 50 } else { 4000 } {
            run_to_resched(&mut rq, q, cfg);
            let v = avg_vruntime(&mut rq);
            for (i, e) in ents.iter().enumerate() {
                let l = lag_ns(v, e);
                prop_assert!(lo <= l && l <= hi, "tick {t}: entity {i} lag {l} outside [{lo}, {hi}]");
                if std::env::var("LAGDBG").is_ok() && t == 3999 { eprintln!("lag/rmax {} q {q} rmax {r_max}", l / r_max); }
            }
        }
        check_invariants(&rq).unwrap();
    }

    /// Theorem 2 (conservation). For any queued set, Σ w_i (V - v_i) ∈ (-W, 0]: the
    /// weighted lags sum to zero up to V's floor rounding, whatever joined or left.
    #[test]
    fn weighted_lag_sums_to_zero(
        ws in prop::collection::vec(0usize..46, 1..20),
        ops in prop::collection::vec((0usize..20, 0u8..4, 1u64..10_000_000), 1..300),
    ) {
        let cfg = Config::DEFAULT;
        let ents: Vec<UserEntity> = ws.iter().map(|&w| UserEntity::new(weight_choice(w))).collect();
        let mut rq = UserRunqueue::with_zero_vruntime(1 << 63);
        for (i, kind, d) in ops {
            let se = ents[i % ents.len()].se();
            random_step(&mut rq, se, kind, d, cfg);
            check_invariants(&rq).unwrap();
            let v = avg_vruntime(&mut rq);
            let (mut s, mut w) = (0i128, 0i128);
            for e in ents.iter().filter(|e| e.se().on_rq()) {
                let wi = e.se().load().weight_down() as i128;
                s += wi * vtime::vdelta(v, e.se().vruntime()) as i128;
                w += wi;
            }
            prop_assert!(s <= 0 && s > -w.max(1), "Σ w (V - v) = {s}, W = {w}");
        }
    }

    /// Current's eligibility asked alone (`entity_eligible()`, which leaves current's
    /// share out of both sides: `Eligibility::for_entity`) is the answer of the test that
    /// folds it in (`vruntime_eligible()`), in every state a run of wakeups, sleeps, ticks
    /// and picks reaches, with and without ELIGIBLE and BIAS_ELIGIBLE.
    #[test]
    fn current_alone_is_eligible_as_with_its_share(
        ws in prop::collection::vec(0usize..46, 1..20),
        ops in prop::collection::vec((0usize..20, 0u8..4, 1u64..10_000_000), 1..300),
        eligible in any::<bool>(),
        bias in any::<bool>(),
    ) {
        let cfg = Config {
            features: Features::DEFAULT
                .with(Features::ELIGIBLE, eligible)
                .with(Features::BIAS_ELIGIBLE, bias),
            ..Config::DEFAULT
        };
        let ents: Vec<UserEntity> = ws.iter().map(|&w| UserEntity::new(weight_choice(w))).collect();
        let mut rq = UserRunqueue::with_zero_vruntime(1 << 63);
        let mut asked = 0;
        for (i, kind, d) in ops {
            let se = ents[i % ents.len()].se();
            random_step(&mut rq, se, kind, d, cfg);
            if let Some(c) = rq.curr().filter(|c| c.on_rq()) {
                prop_assert_eq!(
                    entity_eligible(&rq, c, cfg),
                    vruntime_eligible(&rq, c.vruntime(), cfg)
                );
                asked += 1;
            }
        }
        prop_assume!(asked > 0);
    }

    /// Theorem 3 (PLACE_LAG). An entity that sleeps with virtual lag vl (clamped at
    /// dequeue) and wakes later, while others ran, is placed with V' - v = vl ± 2.
    #[test]
    fn place_lag_preserves_lag(
        ws in prop::collection::vec(0usize..46, 2..10),
        warm in 1usize..200,
        asleep in 0usize..200,
        sleeper in 0usize..10,
    ) {
        let cfg = Config { features: Features::DEFAULT.with(Features::DELAY_DEQUEUE, false), ..Config::DEFAULT };
        let ents: Vec<UserEntity> = ws.iter().map(|&w| UserEntity::new(weight_choice(w))).collect();
        let mut rq = UserRunqueue::new();
        for e in &ents {
            enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, cfg);
        }
        for _ in 0..warm {
            run_to_resched(&mut rq, 1_000_000, cfg);
        }
        let s = ents[sleeper % ents.len()].se();
        dequeue_entity(&mut rq, s, DequeueFlags::SLEEP, cfg);
        let vl = s.vlag();
        if rq.curr() == Some(s) {
            let _ = schedule(&mut rq, cfg);
        }
        for _ in 0..asleep {
            run_to_resched(&mut rq, 1_000_000, cfg);
        }
        enqueue_entity(&mut rq, s, EnqueueFlags::WAKEUP, cfg);
        let v = avg_vruntime(&mut rq);
        let got = vtime::vdelta(v, s.vruntime());
        prop_assert!((got - vl).abs() <= 2, "lag before {vl}, after {got}");
        check_invariants(&rq).unwrap();
    }

    /// Theorem 4 (reweight). Reweighting a queued entity w -> w' (total W -> W') keeps V
    /// and its lag up to rounding. With V = floor(Σ/W), Σ = W V + rem (0 <= rem < W), the
    /// new sum is W' V + rem + ε (|ε| < w' from truncating v'), so
    /// |V' - V| <= W/W' + 1; and vl' = V' - v' differs from vl w/w' by at most
    /// |V' - V| + 1 (for an unclamped vl).
    #[test]
    fn reweight_preserves_lag(
        ws in prop::collection::vec(0usize..46, 2..10),
        warm in 1usize..100,
        who in 0usize..10,
        new_w in 0usize..46,
        running in any::<bool>(),
    ) {
        let cfg = Config::DEFAULT;
        let ents: Vec<UserEntity> = ws.iter().map(|&w| UserEntity::new(weight_choice(w))).collect();
        let mut rq = UserRunqueue::new();
        for e in &ents {
            enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, cfg);
        }
        for _ in 0..warm {
            run_to_resched(&mut rq, 700_000, cfg);
        }
        let se = if running { rq.curr().unwrap() } else { ents[who % ents.len()].se() };
        let v = avg_vruntime(&mut rq);
        // The theorem is about the unclamped lag (the clamp itself moves V).
        prop_assume!(vtime::vdelta(v, se.vruntime()) == entity_lag(&rq, v, se, cfg));
        let vl = entity_lag(&rq, v, se, cfg) as f64;
        let (w, w2) = (se.load().weight as f64, weight_choice(new_w).weight as f64);
        let big_w = (rq.avg_load() + rq.curr().filter(|c| c.on_rq()).map_or(0, |c| c.load().weight_down())) as f64;
        let big_w2 = big_w - se.load().weight_down() as f64 + weight_choice(new_w).weight_down() as f64;
        let v_bound = (big_w / big_w2).floor() + 1.0;
        reweight_entity(&mut rq, se, weight_choice(new_w), cfg);
        check_invariants(&rq).unwrap();
        let v2 = avg_vruntime(&mut rq);
        let dv = vtime::vdelta(v2, v) as f64;
        prop_assert!(dv.abs() <= v_bound, "V moved {v} -> {v2}, bound {v_bound}");
        let vl2 = vtime::vdelta(v2, se.vruntime()) as f64;
        prop_assert!((vl2 - vl * w / w2).abs() <= dv.abs() + 1.0, "vl {vl} w {w} -> vl' {vl2} w' {w2}");
    }
}

/// ELIGIBLE off is EVDF: the earliest deadline wins even when not eligible.
#[test]
fn eligible_off_is_evdf() {
    let cfg = Config::DEFAULT;
    let ents: Vec<UserEntity> = (0..3)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let mut rq = UserRunqueue::new();
    for (k, e) in ents.iter().enumerate() {
        e.se().set_vruntime(k as u64 * 1_000_000);
        e.se().set_deadline(10_000_000 - k as u64 * 3_000_000);
        e.se().set_on_rq(true);
        __enqueue_entity(&mut rq, e.se(), cfg.features);
        rq.set_nr_queued(rq.nr_queued() + 1);
    }
    // V = 1 ms: entities 0 and 1 eligible; 2 has the earliest deadline but is not.
    assert_eq!(pick_eevdf(&rq, cfg), Some(ents[1].se()));
    let evdf = Config {
        features: cfg.features.with(Features::ELIGIBLE, false),
        ..cfg
    };
    assert_eq!(pick_eevdf(&rq, evdf), Some(ents[2].se()));
}

/// BIAS_ELIGIBLE with equal weights: eligible iff v_i <= V + one average virtual slice.
#[test]
fn bias_eligible_threshold_is_one_average_slice() {
    let cfg = Config {
        features: Features::DEFAULT.with(Features::BIAS_ELIGIBLE, true),
        ..Config::DEFAULT
    };
    let ents: Vec<UserEntity> = (0..4)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let mut rq = UserRunqueue::new();
    let slices = [1_000_000u64, 2_000_000, 3_000_000, 2_000_000]; // average 2 ms
    for (k, e) in ents.iter().enumerate() {
        e.se().set_vruntime(k as u64 * 1000); // V = 1500
        e.se().set_slice(slices[k]);
        e.se().set_on_rq(true);
        __enqueue_entity(&mut rq, e.se(), cfg.features);
        rq.set_nr_queued(rq.nr_queued() + 1);
    }
    let v = avg_vruntime(&mut rq);
    assert_eq!(v, 1500);
    assert!(vruntime_eligible(&rq, v + 2_000_000, cfg));
    assert!(!vruntime_eligible(&rq, v + 2_000_001, cfg));
    let plain = Config::DEFAULT;
    assert!(vruntime_eligible(&rq, v, plain));
    assert!(!vruntime_eligible(&rq, v + 1, plain));
}

/// The sched_attr slice rule of __setparam_fair().
#[test]
fn setattr_slice_rule() {
    let base = Config::DEFAULT.base_slice_ns;
    assert_eq!(sched_attr_slice(0, base), (base, false));
    assert_eq!(sched_attr_slice(1, base), (100_000, true));
    assert_eq!(sched_attr_slice(99_999, base), (100_000, true));
    assert_eq!(sched_attr_slice(5_000_000, base), (5_000_000, true));
    assert_eq!(sched_attr_slice(100_000_001, base), (100_000_000, true));
    assert_eq!(sched_attr_slice(u64::MAX, base), (100_000_000, true));
    let e = UserEntity::new(LoadWeight::from_nice(0));
    let mut rq = UserRunqueue::new();
    enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, Config::DEFAULT);
    sched_setattr_slice(&mut rq, e.se(), 50_000, Config::DEFAULT);
    assert_eq!((e.se().slice(), e.se().custom_slice()), (100_000, true));
    sched_setattr_slice(&mut rq, e.se(), 0, Config::DEFAULT);
    assert_eq!((e.se().slice(), e.se().custom_slice()), (base, false));
    check_invariants(&rq).unwrap();
}

/// The feature table: names, 6.12 defaults, strict NO_ parsing, debugfs view.
#[test]
fn feature_table() {
    let names: Vec<&str> = Features::TABLE.iter().map(|i| i.name).collect();
    for n in [
        "PLACE_LAG",
        "PLACE_DEADLINE_INITIAL",
        "PLACE_REL_DEADLINE",
        "RUN_TO_PARITY",
        "PREEMPT_SHORT",
        "DELAY_DEQUEUE",
        "DELAY_ZERO",
        "ELIGIBLE",
        "BIAS_ELIGIBLE",
        "RUN_TO_PARITY_MIN_SLICE",
        "LAG_CLAMP_MAX_SLICE",
        "NEXT_BUDDY_EEVDF",
        "PROTECT_AT_PICK",
        "NEXT_BUDDY",
        "PICK_BUDDY",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    // Off by default: BIAS_ELIGIBLE, upstream's post-6.12 changes and 6.12's NEXT_BUDDY.
    let off = [
        "BIAS_ELIGIBLE",
        "RUN_TO_PARITY_MIN_SLICE",
        "LAG_CLAMP_MAX_SLICE",
        "NEXT_BUDDY_EEVDF",
        "PROTECT_AT_PICK",
        "NEXT_BUDDY",
    ];
    for info in Features::TABLE {
        assert_eq!(Features::DEFAULT.contains(info.flag), info.default);
        assert_eq!(info.default, !off.contains(&info.name), "{}", info.name);
        assert!(!info.doc.is_empty());
        let off = Features::DEFAULT
            .parse(&format!("NO_{}\n", info.name))
            .unwrap();
        assert!(!off.contains(info.flag));
        assert_eq!(
            off.parse(info.name).unwrap(),
            Features::DEFAULT.with(info.flag, true)
        );
    }
    assert_eq!(Features::DEFAULT.parse("ELIGIBLE_"), Err(UnknownFeature));
    assert_eq!(Features::DEFAULT.parse("NO_"), Err(UnknownFeature));
    assert_eq!(Features::DEFAULT.parse("no_eligible"), Err(UnknownFeature));
    let dbg = format!("{:?}", Features::DEFAULT);
    assert!(
        dbg.contains("NO_BIAS_ELIGIBLE") && dbg.contains(" ELIGIBLE"),
        "{dbg}"
    );
}
