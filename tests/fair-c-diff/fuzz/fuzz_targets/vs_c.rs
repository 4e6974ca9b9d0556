// SPDX-License-Identifier: GPL-2.0

//! Coverage-guided sequences against fair.c's own EEVDF code: the input decodes to a
//! set-up and operations (`fair_c_diff::decode`), which run on both sides; a divergence
//! panics with what differed. The pinned differences (Documentation/c-parity.md) do not.

#![no_main]

use fair_c_diff::{decode, run_sequence, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (setup, ops) = decode(data);
    let r = run_sequence(&setup, Source::Replay(&ops)).expect("a decoded set-up runs");
    if let Some((step, m)) = r.divergence {
        panic!(
            "{setup}: operation {step} ({}): {}: fair.c {} / Rust core {}",
            r.ops[step], m.what, m.c, m.rust
        );
    }
});
