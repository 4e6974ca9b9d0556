#!/bin/sh
# The counters in /sys/kernel/debug/sched/eevdf/stats respond as predicted to
# scenarios built to trigger each of them, and stay at zero when the feature
# that causes them is off (the counters are machine-wide, so "off" is a strong
# prediction: nothing anywhere may count it).
#
#   picks_ineligible_earliest  hogs with 100 us and base slices on one CPU: the
#                              short one runs ahead of V with the earlier
#                              deadline. > 0 with ELIGIBLE, = 0 with NO_ELIGIBLE.
#   wakeup_parity_held         a 1 ms periodic waker with a 100 us slice against a
#   picks_parity               hog on its CPU, PREEMPT_SHORT and PLACE_LAG off
#                              (see below): held > 0 with
#   preempt_deadline           RUN_TO_PARITY; held and picks_parity = 0 and
#                              preempt_deadline > 0 with NO_RUN_TO_PARITY.
#   preempt_short              the waker with a 100 us slice against the hog:
#                              > 0 with PREEMPT_SHORT, = 0 with NO_PREEMPT_SHORT.
#   place_initial              100 forks: >= 100.
#   reweights                  20 renices of a hog: >= 20.
#   slice_expired, picks       a hog for a second: > 0.
#   pick_fast, pick_shortcut,  they sum to picks; 8 tasks yielding on CPU 0:
#   pick_descent               uniform: pick_fast > half the picks; nice -10..10:
#                              pick_descent > half; slices 100 us..100 ms:
#                              pick_shortcut > 0 and pick_descent > 0.
#   protect_expired            the two hogs with RUN_TO_PARITY_MIN_SLICE: the
#                              base-slice hog is protected for the other's 100 us,
#                              then rescheduled while still eligible: > 0; = 0
#                              without the feature.
#   protect_restored           100 renices of the base-slice hog against the 100 us
#                              one, with RUN_TO_PARITY_MIN_SLICE and PROTECT_AT_PICK:
#                              its ended window is kept ended: > 0; = 0 without.
#   protect_shrunk             = 0 without RUN_TO_PARITY_MIN_SLICE.
#   buddy_set, preempt_buddy,  NEXT_BUDDY_EEVDF and NEXT_BUDDY: the 1 ms waker
#   picks_buddy                (base slice) against the hog becomes the buddy and
#                              preempts it: > 0; every NEXT_BUDDY_EEVDF counter
#                              = 0 while it is off.
#   wakeup_sync_none           the same, a pipe ping-pong on CPU 0 (WF_SYNC): > 0.
#   wakeup_fork_delayed        the same, 100 forks on CPU 0: > 0.
#   (all)                      nothing counts while schedstats are off.
# The test starts from whatever features are set (the suite may run with upstream's
# later features on) and restores them.
. "$(dirname "$0")/lib/common.sh"
[ "$EEVDF_KERNEL" = stock ] && { echo "stock kernel: no eevdf counters"; exit 77; }
s=/sys/kernel/debug/sched/eevdf/stats
f=/sys/kernel/debug/sched/features
[ -r $s ] || { echo "no $s (CONFIG_SCHED_EEVDF_RUST_STATS=n?)"; exit 77; }
start=$(cat $f)
restore() { for x in $start; do echo $x >$f; done; }
on_fail() {
	cat /tmp/counts
	restore
}
is_on() { echo " $(cat $f) " | grep -q " $1 "; }
col() { eevdfctl stats --from /tmp/counts --get "$1"; } # the window's "all" value of counter $1
window() { # window SETUP-FUNCTION: reset, run it, read the counts
	echo 0 >$s
	"$@"
	cat $s >/tmp/counts
}
expect() { # expect NAME OP N (OP: gt, eq or ge)
	v=$(col "$1")
	[ -n "$v" ] || fail "no counter $1"
	if [ "$v" -"$2" "$3" ]; then echo "  $1 = $v ($2 $3): ok"; else fail "$1 = $v, expected $2 $3"; fi
}
hog() { taskset 0x1 sh -c 'while :; do :; done' & }

two_slices() {
	hog; a=$!
	hog; b=$!
	eevdf-slice set $a 100000 >/dev/null || fail "eevdf-slice set"
	sleep 2
	kill $a $b; wait $a $b 2>/dev/null
}
waker_vs_hog() { # waker_vs_hog SLICE_US
	hog; a=$!
	sleep 0.2
	eevdf-waker --cpu 0 --interval-us 1000 --slice-us "$1" --duration-ms 1500 >/dev/null ||
		fail "eevdf-waker"
	kill $a; wait $a 2>/dev/null
}
forks() {
	i=0
	while [ $i -lt 100 ]; do /bin/true; i=$((i + 1)); done
}
forks_cpu0() { taskset 0x1 sh -c 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i + 1)); done'; }
pingpong() { eevdf-pingpong --cpu 0 --duration-ms 300 >/dev/null || fail "eevdf-pingpong"; }
buddy_counters="picks_buddy preempt_buddy wakeup_sync_resched wakeup_sync_none wakeup_fork_delayed buddy_set buddy_kept"
renices() {
	hog; a=$!
	i=0
	# busybox renice -n is relative: +5, -5, +5...
	while [ $i -lt 20 ]; do renice -n $((5 - i % 2 * 10)) -p $a >/dev/null; i=$((i + 1)); done
	kill $a; wait $a 2>/dev/null
}
one_hog() {
	hog; a=$!
	sleep 1
	kill $a; wait $a 2>/dev/null
}

# The counters count only while schedstats are enabled.
ss=/proc/sys/kernel/sched_schedstats
echo 0 >$ss
echo "schedstats off:"
window two_slices
for c in picks picks_ineligible_earliest wakeups slice_expired; do expect $c eq 0; done
echo 1 >$ss

echo "ELIGIBLE:"
window two_slices
expect picks_ineligible_earliest gt 0
echo NO_ELIGIBLE >$f
echo "NO_ELIGIBLE:"
window two_slices
echo ELIGIBLE >$f
expect picks_ineligible_earliest eq 0

# A waker that comes back with positive lag pulls V below the hog, which is then
# not eligible and is preempted whatever RUN_TO_PARITY says. Placed at V
# (NO_PLACE_LAG) the hog stays eligible, and the short waker's earlier deadline
# either waits for the hog's protected slice (RUN_TO_PARITY) or preempts at once;
# PREEMPT_SHORT, off here, would cancel the protection.
echo NO_PLACE_LAG >$f
echo NO_PREEMPT_SHORT >$f
echo "RUN_TO_PARITY (NO_PLACE_LAG NO_PREEMPT_SHORT):"
window waker_vs_hog 100
expect wakeup_parity_held gt 0
expect wakeups gt 0
echo NO_RUN_TO_PARITY >$f
echo "NO_RUN_TO_PARITY (NO_PLACE_LAG NO_PREEMPT_SHORT):"
window waker_vs_hog 100
echo RUN_TO_PARITY >$f
echo PREEMPT_SHORT >$f
echo PLACE_LAG >$f
expect preempt_deadline gt 0
if is_on RUN_TO_PARITY_MIN_SLICE; then
	# 6.17 protects for min(normalized base slice, slice) without RUN_TO_PARITY too.
	echo "  (RUN_TO_PARITY_MIN_SLICE: NO_RUN_TO_PARITY still protects a base slice)"
else
	expect wakeup_parity_held eq 0
	expect picks_parity eq 0
fi

echo "PREEMPT_SHORT:"
window waker_vs_hog 100
expect preempt_short gt 0
echo NO_PREEMPT_SHORT >$f
echo "NO_PREEMPT_SHORT:"
window waker_vs_hog 100
echo PREEMPT_SHORT >$f
expect preempt_short eq 0

echo "forks:"
window forks
expect place_initial ge 100
echo "renices:"
window renices
expect reweights ge 20
echo "one hog:"
window one_hog
expect slice_expired gt 0
expect picks gt 0

# The pick's paths: every pick takes one (pick_fast is what the other two leave), and the
# mix of 8 tasks yielding on CPU 0 decides which. Uniform: the leftmost holds the earliest
# deadline (6.12's O(1) case too). Nice -10..10: deadlines advance at different rates, so
# the earliest is rarely the leftmost's, and sched_yield() moves a deadline a slice on
# while the vruntime hardly moves, so deadlines run far ahead of V and the shortcut's test
# (the earliest deadline eligible as a vruntime) fails: the pick descends. Slices 100
# us..100 ms: a short slice's deadline stays near its vruntime, so the earliest deadline
# is often below V (the shortcut: 57% of the picks on a tiny kernel, 1 vCPU), and often
# not eligible (the descent: 39%; tools/guest/pick-paths.sh).
yielders() { # yielders MIX
	eevdf-scale --cpu 0 --tasks 8 --mix "$1" --warmup-ms 50 --duration-ms 400 >/dev/null ||
		fail "eevdf-scale --mix $1"
}
paths_add_up() {
	p=$(col picks)
	sum=$(($(col pick_fast) + $(col pick_shortcut) + $(col pick_descent)))
	[ "$sum" -eq "$p" ] || fail "pick_fast + pick_shortcut + pick_descent = $sum, picks = $p"
	echo "  pick paths sum to picks ($p): ok"
}
paths_add_up
for mix in uniform weights slices; do
	echo "8 yielding tasks, $mix:"
	window yielders $mix
	paths_add_up
	case $mix in
	uniform) expect pick_fast gt $(($(col picks) / 2)) ;;
	weights) expect pick_descent gt $(($(col picks) / 2)) ;;
	slices)
		expect pick_shortcut gt 0
		expect pick_descent gt 0
		;;
	esac
done

# Upstream's later slice protection (6.17, 7.0).
short_vs_renices() { # the base-slice hog reniced 0 <-> 1 while the 100 us one waits
	hog; a=$!
	hog; b=$!
	eevdf-slice set $a 100000 >/dev/null || fail "eevdf-slice set"
	sleep 0.2
	i=0
	while [ $i -lt 100 ]; do renice -n $((1 - i % 2 * 2)) -p $b >/dev/null; i=$((i + 1)); done
	kill $a $b; wait $a $b 2>/dev/null
}
echo NO_RUN_TO_PARITY_MIN_SLICE >$f
echo NO_PROTECT_AT_PICK >$f
echo "6.12's slice protection:"
window two_slices
expect protect_expired eq 0
window short_vs_renices
expect protect_restored eq 0
expect protect_shrunk eq 0
echo RUN_TO_PARITY_MIN_SLICE >$f
echo "RUN_TO_PARITY_MIN_SLICE:"
window two_slices
expect protect_expired gt 0
echo PROTECT_AT_PICK >$f
echo "RUN_TO_PARITY_MIN_SLICE PROTECT_AT_PICK:"
window short_vs_renices
expect protect_restored gt 0
restore

# NEXT_BUDDY_EEVDF is off: none of its counters moved in the windows above.
for c in $buddy_counters; do expect $c eq 0; done

echo "NEXT_BUDDY_EEVDF NEXT_BUDDY:"
echo NEXT_BUDDY_EEVDF >$f
echo NEXT_BUDDY >$f
window waker_vs_hog 0
expect buddy_set gt 0
expect preempt_buddy gt 0
expect picks_buddy gt 0
echo "NEXT_BUDDY_EEVDF NEXT_BUDDY, pipe ping-pong:"
window pingpong
expect wakeup_sync_none gt 0
echo "NEXT_BUDDY_EEVDF NEXT_BUDDY, forks on CPU 0:"
window forks_cpu0
expect wakeup_fork_delayed gt 0
echo NO_NEXT_BUDDY >$f
echo NO_NEXT_BUDDY_EEVDF >$f
echo "NO_NEXT_BUDDY_EEVDF:"
window waker_vs_hog 0
for c in $buddy_counters; do expect $c eq 0; done
restore
echo ok
