#!/bin/sh
# hackbench in processes and threads, over pipes and sockets, then a fork and
# exit storm: the fair class's enqueue/dequeue/pick/wakeup paths under load.
set -e
for mode in "" "-T"; do
	for ipc in "" "-p"; do
		out=$(hackbench $mode $ipc -g 4 -l 100)
		echo "hackbench $mode $ipc: $(echo "$out" | grep Time)"
		echo "$out" | grep -q '^Time: [0-9]'
	done
done
# fork/exit storm
i=0
while [ $i -lt 400 ]; do
	true &
	i=$((i + 1))
done
wait
echo "fork/exit storm done"
