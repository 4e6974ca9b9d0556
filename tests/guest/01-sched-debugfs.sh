#!/bin/sh
# /sys/kernel/debug/sched/features lists the EEVDF features, a toggle takes
# effect and can be undone, and a bad name is refused without changing anything.
. "$(dirname "$0")/lib/common.sh"
set -e
f=/sys/kernel/debug/sched/features
before=$(cat $f)
for feat in PLACE_LAG RUN_TO_PARITY PREEMPT_SHORT DELAY_DEQUEUE; do
	echo "$before" | grep -qw "$feat" || { echo "$feat missing from: $before"; exit 1; }
done
echo NO_RUN_TO_PARITY >$f
grep -qw NO_RUN_TO_PARITY $f
echo RUN_TO_PARITY >$f
[ "$(cat $f)" = "$before" ]
if echo NO_SUCH_FEATURE >$f 2>/dev/null; then echo "a bad name was accepted"; exit 1; fi
[ "$(cat $f)" = "$before" ]
cat /sys/kernel/debug/sched/base_slice_ns >/dev/null
