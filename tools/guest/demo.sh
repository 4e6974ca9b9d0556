#!/bin/sh
# The default demo, run inside the guest by tools/demo.sh.
echo "kernel:     $(uname -r) ($(grep -c ^processor /proc/cpuinfo) CPUs)"
echo "features:   $(cat /sys/kernel/debug/sched/features)"
echo "base slice: $(cat /sys/kernel/debug/sched/base_slice_ns) ns"
echo "hackbench:  $(hackbench -g 4 -l 200 | grep '^Time') s  (hackbench -g 4 -l 200)"
# --policy=other and no -p: any -p (even -p 0) makes cyclictest SCHED_FIFO (priority 2).
echo "cyclictest: (cyclictest -q -m -t 1 --policy=other -i 1000 -l 2000, SCHED_OTHER, base slice, latencies in us)"
cyclictest -q -m -t 1 --policy=other -i 1000 -l 2000 | sed 's/^/            /'
echo "cyclictest: (the same under eevdfctl run --slice-ns 500000: SCHED_OTHER, 500 us slice)"
/eevdf/bin/eevdfctl run --slice-ns 500000 -- cyclictest -q -m -t 1 --policy=other -i 1000 -l 2000 |
	sed 's/^/            /'
