#!/bin/sh
# sched_setattr() fuzz (the fault campaign), eevdf-fuzz from tools/eevdf-guest:
# - a deterministic part: 10000 random calls of seed 1 on one thread, each read back
#   with sched_getattr and checked against 6.12's rules; its digest must be the stock
#   kernel's for the same seed, CPU count and config (compare the "digest" lines);
# - a concurrent part: random calls from several threads at running, queued,
#   sleeping (delayed), cgroup and exiting tasks while base_slice_ns swings between
#   0 and 4294967295 (and values outside), restored at the end.
# Fails on a lost task, a read-back that contradicts an accepted call, an errno
# 6.12 cannot return, or base_slice_ns or the cgroups not restored. Runs on every
# kernel: the stock kernel is the reference.
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the fuzzing time, at least a floor.
. "$(dirname "$0")/lib/common.sh"
f=/sys/kernel/debug/sched/base_slice_ns
orig=$(cat $f 2>/dev/null)
pid=""
# Every exit (a failure or a signal included) stops the fuzzer and restores the base slice.
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid"
	[ -n "$orig" ] && echo "$orig" >$f
}
trap cleanup EXIT
trap 'exit 1' TERM INT
cg=/sys/fs/cgroup
mkdir -p $cg
[ -e $cg/cgroup.controllers ] || mount -t cgroup2 none $cg 2>/dev/null
dur=$(scaled 20 5)
echo "eevdf-fuzz: seed 1, 10000 deterministic calls, ${dur} s concurrent, $(nproc) CPUs"
# In the background so that a TERM reaches the trap, which stops it cleanly.
eevdf-fuzz --seed 1 --deterministic-calls 10000 --duration-s "$dur" \
	--dump-calls-file /tmp/eevdf-fuzz-calls.txt &
pid=$!
wait "$pid"
rc=$?
pid=""
if [ -n "$orig" ]; then
	now=$(cat $f)
	[ "$now" = "$orig" ] || { echo "FAIL: base_slice_ns is $now, was $orig"; rc=1; }
fi
exit $rc
