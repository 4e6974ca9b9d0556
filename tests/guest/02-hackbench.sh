#!/bin/sh
# hackbench runs to completion and reports a time.
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the loops to run, at least a floor.
scaled() { n=$(( $1 * ${EEVDF_LOAD:-100} / 100 )); [ "$n" -ge "$2" ] && echo "$n" || echo "$2"; }
set -e
out=$(hackbench -g 2 -l "$(scaled 100 10)")
echo "$out"
echo "$out" | grep -q '^Time: [0-9]'
