#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every check of the sched_eevdf crate. Run from anywhere; exits non-zero on the first
# failure. FUZZ_SECONDS (default 60) bounds the fuzz smoke run; SKIP_MIRI=1 / SKIP_FUZZ=1
# skip the nightly-only steps.
set -eu
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "cargo test (overflow checks on)"
cargo test -p sched_eevdf

step "clippy"
cargo clippy -p sched_eevdf --all-targets -- -D warnings

step "rustfmt"
cargo fmt -p sched_eevdf -- --check
rustfmt --edition 2021 --check sched_eevdf/fuzz/fuzz_targets/ops.rs

step "build for the kernel's target (x86_64-unknown-none)"
cargo build -p sched_eevdf --target x86_64-unknown-none

step "compile as an in-kernel module (--cfg sched_eevdf_in_kernel, -D unreachable_pub -W missing_docs)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp rust-toolchain.toml "$tmp/"
cat > "$tmp/Cargo.toml" <<TOML
[package]
name = "kmodcheck"
version = "0.0.0"
edition = "2021"
[lib]
path = "lib.rs"
[workspace]
TOML
cat > "$tmp/lib.rs" <<RS
//! Includes sched_eevdf the way the kernel crate does.
#![no_std]
/// The EEVDF core.
#[path = "$PWD/sched_eevdf/src/lib.rs"]
pub mod sched_eevdf;
RS
(cd "$tmp" && RUSTFLAGS="--cfg sched_eevdf_in_kernel --check-cfg cfg(sched_eevdf_in_kernel) -D unreachable_pub -W missing_docs -D rust_2018_idioms -D unsafe_op_in_unsafe_fn -D warnings" \
	CARGO_TARGET_DIR="$tmp/target" cargo build --target x86_64-unknown-none)

if [ "${SKIP_MIRI:-0}" != 1 ]; then
	step "Miri on the tree code (reduced sizes)"
	cargo +nightly miri test -p sched_eevdf --test tree
fi

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
	step "fuzz smoke run (${FUZZ_SECONDS:-60} s)"
	(cd sched_eevdf/fuzz && cargo +nightly fuzz run -a ops -- -max_total_time="${FUZZ_SECONDS:-60}" -max_len=2048)
fi

step "sched_eevdf: all checks passed"
