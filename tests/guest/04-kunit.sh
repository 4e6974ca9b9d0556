#!/bin/sh
# The in-kernel KUnit suites of the Rust EEVDF core ran at boot and passed:
# sched_eevdf (the core's own tree) and sched_eevdf_bindings (the core through
# the real bindings on a private cfs_rq). Prints their KTAP lines.
[ "$EEVDF_KERNEL" = stock ] && exit 77
log=$(dmesg)
echo "$log" | sed -n 's/^\[[ 0-9.]*\] //p' | grep -E 'sched_eevdf|# (live_features|defaults|no_eligible|bias_eligible|mixed_workload)|ok [0-9]+ (live_features|defaults|no_eligible|bias_eligible|mixed_workload)|steps|live features'
for s in sched_eevdf sched_eevdf_bindings; do
	echo "$log" | grep -qE "(^|[] ])ok [0-9]+ $s\$" || { echo "suite $s did not pass"; exit 1; }
done
! echo "$log" | grep -qE "not ok [0-9]+ (sched_eevdf|live_features|defaults|no_eligible|bias_eligible|mixed_workload)"
