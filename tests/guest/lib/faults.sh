# Shared by the fault campaign's tests (sourced after lib/common.sh:
# `. "$(dirname "$0")/lib/faults.sh"`).
#
# slack: how far a task's accounted CPU time may exceed its age. Under TCG the
# scheduler's clock and uptime drift apart by up to 2%. nohz_full CPUs need no more: a
# task alone on one was accounted 0.98-0.99 times its age on distro-stock and 0.90 on
# distro-debug (tools/guest/cputime-probe.sh, Documentation/reliability.md). The 1.44
# measured before came from the way it was read (reliability.md), not from 6.12.
slack=1.05

# cpu_ok PID...: each task's CPU time (sum_exec_runtime, /proc/PID/schedstat) is above 0
# and at most its age (a task runs on one CPU at a time) times $slack, plus 0.1 s; prints
# "cpu time: N tasks, ..." and, on a failure, what to look at (each task's sched lines, the
# machine's CPU time against its uptime). `eevdfctl cputime` (tools/eevdf-guest/src/cputime.rs)
# reads each task's CPU time, then the uptime, then its start time one right after the
# other, in one process: the age is then never shorter than the span the CPU time covers.
# (Reading the uptime once for all tasks and then each task's files with `cut` and `sed` let
# a loaded KASAN guest spend tens of seconds in the loop, and the CPU time of the tasks read
# last took in those seconds, which their ages did not: the soak's three failures of
# 23-fault-policies.)
cpu_ok() {
	eevdfctl cputime --slack-ratio "$slack" --slack-s 0.1 "$@"
}
