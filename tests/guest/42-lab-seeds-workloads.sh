#!/bin/sh
# The workloads of `eevdf-lab seeds` measure what their labels say, briefly, on any
# kernel with two CPUs or more (they use only what stock 6.12 has):
#
#   eevdf-migrate  seed 003: a sleeper moved by affinity from CPU 0 to CPU 1 while it
#                  sleeps, a hog on each. Its share beside the hog is about half in every
#                  round that sampled (no starvation, no boost), and its lag at placement,
#                  read from the vruntimes (/proc/<pid>/sched), is nowhere near the seed's
#                  failure, which was of seconds: under 100 ms. Not 6.12's clamp itself
#                  (max(2 x slice, tick), checked under icount by eevdf-lab seeds, where
#                  every read is inside it): without icount a vCPU that QEMU does not run
#                  keeps its clock going, and the time is charged to the task that is
#                  current, the hog. Measured: plain TCG on a loaded host (2 vCPUs, 12
#                  rounds each), up to 8.6 ms on rust and 6.4 ms on stock against a 2.8 ms
#                  clamp, with 0.4-7 ms of wake latency; single-threaded TCG on the
#                  distro-debug kernel (4 vCPUs, preempt=none), reads of 10.5 to 40.7 ms,
#                  in rounds that mostly sampled nothing in their 200 ms window (CPU 1 did
#                  not run: share 0 of 0). Not explained beyond that; under icount both
#                  kernels stay inside the clamp.
#   eevdf-forkjob  seed 004: every file was done, in a positive time.
#   eevdf-mixed    seed 002: both groups ran and switched; frames were seen.
#   eevdf-pipejob  seed 001: the consumer read every byte alone and beside a nice 19 hog
#                  (a positive time each), blocked on the empty pipe alone, and the kernel
#                  held nice 0 for it and 19 for the hog (the read-back in the record); a
#                  chunk over the pipe's 64 KiB is refused with its reason.
. "$(dirname "$0")/lib/common.sh"
base=$(cat /sys/kernel/debug/sched/base_slice_ns)
num() {
	case "$2" in *"\"$1\":"*) ;; *) return ;; esac
	v=${2#*\"$1\":}
	echo "${v%%[!0-9.e+-]*}"
}
[ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ] || { echo "needs 2 CPUs"; exit 77; }

out=$(eevdf-migrate --move affinity --from 0 --to 1 --rounds 3 --run-before-ms 50 \
	--sleep-ms 300 --after-ms 1000) || fail "eevdf-migrate exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
# 2 x slice: 6.12's clamp but for the tick (at most 4 ms), for the log.
bound=$((2 * base / 1000))
rounds=${json#*\"rounds\":}
n=0 sampled=0
while :; do
	case "$rounds" in *'"woke_on"'*) ;; *) break ;; esac
	r=${rounds#*\"woke_on\"}
	rounds=$r
	r=${r%%\}*}
	n=$((n + 1))
	lat=$(num wake_latency_us "$r")
	lag=$(num lag_vruntime_us "$r")
	share=$(num share "$r")
	# A round whose sampling window saw no CPU time at all (its vCPU did not run) says
	# nothing about the share: "share 0, estimate 0".
	if [ "$share" = 0.0 ] && [ "$(num lag_us "$r")" = 0.0 ]; then
		echo "round $n: no sample in the window (the vCPU did not run)"
	else
		awk -v s="$share" 'BEGIN { exit !(s >= 0.35 && s <= 0.65) }' ||
			fail "round $n: the sleeper's share beside the hog is $share, not about half"
		sampled=$((sampled + 1))
	fi
	[ -n "$lag" ] || { echo "round $n: no vruntime in /proc/<pid>/sched (SCHED_DEBUG off)"; continue; }
	awk -v l="$lag" 'BEGIN { if (l < 0) l = -l; exit !(l <= 100000) }' ||
		fail "round $n: lag at placement $lag us (over 100 ms)"
	echo "round $n: lag $lag us (2 x slice: $bound us), share $share"
done
[ "$n" = 3 ] || fail "$n rounds reported, want 3"
# Single-threaded TCG runs one vCPU at a time, each for up to QEMU's 100 ms kick period:
# with four busy vCPUs a window can pass without CPU 1 running at all (seen in the
# preempt=none suite beside another guest: every round of a run, 200 ms windows). Then
# there is no share to check: the other workloads are still checked, and then the test
# says it is skipped instead of passing.

out=$(eevdf-forkjob --jobs 2 --files 10 --work-min-us 2000 --work-max-us 5000) ||
	fail "eevdf-forkjob exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
[ "$(num files "$json")" = 10 ] || fail "not 10 files: $json"
awk -v t="$(num elapsed_s "$json")" 'BEGIN { exit !(t > 0) }' || fail "no completion time: $json"

out=$(eevdf-mixed --cpus 0 --compute 2 --interactive 1 --warmup-ms 100 --duration-ms 500) ||
	fail "eevdf-mixed exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
for g in massive_intr interactive; do
	j=${json#*\"name\":\"$g\"}
	[ "$j" != "$json" ] || fail "no group $g: $json"
	[ "$(num switches "$j")" -gt 0 ] || fail "$g never switched: $j"
	[ "$(num loops "$j")" -gt 0 ] || fail "$g did no loops or frames: $j"
done
out=$(eevdf-pipejob --mib 1 --hog nice=19) || fail "eevdf-pipejob exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
for k in elapsed_s slowdown; do
	awk -v t="$(num $k "$json")" 'BEGIN { exit !(t > 0) }' || fail "no $k: $json"
done
c=${json#*\"consumer\":}
[ "$(num nice "$c")" = 0 ] || fail "the consumer's read-back is not nice 0: $json"
h=${json#*\"hogs\":}
[ "$(num nice "${h#*\"hog0\",}")" = 19 ] || fail "the hog's read-back is not nice 19: $json"
# Seed 001's case is a consumer that finds the pipe empty: alone, it blocked for at least
# a quarter of the 16 chunks (about one a chunk when nothing else runs).
a=${json#*\"alone\":}
[ "$(num consumer_blocks "$a")" -ge 4 ] || fail "the consumer blocked fewer than 4 times in 16 chunks: $json"
err=$(eevdf-pipejob --chunk-kib 65 2>&1) && fail "eevdf-pipejob took a 65 KiB chunk"
case "$err" in *"--chunk-kib must be 1 to 64"*) ;; *) fail "a 65 KiB chunk, not the expected refusal: $err" ;; esac
[ "$sampled" -ge 1 ] || { echo "no round of eevdf-migrate sampled its window: CPU 1 did not run"; exit 77; }
