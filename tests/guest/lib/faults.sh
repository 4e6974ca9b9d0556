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
# and at most its age (a task runs on one CPU at a time) times $slack, plus 0.1 s.
# Each task's CPU time, then the uptime, then its start time are read one right after
# the other with the shell's own `read` (no process started between them): the age is
# then never shorter than the span the CPU time covers. (Reading the uptime once for all
# tasks and then each task's files with `cut` and `sed` let a loaded KASAN guest spend
# tens of seconds in the loop, and the CPU time of the tasks read last took in those
# seconds, which their ages did not: the soak's three failures of 23-fault-policies.)
cpu_ok() {
	for p in "$@"; do
		read -r st _ </proc/$p/schedstat || st=-
		read -r up _ </proc/uptime
		read -r line </proc/$p/stat || line=
		echo "$p $st $up ${line##*) }"
	done | awk -v k="$slack" '
	{
		# $1 pid, $2 ns, $3 uptime, then /proc/PID/stat from its state (field 3 of the
		# file, $4 here) on: the start time, field 22 (clock ticks of 1/100 s), is $23.
		if ($2 == "-" || NF < 23) { print "task " $1 " is gone"; err = 1; next }
		age = $3 - $23 / 100; s = $2 / 1e9; sum += s; n++
		if (!(s > 0)) { print "task " $1 " got no CPU time in " age " s"; err = 1 }
		if (s > age * k + 0.1) { print "task " $1 ": " s " s of CPU time in " age " s"; err = 1 }
		if (age > 0 && s / age > r) { r = s / age; rp = $1 }
	}
	END { printf "cpu time: %d tasks, %.2f s in all; the most of its age: task %s, %.3f\n", n, sum, rp, r; exit err }' ||
		{ cpu_diag "$@"; return 1; }
}

# cpu_diag PID...: what to look at when the CPU time is off: each task's sched lines, and
# the machine's CPU time (/proc/stat) against its uptime.
cpu_diag() {
	for p in "$@"; do
		echo "pid $p: $(grep -E '^(se\.exec_start|se\.sum_exec_runtime|se\.nr_migrations|nr_switches|policy|prio) ' /proc/$p/sched 2>/dev/null | tr -s ' ' | tr '\n' ' ')"
	done
	awk -v up="$(cut -d' ' -f1 /proc/uptime)" '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; printf "/proc/stat: %.1f s of CPU time (all CPUs) in %.1f s of uptime\n", t / 100, up }' /proc/stat
}
