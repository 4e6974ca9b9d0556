#!/bin/sh
# Two CPU hogs on one CPU at nice -4 and 0 share about 70/30 (weights 2501 and
# 1024: 0.709), with ELIGIBLE on and, on the Rust kernel, off (EVDF).
. "$(dirname "$0")/lib/common.sh"
f=/sys/kernel/debug/sched/features
share() {
	taskset 0x1 sh -c 'while :; do :; done' &
	a=$!
	renice -n -4 -p $a >/dev/null
	taskset 0x1 sh -c 'while :; do :; done' &
	b=$!
	sleep 1
	ua0=$(cut -d' ' -f14 /proc/$a/stat); ub0=$(cut -d' ' -f14 /proc/$b/stat)
	sleep 4
	ua1=$(cut -d' ' -f14 /proc/$a/stat); ub1=$(cut -d' ' -f14 /proc/$b/stat)
	kill $a $b; wait $a $b 2>/dev/null
	da=$((ua1 - ua0)); db=$((ub1 - ub0))
	pm=$((da * 1000 / (da + db)))
	echo "$1: nice -4 got $da ticks, nice 0 got $db ticks: share ${pm}/1000"
	[ $pm -ge 640 ] && [ $pm -le 780 ]
}
ok=0
share ELIGIBLE || ok=1
if [ "$EEVDF_KERNEL" != stock ]; then
	echo NO_ELIGIBLE >$f
	share NO_ELIGIBLE || ok=1
	echo ELIGIBLE >$f
fi
exit $ok
