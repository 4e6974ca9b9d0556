#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every check of the sched_eevdf crate. Run from anywhere; exits non-zero on the first
# failure. FUZZ_SECONDS (default 60) bounds the fuzz smoke run; SKIP_MIRI=1 / SKIP_FUZZ=1
# skip the nightly-only steps. --extras-only skips what tools/test.sh already runs for the
# whole workspace (cargo test, clippy, rustfmt).
set -eu
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

if [ "${1:-}" != --extras-only ]; then
	step "cargo test (overflow checks on)"
	cargo test -p sched_eevdf

	step "clippy"
	cargo clippy -p sched_eevdf --all-targets -- -D warnings

	step "rustfmt"
	cargo fmt -p sched_eevdf -- --check
fi
rustfmt --edition 2021 --check sched_eevdf/fuzz/fuzz_targets/ops.rs

step "build for the kernel's target (x86_64-unknown-none)"
cargo build -p sched_eevdf --target x86_64-unknown-none

step "compile as an in-kernel module, for the kernel's target (tests/kernel-module-check)"
cargo build -p kernel-module-check --target x86_64-unknown-none

if [ "${SKIP_MIRI:-0}" != 1 ]; then
	step "Miri on the tree code (reduced sizes)"
	cargo +nightly miri test -p sched_eevdf --test tree
fi

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
	step "fuzz smoke run (${FUZZ_SECONDS:-60} s)"
	# Inputs that once failed stay checked (fuzz/regressions), then a fresh run.
	(cd sched_eevdf/fuzz && cargo +nightly fuzz run -a ops regressions -- -runs=0 &&
		cargo +nightly fuzz run -a ops -- -max_total_time="${FUZZ_SECONDS:-60}" -max_len=2048)
fi

step "sched_eevdf: all checks passed"
