#!/bin/sh
# A periodic waker against three CPU hogs on its CPU waits less on the runqueue
# with a slice shorter than the hogs' than with one longer than theirs: the
# short request has the earlier virtual deadline, and PREEMPT_SHORT lets it cut
# into a hog's protected slice.
# The measure is the waker's run delay per wakeup (schedstat), the part of its
# latency the pick decides; the wall-clock lateness also includes the host not
# running the vCPU, which under TCG swamps the rest. Three alternating rounds of
# each; the medians are compared.
#
# The claim holds in one regime (seed 000): the waker stays inside its share
# and inside its short slice. A waker that needs more than its fair share per
# period leaves every sleep with negative lag and waits for V to catch up,
# whatever its slice (fairness, not the slice); a request it overruns every
# time buys no earlier deadline. What a wakeup costs the waker differs by
# kernel (over 100 us of CPU on the debug kernel under TCG: lockdep, KASAN, and
# the other vCPUs' turns on QEMU's one thread), so a calibration run measures it
# first. The short slice is at least three times that cost, the hogs' slice four
# times the short one, the long slice twice the hogs' at least (the kernel's
# 100 ms at most), the period at least sixteen times the cost (a quarter of the
# CPU is the waker's share among four; the margins absorb the host's noise
# under realtime TCG). The test checks and prints the regime it ran in.
. "$(dirname "$0")/lib/common.sh"
for i in 1 2 3; do
	taskset 0x2 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
sleep 0.5
delay() { echo "$1" | sed -n 's/^@@json .*"run_delay_avg_us":\([0-9.e+-]*\).*/\1/p'; }
runtime() { echo "$1" | sed -n 's/^@@json .*"run_avg_us":\([0-9.e+-]*\).*/\1/p'; }
on_fail() { kill $hogs; }
# Calibration: the waker's CPU time per wakeup, at a long period.
out=$(eevdf-waker --cpu 1 --interval-us 10000 --slice-us 100 --duration-ms 1000)
cost=$(runtime "$out")
[ -n "$cost" ] || fail "no run_avg_us in eevdf-waker's output"
# short = max(100, 3 * cost) us, period = max(1000, 16 * cost) us, rounded up.
short_us=$(awk -v c="$cost" 'BEGIN { s = int(3 * c + 0.999); print (s < 100 ? 100 : s) }')
period_us=$(awk -v c="$cost" 'BEGIN { p = int(16 * c + 0.999); print (p < 1000 ? 1000 : p) }')
# long = 8 * short, at least 10 ms, at most the kernel's 100 ms.
hog_us=$((4 * short_us))
long_us=$(awk -v h="$hog_us" 'BEGIN { l = 8 * h; print (l > 100000 ? 100000 : l) }')
echo "calibration: ${cost} us of CPU per wakeup; short slice ${short_us} us," \
	"hogs' slice ${hog_us} us, long slice ${long_us} us, period ${period_us} us"
[ $((hog_us * 2)) -le $long_us ] || fail "a wakeup costs too much here for a 100 ms slice to be long"
for h in $hogs; do
	eevdf-slice set "$h" $((hog_us * 1000)) other >/dev/null || fail "cannot set hog $h's slice"
done
eevdf-slice get "$(echo $hogs | cut -d' ' -f1)"
short="" long="" runs=""
for round in 1 2 3; do
	for us in $short_us $long_us; do
		out=$(eevdf-waker --cpu 1 --interval-us $period_us --slice-us $us --duration-ms 2000)
		echo "$out" | grep -v '^@@json'
		d=$(delay "$out")
		[ -n "$d" ] || fail "no run_delay_avg_us in eevdf-waker's output"
		runs="$runs $(runtime "$out")"
		if [ $us = $short_us ]; then short="$short $d"; else long="$long $d"; fi
	done
done
kill $hogs
wait 2>/dev/null
median() { echo $* | tr ' ' '\n' | sort -g | sed -n 2p; }
# The regime: CPU per wakeup over the period against the share, 1/4, for the
# median of the six runs (the largest printed too).
r=$(echo $runs | tr ' ' '\n' | sort -g | sed -n 3p)
rmax=$(echo $runs | tr ' ' '\n' | sort -g | tail -n 1)
need=$(awk -v r="$r" -v p="$period_us" 'BEGIN { printf "%.3f", r / p }')
echo "regime: the waker needs $need of the CPU (share 0.250), $r us per wakeup" \
	"(median of the runs; largest $rmax us)"
awk -v n="$need" 'BEGIN { exit !(n + 0 < 0.25) }' ||
	{ echo "the waker needed more than its share: not the slice's regime"; exit 1; }
awk -v r="$r" -v s="$short_us" 'BEGIN { exit !(r + 0 < s + 0) }' ||
	{ echo "the waker overran its short slice: not the slice's regime"; exit 1; }
s=$(median $short)
l=$(median $long)
echo "run delay per wakeup, median of 3: ${short_us} us slice $s us, ${long_us} us slice $l us"
awk -v s="$s" -v l="$l" 'BEGIN { exit !(s + 0 < l + 0) }'
