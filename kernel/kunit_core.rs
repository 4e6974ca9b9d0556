// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_eevdf`: the core, compiled with the kernel's flags
//! (overflow checks included), runs a seeded mixed workload on a private
//! runqueue and passes its invariant checker after every mutation.
//!
//! This exercises the core's own userspace tree inside the kernel;
//! `kunit_bindings.rs` runs the same workload through the kernel's rbtree
//! bindings on a private `cfs_rq`.

use crate::kunit::{self, weight, Rng, Test};
use crate::sched_eevdf::{
    user::{UserEntity, UserRunqueue, UserSe},
    Config, Features,
};

/// Entities in the workload; they live on the stack of the test.
const N: usize = 24;
/// Steps of the workload.
const STEPS: u32 = 4000;

fn run(t: &mut Test, cfg: Config, seed: u64, toggles: Features) {
    let mut rng = Rng(seed);
    let ents: [UserEntity; N] = core::array::from_fn(|_| UserEntity::new(weight(&mut rng)));
    let ses: [UserSe<'_>; N] = core::array::from_fn(|i| ents[i].se());
    let mut rq = UserRunqueue::new();
    if let Some(n) = kunit::mixed_workload(t, &mut rq, &ses, &mut rng, cfg, toggles, STEPS) {
        t.info(format_args!(
            concat!(
                "{} steps: {} enqueues ({} preempted), {} dequeues, {} reweights, ",
                "{} sched_changes, {} picks ({} of the next buddy), invariants held"
            ),
            STEPS, n.enq, n.preempts, n.deq, n.rew, n.changes, n.picks, n.buddy_picks
        ));
    }
}

fn mixed_workload(t: &mut Test) {
    run(t, Config::DEFAULT, 0x9e37_79b9_7f4a_7c15, Features::EMPTY);
}

/// RUN_TO_PARITY_MIN_SLICE and PROTECT_AT_PICK flipped every 97 steps.
fn protection_toggles(t: &mut Test) {
    let toggles = Features::RUN_TO_PARITY_MIN_SLICE.with(Features::PROTECT_AT_PICK, true);
    run(t, Config::DEFAULT, 0xd1b5_4a32_d192_ed03, toggles);
}

/// The same with 6.19's NEXT_BUDDY_EEVDF and NEXT_BUDDY, and RUN_TO_PARITY_MIN_SLICE
/// flipped every 97 steps.
fn next_buddy(t: &mut Test) {
    let mut cfg = Config::DEFAULT;
    cfg.features = cfg
        .features
        .with(Features::NEXT_BUDDY_EEVDF, true)
        .with(Features::NEXT_BUDDY, true);
    run(
        t,
        cfg,
        0x2545_f491_4f6c_dd1d,
        Features::RUN_TO_PARITY_MIN_SLICE,
    );
}

/// The core's own tree with mixed slices: `max_slice` through the user tree's callbacks,
/// LAG_CLAMP_MAX_SLICE on and off.
fn slice_workload(t: &mut Test) {
    let mut rng = Rng(0x0008_5eed_1a6c_1a3b);
    let ents: [UserEntity; N] = core::array::from_fn(|_| UserEntity::new(weight(&mut rng)));
    let ses: [UserSe<'_>; N] = core::array::from_fn(|i| ents[i].se());
    let mut rq = UserRunqueue::new();
    if let Some(n) = kunit::slice_workload(t, &mut rq, &ses, &mut rng, Config::DEFAULT, STEPS) {
        t.info(format_args!(
            "{STEPS} steps: {} slice changes, {} lags saved, clamped {:?} (off, on)",
            n.slices, n.lags, n.clamped
        ));
    }
}

crate::kunit_suite!(
    sched_eevdf_suite,
    c"sched_eevdf",
    [
        c"mixed_workload" => super::mixed_workload,
        c"protection_toggles" => super::protection_toggles,
        c"next_buddy" => super::next_buddy,
        c"slice_workload" => super::slice_workload,
    ]
);
