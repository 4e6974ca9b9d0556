#!/bin/sh
# The boot-time KUnit run: every suite passed, and the sched_eevdf suite ran.
# Prints the KTAP lines, so they are part of the test report.
[ "$EEVDF_KERNEL" = stock ] && { echo "stock kernel: no sched_eevdf suite"; exit 77; }
ktap=$(dmesg | sed -n 's/^\[[ 0-9.]*\] //p' | grep -E '^ *(KTAP|#|ok|not ok|1\.\.)')
echo "$ktap"
echo "$ktap" | grep -q '^ok [0-9]* sched_eevdf$' || { echo "no passing sched_eevdf suite in dmesg"; exit 1; }
if echo "$ktap" | grep -q '^ *not ok'; then echo "a KUnit case failed"; exit 1; fi
