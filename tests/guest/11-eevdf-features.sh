#!/bin/sh
# The EEVDF features in /sys/kernel/debug/sched/features: ELIGIBLE (on),
# BIAS_ELIGIBLE (off) and upstream's post-6.12 ones (off) are listed, a bad name
# is refused with EINVAL and changes nothing, and every EEVDF feature (6.12's
# NEXT_BUDDY and PICK_BUDDY, which NEXT_BUDDY_EEVDF reads, included) toggles
# hundreds of times under hackbench.
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the loops to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
f=/sys/kernel/debug/sched/features
[ "$EEVDF_KERNEL" = stock ] && exit 77
set -e
feats="ELIGIBLE BIAS_ELIGIBLE RUN_TO_PARITY PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE PREEMPT_SHORT DELAY_DEQUEUE DELAY_ZERO
	RUN_TO_PARITY_MIN_SLICE LAG_CLAMP_MAX_SLICE NEXT_BUDDY_EEVDF PROTECT_AT_PICK NEXT_BUDDY PICK_BUDDY"
before=$(cat $f)
echo "$before"
echo " $before " | grep -q ' ELIGIBLE '
echo " $before " | grep -q ' NO_BIAS_ELIGIBLE '
for x in RUN_TO_PARITY_MIN_SLICE LAG_CLAMP_MAX_SLICE NEXT_BUDDY_EEVDF PROTECT_AT_PICK; do
	echo " $before " | grep -q " NO_$x "
done
# A bad name: EINVAL, nothing changed.
if err=$(echo NO_SUCH_FEATURE 2>&1 >$f); then
	echo "bad name accepted"; exit 1
fi
echo "bad name refused: $err"
echo "$err" | grep -qi 'invalid argument'
[ "$(cat $f)" = "$before" ]
# Toggle every feature while hackbench runs.
hackbench -g 2 -l "$(scaled 500 50)" >/tmp/hb.out 2>&1 &
hb=$!
n=0
rounds=$(scaled 150 15)
while [ $n -lt "$rounds" ]; do
	for x in $feats; do
		echo "NO_$x" >$f
		echo "$x" >$f
	done
	n=$((n + 1))
done
echo BIAS_ELIGIBLE >$f
echo NO_ELIGIBLE >$f
sleep 1
# Back to the defaults: the loop left every feature on.
for x in $before; do echo "$x" >$f; done
wait $hb
grep Time /tmp/hb.out
echo "toggled $(echo $feats | wc -w) features $n times each (on and off)"
# defaults restored
[ "$(cat $f)" = "$before" ]
