#!/bin/sh
# What a task alone on a CPU is accounted: one spinning hog pinned to each CPU for
# SECONDS (default 8), then each hog's CPU time (sum_exec_runtime, /proc/PID/schedstat)
# against its age, read back to back with the shell's own `read` as tests/guest/lib/faults.sh
# does. Documentation/reliability.md uses it to tell a nohz_full accounting effect from the
# way a check reads. Run in a guest, e.g. with nohz_full CPUs:
#
#   target/release/eevdf-vm --kernel distro-debug --cpus 4 --timeout-s 300 \
#       --append "preempt=voluntary nohz_full=2-3" tools/guest/cputime-probe.sh
secs=${1:-8}
echo "cputime-probe: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, nohz_full: $(cat /sys/devices/system/cpu/nohz_full 2>/dev/null), preempt: $(cat /sys/kernel/debug/sched/preempt 2>/dev/null)"
pids=
cpu=0
while [ -d /sys/devices/system/cpu/cpu$cpu ]; do
	taskset -c $cpu sh -c 'while :; do :; done' &
	pids="$pids $!"
	cpu=$((cpu + 1))
done
sleep "$secs"
cpu=0
for p in $pids; do
	read -r st _ </proc/$p/schedstat
	read -r up _ </proc/uptime
	read -r line </proc/$p/stat
	echo "$cpu $p $st $up ${line##*) }"
	cpu=$((cpu + 1))
done | awk '# $1 CPU, $2 pid, $3 ns, $4 uptime, then /proc/PID/stat from its state (field 3,
	# $5 here) on: the start time, field 22 (clock ticks of 1/100 s), is $24.
	{ age = $4 - $24 / 100; s = $3 / 1e9
	printf "cputime-probe: CPU %d: pid %d: %.3f s of CPU time in %.3f s of age: %.3f\n", $1, $2, s, age, s / age }'
kill $pids
