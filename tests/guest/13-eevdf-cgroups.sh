#!/bin/sh
# Nested cgroups with different cpu.weight under load, nice churn on busy
# tasks (running and queued), and tasks moving between policies.
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the loops to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
set -e
cg=/sys/fs/cgroup
mkdir -p $cg
mount -t cgroup2 none $cg 2>/dev/null || true
echo "+cpu" >$cg/cgroup.subtree_control
# cgroup v2 puts tasks only in leaves once a group distributes cpu to its
# children, so the load runs in a/b, a/d and c.
mkdir -p $cg/a/b $cg/a/d $cg/c
echo "+cpu" >$cg/a/cgroup.subtree_control
echo 200 >$cg/a/cpu.weight
echo 50 >$cg/a/b/cpu.weight
echo 300 >$cg/a/d/cpu.weight
echo 100 >$cg/c/cpu.weight
pids=""
for g in a/d a/b c a/b; do
	sh -c "echo \$\$ > $cg/$g/cgroup.procs; exec hackbench -g 1 -l $(scaled 200 20)" >/dev/null &
	pids="$pids $!"
done
hogs=""
for i in 1 2 3 4; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
# nice churn and policy moves on busy tasks. Nice stays within -5..5: a nice -20
# hog against a cpu.weight 50 group is a fair 2% share for that group, which on
# a slow (TCG, debug) guest leaves its tasks preempted inside RCU read-side
# sections for longer than the RCU stall timeout -- on stock 6.12 as well.
k=0
rounds=$(scaled 30 5)
while [ $k -lt "$rounds" ]; do
	for p in $hogs; do
		renice -n $(( (k * 7 + p) % 11 - 5 )) -p $p >/dev/null 2>&1 || true
	done
	set -- $hogs
	eevdf-slice set $1 0 batch
	eevdf-slice set $1 0 other
	eevdf-slice set $2 0 fifo
	eevdf-slice set $2 0 idle
	eevdf-slice set $2 0 other
	eevdf-slice set $3 $(( (k % 10 + 1) * 300000 )) >/dev/null || true
	eevdf-slice set $3 0 >/dev/null || true
	# move a hog between groups
	echo $4 >$cg/a/b/cgroup.procs
	echo $4 >$cg/c/cgroup.procs
	k=$((k + 1))
done
for p in $pids; do wait $p; done
kill $hogs
wait 2>/dev/null || true
echo "cgroups, nice churn and policy moves done"
