#!/bin/sh
# The workloads of `eevdf-lab next` measure what their labels say, briefly,
# on any kernel (they use only what stock 6.12 has):
#
#   eevdf-rtapp  a 0.1 ms-slice periodic task (1 ms period, 0.3 ms run) and a
#                3 ms-slice hog on CPU 0: each task's policy and slice as
#                sched_getattr and /proc/thread-self/sched show them are the
#                asked-for ones; activations + skipped periods = the 1 ms grid
#                points of the window; the two shares fill the busy CPU.
#   eevdf-msgr   1 messenger x 2 workers: requests were served, the latency
#                quantiles are ordered, the workers are SCHED_OTHER with the
#                base slice.
#   eevdf-storm  T (3 ms slice) changing its own slice every 200 us against C:
#                a hundred changes or more, none failed; both ran (shares fill the
#                CPU); T's runs and C's waits were seen. Then T moving itself
#                between two threaded cgroups: changes made, none failed, T's
#                runs seen across its moves, and the groups gone afterwards.
. "$(dirname "$0")/lib/common.sh"
s=/sys/kernel/debug/sched/base_slice_ns
base=$(cat $s)
# num KEY JSON: the first number after "KEY": in JSON (empty if none).
num() {
	case "$2" in *"\"$1\":"*) ;; *) return ;; esac
	v=${2#*\"$1\":}
	echo "${v%%[!0-9.e+-]*}"
}
# ge A B: A >= B (decimals).
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

out=$(eevdf-rtapp --cpu 0 --task period_us=1000,run_us=300,slice_us=100,name=short \
	--hog slice_us=3000,name=long --warmup-ms 100 --duration-ms 500) ||
	fail "eevdf-rtapp exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
# The tasks in order: short, then long.
short=${json#*\"name\":\"short\"}
short=${short%%\"name\":\"long\"*}
long=${json#*\"name\":\"long\"}
for t in short:100000 long:3000000; do
	name=${t%:*} want=${t#*:}
	eval "j=\$$name"
	echo "$j" | grep -q '"policy":"other"' || fail "$name is not SCHED_OTHER: $j"
	[ "$(num slice_effective_ns "$j")" = "$want" ] || fail "$name: sched_getattr slice, want $want: $j"
	[ "$(num proc_slice_ns "$j")" = "$want" ] || fail "$name: /proc se.slice, want $want: $j"
done
p=$(num periods "$short") k=$(num skipped "$short")
echo "short: $p activations + $k skipped periods in 500 ms"
[ $((p + k)) -ge 495 ] && [ $((p + k)) -le 501 ] || fail "short: $p + $k is not the 500 grid points"
ss=$(num share "$short") sl=$(num share "$long")
echo "shares: short $ss, long $sl"
ge "$ss" 0.05 && ge "$sl" 0.3 || fail "a task starved"
ge "$(awk -v a="$ss" -v b="$sl" 'BEGIN { print a + b }')" 0.8 || fail "the shares do not fill CPU 0"

out=$(eevdf-msgr --messengers 1 --workers 2 --work-us 50 --warmup-ms 100 --duration-ms 500) ||
	fail "eevdf-msgr exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
[ "$(num requests "$json")" -gt 100 ] || fail "fewer than 100 requests: $json"
q=${json#*\"wakeup\":}
p50=$(num p50_us "$q") p90=$(num p90_us "$q") p99=$(num p99_us "$q") p999=$(num p999_us "$q")
ge "$p90" "$p50" && ge "$p99" "$p90" && ge "$p999" "$p99" || fail "quantiles out of order: $q"
w=${json#*\"worker\":}
echo "$w" | grep -q '"policy":"other"' || fail "workers are not SCHED_OTHER: $w"
[ "$(num slice_effective_ns "$w")" = "$base" ] ||
	fail "workers' slice is not the base slice $base: $w"

out=$(eevdf-storm --cpu 0 --change slice --warmup-ms 100 --duration-ms 500) ||
	fail "eevdf-storm exited $?"
echo "$out" | grep -v '^@@json'
json=$(echo "$out" | grep '^@@json') || fail "no result line"
c=$(num changes "$json") e=$(num change_errors "$json")
# Guest time is wall time here (no icount): a loaded host takes CPU from the vCPUs and the
# storm's changes from it (487 on debug-verify at 4 vCPUs, the host running three other
# guests, 2026-12-03, where CI had passed 500). A hundred is a storm; none failing is
# the point.
[ "$c" -ge 100 ] && [ "$e" = 0 ] || fail "$c changes, $e failed (want >= 100 and none)"
t=${json#*\"target\":}
[ "$(num slice_requested_ns "$t")" = 3000000 ] && [ "$(num proc_slice_ns "$t")" = 3000000 ] ||
	fail "T's slice is not 3 ms: $t"
echo "$json" | grep -q '"target_runs":{' && echo "$json" | grep -q '"competitor_waits":{' ||
	fail "no runs or waits recorded: $json"
ts=$(num target_share "$json") cs=$(num competitor_share "$json")
ge "$ts" 0.2 && ge "$cs" 0.2 || fail "a hog starved: T $ts, C $cs"

grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
out=$(eevdf-storm --cpu 0 --change cgroup --warmup-ms 100 --duration-ms 300) ||
	fail "eevdf-storm --change cgroup exited $?"
json=$(echo "$out" | grep '^@@json') || fail "no result line (cgroup)"
c=$(num changes "$json") e=$(num change_errors "$json")
# A move takes the cgroup locks: on a debug kernel far fewer fit in 300 ms than on the
# tiny one (about 650 there), and guest time is wall time here: distro-debug at 4 vCPUs
# made 12 in tools/test.sh on a 2-core host on 2026-12-04 (none failed), where earlier
# runs had passed 30. That moves are made and none fails is the point.
[ "$c" -ge 5 ] && [ "$e" = 0 ] || fail "cgroup moves: $c made, $e failed (want >= 5 and none)"
# T's runs go on through its own moves: a move that the competitor did not interrupt is
# part of the run, so the longest run is longer than nothing.
tmax=$(echo "$json" | sed -n 's/.*"target_runs":{[^}]*"max_us":\([0-9.]*\).*/\1/p')
case $tmax in "" | 0 | 0.0) fail "cgroup storm: T's longest run is '$tmax' (moves end every run)" ;; esac
if ls -d /sys/fs/cgroup/eevdf-storm-* >/dev/null 2>&1; then
	fail "eevdf-storm left its cgroups behind"
fi
