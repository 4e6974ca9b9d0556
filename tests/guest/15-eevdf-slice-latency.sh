#!/bin/sh
# A periodic 1 ms waker against CPU hogs on the same CPU has a lower wakeup
# latency with a 100 us slice than with a 10 ms slice (PREEMPT_SHORT and the
# earlier deadline of a short request).
for i in 1 2 3; do
	taskset 0x2 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
sleep 0.5
short=$(taskset 0x2 eevdf-slice waker 1000 100 1500)
long=$(taskset 0x2 eevdf-slice waker 1000 10000 1500)
kill $hogs; wait 2>/dev/null
echo "$short"
echo "$long"
s=$(echo "$short" | sed 's/.*avg_us \([0-9]*\).*/\1/')
l=$(echo "$long" | sed 's/.*avg_us \([0-9]*\).*/\1/')
[ "$s" -lt "$l" ]
