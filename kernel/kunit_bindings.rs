// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_eevdf_bindings`: the core runs inside the kernel through
//! the real bindings, on a private `struct cfs_rq` and private
//! `struct sched_entity`s (static, zero-initialised, never seen by the
//! scheduler), over the kernel's augmented rbtree (lib/rbtree.c through the
//! helpers). A seeded mixed workload of enqueue and wakeup preemption, dequeue,
//! pick (schedule), reweight and sched_change runs the core's invariant checker
//! after every step, and checks each pick and wakeup decision against the core's
//! O(n) reference scan; with default features, with `NO_ELIGIBLE`,
//! `BIAS_ELIGIBLE`, `RUN_TO_PARITY_MIN_SLICE`, `PROTECT_AT_PICK`, both, the
//! protection flags toggled every 97 steps, and `NEXT_BUDDY_EEVDF`;
//! `lag_clamp_max_slice` runs one with mixed slices, which checks `max_slice` and
//! the saved lags.
//!
//! Registered with [`crate::kunit_suite!`]: 6.12 has no `#[kunit_tests]`, so the
//! suite and case arrays are built as constants and placed in the
//! `.kunit_test_suites` section that KUnit walks at boot.

use crate::fair::{CfsRq, Se};
use crate::kunit::{mixed_workload, slice_workload, weight, Rng, Test};
use crate::sched_eevdf::{Config, Entity, Features, Runqueue};
use core::mem::MaybeUninit;
use kernel::bindings;

/// Entities in the workload.
const N: usize = 32;
/// Steps of the workload.
const STEPS: u32 = 4000;

/// The private runqueue and entities: all-zero is their initial C state
/// (`RB_ROOT_CACHED`, not queued); only this suite touches them.
static mut RQ: MaybeUninit<bindings::cfs_rq> = MaybeUninit::zeroed();
static mut SES: MaybeUninit<[bindings::sched_entity; N]> = MaybeUninit::zeroed();

/// The private runqueue and entities, zeroed again for a case.
fn fresh() -> (*mut bindings::cfs_rq, *mut bindings::sched_entity) {
    // SAFETY: the statics are only used by this suite, whose cases KUnit runs one at a
    // time; zeroed is a valid initial state for both C structures.
    unsafe {
        RQ = MaybeUninit::zeroed();
        SES = MaybeUninit::zeroed();
        (
            (&raw mut RQ).cast::<bindings::cfs_rq>(),
            (&raw mut SES).cast::<bindings::sched_entity>(),
        )
    }
}

/// Which workload a case runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// [`mixed_workload`]: base slices.
    Mixed,
    /// [`slice_workload`]: mixed slices, LAG_CLAMP_MAX_SLICE turned over.
    Slices,
}

fn workload(t: &mut Test, cfg: Config, toggles: Features, seed: u64, kind: Kind) {
    let (raw_rq, raw_ses) = fresh();
    // SAFETY:
    // - `raw_rq` is a valid (zeroed) `cfs_rq`, private to this test case: no lock is
    //   needed for exclusive access, which lasts until the case returns;
    // - nothing else uses it meanwhile.
    let rq = unsafe { CfsRq::from_raw_mut(raw_rq) };
    // As init_cfs_rq().
    rq.set_zero_vruntime((-(1i64 << 20)) as u64);
    let mut rng = Rng(seed);
    let ses: [Se<'_>; N] = core::array::from_fn(|i| {
        // SAFETY: `i < N`, so the pointer is an entity of the private, zeroed array, used
        // by this case alone while the runqueue reference lives.
        let se = unsafe { rq.entity(raw_ses.add(i)) };
        // SAFETY: the entity is zeroed: in no tree and not queued.
        unsafe { se.init_private() };
        se.set_load(weight(&mut rng));
        se
    });
    if kind == Kind::Slices {
        if let Some(n) = slice_workload(t, &mut *rq, &ses, &mut rng, cfg, STEPS) {
            t.info(format_args!(
                concat!(
                    "{} steps on a private cfs_rq: {} slice changes, {} lags saved ",
                    "({} clamped with LAG_CLAMP_MAX_SLICE off, {} on), invariants held"
                ),
                STEPS, n.slices, n.lags, n.clamped[0], n.clamped[1]
            ));
            // Mixed slices from 0.1 to 100 ms and runs of up to 20 ms: 6.12's limit clamps
            // (or the case tested it less than it says), and the largest queued slice plus
            // a tick, never smaller than 6.12's limit for the short slices, clamps less.
            if n.clamped[0] == 0 || n.clamped[1] >= n.clamped[0] {
                t.fail(format_args!(
                    "clamped {} lags with 6.12's limit, {} with the largest slice's",
                    n.clamped[0], n.clamped[1]
                ));
            }
        }
        return;
    }
    if let Some(n) = mixed_workload(t, &mut *rq, &ses, &mut rng, cfg, toggles, STEPS) {
        t.info(format_args!(
            concat!(
                "{} steps on a private cfs_rq: {} enqueues ({} preempted), {} dequeues, ",
                "{} reweights, {} sched_changes, {} picks ({} of the next buddy), ",
                "invariants held"
            ),
            STEPS, n.enq, n.preempts, n.deq, n.rew, n.changes, n.picks, n.buddy_picks
        ));
        if cfg.features.contains(Features::NEXT_BUDDY) && n.buddy_picks == 0 {
            t.fail(format_args!("NEXT_BUDDY on, and no pick of the next buddy"));
        }
    }
}

fn cfg_with(f: Features, on: bool) -> Config {
    let mut c = Config::DEFAULT;
    c.features = c.features.with(f, on);
    c
}

fn defaults(t: &mut Test) {
    workload(
        t,
        Config::DEFAULT,
        Features::EMPTY,
        0x9e37_79b9_7f4a_7c15,
        Kind::Mixed,
    );
}

fn no_eligible(t: &mut Test) {
    workload(
        t,
        cfg_with(Features::ELIGIBLE, false),
        Features::EMPTY,
        0x1234_5678_9abc_def1,
        Kind::Mixed,
    );
}

fn bias_eligible(t: &mut Test) {
    workload(
        t,
        cfg_with(Features::BIAS_ELIGIBLE, true),
        Features::EMPTY,
        0x0fed_cba9_8765_4321,
        Kind::Mixed,
    );
}

/// The third augmented value (`max_slice`) through the kernel's rbtree callbacks, and
/// LAG_CLAMP_MAX_SLICE's lag limit on and off, with mixed slices.
fn lag_clamp_max_slice(t: &mut Test) {
    workload(
        t,
        cfg_with(Features::LAG_CLAMP_MAX_SLICE, true),
        Features::EMPTY,
        0x5eed_1a6c_1a3b_0008,
        Kind::Slices,
    );
}

fn min_slice(t: &mut Test) {
    workload(
        t,
        cfg_with(Features::RUN_TO_PARITY_MIN_SLICE, true),
        Features::EMPTY,
        0x2545_f491_4f6c_dd1d,
        Kind::Mixed,
    );
}

fn protect_at_pick(t: &mut Test) {
    workload(
        t,
        cfg_with(Features::PROTECT_AT_PICK, true),
        Features::EMPTY,
        0x5851_f42d_4c95_7f2d,
        Kind::Mixed,
    );
}

fn min_slice_protect_at_pick(t: &mut Test) {
    let mut c = cfg_with(Features::RUN_TO_PARITY_MIN_SLICE, true);
    c.features = c.features.with(Features::PROTECT_AT_PICK, true);
    workload(t, c, Features::EMPTY, 0x1405_7b7e_f767_814f, Kind::Mixed);
}

/// Both protection flags, and RUN_TO_PARITY and PREEMPT_SHORT, flipped every 97 steps,
/// from the defaults: toggles in the middle of protected windows.
fn protection_toggles(t: &mut Test) {
    let toggles = Features::RUN_TO_PARITY_MIN_SLICE
        .with(Features::PROTECT_AT_PICK, true)
        .with(Features::RUN_TO_PARITY, true)
        .with(Features::PREEMPT_SHORT, true);
    workload(
        t,
        Config::DEFAULT,
        toggles,
        0x9e6c_63d0_676a_9a99,
        Kind::Mixed,
    );
}

/// The live features: the kernel's sysctl word maps onto the core's table.
fn live_features(t: &mut Test) {
    let c = crate::fair::config();
    t.info(format_args!(
        "live features {:?}, base slice {} ns ({} ns normalized), tick {} ns",
        c.features, c.base_slice_ns, c.normalized_base_slice_ns, c.tick_nsec
    ));
    if c.features != Features::DEFAULT {
        t.fail(format_args!(
            "boot features differ from the table's defaults"
        ));
    }
}

/// NEXT_BUDDY_EEVDF with NEXT_BUDDY: `cfs_rq->next` read and written through the
/// bindings, the buddy picked first, the wakeups decided as the reference decides.
fn next_buddy(t: &mut Test) {
    let mut c = Config::DEFAULT;
    c.features = c
        .features
        .with(Features::NEXT_BUDDY_EEVDF, true)
        .with(Features::NEXT_BUDDY, true);
    workload(
        t,
        c,
        Features::RUN_TO_PARITY_MIN_SLICE,
        0x5eed_b0dd_1e5e_ed01,
        Kind::Mixed,
    );
}

/// The timeline refuses, and leaves unchanged, what would corrupt lib/rbtree's links: the
/// insert of an entity that is in the tree, the erase of one that is in none (never
/// queued, or current); and an entity in no tree has no links to follow.
/// Called through `try_insert`/`try_erase`, which return the refusal where the
/// [`Timeline`](crate::sched_eevdf::Timeline) methods WARN (a WARN would fail the boot).
fn timeline_refusals(t: &mut Test) {
    use crate::fair::Refused;
    use crate::sched_eevdf::{enqueue_entity, schedule, EnqueueFlags, Pick, Timeline};
    let (raw_rq, raw_ses) = fresh();
    // SAFETY: a valid (zeroed) `cfs_rq` private to this case, used by it alone until it
    // returns.
    let rq = unsafe { CfsRq::from_raw_mut(raw_rq) };
    rq.set_zero_vruntime((-(1i64 << 20)) as u64);
    let cfg = Config::DEFAULT;
    let mut rng = Rng(0x7e11_0b5e_d0d0_0011);
    let ses: [Se<'_>; 4] = core::array::from_fn(|i| {
        // SAFETY: `i < 4 <= N`: a zeroed private entity, in no tree and not queued.
        let se = unsafe { rq.entity(raw_ses.add(i)) };
        // SAFETY: as above.
        unsafe { se.init_private() };
        se.set_load(weight(&mut rng));
        se
    });
    let [a, b, c, d] = ses;
    for se in [a, b, c] {
        enqueue_entity(&mut *rq, se, EnqueueFlags::INITIAL, cfg);
    }
    // The pick makes an entity current: out of the tree, its node emptied by the erase.
    let Pick::Run(cur) = schedule(&mut *rq, cfg) else {
        t.fail(format_args!("no pick among three queued entities"));
        return;
    };
    let before = match crate::sched_eevdf::check_invariants(&*rq) {
        Ok(s) => (s.nodes, rq.root(), rq.first()),
        Err(e) => {
            t.fail(format_args!("after three enqueues and a pick: {e}"));
            return;
        }
    };
    // An entity in no tree has no links: nothing to follow from the current entity (its
    // node emptied by the pick's erase) or from a never-queued one.
    for (what, se) in [("the current entity", cur), ("a never-queued entity", d)] {
        if rq.left(se).is_some() || rq.right(se).is_some() || rq.parent(se).is_some() {
            t.fail(format_args!("{what} has links into the tree"));
        }
    }
    let queued = if cur == b { a } else { b };
    let expect = |t: &mut Test, what: &str, got: Result<(), Refused>, want: Refused| {
        if got != Err(want) {
            t.fail(format_args!("{what}: {got:?}, not {want:?}"));
        }
    };
    let holder = rq.earliest();
    expect(
        t,
        "a second insert of a queued entity",
        rq.try_insert::<true>(queued, |_| true),
        Refused::InsertQueued,
    );
    if rq.earliest() != holder {
        t.fail(format_args!("a refused insert changed the holder"));
    }
    expect(
        t,
        "an erase of a never-queued entity",
        rq.try_erase::<true>(d),
        Refused::EraseUnqueued,
    );
    expect(
        t,
        "an erase of the current entity",
        rq.try_erase::<true>(cur),
        Refused::EraseUnqueued,
    );
    match crate::sched_eevdf::check_invariants(&*rq) {
        Ok(s) if (s.nodes, rq.root(), rq.first()) == before => t.info(format_args!(
            "refused, tree unchanged ({} nodes): a double insert, an erase of an unqueued \
             and of the current entity",
            s.nodes
        )),
        Ok(s) => t.fail(format_args!(
            "the refusals changed the tree ({} nodes)",
            s.nodes
        )),
        Err(e) => t.fail(format_args!("after the refusals: {e}")),
    }
}

crate::kunit_suite!(sched_eevdf_bindings_suite, c"sched_eevdf_bindings", [
    c"live_features" => super::live_features,
    c"defaults" => super::defaults,
    c"no_eligible" => super::no_eligible,
    c"bias_eligible" => super::bias_eligible,
    c"min_slice" => super::min_slice,
    c"protect_at_pick" => super::protect_at_pick,
    c"min_slice_protect_at_pick" => super::min_slice_protect_at_pick,
    c"protection_toggles" => super::protection_toggles,
    c"next_buddy" => super::next_buddy,
    c"lag_clamp_max_slice" => super::lag_clamp_max_slice,
    c"timeline_refusals" => super::timeline_refusals,
]);
