#!/usr/bin/env bash
# The main job: set up the machine, build the patched kernel and the stock kernel from
# the same tree, boot the patched one for a first look (its version, scheduler features,
# one hackbench run, and cyclictest beside two hogs at the base slice and at a short one,
# with their ratio; under icount, so that the pair differs by what the scheduler did and
# not by what the host did), then run the experiment lab's default matrix
# (eevdf-lab run --quick: Rust against stock, latency/throughput/fairness/scale) and print
# its tables. The report, raw JSON and plots go to results/<timestamp>/.
#
# Environment: EEVDF_CACHE (default ~/.cache/sched_eevdf), EEVDF_CPUS (the demo boot's
# vCPUs, default 2; the lab keeps its own default of one vCPU, Documentation/lab.md says
# why), EEVDF_LAB_ARGS (extra eevdf-lab flags, e.g. "--full" or "--cpus 2").
source "$(dirname "$0")/lib.sh"
t0=$(now)
bash "$EEVDF_REPO/tools/setup.sh"
bash "$EEVDF_REPO/tools/build-kernel.sh" rust
step "building the VM runner, the guest programs and the lab"
cargo build --quiet --release --locked -p eevdf-vm -p eevdf-lab --manifest-path "$EEVDF_REPO/Cargo.toml"
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest \
	--manifest-path "$EEVDF_REPO/Cargo.toml"
step "booting the rust kernel and running the demo"
"$EEVDF_REPO/target/release/eevdf-vm" --kernel rust --cpus "${EEVDF_CPUS:-2}" --timeout-s 300 \
	--icount-shift 3 "$EEVDF_REPO/tools/guest/demo.sh"
step "experiment lab: eevdf-lab run --quick (builds the stock kernel too)"
# shellcheck disable=SC2086 # EEVDF_LAB_ARGS is a list of flags
"$EEVDF_REPO/target/release/eevdf-lab" run --quick ${EEVDF_LAB_ARGS:-}
step "done in $(($(now) - t0)) s"
