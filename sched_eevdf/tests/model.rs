// SPDX-License-Identifier: GPL-2.0

//! Model-based tests: random operation sequences applied to the crate (O(log n) tree,
//! incremental sums) and to the O(n) reference model must give identical picks, V, lags
//! and entity states; the invariant checker runs after every operation.

mod common;

use common::pair::{flips, run, run_counting_clamps, Op, Tally};
use common::WEIGHT_CHOICES;
use proptest::prelude::*;
use sched_eevdf::*;

fn arb_op(n: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop_oneof![Just(0u64), 1u64..200_000, 200_000u64..20_000_000].prop_map(Op::Tick),
        4 => (0..n, any::<u8>()).prop_map(|(i, b)| Op::Wake(i, b)),
        3 => (0..n, 0u8..3).prop_map(|(i, f)| Op::Sleep(i, f)),
        1 => (0..n, 0..WEIGHT_CHOICES).prop_map(|(i, w)| Op::Reweight(i, w)),
        1 => (0..n, prop_oneof![Just(0u64), 1u64..300_000_000]).prop_map(|(i, s)| Op::Slice(i, s)),
        1 => (0..n, 0..WEIGHT_CHOICES).prop_map(|(i, w)| Op::Renice(i, w)),
        2 => Just(Op::Schedule),
        1 => (0..Features::TABLE.len()).prop_map(Op::Flip),
    ]
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

/// Cases for slice protection: every entity first gets a custom slice of its own (so that
/// wakees are often shorter than current), RUN_TO_PARITY_MIN_SLICE, PROTECT_AT_PICK or
/// both start on, and any flag may be flipped from the start or mid-run.
fn arb_protection_case() -> impl Strategy<Value = (Vec<usize>, u64, u32, Vec<Op>)> {
    (2usize..10).prop_flat_map(|n| {
        (
            prop::collection::vec(0..WEIGHT_CHOICES, n),
            any::<u64>(),
            prop_oneof![
                Just(flips(&["RUN_TO_PARITY_MIN_SLICE"])),
                Just(flips(&["PROTECT_AT_PICK"])),
                Just(flips(&["RUN_TO_PARITY_MIN_SLICE", "PROTECT_AT_PICK"])),
            ],
            prop_oneof![3 => Just(0u32), 1 => any::<u32>()],
            prop::collection::vec(100_000u64..10_000_000, n),
            prop::collection::vec(arb_op(n), 1..300),
        )
            .prop_map(|(weights, v0, new, other, slices, ops)| {
                let slices = slices.into_iter().enumerate().map(|(i, s)| Op::Slice(i, s));
                (weights, v0, new ^ other, slices.chain(ops).collect())
            })
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

    /// The same with NEXT_BUDDY_EEVDF and NEXT_BUDDY on at the start (6.19 with the buddy),
    /// other flags as drawn; flips still toggle any flag mid-run.
    #[test]
    fn model_matches_reference_next_buddy((weights, v0, features, ops) in arb_case()) {
        let on = row_bit("NEXT_BUDDY_EEVDF") | row_bit("NEXT_BUDDY");
        run(&weights, v0, (features & !on) | on, &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        max_shrink_iters: 10_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn model_matches_reference_protection((weights, v0, features, ops) in arb_protection_case()) {
        run(&weights, v0, features, &ops);
    }
}

/// The bit of `run`'s feature mask that flips the table row `name`.
fn row_bit(name: &str) -> u32 {
    let k = Features::TABLE
        .iter()
        .position(|i| i.name == name)
        .expect("a row of the table");
    1 << k
}

/// The pick-reason and wakeup-reason classifications (the debugfs counters) are checked
/// against the reference at every step of every case; this makes sure the random cases
/// reach every reason, NEXT_BUDDY_EEVDF's included (a buddy made and kept), and every path
/// of slice protection, so that those checks are not vacuous.
#[test]
fn model_reaches_every_reason() {
    use common::pair::Tally;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        PtConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let mut total = Tally::default();
    let cases = if cfg!(miri) { 4 } else { 200 };
    for _ in 0..cases {
        let (weights, v0, features, ops) = arb_case().new_tree(&mut runner).unwrap().current();
        total.add(&run(&weights, v0, features, &ops));
        let (weights, v0, features, ops) = arb_protection_case()
            .new_tree(&mut runner)
            .unwrap()
            .current();
        total.add(&run(&weights, v0, features, &ops));
    }
    println!(
        "pick reasons (Idle, Only, Parity, Earliest, EarliestIneligible, Buddy): {:?}",
        total.picks
    );
    println!(
        "wakeup reasons (None, Idle, ShortSlice, CurrIneligible, EarlierDeadline, RunToParity, \
         Buddy, SyncResched, SyncNone, ForkOrDelayed): {:?}; buddies set {}, kept {}",
        total.wakeups, total.buddies_set, total.buddies_kept
    );
    println!("protection: {total:?}");
    if !cfg!(miri) {
        assert!(
            total.picks.iter().all(|&n| n > 0),
            "a pick reason never came up: {:?}",
            total.picks
        );
        assert!(
            total.wakeups.iter().all(|&n| n > 0),
            "a wakeup reason never came up: {:?}",
            total.wakeups
        );
        assert!(total.buddies_set > 0 && total.buddies_kept > 0, "{total:?}");
        // RUN_TO_PARITY_MIN_SLICE's and PROTECT_AT_PICK's paths, each reached.
        for (what, n) in [
            ("a wakeup shrank a window", total.shrunk),
            ("a window ended, current eligible", total.expired),
            ("a sched_change kept a protected window", total.kept[0]),
            ("a sched_change kept an ended window", total.kept[1]),
            ("a protected current was reweighted", total.scaled),
            ("RUN_TO_PARITY_MIN_SLICE toggled mid-window", total.toggled),
        ] {
            assert!(n > 0, "never reached: {what} ({total:?})");
        }
    }
}

/// A fixed regression sequence exercising delayed dequeue, wakeup preemption and
/// reweight of the running entity near the u64 wrap.
#[test]
fn model_fixed_sequence() {
    use Op::*;
    let ops = [
        Wake(0, 1),
        Wake(1, 1),
        Wake(2, 0),
        Schedule,
        Tick(3_000_000),
        Sleep(1, 0),
        Tick(500_000),
        Wake(1, 0),
        Reweight(0, 5),
        Slice(2, 100_000),
        Tick(7_000_000),
        Sleep(0, 0),
        Schedule,
        Wake(0, 0),
        Tick(1),
        Sleep(2, 2),
        Wake(2, 0),
        Flip(6), // BIAS_ELIGIBLE
        Tick(2_000_000),
        Flip(5), // ELIGIBLE
        Tick(2_000_000),
        Schedule,
    ];
    run(&[20, 0, 45], u64::MAX - 10_000_000, 0, &ops);
}

/// Found by the model test: PLACE_REL_DEADLINE turned off between a non-sleep dequeue and
/// the enqueue left a stale relative-deadline flag; the deadline later landed 2^63 from V
/// and reweight's (d - V) * w wrapped. The flag is now always consumed by placement.
#[test]
fn model_stale_rel_deadline_flag() {
    use Op::*;
    let ops = [
        Flip(2),
        Wake(1, 0),
        Reweight(0, 0),
        Sleep(1, 2),
        Tick(0),
        Flip(2),
        Wake(1, 0),
        Tick(0),
        Sleep(1, 0),
        Flip(2),
        Wake(1, 0),
        Tick(699_947),
        Tick(0),
        Reweight(1, 0),
    ];
    // Flags flipped from the start: PLACE_REL_DEADLINE, PREEMPT_SHORT, DELAY_DEQUEUE,
    // DELAY_ZERO (the mask found was 2_438_734_228, rows 2, 4, 7 and 8 of the table then).
    let features = flips(&[
        "PLACE_REL_DEADLINE",
        "PREEMPT_SHORT",
        "DELAY_DEQUEUE",
        "DELAY_ZERO",
    ]);
    run(&[0, 0, 0, 0], 1 << 63, features, &ops);
}

/// RUN_TO_PARITY_MIN_SLICE and PROTECT_AT_PICK, each on and off, beside every combination
/// of 6.12's flags (and of ELIGIBLE and BIAS_ELIGIBLE): 4 × 2^9 starting sets, one seeded
/// sequence each, whose flips toggle any flag of the table mid-run. With both off the
/// reference asserts at every reading of the protection that it is 6.12's.
#[test]
fn model_every_protection_combination() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        PtConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]),
    );
    let new = ["RUN_TO_PARITY_MIN_SLICE", "PROTECT_AT_PICK"];
    let old: Vec<&str> = Features::TABLE
        .iter()
        .map(|i| i.name)
        .filter(|n| {
            ![
                "RUN_TO_PARITY_MIN_SLICE",
                "PROTECT_AT_PICK",
                "LAG_CLAMP_MAX_SLICE",
                "NEXT_BUDDY_EEVDF",
                // 6.12's buddy flags, which the core reads only with NEXT_BUDDY_EEVDF:
                // the buddy tests cover them.
                "NEXT_BUDDY",
                "PICK_BUDDY",
            ]
            .contains(n)
        })
        .collect();
    assert_eq!(old.len(), 9, "6.12's flags and ELIGIBLE, BIAS_ELIGIBLE");
    let all = 1u32 << (new.len() + old.len());
    let step = if cfg!(miri) { all / 4 } else { 1 };
    let mut total = Tally::default();
    for combo in (0..all).step_by(step as usize) {
        let names: Vec<&str> = new
            .iter()
            .chain(&old)
            .enumerate()
            .filter(|(k, _)| combo & (1 << k) != 0)
            .map(|(_, n)| *n)
            .collect();
        let ops = prop::collection::vec(arb_op(5), 60)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        total.add(&run(
            &[20, 20, 25, 10, 44],
            u64::MAX - 3_000_000_000,
            flips(&names),
            &ops,
        ));
    }
    println!("{total:?}");
}

/// The row of LAG_CLAMP_MAX_SLICE in the feature table (`Op::Flip`'s index, `run`'s bit).
fn lag_clamp_row() -> usize {
    Features::TABLE
        .iter()
        .position(|f| f.flag == Features::LAG_CLAMP_MAX_SLICE)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        max_shrink_iters: 10_000,
        ..ProptestConfig::default()
    })]

    /// The model test with LAG_CLAMP_MAX_SLICE on from the start (it may still be flipped
    /// off and on by the sequence): every saved lag against the reference's limit over the
    /// queued slices.
    #[test]
    fn model_matches_reference_lag_clamp_max_slice((weights, v0, features, ops) in arb_case()) {
        run(&weights, v0, features | 1 << lag_clamp_row(), &ops);
    }
}

/// A rotation-heavy sequence with distinct slices (entities created one after the other at
/// an advancing V: ascending insertions; non-sleep dequeues and setattr slice changes of
/// queued entities: erasures of inner nodes and re-insertions), run on the core and the
/// reference, invariants (max_slice included) and saved lags checked after every step:
/// LAG_CLAMP_MAX_SLICE off, on, and toggled every few steps. Long runs of current between
/// the dequeues make lags that both limits clamp, differently.
#[test]
fn lag_clamp_max_slice_rotations() {
    use Op::*;
    let n = 24;
    let mut ops = Vec::new();
    for i in 0..n {
        // 0.1 ms to 100 ms, distinct, in no order of the creation.
        ops.push(Slice(i, 100_000 + (i as u64 * 7919 % 97) * 1_030_000));
        ops.push(Wake(i, 1));
        ops.push(Tick(50_000 + i as u64 * 10_000));
    }
    ops.push(Schedule);
    for k in 0..8 * n {
        let i = k * 17 % n;
        ops.push(Tick(20_000 + (k as u64 * 7_001_003) % 60_000_000));
        match k % 5 {
            0 | 1 => ops.push(Sleep(i, 2)),
            2 => ops.push(Slice(i, 100_000 + (k as u64 * 104_729) % 100_000_000)),
            3 => ops.push(Sleep(i, 0)),
            _ => ops.push(Schedule),
        }
        ops.push(Wake((i + 3) % n, 0));
        ops.push(Wake(i, 0));
    }
    let weights: Vec<usize> = (0..n).map(|i| (i * 13) % 40).collect();
    let row = lag_clamp_row();
    let v0 = u64::MAX - 1_000_000_000;
    let (_, off) = run_counting_clamps(&weights, v0, 0, &ops);
    let (_, on) = run_counting_clamps(&weights, v0, 1 << row, &ops);
    // Toggled every 11 operations.
    let toggled: Vec<Op> = ops
        .iter()
        .enumerate()
        .flat_map(|(k, op)| {
            let flip = (k % 11 == 10).then_some(Flip(row));
            std::iter::once(op.clone()).chain(flip)
        })
        .collect();
    let (_, mixed) = run_counting_clamps(&weights, 0, 0, &toggled);
    println!("clamped lags: off {off}, on {on}, toggled {mixed}");
    assert!(
        off > 0 && on > 0 && mixed > 0 && off != on,
        "off {off}, on {on}, toggled {mixed}"
    );
}

/// What LAG_CLAMP_MAX_SLICE changes: a 0.1 ms-slice entity that waited while a 100 ms-slice
/// entity ran leaves with its whole lag (limit: the largest slice plus a tick), where 6.12's
/// limit, max(2 * 0.1 ms, tick), keeps one tick of it; the 100 ms entity's own limit goes
/// from 2 * 100 ms to 100 ms + tick.
#[test]
fn lag_clamp_max_slice_keeps_a_short_slice_lag() {
    use sched_eevdf::user::{UserEntity, UserRunqueue};
    for on in [false, true] {
        let cfg = Config {
            features: Features::DEFAULT.with(Features::LAG_CLAMP_MAX_SLICE, on),
            ..Config::DEFAULT
        };
        let hog = UserEntity::new(LoadWeight::from_nice(0));
        let short = UserEntity::new(LoadWeight::from_nice(0));
        let mut rq = UserRunqueue::new();
        sched_setattr_slice(&mut rq, hog.se(), 100_000_000, cfg);
        sched_setattr_slice(&mut rq, short.se(), 100_000, cfg);
        enqueue_entity(&mut rq, hog.se(), EnqueueFlags::INITIAL, cfg);
        assert_eq!(schedule(&mut rq, cfg), Pick::Run(hog.se()));
        enqueue_entity(&mut rq, short.se(), EnqueueFlags::WAKEUP, cfg);
        // The hog runs 40 ms (its slice protected), the short entity waits: V - v_short
        // grows to about 20 ms (two equal weights).
        assert!(!update_curr(&mut rq, 40_000_000, cfg));
        let limit = oracle::lag_limit(&rq, short.se(), cfg);
        let v = avg_vruntime(&mut rq);
        let raw = vtime::vdelta(v, short.se().vruntime());
        assert!(raw > 15_000_000, "lag {raw}");
        // Migrated away (a non-sleep dequeue): the lag is saved.
        assert!(dequeue_entity(&mut rq, short.se(), DequeueFlags::SAVE, cfg));
        check_invariants(&rq).unwrap();
        let (tick, max_slice) = (cfg.tick_nsec as i64, 100_000_000i64);
        if on {
            assert_eq!(limit, max_slice + tick);
            assert_eq!(short.se().vlag(), raw);
        } else {
            assert_eq!(limit, tick);
            assert_eq!(short.se().vlag(), tick);
        }
        // The hog's own limit, alone on the runqueue now.
        let hog_limit = oracle::lag_limit(&rq, hog.se(), cfg);
        assert_eq!(hog_limit, if on { max_slice + tick } else { 2 * max_slice });
    }
}
