#!/bin/sh
# The booted kernel is the pinned 6.12 and sees every CPU the runner gave it.
set -e
uname -r | grep -q '^6\.12\.117' || { echo "kernel is $(uname -r), want 6.12.117"; exit 1; }
grep -q 'SMP PREEMPT' /proc/version || { echo "not an SMP PREEMPT kernel: $(cat /proc/version)"; exit 1; }
[ "$(grep -c ^processor /proc/cpuinfo)" -ge 1 ]
echo "$(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
