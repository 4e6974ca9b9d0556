// SPDX-License-Identifier: GPL-2.0

//! The intrusive augmented rbtree: random insert/erase with the invariant checker after
//! every mutation (lib/rbtree_test.c style, fixed seed), against a sorted `Vec`; the
//! checker's own ability to find corruption; misuse that must leave trees intact.
//! Miri runs this file at reduced sizes.

use sched_eevdf::user::{UserEntity, UserRunqueue, UserSe};
use sched_eevdf::*;

/// xorshift64*: a fixed-seed PRNG, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The features of the tree tests: LAG_CLAMP_MAX_SLICE on, so that every update keeps
/// `max_slice` and `sum_slice` and the checker verifies them.
const KEEP: Features = Features::DEFAULT.with(Features::LAG_CLAMP_MAX_SLICE, true);

fn queue<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>) {
    queue_with(rq, se, KEEP);
}

fn queue_with<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>, features: Features) {
    se.set_on_rq(true);
    __enqueue_entity(rq, se, features);
    rq.set_nr_queued(rq.nr_queued() + 1);
}

fn unqueue<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>) {
    unqueue_with(rq, se, KEEP);
}

fn unqueue_with<'a>(rq: &mut UserRunqueue<'a>, se: UserSe<'a>, features: Features) {
    __dequeue_entity(rq, se, features);
    se.set_on_rq(false);
    rq.set_nr_queued(rq.nr_queued() - 1);
}

/// In-order walk through the Timeline interface.
fn in_order<'a>(rq: &UserRunqueue<'a>) -> Vec<UserSe<'a>> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    let mut n = rq.root();
    while n.is_some() || !stack.is_empty() {
        while let Some(x) = n {
            stack.push(x);
            n = rq.left(x);
        }
        let x = stack.pop().unwrap();
        out.push(x);
        n = rq.right(x);
    }
    out
}

fn random_ops(n: usize, steps: usize, seed: u64, base: u64, spread: u64) {
    let mut rng = Rng(seed);
    let ents: Vec<UserEntity> = (0..n)
        .map(|i| UserEntity::new(LoadWeight::from_nice((i % 40) as i32 - 20)))
        .collect();
    let mut rq = UserRunqueue::with_zero_vruntime(base);
    // The model: (key, insertion seq, index), kept sorted.
    let mut model: Vec<(i64, u64, usize)> = Vec::new();
    let mut seq = 0u64;
    for step in 0..steps {
        let i = rng.below(n as u64) as usize;
        let se = ents[i].se();
        if se.on_rq() {
            unqueue(&mut rq, se);
            model.retain(|&(_, _, j)| j != i);
        } else {
            // Few distinct keys so that equal keys (FIFO ties) are common.
            let key = (rng.below(spread) as i64) - (spread as i64 / 2);
            se.set_vruntime(base.wrapping_add(key as u64));
            se.set_deadline(se.vruntime().wrapping_add(rng.below(1 << 40)));
            se.set_slice(100_000 + rng.below(100_000_000));
            queue(&mut rq, se);
            model.push((key, seq, i));
            seq += 1;
            model.sort();
        }
        let stats = check_invariants(&rq).unwrap_or_else(|e| panic!("step {step}: {e}"));
        assert_eq!(stats.nodes as usize, model.len());
        let got: Vec<usize> = in_order(&rq)
            .iter()
            .map(|se| {
                ents.iter()
                    .position(|e| core::ptr::eq(e, se.get()))
                    .unwrap()
            })
            .collect();
        let want: Vec<usize> = model.iter().map(|&(_, _, j)| j).collect();
        assert_eq!(
            got, want,
            "step {step}: in-order differs from the sorted model"
        );
        // Black height bound of a red-black tree: h <= 2 log2(n + 1).
        if !model.is_empty() {
            assert!((stats.black_height as f64) <= 1.0 + ((model.len() + 1) as f64).log2());
        }
        // The augmented root values are the true minimum and maximum.
        if let Some(root) = rq.root() {
            let slices = || model.iter().map(|&(_, _, j)| ents[j].se().slice());
            let min_slice = slices().min().unwrap();
            assert_eq!(root.min_slice(), min_slice);
            assert_eq!(cfs_rq_min_slice(&rq), min_slice);
            let max_slice = slices().max().unwrap();
            assert_eq!(root.max_slice(), max_slice);
            assert_eq!(cfs_rq_max_slice(&rq), max_slice);
            assert_eq!(oracle::max_slice(&rq), max_slice);
        } else {
            assert_eq!(cfs_rq_max_slice(&rq), 0);
        }
    }
}

#[test]
fn random_insert_erase_small_keys() {
    let (n, steps) = if cfg!(miri) { (24, 300) } else { (200, 6_000) };
    random_ops(n, steps, 0x5eed, 0, 16);
}

#[test]
fn random_insert_erase_wide_keys_near_wrap() {
    let (n, steps) = if cfg!(miri) { (24, 300) } else { (400, 6_000) };
    random_ops(n, steps, 42, u64::MAX - 1000, 1 << 50);
}

#[test]
fn ascending_and_descending_insertions() {
    let n = if cfg!(miri) { 64 } else { 4096 };
    for descending in [false, true] {
        let ents: Vec<UserEntity> = (0..n)
            .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
            .collect();
        let mut rq = UserRunqueue::new();
        for (k, e) in ents.iter().enumerate() {
            let key = if descending { n - k } else { k } as u64;
            e.se().set_vruntime(key);
            e.se().set_deadline(key * 7 % 1000);
            queue(&mut rq, e.se());
            check_invariants(&rq).unwrap();
        }
        let first = rq.first().unwrap();
        assert_eq!(first.vruntime(), if descending { 1 } else { 0 });
        for e in ents.iter().step_by(2) {
            unqueue(&mut rq, e.se());
            check_invariants(&rq).unwrap();
        }
        for e in ents.iter().skip(1).step_by(2) {
            unqueue(&mut rq, e.se());
            check_invariants(&rq).unwrap();
        }
        assert!(rq.root().is_none() && rq.first().is_none());
    }
}

/// The queued slices' extremes by a scan of the entities, against the tree's
/// (`cfs_rq_min_slice`, `cfs_rq_max_slice`) and the reference's.
fn check_slices(rq: &UserRunqueue<'_>, ents: &[UserEntity]) {
    let queued = || ents.iter().map(UserEntity::se).filter(|se| se.on_rq());
    let max = queued().map(|se| se.slice()).max().unwrap_or(0);
    assert_eq!(cfs_rq_max_slice(rq), max);
    assert_eq!(oracle::max_slice(rq), max);
    let min = queued().map(|se| se.slice()).min().unwrap_or(u64::MAX);
    assert_eq!(cfs_rq_min_slice(rq), min);
    let sum = queued().map(|se| se.slice()).sum::<u64>();
    assert_eq!(sum_slice(rq), sum);
}

/// The third augmented value through the rotations: ascending and descending insertions
/// (a rotation at most levels), erasures of inner nodes (two children: the successor takes
/// the node's place through the copy callback, then the rebalancing rotates), and slice
/// changes of queued entities (`set_queued_slice`'s propagation), every slice distinct, the
/// invariant checker and a scan of the slices after every mutation.
#[test]
fn max_slice_through_rotations() {
    let n = if cfg!(miri) { 48 } else { 1024 };
    let mut rng = Rng(0x5111ce);
    for descending in [false, true] {
        let ents: Vec<UserEntity> = (0..n)
            .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
            .collect();
        let mut rq = UserRunqueue::new();
        for (k, e) in ents.iter().enumerate() {
            let key = if descending { n - k } else { k } as u64;
            e.se().set_vruntime(key * 1000);
            e.se().set_deadline(key * 1000 + rng.below(1 << 20));
            // Distinct slices in no order of the key.
            e.se().set_slice(100_000 + (key * 7919 % n as u64) * 1000);
            queue(&mut rq, e.se());
            check_invariants(&rq).unwrap_or_else(|e| panic!("insert {k}: {e}"));
            check_slices(&rq, &ents);
        }
        for step in 0..n {
            // An inner node: walk down from the root to a random depth while both children
            // exist.
            let mut node = rq.root().unwrap();
            while let (Some(l), Some(r)) = (rq.left(node), rq.right(node)) {
                if rng.below(3) == 0 {
                    break;
                }
                node = if rng.below(2) == 0 { l } else { r };
            }
            match step % 4 {
                0 | 1 => unqueue(&mut rq, node),
                2 => set_queued_slice(&mut rq, node, 100_000 + rng.below(100_000_000), KEEP),
                _ => {
                    // The largest slice leaves, then comes back smaller: the root's value
                    // must come down, then stay.
                    let top = ents
                        .iter()
                        .map(UserEntity::se)
                        .filter(|se| se.on_rq())
                        .max_by_key(|se| se.slice())
                        .unwrap();
                    unqueue(&mut rq, top);
                    check_invariants(&rq).unwrap_or_else(|e| panic!("step {step}: {e}"));
                    check_slices(&rq, &ents);
                    top.set_slice(top.slice() / 2);
                    queue(&mut rq, top);
                }
            }
            check_invariants(&rq).unwrap_or_else(|e| panic!("step {step}: {e}"));
            check_slices(&rq, &ents);
            if rq.root().is_none() {
                break;
            }
        }
    }
}

/// `max_slice` and `sum_slice` kept only under their readers, LAG_CLAMP_MAX_SLICE and
/// BIAS_ELIGIBLE: random inserts, erasures and slice changes in runs with both features
/// off (the values go stale, the runqueue says so, and `cfs_rq_max_slice()` and
/// `sum_slice()` walk the tree) and with one of them on, in turn (the first update
/// rebuilds both, then keeps them), with the invariant checker (which verifies them
/// exactly when the runqueue says they are kept) and the slices' scan after every
/// mutation, and a count of the rebuilds: one a run with a feature on.
#[test]
fn slice_sums_kept_only_under_their_readers() {
    let n: usize = if cfg!(miri) { 40 } else { 600 };
    let mut rng = Rng(0x7a9c1a);
    let ents: Vec<UserEntity> = (0..n)
        .map(|i| UserEntity::new(LoadWeight::from_nice((i % 40) as i32 - 20)))
        .collect();
    for (k, e) in ents.iter().enumerate() {
        e.se().set_vruntime(rng.below(1 << 30));
        e.se().set_deadline(e.se().vruntime() + rng.below(1 << 24));
        e.se()
            .set_slice(100_000 + (k as u64 * 7919 % n as u64) * 1000);
    }
    let mut rq = UserRunqueue::new();
    let mut rebuilds = 0;
    for run in 0..if cfg!(miri) { 6 } else { 40 } {
        let on = run % 2 == 1;
        let reader = if run % 4 == 1 {
            Features::LAG_CLAMP_MAX_SLICE
        } else {
            Features::BIAS_ELIGIBLE
        };
        let features = Features::DEFAULT.with(reader, on);
        for step in 0..n / 4 {
            let was_stale = rq.slice_sums_stale();
            let se = ents[rng.below(n as u64) as usize].se();
            match (se.on_rq(), rng.below(3)) {
                (false, _) => queue_with(&mut rq, se, features),
                (true, 0) => {
                    set_queued_slice(&mut rq, se, 100_000 + rng.below(100_000_000), features)
                }
                (true, _) => unqueue_with(&mut rq, se, features),
            }
            // Off: stale after every update; on: kept (rebuilt first if it was stale).
            assert_eq!(rq.slice_sums_stale(), !on, "run {run} step {step}");
            if on && was_stale {
                rebuilds += 1;
            }
            check_invariants(&rq).unwrap_or_else(|e| panic!("run {run} step {step}: {e}"));
            check_slices(&rq, &ents);
        }
    }
    // Every run with the feature on began with stale values, so rebuilt them once.
    assert_eq!(rebuilds, if cfg!(miri) { 3 } else { 20 });
}

/// `dequeue_picked()` (set_next_entity()'s erase and protection in one step, one test of
/// the feature word) leaves a runqueue as `__dequeue_entity()` then `set_protect_slice()`
/// of a picked entity do: two runqueues of twin entities take the same random steps, one
/// each way, under the default features, each reader of the slice sums, and
/// RUN_TO_PARITY_MIN_SLICE with and without RUN_TO_PARITY; after every step the picked
/// entity's window, the remembered holder, the sums and the slice values agree, and both
/// trees pass the checker.
#[test]
fn dequeue_picked_is_the_erase_then_the_protection() {
    let n: usize = if cfg!(miri) { 24 } else { 300 };
    let mut rng = Rng(0x5e7_0e47);
    let twins = || -> Vec<UserEntity> {
        (0..n)
            .map(|i| UserEntity::new(LoadWeight::from_nice((i % 40) as i32 - 20)))
            .collect()
    };
    let (a, b) = (twins(), twins());
    for k in 0..n {
        let v = rng.below(1 << 30);
        let d = v + rng.below(1 << 24);
        let slice = 100_000 + rng.below(20_000_000);
        for e in [&a[k], &b[k]] {
            e.se().set_vruntime(v);
            e.se().set_deadline(d);
            e.se().set_slice(slice);
        }
    }
    let feature_sets = [
        Features::DEFAULT,
        Features::DEFAULT.with(Features::BIAS_ELIGIBLE, true),
        Features::DEFAULT.with(Features::LAG_CLAMP_MAX_SLICE, true),
        Features::DEFAULT.with(Features::RUN_TO_PARITY_MIN_SLICE, true),
        Features::DEFAULT
            .with(Features::RUN_TO_PARITY_MIN_SLICE, true)
            .with(Features::RUN_TO_PARITY, false),
    ];
    let (mut ra, mut rb) = (UserRunqueue::new(), UserRunqueue::new());
    let index = |ents: &[UserEntity], se: Option<UserSe<'_>>| {
        se.map(|se| ents.iter().position(|e| e.se() == se).unwrap())
    };
    let mut picked = 0;
    for run in 0..if cfg!(miri) { 5 } else { 25 } {
        let features = feature_sets[run % feature_sets.len()];
        let cfg = Config {
            features,
            ..Config::DEFAULT
        };
        for step in 0..n {
            let k = rng.below(n as u64) as usize;
            let (sa, sb) = (a[k].se(), b[k].se());
            if !sa.on_rq() {
                queue_with(&mut ra, sa, features);
                queue_with(&mut rb, sb, features);
            } else {
                dequeue_picked(&mut ra, sa, features, cfg);
                __dequeue_entity(&mut rb, sb, features);
                set_protect_slice(&rb, sb, true, cfg);
                for (rq, se) in [(&mut ra, sa), (&mut rb, sb)] {
                    se.set_on_rq(false);
                    rq.set_nr_queued(rq.nr_queued() - 1);
                }
                assert_eq!(sa.vprot(), sb.vprot(), "run {run} step {step}: the window");
                picked += 1;
            }
            let at = format!("run {run} step {step}");
            assert_eq!(
                index(&a, ra.earliest()),
                index(&b, rb.earliest()),
                "{at}: holder"
            );
            assert_eq!(ra.avg_vruntime(), rb.avg_vruntime(), "{at}: the key sum");
            assert_eq!(ra.avg_load(), rb.avg_load(), "{at}: the weight sum");
            assert_eq!(
                ra.slice_sums_stale(),
                rb.slice_sums_stale(),
                "{at}: staleness"
            );
            assert_eq!(sum_slice(&ra), sum_slice(&rb), "{at}: the slice sum");
            assert_eq!(
                cfs_rq_max_slice(&ra),
                cfs_rq_max_slice(&rb),
                "{at}: the largest"
            );
            check_invariants(&ra).unwrap_or_else(|e| panic!("{at}: {e}"));
            check_invariants(&rb).unwrap_or_else(|e| panic!("{at}: {e}"));
        }
    }
    assert!(picked > n, "too few erases to compare: {picked}");
}

fn small_tree(ents: &[UserEntity]) -> UserRunqueue<'_> {
    let mut rq = UserRunqueue::new();
    for (k, e) in ents.iter().enumerate() {
        e.se().set_vruntime(k as u64 * 10);
        e.se().set_deadline(1000 - k as u64);
        e.se().set_slice(1000 + k as u64);
        queue(&mut rq, e.se());
    }
    check_invariants(&rq).unwrap();
    rq
}

/// check_augmented() must fail when an augmented value is stale (the test the interval
/// tree example lacked).
#[test]
fn checker_detects_stale_augmented_value() {
    let ents: Vec<UserEntity> = (0..15)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let rq = small_tree(&ents);
    let root = rq.root().unwrap();
    root.set_min_deadline(root.min_deadline() + 1);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::MinDeadline { .. })
    ));
    root.set_min_deadline(root.min_deadline() - 1);
    root.set_min_slice(1);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::MinSlice { .. })
    ));
    root.set_min_slice(1000);
    check_invariants(&rq).unwrap();
    root.set_max_slice(root.max_slice() - 1);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::MaxSlice { .. })
    ));
    root.set_max_slice(1014);
    check_invariants(&rq).unwrap();
    // A slice changed behind the tree's back is stale in its ancestors' max_slice.
    let inner = rq.root().and_then(|r| rq.right(r)).unwrap();
    let slice = inner.slice();
    inner.set_slice(5000);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::MaxSlice { .. })
    ));
    inner.set_slice(slice);
    check_invariants(&rq).unwrap();
    // A deadline changed behind the tree's back is stale in its ancestors.
    let leaf = rq.first().unwrap();
    leaf.set_deadline(0);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::MinDeadline { .. })
    ));
}

#[test]
fn checker_detects_order_and_sum_corruption() {
    let ents: Vec<UserEntity> = (0..15)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let mut rq = small_tree(&ents);
    let first = rq.first().unwrap();
    first.set_vruntime(1_000_000);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::KeyOrder { .. } | InvariantError::AvgVruntime { .. })
    ));
    first.set_vruntime(0);
    check_invariants(&rq).unwrap();
    rq.set_avg_load(rq.avg_load() + 1);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::AvgLoad { .. })
    ));
    rq.set_avg_load(rq.avg_load() - 1);
    rq.set_sum_slice(0);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::SumSlice { .. })
    ));
    rq.set_sum_slice((0..15).map(|k| 1000 + k).sum());
    rq.set_nr_queued(16);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::NrQueued { .. })
    ));
    rq.set_nr_queued(3);
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::TooManyNodes)
    ));
    rq.set_nr_queued(15);
    rq.set_curr(Some(first));
    assert!(matches!(
        check_invariants(&rq),
        Err(InvariantError::CurrInTree)
    ));
}

/// Inserting an entity twice, or into a second tree, and erasing a foreign entity leave
/// every tree intact; dropping a tree releases its entities.
#[test]
fn misuse_keeps_trees_intact() {
    let ents: Vec<UserEntity> = (0..8)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let other = UserEntity::new(LoadWeight::from_nice(0));
    let mut a = small_tree(&ents);
    let mut b = UserRunqueue::new();
    let holder = a.earliest();
    assert!(!b.insert(ents[3].se(), true, |_| true));
    assert!(!a.insert(ents[3].se(), true, |_| true));
    assert_eq!(b.earliest(), None, "a refused insertion named a holder");
    assert_eq!(
        a.earliest(),
        holder,
        "a refused insertion changed the holder"
    );
    a.erase(other.se(), true);
    b.erase(ents[4].se(), true);
    check_invariants(&a).unwrap();
    assert!(b.root().is_none());
    drop(a);
    // Released: it can be queued in b now.
    let se = ents[3].se();
    queue(&mut b, se);
    check_invariants(&b).unwrap();
    assert_eq!(b.root(), Some(se));
}

/// pick_eevdf() on a large random tree agrees with a linear scan.
#[test]
fn pick_matches_linear_scan_on_random_trees() {
    let (n, rounds) = if cfg!(miri) { (32, 20) } else { (3000, 400) };
    let mut rng = Rng(7);
    let ents: Vec<UserEntity> = (0..n)
        .map(|i| UserEntity::new(LoadWeight::from_nice((i % 40) - 20)))
        .collect();
    let mut rq = UserRunqueue::new();
    for e in &ents {
        e.se().set_vruntime(rng.below(1 << 30));
        e.se().set_deadline(e.se().vruntime() + rng.below(1 << 20));
        e.se().set_slice(700_000);
        queue(&mut rq, e.se());
    }
    let mut cfg = Config::DEFAULT;
    // Rounds where the remembered holder, not the leftmost, was the O(1) answer.
    let mut held = 0usize;
    for round in 0..rounds {
        // Move a few entities around.
        for _ in 0..5 {
            let e = ents[rng.below(n as u64) as usize].se();
            unqueue(&mut rq, e);
            e.set_vruntime(rng.below(1 << 30));
            e.set_deadline(e.vruntime() + rng.below(if round % 2 == 0 { 1 << 20 } else { 4 }));
            queue(&mut rq, e);
        }
        cfg.features = cfg.features.with(Features::BIAS_ELIGIBLE, round % 3 == 0);
        cfg.features = cfg.features.with(Features::ELIGIBLE, round % 7 != 0);
        let el = Eligibility::new(&rq, cfg);
        let mut best: Option<UserSe<'_>> = None;
        // The tree's own in-order (checked against a sorted model above) gives the ties.
        let order = in_order(&rq);
        for se in order {
            if el.vruntime(se.vruntime())
                && best.is_none_or(|b| vtime::vruntime_before(se.deadline(), b.deadline()))
            {
                best = Some(se);
            }
        }
        let pick = pick_eevdf(&rq, cfg);
        assert_eq!(pick, best, "round {round}");
        // The path names the pick's way: O(1) only when the leftmost holds the earliest
        // deadline; the shortcut only to the holder of the earliest deadline; the descent
        // whenever the shortcut's test fails: the earliest deadline, read as a vruntime, is
        // not eligible, or its holder is not. That is not "the earliest deadline's holder is
        // not eligible": the holder can be eligible while its deadline, far ahead of V, is
        // not (sched_yield() with mixed weights, Documentation/pick-cost.md).
        let (first, md) = (rq.first().unwrap(), rq.root().unwrap().min_deadline());
        let earliest_eligible = best.is_some_and(|b| b.deadline() == md);
        let holder = in_order(&rq)
            .into_iter()
            .find(|se| se.deadline() == md)
            .unwrap();
        let bound = el.vruntime(md) && el.vruntime(holder.vruntime());
        let remembered = rq.earliest() == Some(holder) && el.vruntime(holder.vruntime());
        held += usize::from(remembered && first != holder);
        match pick_path(&rq, cfg) {
            PickPath::Fast => assert!(first.deadline() == md || remembered, "round {round}"),
            PickPath::Shortcut => assert!(earliest_eligible && bound, "round {round}"),
            PickPath::Descent => assert!(!bound, "round {round}"),
        }
    }
    // The remembered holder answered where the leftmost could not (Miri's few rounds
    // need not meet one).
    if !cfg!(miri) {
        assert!(held > 0);
    }
}

/// pick_eevdf() against the O(n) reference with a current entity anywhere, heavy or light,
/// so that at times no tree entity is eligible (the leftmost, holding the tree's earliest
/// deadline or not, is not), and with deadlines that may precede vruntimes, so that the
/// tree's earliest deadline read as a vruntime can be eligible while its holder is not
/// (the descent's shortcut (E) must test the holder, not trust `v <= d`).
#[test]
fn pick_matches_reference_with_current_anywhere() {
    let (n, rounds) = if cfg!(miri) { (16, 40) } else { (200, 3000) };
    let mut rng = Rng(0x5eed);
    // Light tree entities (nice 0 to 19), so that a heavy current far left can pull V
    // left of all of them.
    let ents: Vec<UserEntity> = (0..n)
        .map(|i| UserEntity::new(LoadWeight::from_nice(i % 20)))
        .collect();
    let cur = UserEntity::new(LoadWeight::from_nice(-20));
    let mut rq = UserRunqueue::new();
    // vruntimes within 2^22 of 2^29; a deadline within 2^21 after v, or (in one round of
    // three) within 2^21 before it.
    let place = |rng: &mut Rng, se: UserSe<'_>, early: bool| {
        se.set_vruntime((1 << 29) + rng.below(1 << 22));
        let d = rng.below(1 << 21);
        se.set_deadline(if early {
            se.vruntime() - d
        } else {
            se.vruntime() + d
        });
    };
    for e in &ents {
        place(&mut rng, e.se(), false);
        queue(&mut rq, e.se());
    }
    let c = cur.se();
    c.set_on_rq(true);
    rq.set_curr(Some(c));
    rq.set_nr_queued(rq.nr_queued() + 1);
    // Rounds where no tree entity was eligible, and where (E)'s bound failed.
    let (mut none_eligible, mut bound_failed) = (0, 0);
    for round in 0..rounds {
        for _ in 0..3 {
            let e = ents[rng.below(n as u64) as usize].se();
            unqueue(&mut rq, e);
            e.set_load(LoadWeight::from_nice(rng.below(20) as i32));
            place(&mut rng, e, round % 3 == 0);
            queue(&mut rq, e);
        }
        // Anywhere from far left of the tree to far right of it.
        c.set_vruntime((1 << 29) - (1 << 23) + rng.below(1 << 24));
        c.set_deadline(c.vruntime() + rng.below(1 << 21));
        c.set_load(LoadWeight::from_nice(if round % 2 == 0 { -20 } else { 0 }));
        let mut cfg = Config::DEFAULT;
        cfg.features = cfg.features.with(Features::RUN_TO_PARITY, round % 4 == 0);
        check_invariants(&rq).unwrap();
        let el = Eligibility::new(&rq, cfg);
        let first = rq.first().unwrap();
        if !el.vruntime(first.vruntime()) {
            none_eligible += 1;
        }
        let md = rq.root().unwrap().min_deadline();
        let holder = in_order(&rq)
            .into_iter()
            .find(|s| s.deadline() == md)
            .unwrap();
        if el.vruntime(md) && !el.vruntime(holder.vruntime()) {
            bound_failed += 1;
        }
        assert_eq!(
            pick_eevdf(&rq, cfg),
            oracle::pick(&rq, cfg.features),
            "round {round}"
        );
    }
    if !cfg!(miri) {
        assert!(
            none_eligible > 0 && bound_failed > 0,
            "{none_eligible} {bound_failed}"
        );
    }
}

/// `pick_path()` names the way the pick went, and the pick it names is `pick_eevdf()`'s:
/// three entities of equal weight (V = their mean vruntime, 15), no current.
/// - the leftmost holds the earliest deadline: O(1) ([`PickPath::Fast`]);
/// - the remembered holder of the earliest deadline (8) is eligible: O(1) too;
/// - the holder not remembered (a fourth entity, with an earlier deadline still, was
///   queued after them and taken out), the earliest deadline (8) below V, so its holder is
///   eligible: (E), the shortcut;
/// - the same, the earliest deadline (40) above V: the descent, which finds the eligible 40.
#[test]
fn pick_path_names_the_way() {
    // (vruntime, deadline) of each entity, whether the holder is forgotten, the path, the
    // index of the pick.
    type Case = ([(u64, u64); 3], bool, PickPath, usize);
    let cases: [Case; 4] = [
        ([(0, 8), (5, 50), (40, 60)], false, PickPath::Fast, 0),
        ([(0, 50), (5, 8), (40, 60)], false, PickPath::Fast, 1),
        ([(0, 50), (5, 8), (40, 60)], true, PickPath::Shortcut, 1),
        ([(0, 50), (5, 40), (40, 45)], true, PickPath::Descent, 1),
    ];
    for (vd, forget, path, pick) in cases {
        let ents: Vec<UserEntity> = (0..3)
            .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
            .collect();
        let passing = UserEntity::new(LoadWeight::from_nice(0));
        let mut rq = UserRunqueue::new();
        for (e, &(v, d)) in ents.iter().zip(&vd) {
            e.se().set_vruntime(v);
            e.se().set_deadline(d);
            queue(&mut rq, e.se());
        }
        if forget {
            passing.se().set_vruntime(15);
            passing.se().set_deadline(1);
            queue(&mut rq, passing.se());
            assert_eq!(rq.earliest(), Some(passing.se()));
            unqueue(&mut rq, passing.se());
            assert_eq!(rq.earliest(), None);
        } else {
            assert_eq!(rq.earliest(), Some(ents[pick].se()));
        }
        check_invariants(&rq).unwrap();
        let cfg = Config::DEFAULT;
        assert_eq!(pick_path(&rq, cfg), path, "{vd:?}");
        assert_eq!(pick_eevdf(&rq, cfg), Some(ents[pick].se()), "{vd:?}");
    }
}

/// The checker reports a remembered holder of the earliest deadline that is not its first
/// holder: another tree entity, an entity out of the tree, or the second of two with the
/// earliest deadline; and the enqueue and erase keep the right one through ties.
#[test]
fn earliest_holder_is_checked() {
    let ents: Vec<UserEntity> = (0..4)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let se = |i: usize| ents[i].se();
    let mut rq = UserRunqueue::new();
    // (vruntime, deadline): 1 and 2 share the earliest deadline, 1 first in tree order.
    for (i, (v, d)) in [(0, 50), (10, 20), (20, 20)].into_iter().enumerate() {
        se(i).set_vruntime(v);
        se(i).set_deadline(d);
        queue(&mut rq, se(i));
        check_invariants(&rq).unwrap();
    }
    assert_eq!(rq.earliest(), Some(se(1)));
    // A tie inserted before the holder takes its place; after it, not.
    se(3).set_vruntime(5);
    se(3).set_deadline(20);
    queue(&mut rq, se(3));
    assert_eq!(rq.earliest(), Some(se(3)));
    unqueue(&mut rq, se(3));
    assert_eq!(rq.earliest(), None);
    check_invariants(&rq).unwrap();
    for (wrong, in_tree) in [(se(0), true), (se(2), true), (se(3), false)] {
        rq.set_earliest(Some(wrong));
        assert_eq!(
            check_invariants(&rq),
            Err(InvariantError::Earliest { in_tree }),
            "{wrong:?}"
        );
    }
    rq.set_earliest(Some(se(1)));
    check_invariants(&rq).unwrap();
}

/// An enqueue whose insertion the timeline refuses (the entity is in another tree: a
/// caller's bug) does not name it the holder of the earliest deadline, and leaves the
/// holder it had: the pick must not return an entity that is not in its timeline.
#[test]
fn refused_enqueue_names_no_holder() {
    let ents: Vec<UserEntity> = (0..2)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let (x, y) = (ents[0].se(), ents[1].se());
    let mut a = UserRunqueue::new();
    let mut b = UserRunqueue::new();
    x.set_vruntime(0);
    x.set_deadline(50);
    queue(&mut a, x);
    y.set_vruntime(0);
    y.set_deadline(10);
    queue(&mut b, y);
    // y, with the earlier deadline, is b's; a refuses it before its linking step, so its
    // holder stays x.
    assert_eq!(a.earliest(), Some(x));
    __enqueue_entity(&mut a, y, KEEP);
    assert_eq!(a.earliest(), Some(x));
    assert_eq!(b.earliest(), Some(y));
    assert_eq!(pick_eevdf(&a, Config::DEFAULT), Some(x));
}
