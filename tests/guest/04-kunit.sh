#!/bin/sh
# The boot-time KUnit run: every suite passed, and both of the project's suites
# ran: sched_eevdf (the core on its own tree) and sched_eevdf_bindings (the core
# through the real bindings on a private cfs_rq). Prints the KTAP lines, so they
# are part of the test report.
. "$(dirname "$0")/lib/common.sh"
[ "$EEVDF_KERNEL" = stock ] && { echo "stock kernel: no sched_eevdf suites"; exit 77; }
ktap=$(dmesg | sed -n 's/^\[[ 0-9.]*\] //p' | grep -E '^ *(KTAP|#|ok|not ok|1\.\.)')
echo "$ktap"
for s in sched_eevdf sched_eevdf_bindings sched_eevdf_debugfs; do
	echo "$ktap" | grep -q "^ok [0-9]* $s\$" || { echo "no passing $s suite in dmesg"; exit 1; }
done
if echo "$ktap" | grep -q '^ *not ok'; then echo "a KUnit case failed"; exit 1; fi
