#!/bin/sh
# The booted kernel is the pinned 6.12 and sees every CPU the runner gave it; the
# preemption mode and the nohz_full CPUs asked for on the command line are in effect.
# Prints what the scheduler runs under, so that the report says it.
. "$(dirname "$0")/lib/common.sh"
set -e
uname -r | grep -q '^6\.12\.117' || { echo "kernel is $(uname -r), want 6.12.117"; exit 1; }
grep -q 'SMP PREEMPT' /proc/version || { echo "not an SMP PREEMPT kernel: $(cat /proc/version)"; exit 1; }
[ "$(grep -c ^processor /proc/cpuinfo)" -ge 1 ]
cmdline=$(cat /proc/cmdline)
arg() { for w in $cmdline; do case "$w" in "$1"=*) echo "${w#*=}" ;; esac; done; }
# PREEMPT_DYNAMIC kernels show the modes with the current one in parentheses.
mode=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' /sys/kernel/debug/sched/preempt 2>/dev/null || true)
want=$(arg preempt)
if [ -n "$want" ] && [ "$mode" != "$want" ]; then
	echo "preempt=$want on the command line, but the kernel runs '${mode:-no dynamic mode}'"
	exit 1
fi
nohz=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null || true)
[ "$nohz" = "(null)" ] && nohz=
want=$(arg nohz_full)
if [ -n "$want" ] && [ "$nohz" != "$want" ]; then
	echo "nohz_full=$want on the command line, but the kernel's nohz_full CPUs are '$nohz'"
	exit 1
fi
echo "$(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, preemption ${mode:-static}, nohz_full ${nohz:-none}"
