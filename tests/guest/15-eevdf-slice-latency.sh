#!/bin/sh
# A periodic 1 ms waker against CPU hogs on the same CPU has a lower wakeup
# latency with a 100 us slice than with a 10 ms slice (PREEMPT_SHORT and the
# earlier deadline of a short request). eevdf-waker prints a summary and an
# @@json record; the comparison uses the record's avg_us.
for i in 1 2 3; do
	taskset 0x2 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
sleep 0.5
short=$(eevdf-waker --cpu 1 --interval-us 1000 --slice-us 100 --duration-ms 1500)
long=$(eevdf-waker --cpu 1 --interval-us 1000 --slice-us 10000 --duration-ms 1500)
kill $hogs; wait 2>/dev/null
echo "$short"
echo "$long"
avg() { echo "$1" | sed -n 's/^@@json .*"avg_us":\([0-9.e+-]*\).*/\1/p'; }
s=$(avg "$short")
l=$(avg "$long")
[ -n "$s" ] && [ -n "$l" ] || { echo "no avg_us in eevdf-waker's output"; exit 1; }
echo "avg_us: 100 us slice $s, 10 ms slice $l"
awk -v s="$s" -v l="$l" 'BEGIN { exit !(s + 0 < l + 0) }'
