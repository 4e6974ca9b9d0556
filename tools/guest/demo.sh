#!/bin/sh
# The default demo, run inside the guest by tools/demo.sh (under icount: guest time counts
# instructions, so the two cyclictest runs below differ by what the scheduler did, not by
# what the host did).
echo "kernel:     $(uname -r) ($(grep -c ^processor /proc/cpuinfo) CPUs)"
echo "features:   $(cat /sys/kernel/debug/sched/features)"
base=$(cat /sys/kernel/debug/sched/base_slice_ns)
echo "base slice: $base ns"
echo "hackbench:  $(hackbench -g 4 -l 200 | grep '^Time') s  (hackbench -g 4 -l 200)"

# The slice's effect (seed 000's claim): the same cyclictest at the base slice and
# at a short one, each time pinned to CPU 0 beside two nice-0 hogs pinned there at the base
# slice. Inside its share (a third of the CPU) a wakeup with a shorter slice than the
# running hog's, and an earlier deadline, preempts it at once (PREEMPT_SHORT); at the same
# slice it waits until the hog has run out its protected slice (RUN_TO_PARITY). On an idle
# CPU the slice decides nothing. The hogs are started here, so they keep this shell's base
# slice: only cyclictest runs under eevdfctl run, whose slice its threads inherit.
short=100000
hogs=
cleanup() {
	[ -z "$hogs" ] && return
	# shellcheck disable=SC2086 # a list of pids
	kill $hogs 2>/dev/null
	# shellcheck disable=SC2086
	wait $hogs 2>/dev/null
	hogs=
}
trap cleanup EXIT
for _ in 1 2; do
	taskset 0x1 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
sleep 0.2
for h in $hogs; do
	echo "hog:        $(/eevdf/bin/eevdfctl slice get "$h") (pinned to CPU 0)"
done
# ct LABEL [eevdfctl run --slice-ns N --]: one cyclictest run on CPU 0, its measuring
# thread's policy and slice read back while it runs (the thread that is not the main one;
# eevdfctl run execs cyclictest, so the pid is cyclictest's); sets $avg and $max.
# --policy=other and no -p: any -p (even -p 0) makes cyclictest SCHED_FIFO (priority 2).
ct() {
	echo "cyclictest: (cyclictest -q -m -t 1 -a 0 --policy=other -i 1000 -l 2000, SCHED_OTHER, $1, latencies in us)"
	shift
	"$@" cyclictest -q -m -t 1 -a 0 --policy=other -i 1000 -l 2000 >/tmp/demo-ct.out 2>&1 &
	pid=$!
	tid=""
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.1
		for t in "/proc/$pid/task/"*; do
			[ "${t##*/}" != "$pid" ] && [ -e "$t" ] && tid=${t##*/}
		done
		[ -n "$tid" ] && break
	done
	[ -n "$tid" ] && echo "            thread: $(/eevdf/bin/eevdfctl slice get "$tid" 2>&1)"
	wait $pid
	sed 's/^/            /' /tmp/demo-ct.out
	avg=$(sed -n 's/.*Avg: *\([0-9][0-9]*\).*/\1/p' /tmp/demo-ct.out | head -1)
	max=$(sed -n 's/.*Max: *\([0-9][0-9]*\).*/\1/p' /tmp/demo-ct.out | head -1)
}
ct "base slice $base ns, beside the hogs"
base_avg=$avg base_max=$max
ct "slice $short ns under eevdfctl run --slice-ns $short, beside the hogs" \
	/eevdf/bin/eevdfctl run --slice-ns $short --
short_avg=$avg short_max=$max
cleanup
if [ -z "$base_avg" ] || [ -z "$short_avg" ]; then
	echo "slice:      no comparison (a cyclictest run printed no summary)"
	exit 1
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo "slice:      $short ns against the base slice beside two hogs: average $short_avg against" \
	"$base_avg us (ratio $(ratio "$short_avg" "$base_avg")), maximum $short_max against" \
	"$base_max us (ratio $(ratio "$short_max" "$base_max"))"
if [ "$short_avg" -lt "$base_avg" ]; then
	echo "            the short slice's wakeups are sooner on average, as seed 000 claims: with an earlier" \
		"deadline a woken cyclictest preempts the running hog (PREEMPT_SHORT) instead of" \
		"waiting out its protected slice (RUN_TO_PARITY)"
else
	feats=$(cat /sys/kernel/debug/sched/features)
	case " $feats " in
	*" NO_PREEMPT_SHORT "* | *" NO_RUN_TO_PARITY "*)
		why="PREEMPT_SHORT or RUN_TO_PARITY is off (see the features above): without the one a short slice preempts no sooner, without the other the base slice waits for no protected slice" ;;
	*)
		why="one pair of runs: eevdf-lab's in-share latency cells (eevdf-lab run --only latency) measure the same with intervals over many runs" ;;
	esac
	echo "            the short slice's wakeups are not sooner on average in this run: $why"
fi
