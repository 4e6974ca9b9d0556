#!/bin/sh
# Fault campaign (Documentation/reliability.md): CFS bandwidth.
# Nested cgroups /fault22/a, a/b and a/b/c, with hogs and hackbench in a/b/c and a hog in
# a/x, take a storm of cpu.max writes (quotas of 1..20 ms in periods of 5..100 ms, and
# "max") on all three levels and of cpu.max.burst on c, while
#   - each round makes a group dK (under the throttled a/b in even rounds, beside a in odd
#     ones) holding one eevdf-rtapp process on one CPU: a hog and three nice 19 sleepers,
#     threads whose slices make a sleeper block while it is not eligible (see "The
#     sleepers" below). It looks at the timeline until it shows delayed entities of dK
#     (every 20 ms, 100 looks or 10 s at most; 20 looks under a/b: a throttled hierarchy
#     is not in the timeline), then moves the process out (two rounds of four) or kills it
#     (the other two) and removes dK at once: an rmdir of a group whose entities were
#     delayed. DELAY_DEQUEUE is on in three rounds of four, off in the third;
#   - two hogs move between the throttled a/b/c and the unthrottled /fault22/free each
#     round.
# Then, with the storm stopped and c at 20 ms per 100 ms, its usage (cpu.stat) over 3 s
# must stay within the quota (plus one tick per CPU per period).
# Passes when every write, move and rmdir succeeded, c and a were throttled, every hackbench
# run and task finished (eevdf-rtapp by its kill), each hog's CPU time (schedstat) is above
# 0 and at most its age, the bandwidth held, and on a kernel with the timeline at least one
# group was removed right after delayed entities of it were seen (up to six extra rounds
# run until one is). Kernel reports (WARN, lockdep, KASAN, VERIFY) fail the run in
# eevdf-vm. Ends with "tasks:" and "faults:" lines, also
# appended to $EEVDF_FAULTS_LOG (tools/faults.sh sums them).
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the rounds to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
F=/sys/kernel/debug/sched/features
D=/sys/kernel/debug/sched/eevdf
T=/tmp/fault22
cg=/sys/fs/cgroup
G=$cg/fault22
mkdir -p $cg
grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg || { echo "no cgroup2"; exit 77; }
echo +cpu >$cg/cgroup.subtree_control 2>/dev/null
rm -rf $T && mkdir -p $T
mkfifo $T/fifo
rmdir $G/a/b/c $G/a/b/d* $G/d* $G/a/x $G/a/b $G/a $G/free $G 2>/dev/null
mkdir $G || { echo "cannot make $G"; exit 1; }
if [ ! -e $G/cpu.max ]; then
	rmdir $G
	echo "no cpu.max (CONFIG_CFS_BANDWIDTH=n)"
	exit 77
fi
feats0=$(cat $F)
tl=0
[ -r $D/timeline ] && tl=1
ncpu=$(grep -c '^processor' /proc/cpuinfo)

throttle=0 unthrottle=0 burst=0 moves=0 rmdirs=0 rmdir_delayed=0 delayed_seen=0 dd_toggles=0
started=0 finished=0 stopped=0 collected=0
hbok=0 hbbad=0 storm_ok=0 storm_bad=0
bg="" hogs="" movers="" ntasks=0 storm_pid=""
count() { cat $T/$1 2>/dev/null || echo "0 1"; }
# ingrp GROUP CMD...: run CMD in the background in GROUP (relative to $G); $! is its pid.
ingrp() {
	g=$1
	shift
	sh -c "echo \$\$ >$G/$g/cgroup.procs && exec \"\$@\"" sh "$@" &
}
# rmdir_retry DIR: a group whose last task just exited may be busy for a moment.
rmdir_retry() {
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		rmdir "$1" 2>/dev/null && return 0
		nap 0.1
	done
	rmdir "$1"
}

# stop_all: stop the loops and the tasks, and count which finished: a hog killed by its
# SIGTERM (status 143), a hackbench run (10 tasks) by exiting 0, which it does once all
# its tasks have. The groups are unthrottled first, for a hackbench run to end soon.
unthrottle() {
	for g in a a/b a/b/c; do echo max >$G/$g/cpu.max 2>/dev/null; done
}
stop_all() {
	[ $stopped = 1 ] && return
	stopped=1
	touch $T/stop
	[ -n "$storm_pid" ] && wait $storm_pid
	unthrottle
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
	set -- $(count hb) $(count storm)
	hbok=$1 hbbad=$2 storm_ok=$3 storm_bad=$4
	set -- $(cat $T/storm.n 2>/dev/null || echo 0 0 0)
	throttle=$1 unthrottle=$2 burst=$3
	started=$((started + (hbok + hbbad) * 10))
	finished=$((finished + hbok * 10))
}
restore() {
	for x in $feats0; do
		case "$x" in *DELAY_DEQUEUE) echo "$x" >$F 2>/dev/null ;; esac
	done
	# Whatever is left in the groups (a failure midway) goes; then the groups.
	for g in $G/a/b/c $G/a/b/d* $G/d* $G/a/x $G/free; do
		[ -e "$g/cgroup.procs" ] && kill -9 $(cat "$g/cgroup.procs") 2>/dev/null
	done
	wait 2>/dev/null
	for g in $G/a/b/c $G/a/b/d* $G/d* $G/a/x $G/a/b $G/a $G/free $G; do
		[ -d "$g" ] && rmdir_retry "$g"
	done
}
report() {
	{
		echo "tasks: started=$started finished=$finished"
		echo "faults: throttle=$throttle unthrottle=$unthrottle burst=$burst moves=$moves rmdir=$rmdirs rmdir_delayed=$rmdir_delayed delayed_seen=$delayed_seen dd_toggles=$dd_toggles hackbench=$hbok"
	} | tee -a "${EEVDF_FAULTS_LOG:-/dev/null}"
}
trap 'stop_all; restore; report' EXIT

# delayed GROUP MOST: look at the timeline until it shows delayed entities (column D) of
# GROUP (a path like /fault22/a/b/d0: rows queued on its cfs_rqs, and its own group
# entities), every 20 ms, MOST looks or 10 s at most (one eevdfctl for all the looks: a
# process per look would cost a loaded KASAN guest more than the look); n = how many the
# last look saw, looks = the looks taken.
delayed() {
	set -- $(eevdfctl timeline --delayed --group "$1" --looks "$2" --interval-ms 20 --timeout-ms 10000) &&
		[ "$1" = looks ] && [ "$3" = delayed ] || return 1
	looks=$2 n=$4
}
# slack and cpu_ok PID...: the CPU-time check (eevdfctl cputime).
. "$(dirname "$0")/lib/faults.sh"
# usage GROUP: its cpu.stat usage_usec.
usage() { sed -n 's/^usage_usec //p' $G/$1/cpu.stat; }
stat_of() { sed -n "s/^$2 //p" $G/$1/cpu.stat; }

# The tree: cgroup v2 puts tasks only in leaves once a group hands cpu to its children.
echo +cpu >$G/cgroup.subtree_control || fail "+cpu in $G"
mkdir $G/a $G/free || fail "mkdir"
echo +cpu >$G/a/cgroup.subtree_control || fail "+cpu in a"
mkdir $G/a/b $G/a/x || fail "mkdir"
echo +cpu >$G/a/b/cgroup.subtree_control || fail "+cpu in a/b"
mkdir $G/a/b/c || fail "mkdir"

# The load: two hogs in c, one in x, hackbench runs in c, two movers.
hog() { ingrp "$1" sh -c 'while :; do :; done'; hogs="$hogs $!"; }
hog a/b/c
hog a/b/c
hog a/x
hog free
movers=$!
hog a/b/c
movers="$movers $!"
ntasks=$(echo $hogs | wc -w)
started=$ntasks

loop() {
	name=$1
	shift
	ok=0 bad=0
	while [ ! -e $T/stop ]; do
		if "$@"; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	done
	echo "$ok $bad" >$T/$name
}
# hackbench -f 5: 10 tasks, which finish within the quotas of the storm.
hb() {
	ingrp a/b/c hackbench -g 1 -f 5 -l 5 >/dev/null 2>&1
	wait $!
}
# The storm: one write a step, 20 steps a round; "max" counts as an unthrottle. The
# counts go to $T/storm.n as "throttle unthrottle burst".
quotas="1000 5000;2000 10000;max 100000;5000 20000;1000 10000;20000 50000;max 5000;3000 100000"
th=0 un=0 bu=0
storm() {
	i=0
	for grp in a/b/c a/b a a/b/c a/b; do
		IFS=';'
		set -- $quotas
		unset IFS
		shift $(((th + un + i) % 8))
		echo "$1" >$G/$grp/cpu.max || return 1
		case "$1" in max*) un=$((un + 1)) ;; *) th=$((th + 1)) ;; esac
		i=$((i + 1))
		nap 0.05
	done
	# A burst may not exceed the quota: 0, 500 or 1000 us (the smallest quota is 1000).
	echo $(((th + un) % 3 * 500)) >$G/a/b/c/cpu.max.burst || return 1
	bu=$((bu + 1))
	echo "$th $un $bu" >$T/storm.n
}
loop hb hb &
bg="$bg $!"
loop storm storm &
storm_pid=$!
bg="$bg $!"

# The rounds' shell runs at nice -10: among the load, at nice 0, it would look at the
# timeline too seldom to catch the delayed entities.
renice -10 -p $$ >/dev/null || fail "renice -10 of the test's shell"
rounds=$(scaled 8 4)
k=0
t0=$(cut -d' ' -f1 /proc/uptime)
# Up to six more rounds until a group went right after delayed entities of it were seen
# (the timeline catches them in most rounds, not in all).
while [ $k -lt "$rounds" ] || { [ $tl = 1 ] && [ $rmdir_delayed = 0 ] && [ $k -lt $((rounds + 6)) ]; }; do
	if [ $((k % 4)) = 2 ]; then echo NO_DELAY_DEQUEUE >$F; else echo DELAY_DEQUEUE >$F; fi
	dd_toggles=$((dd_toggles + 1))
	# A group with delayed entities, removed right after they are seen: under the
	# throttled a/b in even rounds, beside a (unthrottled) in odd ones.
	cpu=0
	[ "$ncpu" -gt 1 ] && cpu=$((1 + k % (ncpu - 1)))
	if [ $((k % 2)) = 0 ]; then d=a/b/d$k; else d=d$k; fi
	mkdir $G/$d || fail "mkdir $d"
	# The sleepers: DELAY_DEQUEUE keeps a task that blocks while not eligible (vruntime
	# past V) queued until it is picked. A nice 19 task (weight 15) beside a nice 0 hog
	# (1024) has the earlier deadline once it is eligible when its virtual slice is the
	# shorter (700 us * 1024/15 = 48 ms against the hog's 100 ms), and its wakeup preempts
	# the hog (PREEMPT_SHORT: its slice is the shorter), so it starts each run with a
	# lag near 0 and blocks 500 us of CPU later with a lag near -500 us * 1024/15 (34 ms
	# virtual): the hog must then run about 34 ms in dK before the sleeper is eligible
	# again, longer in wall time the less CPU dK gets. A sleeper woken before that stays
	# ineligible and soon blocks again. With 6.12's default slices (the same for both) a
	# nice 19 sleeper is picked only once its deadline is the earliest, with a lag of a
	# whole virtual slice, and blocks still eligible: a loaded host then made the timeline
	# catch a delayed entity in 1 round of 9 (Documentation/reliability.md). Run and sleep
	# are CPU time and a timer (eevdf-rtapp), not shell loops, so the guest's speed does
	# not change them.
	ingrp $d eevdf-rtapp --cpu $cpu --warmup-ms 0 --duration-ms 3600000 \
		--hog slice_us=100000 --task sleep_us=100000,run_us=500,slice_us=700,nice=19,count=3 \
		>$T/rtapp$k.out 2>&1
	rt=$!
	started=$((started + 1))
	nap 0.3
	n=0
	if [ $tl = 1 ] && [ $((k % 4)) != 2 ]; then
		# A throttled hierarchy is mostly not in the timeline: fewer looks there.
		most=100
		[ $((k % 2)) = 0 ] && most=20
		delayed "/fault22/$d" $most || fail "looking for delayed entities of $d"
	fi
	# The process moves out (rounds 0 and 1 of every 4) or dies, and the group goes.
	if [ $((k % 4)) -lt 2 ]; then
		echo $rt >$G/free/cgroup.procs || fail "moving eevdf-rtapp $rt out of $d"
		moves=$((moves + 1))
		rmdir_retry $G/$d || fail "rmdir $d (eevdf-rtapp moved out)"
		kill $rt
	else
		kill $rt
		rmdir_retry $G/$d || fail "rmdir $d (eevdf-rtapp killed)"
	fi
	wait $rt
	rc=$?
	# SIGTERM ends it with 143 (it sets no handler). Anything else is eevdf-rtapp's
	# own error (an attribute the kernel did not hold, say).
	if [ $rc = 143 ]; then
		finished=$((finished + 1))
	else
		cat $T/rtapp$k.out
		fail "eevdf-rtapp in $d exited $rc"
	fi
	rmdirs=$((rmdirs + 1))
	[ "$n" -gt 0 ] && rmdir_delayed=$((rmdir_delayed + 1))
	delayed_seen=$((delayed_seen + n))
	# The movers change sides: throttled c <-> unthrottled free.
	set -- $movers
	if [ $((k % 2)) = 0 ]; then to1=a/b/c to2=free; else to1=free to2=a/b/c; fi
	echo $1 >$G/$to1/cgroup.procs || fail "moving $1 to $to1"
	echo $2 >$G/$to2/cgroup.procs || fail "moving $2 to $to2"
	moves=$((moves + 2))
	k=$((k + 1))
done
t1=$(cut -d' ' -f1 /proc/uptime)
echo DELAY_DEQUEUE >$F
echo "$k rounds in $(awk "BEGIN { print $t1 - $t0 }") s: $rmdirs groups removed ($rmdir_delayed right after delayed entities of theirs were seen, $delayed_seen in all), $moves moves"

cpu_ok $hogs || fail "CPU time"
# Stop the storm, then hackbench (unthrottled), keep the hogs.
touch $T/stop
wait $storm_pid
unthrottle
collect
echo "hackbench runs in c: $hbok ok, $hbbad failed; storm rounds $storm_ok ok, $storm_bad failed ($throttle quotas, $unthrottle max, $burst bursts)"
for g in a/b/c a; do
	echo "$g: $(tr '\n' ' ' <$G/$g/cpu.stat)"
done
[ "$(stat_of a/b/c nr_throttled)" -gt 0 ] || fail "a/b/c was never throttled"
[ "$(stat_of a nr_throttled)" -gt 0 ] || fail "a was never throttled"

# The bandwidth still holds: c's hogs (two, and a mover) at 20 ms per 100 ms over 3 s, no
# more than the quota of each period begun plus a tick (4 ms at HZ=250) per CPU of
# overrun.
echo max >$G/a/cpu.max
echo max >$G/a/b/cpu.max
echo 0 >$G/a/b/c/cpu.max.burst
echo "20000 100000" >$G/a/b/c/cpu.max || fail "cpu.max of c"
nap 0.2
u0=$(usage a/b/c) w0=$(cut -d' ' -f1 /proc/uptime)
nap 3
u1=$(usage a/b/c) w1=$(cut -d' ' -f1 /proc/uptime)
awk -v u="$((u1 - u0))" -v w0="$w0" -v w1="$w1" -v n="$ncpu" 'BEGIN {
	t = w1 - w0; max = (t / 0.1 + 1) * (20000 + n * 4000)
	printf "c at 20 ms/100 ms: %d us of CPU in %.2f s (at most %d)\n", u, t, max
	exit !(u > 0 && u <= max)
}' || fail "the quota did not hold after the storm"

stop_all
[ "$hbbad" = 0 ] || fail "$hbbad hackbench runs failed"
[ "$hbok" -gt 0 ] || fail "no hackbench run finished"
[ "$storm_bad" = 0 ] || fail "a cpu.max write failed"
[ "$finished" = "$started" ] || fail "$((started - finished)) of $started tasks did not finish"
restore
[ -d $G ] && fail "$G not removed"
[ "$(cat $F)" = "$feats0" ] || fail "features not restored: $(cat $F)"
if [ $tl = 1 ] && [ "$rmdir_delayed" = 0 ]; then
	fail "no group was removed right after delayed entities of it were seen"
fi
echo ok
