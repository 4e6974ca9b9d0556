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
    Config,
};

/// Entities in the workload; they live on the stack of the test.
const N: usize = 24;
/// Steps of the workload.
const STEPS: u32 = 4000;

fn mixed_workload(t: &mut Test) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let ents: [UserEntity; N] = core::array::from_fn(|_| UserEntity::new(weight(&mut rng)));
    let ses: [UserSe<'_>; N] = core::array::from_fn(|i| ents[i].se());
    let mut rq = UserRunqueue::new();
    if let Some(n) = kunit::mixed_workload(t, &mut rq, &ses, &mut rng, Config::DEFAULT, STEPS) {
        t.info(format_args!(
            "{STEPS} steps: {} enqueues, {} dequeues, {} reweights, {} picks, invariants held",
            n.enq, n.deq, n.rew, n.picks
        ));
    }
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
        c"slice_workload" => super::slice_workload,
    ]
);
