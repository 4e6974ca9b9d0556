#!/bin/sh
# Fault campaign (Documentation/reliability.md): policies and weights.
# Hogs in every mix of SCHED_OTHER, SCHED_BATCH and SCHED_IDLE and of nice -20..19, four of
# them pinned to CPU 1 (so that one runs and three are queued), the rest free, two in
# cgroups p and q, two in autogroups of their own (setsid), take
#   - a renice storm: every hog gets a new nice each round, the running one and the queued
#     ones alike (reweight of curr and of queued entities);
#   - a policy storm: other <-> batch <-> idle through sched_setattr();
#   - a cpu.weight (1..10000) and cpu.weight.nice storm on p and q, whose hogs share CPU 2
#     (reweight of group entities);
#   - autogroup on and off (/proc/sys/kernel/sched_autogroup_enabled) and writes of the
#     autogroups' nice (/proc/PID/autogroup), where the kernel has them;
#   - hackbench runs at nice -20, nice 19, SCHED_BATCH and SCHED_IDLE.
# The RCU stall timeout goes to its maximum (300 s) meanwhile: a nice 19 or SCHED_IDLE task
# preempted inside an RCU read-side section next to a nice -20 hog waits for the share its
# weight gives it, which under TCG can pass the default 60 s (on stock 6.12 as well).
# Then, with the rest stopped (SIGSTOP), two of the stormed hogs pinned to CPU 3 at nice 0
# and nice 5 must share it as their weights say (1024 : 335, 0.753 +- 0.07): the storms
# left the weights right.
# Passes when every write and call succeeded, every hackbench run and task finished, each
# hog's CPU time (schedstat) is above 0 and at most its age, the share holds and the
# settings are back. Kernel reports fail the run in eevdf-vm. Ends with "tasks:" and
# "faults:" lines, also appended to $EEVDF_FAULTS_LOG (tools/faults.sh sums them).
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the rounds to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
T=/tmp/fault23
cg=/sys/fs/cgroup
G=$cg/fault23
AG=/proc/sys/kernel/sched_autogroup_enabled
RCU=/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout
ncpu=$(grep -c '^processor' /proc/cpuinfo)
[ "$ncpu" -ge 4 ] || { echo "needs 4 CPUs, has $ncpu"; exit 77; }
rm -rf $T && mkdir -p $T
mkfifo $T/fifo
mkdir -p $cg
grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg
echo +cpu >$cg/cgroup.subtree_control 2>/dev/null
rmdir $G/p $G/q $G 2>/dev/null
mkdir $G || { echo "FAIL: cannot make $G"; exit 1; }
echo +cpu >$G/cgroup.subtree_control 2>/dev/null
mkdir $G/p $G/q || { echo "FAIL: cannot make $G/p, $G/q"; exit 1; }
cgw=0
[ -e $G/p/cpu.weight ] && cgw=1
ag0="" rcu0=""
[ -w $AG ] && ag0=$(cat $AG)
if [ -w $RCU ]; then
	rcu0=$(cat $RCU)
	echo 300 >$RCU
	echo "RCU stall timeout $rcu0 s -> $(cat $RCU) s"
fi

renices=0 policies=0 cgweights=0 ag_toggles=0 ag_nice=0 dd=0
started=0 finished=0 stopped=0 collected=0
hbok=0 hbbad=0 pol_ok=0 pol_bad=0 cgw_ok=0 cgw_bad=0 ag_ok=0 ag_bad=0
bg="" hogs="" pinned1="" free="" grp="" aut=""
count() { cat $T/$1 2>/dev/null || echo "0 1"; }
stop_all() {
	[ $stopped = 1 ] && return
	stopped=1
	touch $T/stop
	kill -CONT $hogs 2>/dev/null
	kill $hogs 2>/dev/null
	for p in $hogs; do
		wait $p
		[ $? = 143 ] && finished=$((finished + 1))
	done
	collect
}
# collect: wait for the loops and take their counts (once).
collect() {
	[ $collected = 1 ] && return
	collected=1
	for p in $bg; do wait $p; done
	set -- $(count hb) $(count policy)
	hbok=$1 hbbad=$2 pol_ok=$3 pol_bad=$4
	[ $cgw = 1 ] && set -- $(count cgweight) && cgw_ok=$1 cgw_bad=$2
	[ -n "$ag0" ] && set -- $(count autogroup) && ag_ok=$1 ag_bad=$2
	policies=$(cat $T/policy.n 2>/dev/null || echo 0)
	cgweights=$(cat $T/cgweight.n 2>/dev/null || echo 0)
	set -- $(cat $T/autogroup.n 2>/dev/null || echo 0 0)
	ag_toggles=$1 ag_nice=$2
	started=$((started + (hbok + hbbad) * 10))
	finished=$((finished + hbok * 10))
}
restore() {
	[ -n "$ag0" ] && echo "$ag0" >$AG
	[ -n "$rcu0" ] && echo "$rcu0" >$RCU
	for g in p q; do
		[ -e $G/$g/cgroup.procs ] && kill -9 $(cat $G/$g/cgroup.procs) 2>/dev/null
	done
	wait 2>/dev/null
	for g in $G/p $G/q $G; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -d $g ] || break
			rmdir $g 2>/dev/null || nap 0.1
		done
	done
}
report() {
	{
		echo "tasks: started=$started finished=$finished"
		echo "faults: renice=$renices policy=$policies cgweight=$cgweights autogroup_toggle=$ag_toggles autogroup_nice=$ag_nice hackbench=$hbok"
	} | tee -a "${EEVDF_FAULTS_LOG:-/dev/null}"
}
trap 'stop_all; restore; report' EXIT
# slack and cpu_ok PID...: the CPU-time check (eevdfctl cputime).
. "$(dirname "$0")/lib/faults.sh"
spin='while :; do :; done'

# The hogs. Pinned to CPU 1: nice -20, nice 19, SCHED_IDLE, SCHED_BATCH nice 5.
for i in 1 2 3 4; do
	taskset -c 1 sh -c "$spin" &
	pinned1="$pinned1 $!"
done
set -- $pinned1
renice -20 -p $1 >/dev/null && renice 19 -p $2 >/dev/null || fail "renice"
eevdf-slice set $3 0 idle && eevdf-slice set $4 0 batch && renice 5 -p $4 >/dev/null || fail "policy"
# Free: nice -10, 0, 10 and SCHED_IDLE.
for i in 1 2 3 4; do
	sh -c "$spin" &
	free="$free $!"
done
set -- $free
renice -10 -p $1 >/dev/null && renice 10 -p $3 >/dev/null && eevdf-slice set $4 0 idle || fail "nice/policy"
# p and q, one hog each pinned to CPU 2 and one free.
for g in p q; do
	sh -c "echo \$\$ >$G/$g/cgroup.procs && exec taskset -c 2 sh -c '$spin'" &
	grp="$grp $!"
	sh -c "echo \$\$ >$G/$g/cgroup.procs && exec sh -c '$spin'" &
	grp="$grp $!"
done
# Two autogroups of their own (a new session each), in the root cgroup.
if [ -n "$ag0" ]; then
	for i in 1 2; do
		setsid sh -c "$spin" &
		aut="$aut $!"
	done
fi
hogs="$pinned1 $free $grp $aut"
started=$(echo $hogs | wc -w)

loop() {
	name=$1
	shift
	ok=0 bad=0
	while [ ! -e $T/stop ]; do
		if "$@"; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	done
	echo "$ok $bad" >$T/$name
}
# hackbench at nice -20, nice 19, SCHED_BATCH and SCHED_IDLE in turn.
h=0
hb() {
	h=$((h + 1))
	case $((h % 4)) in
	0) set -- "renice -20 -p \$\$" ;;
	1) set -- "renice 19 -p \$\$" ;;
	2) set -- "eevdf-slice set \$\$ 0 batch" ;;
	3) set -- "eevdf-slice set \$\$ 0 idle" ;;
	esac
	sh -c "$1 >/dev/null && exec hackbench -g 1 -f 5 -l 5" >/dev/null 2>&1
}
# Policy storm on the free hogs and one pinned one (a queued or running entity on CPU 1):
# idle, batch, other in turn. The counts go to $T/policy.n.
np=0
policy() {
	set -- $free
	for p in "$@" $(echo $pinned1 | cut -d' ' -f2); do
		case $(((np + p) % 3)) in
		0) pol=idle ;;
		1) pol=batch ;;
		2) pol=other ;;
		esac
		eevdf-slice set "$p" $((np % 4 * 1000000)) $pol || return 1
		np=$((np + 1))
	done
	echo $np >$T/policy.n
	nap 0.1
}
# cpu.weight and cpu.weight.nice storm on p and q.
nw=0
cgweight() {
	for w in 1 10000 100 1 5000 50 10000 10; do
		echo $w >$G/p/cpu.weight || return 1
		echo $((10001 - w)) >$G/q/cpu.weight || return 1
		nw=$((nw + 2))
	done
	for n in -20 19 0 -5 10; do
		echo $n >$G/p/cpu.weight.nice || return 1
		echo $((0 - n / 2)) >$G/q/cpu.weight.nice || return 1
		nw=$((nw + 2))
	done
	echo $nw >$T/cgweight.n
	nap 0.1
}
# Autogroup off and on, and the autogroups' nice.
na=0 nn=0
autogroup() {
	echo 0 >$AG || return 1
	nap 0.1
	echo 1 >$AG || return 1
	na=$((na + 2))
	for p in $aut; do
		echo $(((na * 7 + p) % 40 - 20)) >/proc/$p/autogroup || return 1
		nn=$((nn + 1))
	done
	echo "$na $nn" >$T/autogroup.n
	nap 0.1
}
loop hb hb &
bg="$bg $!"
loop policy policy &
bg="$bg $!"
[ $cgw = 1 ] && { loop cgweight cgweight & bg="$bg $!"; }
[ -n "$ag0" ] && { loop autogroup autogroup & bg="$bg $!"; }

# The renice storm: every hog gets a new nice each round, -20..19 (a SCHED_IDLE hog keeps
# its weight, but the nice is stored and checked).
# The rounds' shell runs at nice -20: at nice 0 among nice -20 hogs a round of renices took
# 25 s (preempt=voluntary nohz_full=2-3).
renice -20 -p $$ >/dev/null || fail "renice -20 of the test's shell"
rounds=$(scaled 8 3)
k=0
t0=$(cut -d' ' -f1 /proc/uptime)
while [ $k -lt "$rounds" ]; do
	i=0
	for p in $hogs; do
		renice $(((k * 7 + i * 13) % 40 - 20)) -p $p >/dev/null || fail "renice $p"
		renices=$((renices + 1))
		i=$((i + 1))
	done
	k=$((k + 1))
done
t1=$(cut -d' ' -f1 /proc/uptime)
echo "$k renice rounds in $(awk "BEGIN { print $t1 - $t0 }") s"
cpu_ok $hogs || fail "CPU time"
# The hogs stop (SIGSTOP) for the last hackbench run, at nice 19 or SCHED_IDLE maybe, to
# end soon.
touch $T/stop
kill -STOP $hogs
collect
echo "hackbench runs $hbok ok, $hbbad failed; policy rounds $pol_ok ok, $pol_bad failed; cpu.weight rounds $cgw_ok ok, $cgw_bad failed; autogroup rounds $ag_ok ok, $ag_bad failed"
[ "$hbbad" = 0 ] || fail "$hbbad hackbench runs failed"
[ "$hbok" -gt 0 ] || fail "no hackbench run finished"
[ "$pol_bad" = 0 ] || fail "a policy change failed"
[ "$cgw_bad" = 0 ] || fail "a cpu.weight write failed"
[ "$ag_bad" = 0 ] || fail "an autogroup write failed"

# The weights after the storms: two stormed hogs alone on CPU 3 at nice 0 and nice 5.
set -- $free
a=$1 b=$2
kill -CONT $a $b
for p in $a $b; do
	taskset -p -c 3 $p >/dev/null && eevdf-slice set $p 0 other || fail "setting up $p"
done
renice 0 -p $a >/dev/null && renice 5 -p $b >/dev/null || fail "renice"
nap 0.5
a0=$(cut -d' ' -f1 /proc/$a/schedstat) b0=$(cut -d' ' -f1 /proc/$b/schedstat)
nap 3
a1=$(cut -d' ' -f1 /proc/$a/schedstat) b1=$(cut -d' ' -f1 /proc/$b/schedstat)
kill -CONT $hogs
awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) 'BEGIN {
	s = a / (a + b)
	printf "after the storms, nice 0 against nice 5 on CPU 3: %.1f ms : %.1f ms, share %.3f (expected 0.753)\n", a / 1e6, b / 1e6, s
	exit !(s >= 0.683 && s <= 0.823)
}' || fail "the weights are off after the storms"

stop_all
[ "$finished" = "$started" ] || fail "$((started - finished)) of $started tasks did not finish"
restore
[ -z "$ag0" ] || [ "$(cat $AG)" = "$ag0" ] || fail "autogroup not restored"
[ -z "$rcu0" ] || [ "$(cat $RCU)" = "$rcu0" ] || fail "RCU stall timeout not restored"
[ -d $G ] && fail "$G not removed"
echo ok
