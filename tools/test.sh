#!/usr/bin/env bash
# Every test, from a fresh machine: the README's second command and what CI runs.
#
#   host:   rustfmt, clippy -D warnings, cargo test (workspace), the core's
#           Miri and fuzz smoke runs (sched_eevdf/test.sh), checkpatch on the series;
#   kernel: build the debug kernel (lockdep, atomic-sleep, list debugging) and run
#           every guest test in one boot on 4 vCPUs; check that the harness fails
#           when it must (tests/harness/selftest.sh); build the stock kernel from
#           the same tree and run the guest tests that apply to it; smoke-test the
#           experiment lab (eevdf-lab --smoke) on it.
#
# Stops at the first failing stage and says which.
source "$(dirname "$0")/lib.sh"
t0=$(now)
EEVDF_SETUP_TESTS=1 bash "$EEVDF_REPO/tools/setup.sh"
cd "$EEVDF_REPO"

current=setup
stage() {
	current=$*
	step "[$(($(now) - t0)) s] $*"
}
trap 'printf "\nFAILED at stage: %s (after %d s)\n" "$current" $(($(now) - t0)) >&2' ERR

stage "host: cargo fmt --check"
cargo fmt --all -- --check
# The kernel glue is not a cargo crate; Kbuild compiles it (make rustfmtcheck style).
rustfmt --edition 2021 --check kernel/*.rs debugfs/*.rs
stage "host: cargo clippy --all-targets -D warnings"
cargo clippy --quiet --locked --workspace --all-targets -- -D warnings
stage "host: cargo test --workspace"
cargo test --quiet --locked --workspace
if [ -x sched_eevdf/test.sh ]; then
	stage "host: sched_eevdf extras (Miri, fuzz smoke)"
	bash sched_eevdf/test.sh --extras-only
fi
cargo build --quiet --release --locked -p eevdf-vm

bash tools/kernel-tree.sh
stage "checkpatch on kernel/patches"
while read -r p; do
	p=${p%%#*}
	[ -n "${p// /}" ] || continue
	(cd "$KSRC" && perl scripts/checkpatch.pl --quiet "$EEVDF_REPO/kernel/patches/$p") ||
		die "checkpatch: $p"
	note "checkpatch clean: $p"
done <kernel/patches/series

stage "guest programs: eevdf-guest for musl (eevdf-slice, eevdf-waker, ...)"
# The guest tests run them (/eevdf/bin); eevdf-vm copies them from the musl target dir.
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

stage "kernel: rust build"
bash tools/build-kernel.sh rust
stage "kernel: no panic path in the scheduler's Rust (entry points and what they inline)"
# Overflow checks are on (CONFIG_RUST_OVERFLOW_CHECKS): a `+` that can overflow becomes a
# call to a panic function. Only the KUnit suites and the debugfs files may have one.
panics=$(llvm-objdump -dr --no-show-raw-insn "$KBUILD_ROOT/rust/kernel/sched/eevdf/kernel/sched_eevdf_glue.o" |
	awk '/^[0-9a-f]+ </ { fn = $2 } /panicking|panic_const|panic_fmt/ && fn !~ /kunit|debugfs/ { print fn }' |
	sort -u)
[ -z "$panics" ] || die "panic paths in scheduler functions: $panics"
note "no panic path outside KUnit and debugfs"

stage "guest: every guest test on the rust kernel (4 vCPUs, KUnit included)"
printf 'eevdf-guest-tests -k rust\n' >"$KBUILD_ROOT/guest-rust.sh"
target/release/eevdf-vm --kernel rust --cpus 4 --timeout-s 900 "$KBUILD_ROOT/guest-rust.sh"

stage "kernel: debug build"
bash tools/build-kernel.sh debug
stage "guest: every guest test on the debug kernel (4 vCPUs)"
printf 'eevdf-guest-tests -k debug -t 600\n' >"$KBUILD_ROOT/guest-all.sh"
target/release/eevdf-vm --kernel debug --cpus 4 --timeout-s 900 "$KBUILD_ROOT/guest-all.sh"
stage "harness self-test: broken test, kernel WARN and hang must fail"
bash tests/harness/selftest.sh

stage "kernel: stock build (CONFIG_SCHED_EEVDF_RUST=n, same tree)"
bash tools/build-kernel.sh stock
printf 'eevdf-guest-tests -k stock\n' >"$KBUILD_ROOT/guest-stock.sh"
target/release/eevdf-vm --kernel stock --cpus 2 --timeout-s 600 "$KBUILD_ROOT/guest-stock.sh"

stage "lab: eevdf-lab --smoke on the stock kernel (one boot, every experiment)"
# The lab's planning, parsers and statistics have unit tests (cargo test above); this
# checks the guest programs, the protocol and the report end to end, on the stock
# kernel built above. The guest programs were built above.
cargo build --quiet --release --locked -p eevdf-lab
target/release/eevdf-lab --smoke --no-build --kernels stock --out-dir "$KBUILD_ROOT/lab-smoke"

stage "all tests passed"
