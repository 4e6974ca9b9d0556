#!/usr/bin/env bash
# The harness must fail when it should. Boots of a debug kernel ($1, default debug):
#   1. a deliberately broken guest test, one that runs a command the guest lacks, and
#      one that leaves a process behind -> the harness reports each, exit != 0;
#   2. a kernel WARN (LKDTM's WARNING trigger) from a script that exits 0 -> 125;
#   3. a guest that never finishes      -> the hard timeout, 124, and its SysRq-t dump
#      (the sleeping task, and the runqueues as /proc/sched_debug shows them);
#   4. with CONFIG_SCHED_EEVDF_RUST_VERIFY: a planted corruption of one augmented value
#      (min_deadline) -> the live oracle WARNs naming the invariant, 125.
source "$(dirname "$0")/../../tools/lib.sh"
kernel=${1:-debug}
vm=$EEVDF_REPO/target/release/eevdf-vm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # name want got
	if [ "$2" = "$3" ]; then echo "ok - harness: $1 (exit $3)"; else
		echo "not ok - harness: $1 (exit $3, expected $2); the run's last lines:"
		tail -n 40 "$tmp/out" | sed 's/^/#   /'
		fails=$((fails + 1)); fi
}

cat >"$tmp/broken.sh" <<'G'
mkdir -p /tmp/t
printf '#!/bin/sh\necho this test is broken on purpose\nexit 3\n' >/tmp/t/broken.sh
printf '#!/bin/sh\nexit 0\n' >/tmp/t/fine.sh
printf '#!/bin/sh\nno-such-command-here\nexit 0\n' >/tmp/t/lacks.sh
printf '#!/bin/sh\nsleep 1000 &\nexit 0\n' >/tmp/t/leaves.sh
chmod +x /tmp/t/*.sh
printf '#!/bin/sh\nexit 0\n' >/tmp/t/mode.sh
EEVDF_TESTS=/tmp/t eevdf-guest-tests
G
# Boot the debug kernel on a script; the runner's exit status goes to $rc.
boot() { # timeout_s script
	rc=0
	# EEVDF_TEST_QEMU_ARGS, unquoted: tools/test.sh's words for QEMU (LA57 off).
	"$vm" --kernel "$kernel" --timeout-s "$1" ${EEVDF_TEST_QEMU_ARGS:-} "$2" >"$tmp/out" 2>&1 || rc=$?
}

boot 120 "$tmp/broken.sh"
grep -q '^not ok 1 - broken' "$tmp/out" && grep -q '^ok 2 - fine' "$tmp/out" &&
	grep -q '^not ok 3 - lacks (ran a command the guest lacks' "$tmp/out" &&
	grep -q '^not ok 4 - leaves (left processes behind' "$tmp/out" &&
	grep -q '^not ok 5 - mode (not executable' "$tmp/out" &&
	grep -q '^1 passed, 4 failed' "$tmp/out" || rc="no-report:$rc"
expect "a broken test, a missing command, a leftover process and a test that is not executable fail the run" 1 "$rc"

printf 'echo WARNING >/sys/kernel/debug/provoke-crash/DIRECT\nexit 0\n' >"$tmp/warn.sh"
boot 120 "$tmp/warn.sh"
expect "a kernel WARNING fails the run" 125 "$rc"

printf 'sleep 100000\n' >"$tmp/hang.sh"
boot 25 "$tmp/hang.sh"
grep -q 'sysrq: Show State' "$tmp/out" && grep -q 'task:sleep ' "$tmp/out" &&
	grep -q 'Sched Debug Version' "$tmp/out" && grep -q 'runnable tasks:' "$tmp/out" &&
	grep -q 'SysRq-t dump, [0-9]* lines' "$tmp/out" ||
	rc="no-sysrq-dump:$rc"
expect "a hung guest hits the hard timeout and is dumped (SysRq-t: tasks and runqueues)" 124 "$rc"
if grep -q '^CONFIG_SCHED_EEVDF_RUST_VERIFY=y' "$KBUILD_ROOT/$kernel/.config"; then
	cat >"$tmp/plant.sh" <<'G'
echo 'corrupt min_deadline' >/sys/kernel/debug/sched/eevdf/verify
hackbench -g 1 -l 20 >/dev/null
exit 0
G
	boot 120 "$tmp/plant.sh"
	grep -q 'VERIFY: min_deadline diverged after' "$tmp/out" || rc="no-warn-naming-min_deadline:$rc"
	expect "a planted min_deadline corruption is caught by VERIFY" 125 "$rc"
fi
[ "$fails" = 0 ]
