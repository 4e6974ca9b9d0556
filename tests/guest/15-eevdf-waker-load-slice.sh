#!/bin/sh
# eevdf-waker's load runs at the slice it is given, not the waker's (issue 29). 6.12 keeps a
# task's custom slice across fork (unless SCHED_RESET_ON_FORK), so the waker sets the
# load's slice in the child before its exec, and reads back, while the load runs, the policy,
# nice value and se.slice of itself and of the load from /proc/PID/sched (the lab fails a
# latency cell whose read-back differs from its plan). A 100 us waker beside eevdf-share's
# two hogs on CPU 0: the waker must read back 100000 ns and every load task read back
# (eevdf-share and its hogs) the base slice; with --load-slice-base-x 2, twice that.
base=$(cat /sys/kernel/debug/sched/base_slice_ns)
cleanup() { killall -q -KILL eevdf-share 2>/dev/null; }
trap cleanup EXIT
fail() {
	echo "$*"
	exit 1
}
check() { # check LOAD_X WANT_LOAD_NS
	# The read-back at 200 ms, when eevdf-share (warm-up 100 ms) has forked its hogs on
	# an unloaded guest; a guest slowed down by its host (TCG's clock is the host's) may not
	# have forked them by then: the count is a matter of time, so it is tried again later,
	# with the load living past the read-back. A wrong slice fails at once.
	for at in 200 1000 3000; do
		out=$(eevdf-waker --cpu 0 --slice-us 100 --load-slice-base-x "$1" --readback-after-ms $at \
			--duration-ms 20000 -- eevdf-share --cpu 0 --warmup-ms 100 \
			--duration-ms $((at + 300)) --hog 0 --hog 0) ||
			fail "eevdf-waker --load-slice-base-x $1 failed: $out"
		n=$(echo "$out" | grep -c '^eevdf-waker: read back load ')
		[ "$n" -ge 2 ] && break
		echo "load ${1}x: $n load tasks read back at $at ms, trying later"
	done
	echo "load ${1}x (read back at $at ms):"
	echo "$out" | grep '^eevdf-waker: read back' | sed 's/^/  /'
	echo "$out" | grep -q '^eevdf-waker: read back waker pid [0-9]* (eevdf-waker): other nice 0 slice 100000 ns$' ||
		fail "load ${1}x: the waker did not read back other nice 0 slice 100000 ns"
	[ "$n" -ge 2 ] || fail "load ${1}x: $n load tasks read back, want eevdf-share and a hog at least"
	bad=$(echo "$out" | grep '^eevdf-waker: read back load ' | grep -v ": other nice 0 slice $2 ns\$")
	[ -z "$bad" ] || fail "load ${1}x: want other nice 0 slice $2 ns, read back: $bad"
}
check 1 "$base"
check 2 $((2 * base))
echo "the load ran at the slice it was given, the waker at its own"
