#!/bin/sh
# The live oracle's tie count (CONFIG_SCHED_EEVDF_RUST_VERIFY) over common workloads: for
# each, the picks compared with the reference and the picks of an entity that shares its
# deadline with another eligible one of another vruntime, where 6.12 may have picked the
# other (Documentation/c-parity.md#ties-on-equal-deadlines). Run by
#   target/release/eevdf-vm --kernel debug-verify --cpus 2 tools/guest/verify-ties.sh
# (about 4 minutes under TCG).
[ -e /sys/kernel/debug/sched/eevdf/verify ] || { echo "kernel built without CONFIG_SCHED_EEVDF_RUST_VERIFY"; exit 1; }
f=/sys/kernel/debug/sched/eevdf/verify
m() {
	echo 0 >"$f"
	"$@" >/dev/null 2>&1 || echo "  the workload failed (exit $?)"
	set -- $(grep '^all ' "$f")
	echo "  checks=$2 picks=$3 wakeups=$4 divergences=$5 ties=$6"
}
echo "hackbench -P -g 4 -l 300 (processes, sockets)"; m hackbench -P -g 4 -l 300
echo "hackbench -P -p -g 4 -l 300 (processes, pipes)"; m hackbench -P -p -g 4 -l 300
echo "hackbench -T -g 4 -l 300 (threads, sockets)"; m hackbench -T -g 4 -l 300
echo "waker 1x, load 1x beside hackbench -g 2 -l 200"; m eevdf-waker --interval-us 1000 --slice-base-x 1 --duration-ms 600000 -- hackbench -g 2 -l 200
echo "waker 0.1x, load 1x beside hackbench -g 2 -l 200"; m eevdf-waker --interval-us 1000 --slice-base-x 0.1 --duration-ms 600000 -- hackbench -g 2 -l 200
echo "waker 10x, load 1x beside hackbench -g 2 -l 200"; m eevdf-waker --interval-us 1000 --slice-base-x 10 --duration-ms 600000 -- hackbench -g 2 -l 200
echo "waker 1x on CPU 0 beside 4 nice-0 hogs on CPU 0, 3 s"; m eevdf-waker --cpu 0 --interval-us 1000 --slice-base-x 1 --duration-ms 600000 -- eevdf-share --cpu 0 --duration-ms 3000 --hog 0 --hog 0 --hog 0 --hog 0
echo "cyclictest 2 threads 3 s beside hackbench -g 2 -l 300"; m sh -c 'hackbench -g 2 -l 300 & cyclictest -q -m -t 2 -i 1000 -D 3; wait'
echo "all counters:"; cat "$f"
