// SPDX-License-Identifier: GPL-2.0

//! Fuzz target: an operation sequence decoded from the input is applied to the crate and
//! to the O(n) reference model (the model test's driver); after every step the invariant
//! checker runs and picks, V, lags and entity states must agree. Overflow checks are on
//! in cargo-fuzz builds (debug assertions), so any overflow is a crash too.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/mod.rs"]
mod common;

use common::pair::{run, Op};
use common::WEIGHT_CHOICES;

fn decode(data: &[u8]) -> Option<(Vec<usize>, u64, u32, Vec<Op>)> {
    let (&n, data) = data.split_first()?;
    let n = (n as usize % 12) + 1;
    if data.len() < n + 12 {
        return None;
    }
    let (w, data) = data.split_at(n);
    let weights = w.iter().map(|&b| b as usize % WEIGHT_CHOICES).collect();
    let (v0, data) = data.split_at(8);
    let v0 = u64::from_le_bytes(v0.try_into().ok()?);
    let (f, data) = data.split_at(4);
    let features = u32::from_le_bytes(f.try_into().ok()?);
    let mut ops = Vec::new();
    for c in data.chunks_exact(4) {
        let arg = u32::from_le_bytes([c[1], c[2], c[3], 0]) as u64;
        let i = c[1] as usize % n;
        ops.push(match c[0] % 10 {
            0..=2 => Op::Tick(arg << (c[0] >> 5)),
            3 | 4 => Op::Wake(i, c[2]),
            5 => Op::Sleep(i, c[2] % 3),
            6 => Op::Reweight(i, c[2] as usize % WEIGHT_CHOICES),
            7 => Op::Slice(i, arg << (c[0] >> 3)),
            8 => Op::Schedule,
            _ => Op::Flip(c[2] as usize % sched_eevdf::Features::TABLE.len()),
        });
    }
    Some((weights, v0, features, ops))
}

fuzz_target!(|data: &[u8]| {
    if let Some((weights, v0, features, ops)) = decode(data) {
        run(&weights, v0, features, &ops);
    }
});
