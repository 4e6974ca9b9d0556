// SPDX-License-Identifier: GPL-2.0

//! Shared test helpers: the O(n) reference model and weight choices.

#![allow(dead_code)]

pub mod pair;
pub mod test_model;

use sched_eevdf::{scale_load, LoadWeight};

/// Weight choices: every nice level, then cgroup weights (min 2, a few middle, max).
pub fn weight_choice(k: usize) -> LoadWeight {
    const CG: [u64; 6] = [2, 3, 100, 5000, 100_000, 262_144];
    if k < 40 {
        LoadWeight::from_nice(k as i32 - 20)
    } else {
        LoadWeight::from_weight(scale_load(CG[(k - 40) % CG.len()]))
    }
}

pub const WEIGHT_CHOICES: usize = 46;
