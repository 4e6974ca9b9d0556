#!/bin/sh
# The live oracle (CONFIG_SCHED_EEVDF_RUST_VERIFY), run last: over the whole suite it
# checked timelines and compared picks and wakeup decisions with the reference on the
# real runqueues, and found no divergence (a divergence also WARNs, which fails the run).
# Its file refuses what it does not understand and changes nothing. Prints the counters,
# so that they are part of the test report.
. "$(dirname "$0")/lib/common.sh"
f=/sys/kernel/debug/sched/eevdf/verify
[ "$EEVDF_KERNEL" = stock ] && { echo "stock kernel: no oracle"; exit 77; }
[ -e "$f" ] || { echo "kernel built without CONFIG_SCHED_EEVDF_RUST_VERIFY"; exit 77; }

# Load of its own, so that the counts below do not depend on which tests ran before.
hackbench -g 2 -l 50 >/dev/null || fail "hackbench"

# Bad writes: each fails with an error and plants nothing (a planted corruption would be
# found by the next check and WARN).
for w in "corrupt" "corrupt min_vruntime" "corrupt min_deadline x" "1" "-1" "x" " 0"; do
	if printf '%s\n' "$w" >"$f" 2>/dev/null; then fail "the write '$w' was accepted"; fi
done
hackbench -g 1 -l 20 >/dev/null || fail "hackbench"

# off/on (what the cost measurement uses) is reported back.
echo off >"$f" || fail "writing off"
grep -qx 'enabled 0' "$f" || fail "off did not show as 'enabled 0'"
echo on >"$f" || fail "writing on"
grep -qx 'enabled 1' "$f" || fail "on did not show as 'enabled 1'"

echo "verify counters after the suite:"
cat "$f"
set -- $(grep '^all ' "$f")
[ $# = 6 ] || fail "no 'all' line of 5 counts"
checks=$2 picks=$3 wakeups=$4 divergences=$5 ties=$6
[ "$checks" -gt 0 ] || fail "no timeline was checked"
[ "$picks" -gt 0 ] || fail "no pick was compared"
[ "$wakeups" -gt 0 ] || fail "no wakeup decision was compared"
[ "$divergences" = 0 ] || fail "$divergences divergences"
echo "checks=$checks picks=$picks wakeups=$wakeups divergences=0 ties=$ties"
