#!/usr/bin/env bash
# fair.c as the judge of the Rust core (Documentation/c-parity.md): builds
# tests/fair-c-diff, whose build script extracts 6.12.117's own EEVDF functions from the
# pristine tarball ($KERNEL_TARBALL) and compiles them, then drives that C and the Rust
# core with the same random operation sequences and compares them after every step.
#
#   bash tools/fair-c-diff.sh [--seqs N] [--seed S] [--ops-per-seq M] [--shrink-replays R]
#
# Prints `fair-c-diff: N sequences, M operations, D divergences` and the pinned
# differences; exits 1 on a divergence, after printing the first one and a shrunk
# reproducer. `--help` lists the flags and their trade-offs.
source "$(dirname "$0")/lib.sh"
[ -f "$KERNEL_TARBALL" ] || die "$KERNEL_TARBALL missing: run tools/setup.sh (linux-source-6.12)"
cd "$EEVDF_REPO"
step "fair-c-diff: build (fair.c's EEVDF functions from $(basename "$KERNEL_TARBALL"), the Rust core)"
KERNEL_TARBALL=$KERNEL_TARBALL cargo build --quiet --release --locked -p fair-c-diff
step "fair-c-diff: run $*"
exec target/release/fair-c-diff "$@"
