#!/usr/bin/env bash
# The main job: set up the machine, build the patched kernel, boot it and run
# the default demo. At this stage the demo shows the booted kernel's version,
# its scheduler features, one hackbench run and one cyclictest run.
#
# Environment: EEVDF_CACHE (default ~/.cache/sched_eevdf), EEVDF_CPUS (2).
source "$(dirname "$0")/lib.sh"
t0=$(now)
bash "$EEVDF_REPO/tools/setup.sh"
bash "$EEVDF_REPO/tools/build-kernel.sh" rust
step "building the VM runner"
cargo build --quiet --release --locked -p eevdf-vm --manifest-path "$EEVDF_REPO/Cargo.toml"
step "booting the rust kernel and running the demo"
"$EEVDF_REPO/target/release/eevdf-vm" --kernel rust --cpus "${EEVDF_CPUS:-2}" --timeout-s 300 \
	"$EEVDF_REPO/tools/guest/demo.sh"
step "done in $(($(now) - t0)) s"
