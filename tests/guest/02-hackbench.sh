#!/bin/sh
# hackbench runs to completion and reports a time.
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the loops to run, at least a floor.
. "$(dirname "$0")/lib/common.sh"
set -e
out=$(hackbench -g 2 -l "$(scaled 100 10)")
echo "$out"
echo "$out" | grep -q '^Time: [0-9]'
