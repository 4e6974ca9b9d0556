#!/bin/sh
# eevdf-waker's load runs at the slice it is given, not the waker's. 6.12 keeps a
# task's custom slice across fork (unless SCHED_RESET_ON_FORK), so the waker sets the
# load's slice in the child before its exec, and reads back, while the load runs, the policy,
# nice value and se.slice of itself and of the load from /proc/PID/sched (the lab fails a
# latency cell whose read-back differs from its plan). A 100 us waker beside eevdf-share's
# two hogs on CPU 0: the waker must read back 100000 ns and every load task read back
# (eevdf-share and its hogs) the base slice; with --load-slice-base-x 2, twice that.
. "$(dirname "$0")/lib/common.sh"
base=$(cat /sys/kernel/debug/sched/base_slice_ns)
cleanup() { killall -q -KILL eevdf-share 2>/dev/null; }
trap cleanup EXIT
check() { # check LOAD_X WANT_LOAD_NS
	# The read-back waits until the load has three processes, eevdf-share and its two
	# hogs: a guest slowed down by its host (TCG's clock is the host's; KASAN under
	# single-threaded TCG at 4 vCPUs) may start eevdf-share late, so the waker tries every
	# 50 ms from 200 ms on. eevdf-share keeps its hogs for its warm-up and duration after
	# forking them, 4.1 s: with 1.1 s, on an overloaded host (two more guests and builds
	# beside the KASAN suites) no try saw all three once, and the last saw one.
	out=$(eevdf-waker --cpu 0 --slice-us 100 --load-slice-base-x "$1" --readback-after-ms 200 \
		--readback-load-procs 3 --duration-ms 60000 -- \
		eevdf-share --cpu 0 --warmup-ms 100 --duration-ms 4000 --hog 0 --hog 0 2>&1) ||
		fail "eevdf-waker --load-slice-base-x $1 failed: $out"
	echo "load ${1}x:"
	echo "$out" | grep -E '^eevdf-waker: (read back|the load had)' | sed 's/^/  /'
	n=$(echo "$out" | grep -c '^eevdf-waker: read back load ')
	echo "$out" | grep -q '^eevdf-waker: read back waker pid [0-9]* (eevdf-waker): other nice 0 slice 100000 ns$' ||
		fail "load ${1}x: the waker did not read back other nice 0 slice 100000 ns"
	[ "$n" -ge 3 ] || fail "load ${1}x: $n load tasks read back, want eevdf-share and its two hogs"
	bad=$(echo "$out" | grep '^eevdf-waker: read back load ' | grep -v ": other nice 0 slice $2 ns\$")
	[ -z "$bad" ] || fail "load ${1}x: want other nice 0 slice $2 ns, read back: $bad"
}
check 1 "$base"
check 2 $((2 * base))
echo "the load ran at the slice it was given, the waker at its own"
