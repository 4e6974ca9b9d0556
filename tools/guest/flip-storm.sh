#!/bin/sh
# The feature-flip storm (Documentation/reliability.md, "Oops: int3 under multi-threaded
# TCG"): for SECONDS (default 60), writes to /sys/kernel/debug/sched/features 2 ms apart
# (FEATURE and NO_FEATURE in turn, default DELAY_DEQUEUE: each write flips a static key,
# so the kernel rewrites its text at every sched_feat(FEATURE) site; a write itself takes
# a KASAN guest tens of ms under TCG), beside
# hackbench runs in a loop and two hogs in a cgroup whose cpu.max changes every 10 ms
# (throttling and unthrottling them). The same script on stock 6.12 and on ours: every
# feature it flips is 6.12's. Exits 0 when every write and every hackbench run succeeded,
# and prints the counts; a kernel report (an Oops, a WARN, KASAN) fails the boot in
# eevdf-vm. Run it many times with tools/boot-storm.sh:
#
#   bash tools/boot-storm.sh --kernel distro-debug --cpus 4 --boots 10 --tcg-multi-thread \
#       --script tools/guest/flip-storm.sh
secs=${1:-60}
feature=${2:-DELAY_DEQUEUE}
F=/sys/kernel/debug/sched/features
cg=/sys/fs/cgroup
G=$cg/flipstorm
T=/tmp/flipstorm
fail() { echo "flip-storm: FAIL: $*"; exit 1; }
grep -qw "$feature" $F || fail "no $feature in $F"
feats0=$(cat $F)
mkdir -p $T $cg
rm -f $T/stop
[ -p $T/fifo ] || mkfifo $T/fifo
# nap SECONDS: sleep without forking (a read with a timeout from a FIFO nobody writes).
nap() { read -t "$1" _ <>$T/fifo; return 0; }
grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg || fail "no cgroup2"
echo +cpu >$cg/cgroup.subtree_control || fail "+cpu in $cg"
mkdir $G || fail "mkdir $G"
[ -e $G/cpu.max ] || fail "no cpu.max (CONFIG_CFS_BANDWIDTH=n)"

# Two hogs in the throttled group.
hogs=""
for _ in 1 2; do
	sh -c "echo \$\$ >$G/cgroup.procs && exec sh -c 'while :; do :; done'" &
	hogs="$hogs $!"
done
# The throttle loop: quotas of 1 to 8 ms in 10 ms periods, and max, a write every 10 ms.
(
	n=0 bad=0
	set -- "1000 10000" "4000 10000" "max 10000" "2000 10000" "8000 10000"
	while [ ! -e $T/stop ]; do
		for q in "$@"; do
			echo "$q" >$G/cpu.max || bad=$((bad + 1))
			n=$((n + 1))
			nap 0.01
		done
	done
	echo "$n $bad" >$T/throttle
) &
thr=$!
# hackbench in a loop, in the root group.
(
	ok=0 bad=0
	while [ ! -e $T/stop ]; do
		if hackbench -g 2 -l 20 >/dev/null 2>&1; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	done
	echo "$ok $bad" >$T/hackbench
) &
hb=$!

# The flips, from this shell: no fork a flip.
read -r t0 _ </proc/uptime
t0=${t0%.*}
flips=0 bad=0 now=$t0
while [ $((now - t0)) -lt "$secs" ]; do
	echo "$feature" >$F || bad=$((bad + 1))
	nap 0.002
	echo "NO_$feature" >$F || bad=$((bad + 1))
	nap 0.002
	flips=$((flips + 2))
	read -r now _ </proc/uptime
	now=${now%.*}
done
touch $T/stop
wait $thr $hb
kill $hogs
wait $hogs 2>/dev/null
for x in $feats0; do
	case "$x" in "$feature" | "NO_$feature") echo "$x" >$F ;; esac
done
rmdir $G
read -r thn thbad <$T/throttle
read -r hbok hbbad <$T/hackbench
echo "flip-storm: $secs s on $(grep -c ^processor /proc/cpuinfo) CPUs: $flips writes of $feature/NO_$feature ($bad failed), $thn cpu.max writes ($thbad failed), $hbok hackbench runs ($hbbad failed)"
[ "$bad" = 0 ] && [ "$thbad" = 0 ] && [ "$hbbad" = 0 ] || fail "failed writes or runs"
[ "$hbok" -gt 0 ] || fail "no hackbench run finished"
