#!/bin/sh
# sched_setattr()/sched_getattr() of the per-task slice: round trips, clamps
# and bad inputs get stock 6.12's answers and leave the slice unchanged. Runs
# on every kernel: the stock kernel is the reference. eevdf-slice is built from
# tools/eevdf-guest.
. "$(dirname "$0")/lib/common.sh"
exec eevdf-slice check
