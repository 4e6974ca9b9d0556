#!/bin/sh
# Fault campaign (Documentation/reliability.md): CPU hotplug under load.
# Every CPU but CPU 0 goes offline and online again in turn (every third round a second
# one with it), under hackbench, while
#   - a hog and three nice 19 sleepers pinned to each hotpluggable CPU, and three fresh
#     ones each round on the CPU to go, leave delayed-dequeue entities on it: the round
#     looks at the timeline until it shows delayed entities on the CPU (column D; every
#     20 ms, 100 looks or 10 s at most) and offlines the CPU right after; DELAY_DEQUEUE is
#     on in three rounds of four and off in the fourth;
#   - sched_setattr() churns the slice (100 us .. 10 ms, and the base slice) and the policy
#     (other/batch) of every hog, and the slice and weight of every sleeper, delayed ones
#     included (sched_setattr at nice 0, then renice 19);
#   - ELIGIBLE, RUN_TO_PARITY, PLACE_LAG, PREEMPT_SHORT, PLACE_REL_DEADLINE and DELAY_ZERO
#     toggle (those the kernel has);
#   - readers take the timeline, stats and sched/debug (the campaign's "reads during
#     hotplug"), and the round reads the timeline with its CPUs offline: each timeline
#     snapshot must be consistent (per cfs_rq, as many rows as nr_queued, their weights
#     summing to sum_w).
# Passes when every offline, online and re-pinning succeeded, every hackbench run and every
# task finished, each hog's and sleeper's CPU time (schedstat) is above 0 and at most its
# age, the CPUs and features are back as they were, and on a kernel with the timeline at
# least one CPU went offline with delayed entities queued (up to six extra rounds run until
# one does). Kernel reports (WARN, lockdep,
# KASAN, VERIFY) fail the run in eevdf-vm. Ends with "tasks:" and "faults:" lines, also
# appended to $EEVDF_FAULTS_LOG (tools/faults.sh sums them).
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the rounds to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
S=/sys/devices/system/cpu
F=/sys/kernel/debug/sched/features
D=/sys/kernel/debug/sched/eevdf
T=/tmp/fault21
hot=""
for c in $S/cpu[1-9]*; do
	[ -w "$c/online" ] && [ "$(cat "$c/online")" = 1 ] && hot="$hot ${c##*/cpu}"
done
[ -n "$hot" ] || { echo "no CPU hotplug here (no writable $S/cpuN/online beside cpu0)"; exit 77; }
nhot=$(echo $hot | wc -w)
rm -rf $T && mkdir -p $T
mkfifo $T/fifo
online0=$(cat $S/online)
feats0=$(cat $F)
tl=0
[ -r $D/timeline ] && tl=1
# The features toggled in the background: those of the list this kernel has.
feats=""
for x in ELIGIBLE RUN_TO_PARITY PLACE_LAG PREEMPT_SHORT PLACE_REL_DEADLINE DELAY_ZERO \
	RUN_TO_PARITY_MIN_SLICE LAG_CLAMP_MAX_SLICE NEXT_BUDDY_EEVDF PROTECT_AT_PICK; do
	case " $feats0 " in *" $x "* | *" NO_$x "*) feats="$feats $x" ;; esac
done

# What was injected, and the tasks started and finished: printed on every exit, and
# appended to $EEVDF_FAULTS_LOG when tools/faults.sh runs the test.
offline=0 online=0 offline_delayed=0 delayed_seen=0 dd_toggles=0 repins=0
started=0 finished=0 stopped=0
hbok=0 hbbad=0 setattr_ok=0 setattr_bad=0 tog_ok=0 tog_bad=0 tl_ok=0 tl_bad=0 dbg_ok=0 dbg_bad=0
bg="" hogs="" sleepers="" fresh="" ntasks=0 k=0
# count NAME: the "ok bad" a background loop left in $T/NAME when it stopped.
count() { cat $T/$1 2>/dev/null || echo "0 1"; }

# stop_all: stop the loops and the tasks, and count which finished: a hog killed by its
# SIGTERM (status 143), a sleeper by exiting 0 when it sees $T/stop, a hackbench run (40
# tasks) by exiting 0, which it does once all its tasks have.
stop_all() {
	[ $stopped = 1 ] && return
	stopped=1
	touch $T/stop $T/stop$k
	kill $fresh 2>/dev/null
	kill $hogs 2>/dev/null
	for p in $hogs; do
		wait $p
		[ $? = 143 ] && finished=$((finished + 1))
	done
	for p in $sleepers; do wait $p && finished=$((finished + 1)); done
	for p in $bg; do wait $p; done
	set -- $(count hb) $(count setattr) $(count toggle) $(count readdebug)
	hbok=$1 hbbad=$2 setattr_ok=$3 setattr_bad=$4 tog_ok=$5 tog_bad=$6 dbg_ok=$7 dbg_bad=$8
	[ $tl = 1 ] && set -- $(count readtl) && tl_ok=$1 tl_bad=$2
	started=$((started + (hbok + hbbad) * 40))
	finished=$((finished + hbok * 40))
}
restore() {
	for c in $hot; do echo 1 >$S/cpu$c/online 2>/dev/null; done
	for x in $feats0; do
		case "$x" in *ELIGIBLE | *RUN_TO_PARITY | *PLACE_LAG | *PREEMPT_SHORT | *PLACE_REL_DEADLINE | \
			*DELAY_ZERO | *DELAY_DEQUEUE | *RUN_TO_PARITY_MIN_SLICE | *LAG_CLAMP_MAX_SLICE | \
			*NEXT_BUDDY_EEVDF | *PROTECT_AT_PICK) echo "$x" >$F 2>/dev/null ;; esac
	done
}
report() {
	{
		echo "tasks: started=$started finished=$finished"
		echo "faults: offline=$offline online=$online offline_delayed=$offline_delayed delayed_seen=$delayed_seen repin=$repins setattr=$((setattr_ok * ntasks)) toggles=$((tog_ok * 2 * $(echo $feats | wc -w) + dd_toggles)) reads=$((tl_ok + dbg_ok)) hackbench=$hbok"
	} | tee -a "${EEVDF_FAULTS_LOG:-/dev/null}"
}
trap 'stop_all; restore; report' EXIT

# tl_check FILE: per cfs_rq, as many rows as nr_queued, weighing sum_w in total (eevdfctl
# timeline --check sums). A CPU whose snapshot outgrew its buffer ends in "truncated": its
# last cfs_rq is not checked. Prints each problem.
tl_check() {
	tl_sum=$(eevdfctl timeline --from "$1" --check sums) || { echo "$tl_sum"; return 1; }
}
# delayed CPU: look at the timeline until it shows delayed entities (column D) on CPU's
# runqueues, every 20 ms, 100 looks or 10 s at most (one eevdfctl for all the looks: a
# process per look would cost a loaded KASAN guest more than the look); n = how many the
# last look saw, looks = the looks taken.
delayed() {
	set -- $(eevdfctl timeline --delayed --cpu "$1" --looks 100 --interval-ms 20 --timeout-ms 10000) &&
		[ "$1" = looks ] && [ "$3" = delayed ] || return 1
	looks=$2 n=$4
}
# slack and cpu_ok PID...: the CPU-time check (eevdfctl cputime).
. "$(dirname "$0")/lib/faults.sh"

# The load: a hog on any CPU, and on each hotpluggable CPU a pinned hog and three nice 19
# sleepers (a short spin, then a 0.1 s sleep). A nice 19 task that ran goes to sleep far
# ahead of V (its vruntime advances 68 times as fast as a nice 0 hog's), so with
# DELAY_DEQUEUE its entity stays queued, delayed, for tens of ms (when the CPU is not too
# crowded for it to get to its sleep).
sh -c 'while :; do :; done' &
hogs="$!"
for c in $hot; do
	taskset -c $c sh -c 'while :; do :; done' &
	hogs="$hogs $!"
	eval "pinned_$c=$!"
	for i in 1 2 3; do
		taskset -c $c sh -c "while [ ! -e $T/stop ]; do i=0; while [ \$i -lt 100 ]; do i=\$((i + 1)); done; read -t 0.1 _ <>$T/fifo; done; exit 0" &
		sleepers="$sleepers $!"
		eval "pinned_$c=\"\$pinned_$c $!\""
		renice 19 -p $! >/dev/null
	done
done
ntasks=$(echo $hogs $sleepers | wc -w)
started=$ntasks

# Background loops: each runs its function until $T/stop and leaves "ok bad" in $T/NAME.
loop() {
	name=$1
	shift
	ok=0 bad=0
	while [ ! -e $T/stop ]; do
		if "$@"; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	done
	echo "$ok $bad" >$T/$name
}
hb() { hackbench -g 1 -l 10 >/dev/null 2>&1; }
slices="100000 300000 1000000 3000000 10000000 0"
r=0
# One round: every hog gets a slice and a policy (other or batch); every sleeper, most
# often delayed, a slice at nice 0 (sched_setattr resets the nice) and then nice 19
# again: two reweights of a delayed entity. A sleeper may have seen $T/stop and exited.
setattr() {
	r=$((r + 1))
	for p in $hogs $sleepers; do
		set -- $slices
		shift $(((r + p) % 6))
		pol=other
		case " $hogs " in *" $p "*) [ $(((r + p) % 3)) = 0 ] && pol=batch ;; esac
		eevdf-slice set "$p" "$1" $pol 2>>$T/setattr.err || [ -e $T/stop ] || { cat $T/setattr.err; return 1; }
		case " $sleepers " in *" $p "*) renice 19 -p "$p" >/dev/null 2>>$T/setattr.err || [ -e $T/stop ] || { cat $T/setattr.err; return 1; } ;; esac
	done
	nap 0.2
}
toggle() {
	for x in $feats; do
		echo "NO_$x" >$F || return 1
		nap 0.05
		echo "$x" >$F || return 1
		nap 0.05
	done
}
read_tl() {
	nap 0.3
	cat $D/timeline >$T/rtl && tl_check $T/rtl && cat $D/stats >/dev/null
}
read_debug() { nap 0.5 && cat /sys/kernel/debug/sched/debug >/dev/null; }
loop hb hb &
bg="$bg $!"
loop setattr setattr &
bg="$bg $!"
[ -n "$feats" ] && { loop toggle toggle & bg="$bg $!"; }
[ $tl = 1 ] && { loop readtl read_tl & bg="$bg $!"; }
loop readdebug read_debug &
bg="$bg $!"

# The rounds' shell runs at nice -10: among the load, at nice 0, it would look at the
# timeline too seldom to catch the delayed entities.
renice -10 -p $$ >/dev/null || fail "renice -10 of the test's shell"
rounds=$(scaled 6 3)
k=0
t0=$(cut -d' ' -f1 /proc/uptime)
# Up to six more rounds until a CPU went offline with delayed entities queued (the timeline
# catches them in most rounds, not in all).
while [ $k -lt "$rounds" ] || { [ $tl = 1 ] && [ $offline_delayed = 0 ] && [ $k -lt $((rounds + 6)) ]; }; do
	set -- $hot
	shift $((k % nhot))
	c=$1
	if [ $((k % 4)) = 3 ]; then echo NO_DELAY_DEQUEUE >$F; else echo DELAY_DEQUEUE >$F; fi
	dd_toggles=$((dd_toggles + 1))
	# Three fresh sleepers on c (the churned ones above are not always asleep when
	# looked at): started at nice 0 to reach their sleep loop soon, then nice 19. Then
	# (DELAY_DEQUEUE on) look for delayed entities on c, every 20 ms, 100 looks or 10 s at
	# most, and offline c right after the first look that shows some.
	fresh=""
	for i in 1 2 3; do
		taskset -c $c sh -c "while [ ! -e $T/stop$k ]; do i=0; while [ \$i -lt 100 ]; do i=\$((i + 1)); done; read -t 0.1 _ <>$T/fifo; done; exit 0" &
		fresh="$fresh $!"
	done
	started=$((started + 3))
	nap 0.3
	for p in $fresh; do renice 19 -p $p >/dev/null || fail "renice $p"; done
	nap 0.2
	n=0
	if [ $tl = 1 ] && [ $((k % 4)) != 3 ]; then
		delayed "$c" || fail "looking for delayed entities on cpu$c"
	fi
	[ "$n" -gt 0 ] && offline_delayed=$((offline_delayed + 1))
	delayed_seen=$((delayed_seen + n))
	echo 0 >$S/cpu$c/online || fail "offlining cpu$c"
	offline=$((offline + 1))
	second=""
	if [ $((k % 3)) = 2 ] && [ "$nhot" -ge 2 ]; then
		set -- $hot
		shift $(((k + 1) % nhot))
		second=$1
		echo 0 >$S/cpu$second/online || fail "offlining cpu$second with cpu$c offline"
		offline=$((offline + 1))
	fi
	# A read with the CPUs offline.
	if [ $tl = 1 ]; then
		cat $D/timeline >$T/tl2 || fail "reading the timeline with cpu$c offline"
		tl_check $T/tl2 || { head -40 $T/tl2; fail "inconsistent timeline with cpu$c offline"; }
	fi
	for x in $c $second; do
		echo 1 >$S/cpu$x/online || fail "onlining cpu$x"
		online=$((online + 1))
		# The offline broke the pinned tasks' affinity; pin them back.
		eval "pp=\$pinned_$x"
		for p in $pp; do
			taskset -p -c "$x" "$p" >/dev/null || fail "re-pinning $p to cpu$x"
			repins=$((repins + 1))
		done
	done
	touch $T/stop$k
	for p in $fresh; do wait $p && finished=$((finished + 1)); done
	fresh=""
	k=$((k + 1))
done
t1=$(cut -d' ' -f1 /proc/uptime)
echo DELAY_DEQUEUE >$F
echo "$k rounds in $(awk "BEGIN { print $t1 - $t0 }") s: $offline offlines ($offline_delayed of them with delayed entities queued, $delayed_seen in all), $online onlines"

cpu_ok $hogs $sleepers || fail "CPU time"
stop_all
echo "hackbench runs $hbok ok, $hbbad failed; setattr rounds $setattr_ok ok, $setattr_bad failed; toggle rounds $tog_ok ok, $tog_bad failed; timeline reads $tl_ok ok, $tl_bad failed; sched/debug reads $dbg_ok ok, $dbg_bad failed"
[ "$hbbad" = 0 ] || fail "$hbbad hackbench runs failed"
[ "$hbok" -gt 0 ] || fail "no hackbench run finished"
[ "$setattr_bad" = 0 ] || fail "sched_setattr or renice failed on a live task"
[ "$tog_bad" = 0 ] || fail "a feature toggle failed"
[ "$tl_bad" = 0 ] || fail "$tl_bad timeline reads failed or were inconsistent"
[ "$dbg_bad" = 0 ] || fail "$dbg_bad sched/debug reads failed"
[ "$finished" = "$started" ] || fail "$((started - finished)) of $started tasks did not finish"
[ "$(cat $S/online)" = "$online0" ] || fail "online CPUs $(cat $S/online), were $online0"
restore
[ "$(cat $F)" = "$feats0" ] || fail "features not restored: $(cat $F)"
if [ $tl = 1 ] && [ "$offline_delayed" = 0 ]; then
	fail "no CPU went offline with delayed entities queued"
fi
echo ok
