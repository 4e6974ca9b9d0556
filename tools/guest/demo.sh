#!/bin/sh
# The default demo, run inside the guest by tools/demo.sh.
echo "kernel:     $(uname -r) ($(grep -c ^processor /proc/cpuinfo) CPUs)"
echo "features:   $(cat /sys/kernel/debug/sched/features)"
echo "base slice: $(cat /sys/kernel/debug/sched/base_slice_ns) ns"
echo "hackbench:  $(hackbench -g 4 -l 200 | grep '^Time') s  (hackbench -g 4 -l 200)"
echo "cyclictest: (cyclictest -q -m -t 1 -p 0 -i 1000 -l 2000, SCHED_OTHER, latencies in us)"
cyclictest -q -m -t 1 -p 0 -i 1000 -l 2000 | sed 's/^/            /'
