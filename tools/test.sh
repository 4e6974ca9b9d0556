#!/usr/bin/env bash
# Every test, from a fresh machine: the README's second command and what CI runs.
#
#   host:   rustfmt, clippy -D warnings, cargo test (workspace), fair.c's own EEVDF
#           code against the core (tools/fair-c-diff.sh), the core's Miri and fuzz
#           smoke runs (sched_eevdf/test.sh), checkpatch on the series, the pages'
#           links, and every generated page against what its kept raw makes now
#           (tools/check-pages.sh);
#   kernel: build distro-debug (Debian's 6.12 config with KASAN, UBSAN, lockdep and
#           the live oracle, CONFIG_SCHED_EEVDF_RUST_VERIFY) and run every guest test
#           on 4 vCPUs in the three preemption modes (preempt=full, voluntary with
#           nohz_full=2-3, none); check that the harness fails when it must
#           (tests/harness/selftest.sh, a planted VERIFY bug included). One kernel
#           build, to stay inside CI's hour on a 2-core machine; the guests of the
#           other two modes and the self-test run beside the full-load suite (each
#           single-threaded TCG guest takes one core).
#
#   --full: also build the rust, debug, distro, distro-stock and stock kernels and run
#           their guest suites (distro in the three preemption modes at full load),
#           smoke-test the experiment lab (eevdf-lab run --smoke and seeds --smoke on stock,
#           next --smoke on rust), and build (only)
#           the rust kernel without SMP, without SCHED_DEBUG and without FAIR_GROUP_SCHED.
#           Longer than CI's budget: Documentation/building.md#measured-times has the times.
#
# Stops at the first failing stage and says which.
source "$(dirname "$0")/lib.sh"
full=0
case "${1:-}" in
--full) full=1 ;;
"") ;;
*) die "usage: tools/test.sh [--full]" ;;
esac
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
# checkpatch (below, minutes later) refuses the exported sources' lines over 100 columns,
# which rustfmt leaves in comments: the same rule, at once.
long=$(awk 'length > 100 { print FILENAME ":" FNR ": " length " columns" }' \
	sched_eevdf/src/*.rs sched_eevdf/src/*/*.rs kernel/*.rs debugfs/*.rs features/*.rs)
[ -z "$long" ] || die "lines over 100 columns, which checkpatch refuses in the series: $long"
stage "host: cargo clippy --all-targets -D warnings"
cargo clippy --quiet --locked --workspace --all-targets -- -D warnings
stage "host: cargo test --workspace"
cargo test --quiet --locked --workspace
stage "host: fair.c as the judge (tools/fair-c-diff.sh --seqs 20000: 6.12.117's own EEVDF C against the core)"
# 7,252,490 operations in 27 s beside a kernel build (Documentation/c-parity.md); a divergence
# fails here with a shrunk reproducer.
bash tools/fair-c-diff.sh --seqs 20000
stage "host: the fault campaign's table from a fixed guest output (tests/faults-table)"
# Both forms of the live oracle's counters, a reset and an unreadable file: the VERIFY
# columns once came out empty when the file gained a counter.
diff -u tests/faults-table/expected.md <(bash tools/faults.sh --table tests/faults-table | tail -n +3) ||
	die "tools/faults.sh --table tests/faults-table differs from tests/faults-table/expected.md"
stage "host: tools/hackbench-switches.sh refuses bad arguments before it builds or writes anything"
hs_before=$(ls "$EEVDF_CACHE/hackbench-switches" 2>/dev/null | wc -l)
for bad in "0|||" "4 2 x|||" "|2||" "||2|" "|||x" "|||NO_ELIGIBLE;reboot" "--summary /nonexistent|||"; do
	IFS='|' read -r hs_args hs_ss hs_ni hs_f <<<"$bad"
	# $hs_args unquoted: its words are the arguments.
	if hs_out=$(SCHEDSTATS=$hs_ss NEWIDLE=$hs_ni FEATURES=$hs_f \
		bash tools/hackbench-switches.sh $hs_args 2>&1); then
		die "hackbench-switches.sh took '$bad' (arguments|SCHEDSTATS|NEWIDLE|FEATURES)"
	fi
	grep -q "error" <<<"$hs_out" || die "hackbench-switches.sh said no error for '$bad': $hs_out"
done
[ "$(ls "$EEVDF_CACHE/hackbench-switches" 2>/dev/null | wc -l)" = "$hs_before" ] ||
	die "hackbench-switches.sh wrote a measurement directory for a bad argument"
stage "host: every relative link and #anchor of the Markdown pages resolves, every table has its header's columns"
bash tools/check-links.sh
stage "host: every generated page is what its kept raw makes at this commit (tools/check-pages.sh)"
bash tools/check-pages.sh
if [ -x sched_eevdf/test.sh ]; then
	stage "host: sched_eevdf extras (Miri, fuzz smoke)"
	bash sched_eevdf/test.sh --extras-only
fi
cargo build --quiet --release --locked -p eevdf-vm

# The patched tree every kernel here is built from: tools/export-series.sh writes the
# self-contained series (the Rust sources as kernel/sched/eevdf/, then kernel/patches/)
# and checks that `git am` applies it to the pristine tarball; the tree is a copy of
# that result, no link to this repository. So the distro-debug kernel below, its guest
# suites and the self-test also test the series a user takes home.
stage "export: the series, git am onto pristine $KERNEL_VERSION, the kernel tree from it"
bash tools/kernel-tree.sh
stage "checkpatch on the exported series"
# (checkpatch.pl runs scripts/spdxcheck.py, which needs Debian's python3-ply: the
# system python3, not one earlier on PATH.)
for p in "$EEVDF_CACHE"/series/*.patch; do
	(cd "$KSRC" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --quiet "$p") ||
		die "checkpatch: $(basename "$p")"
	note "checkpatch clean: $(basename "$p")"
done

stage "guest programs: eevdf-guest for musl (eevdf-slice, eevdf-waker, ...)"
# The guest tests run them (/eevdf/bin); eevdf-vm copies them from the musl target dir.
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

# Every guest test in one boot of KERNEL at 4 vCPUs, with extra kernel arguments; any
# kernel report (WARN, lockdep, KASAN, UBSAN, VERIFY, ...) fails it. (eevdf-vm runs the
# distro kernels, which patch their text at run time, with single-threaded TCG.) A test
# gets 1200 s: 13-eevdf-cgroups at full load on distro-debug ran past 600 s on this
# machine on a slow day (killed at 610 s in the suite, which took 2306 s against about
# 1050 s the day before; 702 s alone on the idle host), where CI had passed it; a hang
# still ends the test.
# The guests run QEMU's max CPU model without LA57: with 5-level paging, stock 6.12's boot
# CPU identification leaves a window in which an interrupt makes KASAN call a good address
# wild (BUG: KASAN: wild-memory-access in do_raw_spin_lock, under handle_edge_irq, in about
# 1 boot in 50 of distro-debug and of stock under the same checkers, none in 60 without
# LA57: Documentation/reliability.md, the boot storm). It is not the scheduler's, and it
# failed this script's preempt=none suite on 2026-12-04. QEMU takes the last -cpu.
no_la57=(--qemu-arg -cpu --qemu-arg max,la57=off)
export EEVDF_TEST_QEMU_ARGS="${no_la57[*]}"
guest_suite() { # KERNEL KIND TIMEOUT_S APPEND [LOAD_PERCENT [TEST_GLOBS]]
	local tag script
	tag=$(echo "${4:-default}" | tr -c 'a-z0-9=\n' '_')
	script=$KBUILD_ROOT/guest-$1-$tag.sh
	# The suite, then the live oracle's counters over it (VERIFY kernels only).
	cat >"$script" <<-EOF
		eevdf-guest-tests -k $2 -t 1200 -s ${5:-100} ${6:-}; rc=\$?
		f=/sys/kernel/debug/sched/eevdf/verify
		[ -e \$f ] && { echo "VERIFY counters after the suite:"; cat \$f; }
		exit \$rc
	EOF
	# The console of each boot is kept: eevdf-vm quotes only the report's first line.
	mkdir -p "$EEVDF_CACHE/test"
	log=$EEVDF_CACHE/test/$1-$tag.console
	note "console: $log"
	target/release/eevdf-vm --kernel "$1" --cpus 4 --mem-mib 1024 --timeout-s "$3" \
		--append "$4" --log "$log" "${no_la57[@]}" "$script"
}
# A stage run beside the current one (the distro kernels' guests are single-threaded
# TCG: one host core each, so two of them use both cores). Its output goes to a file
# and is printed, with its status, by side_wait.
side_pid=
side_out=$EEVDF_CACHE/test/side.out
side() { # DESCRIPTION FUNCTION [ARGS...]
	local what=$1
	shift
	mkdir -p "$EEVDF_CACHE/test"
	note "[$(($(now) - t0)) s] beside it: $what (output: $side_out)"
	("$@") >"$side_out" 2>&1 &
	side_pid=$!
	side_what=$what
}
# A stage that fails stops the script; the side stage's guests must not outlive it.
kill_tree() { # PID: the process and all its descendants
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill "$1" 2>/dev/null || true
}
trap '[ -z "$side_pid" ] || kill_tree "$side_pid"' EXIT
side_wait() {
	local rc=0
	wait "$side_pid" || rc=$?
	current="$side_what (beside the stage above)"
	step "[$(($(now) - t0)) s] $side_what: its output"
	cat "$side_out"
	side_pid=
	[ "$rc" = 0 ] || die "$side_what failed (exit $rc)"
}
# The kernel users run: Debian's configuration, with KASAN, UBSAN, lockdep and the live
# oracle (CONFIG_SCHED_EEVDF_RUST_VERIFY). One build serves the guest suite in the three
# preemption modes of Debian's PREEMPT_DYNAMIC kernel, the no-panic check and the
# harness self-test.
stage "kernel: distro-debug build (Debian's config + KASAN, UBSAN, lockdep, VERIFY)"
bash tools/build-kernel.sh distro-debug
stage "kernel: no panic path in the project's Rust outside KUnit (the check's canary first), and clippy with the kernel's flags"
bash tools/no-panic.sh --canary
bash tools/no-panic.sh distro-debug
bash tools/kernel-clippy.sh distro-debug
stage "kernel: the editor's view of the glue (tools/rust-analyzer.sh: kernel/rust-project.json, every crate root there)"
bash tools/rust-analyzer.sh distro-debug
# KASAN under single-threaded TCG is slow: the full load once (preempt=full, the fault
# campaign's short form, tests 2?-fault-*, included), then the other tests again at a
# quarter of their loops in the other two modes (eevdf-guest-tests -s; --full runs all
# three at full load on the distro kernel). The long campaign is tools/faults.sh. Each
# guest takes one host core, so the other two modes and the self-test run beside the
# full-load suite, one after another (about 900 s of guests beside its 1200 s).
other_modes() {
	stage "guest: the guest tests but the fault campaign on distro-debug, preempt=voluntary, nohz_full=2-3 (4 vCPUs, 25% load)"
	guest_suite distro-debug debug 1800 "preempt=voluntary nohz_full=2-3" 25 "'0*' '1*' '4*' '99-*'"
	stage "guest: the guest tests but the fault campaign on distro-debug, preempt=none (4 vCPUs, 25% load)"
	guest_suite distro-debug debug 1800 "preempt=none" 25 "'0*' '1*' '4*' '99-*'"
	stage "harness self-test: broken test, kernel WARN, hang and a planted VERIFY bug must fail"
	bash tests/harness/selftest.sh distro-debug
}
side "preempt=voluntary and preempt=none suites, then the harness self-test" other_modes
stage "guest: every guest test on distro-debug, preempt=full (4 vCPUs, KUnit and the fault campaign included)"
guest_suite distro-debug debug 3600 "preempt=full"
side_wait

if [ "$full" = 1 ]; then
	# The rest of the flavours (tools/test.sh --full): the tinyconfig kernels the lab's
	# default pair and the insnprof/stats-cost tools use, and the distro pair without
	# the debug options, as users would boot them.
	for k in rust debug distro; do
		stage "kernel: $k build"
		bash tools/build-kernel.sh "$k"
		bash tools/no-panic.sh "$k"
		bash tools/kernel-clippy.sh "$k"
	done
	stage "guest: every guest test on the rust kernel (4 vCPUs)"
	guest_suite rust rust 900 ""
	stage "guest: every guest test on the debug kernel (4 vCPUs)"
	guest_suite debug debug 900 ""
	for mode in full "voluntary nohz_full=2-3" none; do
		stage "guest: every guest test on the distro kernel, preempt=$mode (4 vCPUs)"
		guest_suite distro rust 900 "preempt=$mode"
	done
	stage "kernel: distro-stock build"
	bash tools/build-kernel.sh distro-stock
	stage "guest: the guest tests that apply to distro-stock (4 vCPUs)"
	guest_suite distro-stock stock 900 ""

	stage "kernel: stock build (CONFIG_SCHED_EEVDF_RUST=n, same tree)"
	bash tools/build-kernel.sh stock
	printf 'eevdf-guest-tests -k stock\n' >"$KBUILD_ROOT/guest-stock.sh"
	target/release/eevdf-vm --kernel stock --cpus 2 --timeout-s 600 "$KBUILD_ROOT/guest-stock.sh"

	stage "lab: eevdf-lab run --smoke on the stock kernel (one boot, every experiment)"
	# The lab's planning, parsers and statistics have unit tests (cargo test above); this
	# checks the guest programs, the protocol and the report end to end.
	cargo build --quiet --release --locked -p eevdf-lab
	target/release/eevdf-lab run --smoke --no-build --kernels stock --out-dir "$KBUILD_ROOT/lab-smoke"
	stage "lab: eevdf-lab seeds --smoke on the stock kernel (one boot a guest shape, perf in one)"
	bash tools/build-perf.sh
	target/release/eevdf-lab seeds --smoke --no-build --kernels stock --out-dir "$KBUILD_ROOT/lab-smoke"
	stage "lab: eevdf-lab next --smoke on the rust kernel (one short pair a feature, one boot)"
	target/release/eevdf-lab next --smoke --no-build --kernels rust --out-dir "$KBUILD_ROOT/lab-smoke"

	# Build-only: the glue builds without SMP, SCHED_DEBUG or FAIR_GROUP_SCHED, as the
	# C core does (kernel/configs/nosmp.config, nodebug.config, nogroup.config).
	for k in rust-nosmp rust-nodebug rust-nogroup; do
		stage "kernel: $k build (build only)"
		bash tools/build-kernel.sh "$k"
		bash tools/no-panic.sh "$k"
		bash tools/kernel-clippy.sh "$k"
	done
fi


stage "all tests passed"
