#!/bin/sh
# cyclictest in the fair class: `--policy=other` and no `-p` (rt-tests 2.4's `-p`, even
# `-p 0` and even after `--policy=other`, switches the policy to SCHED_FIFO, and a FIFO
# priority of 0 then defaults to 2: the RT class), once with the base slice and once
# under `eevdfctl run --slice-ns`, whose slice cyclictest's thread inherits (its
# sched_setscheduler() keeps a custom slice). While each runs, the measuring thread's
# policy and slice are read back from the kernel: the test fails unless it is
# SCHED_OTHER with the slice the label says.
. "$(dirname "$0")/lib/common.sh"
ctl=/eevdf/bin/eevdfctl
out=/tmp/cyclictest.out
on_fail() {
	[ -s $out ] && sed 's/^/  /' $out
	kill $pid 2>/dev/null
}

# measure LABEL WANT_SLICE_NS CMD...: run CMD (a cyclictest) in the background, check its
# measuring thread (the thread that is not the main one) while it runs, print the summary.
measure() {
	label=$1 want=$2
	shift 2
	"$@" >$out 2>&1 &
	pid=$!
	# `eevdfctl run` execs the command, so $pid becomes cyclictest itself.
	tid=""
	for _ in $(seq 50); do
		sleep 0.1
		for t in /proc/$pid/task/*; do
			[ "${t##*/}" != "$pid" ] && [ -e "$t" ] && tid=${t##*/}
		done
		[ -n "$tid" ] && break
	done
	[ -n "$tid" ] || fail "$label: no measuring thread in cyclictest (pid $pid)"
	$ctl slice get "$tid" >/tmp/slice.out 2>&1 || fail "$label: eevdfctl slice get $tid: $(cat /tmp/slice.out)"
	got=$(cat /tmp/slice.out)
	wait $pid || fail "$label: cyclictest exited $?"
	case "$got" in
	"pid $tid policy other slice_ns $want "*) ;;
	*) fail "$label: the measuring thread is '$got', want policy other, slice_ns $want" ;;
	esac
	grep -q 'P: *0 .*Max: *[0-9]' $out || fail "$label: no summary with P: 0"
	echo "$label: thread $got"
	sed 's/^/  /' $out
}

[ -x $ctl ] || fail "no $ctl"
base=$(cat /sys/kernel/debug/sched/base_slice_ns)
measure "base slice" "$base" cyclictest -q -m -t 1 --policy=other -i 1000 -l 500
measure "slice 500 us" 500000 $ctl run --slice-ns 500000 -- cyclictest -q -m -t 1 --policy=other -i 1000 -l 500
