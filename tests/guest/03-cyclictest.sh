#!/bin/sh
# cyclictest (SCHED_OTHER, as the fair class sees it) runs and summarises.
set -e
out=$(cyclictest -q -m -t 1 -p 0 -i 1000 -l 500)
echo "$out"
echo "$out" | grep -q 'Max: *[0-9]'
