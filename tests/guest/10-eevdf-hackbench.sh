#!/bin/sh
# hackbench in processes and threads, over pipes and sockets, then a fork and
# exit storm: the fair class's enqueue/dequeue/pick/wakeup paths under load.
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the loops to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
set -e
for mode in "" "-T"; do
	for ipc in "" "-p"; do
		out=$(hackbench $mode $ipc -g 4 -l "$(scaled 100 10)")
		echo "hackbench $mode $ipc: $(echo "$out" | grep Time)"
		echo "$out" | grep -q '^Time: [0-9]'
	done
done
# fork/exit storm
i=0
forks=$(scaled 400 50)
while [ $i -lt "$forks" ]; do
	true &
	i=$((i + 1))
done
wait
echo "fork/exit storm done"
