#!/bin/sh
# Which way the pick goes, by workload and queue length: the rust kernel's pick-path
# counters (pick_fast, pick_shortcut, pick_descent; Documentation/debugfs.md) and
# picks_ineligible_earliest, the picks where 6.12's pick leaves its O(1) case too (the
# earliest deadline of all is not eligible). One markdown row per workload. Run by
#   target/release/eevdf-vm --kernel rust --cpus 1 --icount-shift 3 tools/guest/pick-paths.sh
# (about 15 minutes under TCG; Documentation/pick-cost.md has a run's table).
s=/sys/kernel/debug/sched/eevdf/stats
[ -e $s ] || { echo "no $s (a stock kernel, or CONFIG_SCHED_EEVDF_RUST_STATS=n)"; exit 1; }
echo 1 >/proc/sys/kernel/sched_schedstats
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f%%", 100 * a / b; else printf "-" }'; }
row() { # row LABEL COMMAND...: reset, run, one row of the window's counts
	label=$1
	shift
	echo 0 >$s
	"$@" >/dev/null 2>&1 || { echo "| $label | the workload failed (exit $?) |||||"; return; }
	cat $s >/tmp/paths
	g() { eevdfctl stats --from /tmp/paths --get "$1"; }
	p=$(g picks)
	echo "| $label | $p | $(pct "$(g pick_fast)" "$p") | $(pct "$(g pick_shortcut)" "$p") |" \
		"$(pct "$(g pick_descent)" "$p") | $(pct "$(g picks_ineligible_earliest)" "$p") |"
}
echo "| workload | picks | pick_fast | pick_shortcut | pick_descent | picks_ineligible_earliest |"
echo "|---|---:|---:|---:|---:|---:|"
for mix in uniform weights slices; do
	for n in 2 8 40 80; do
		[ $mix != uniform ] && [ $n = 2 ] && continue
		row "$n tasks yielding, $mix" eevdf-scale --tasks $n --mix $mix --duration-ms 1000
	done
done
for mix in uniform weights slices; do
	for n in 8 80; do
		row "$n tasks spinning, $mix" eevdf-scale --mode spin --tasks $n --mix $mix --duration-ms 2000
	done
done
# Nested cgroups: the same tasks in three groups (a/b and a/d under a, and c; cpu.weight
# 200, 50, 300 and 100), so that group entities with share weights queue at two levels.
cg=/sys/fs/cgroup
mkdir -p $cg
mount -t cgroup2 none $cg 2>/dev/null
echo +cpu >$cg/cgroup.subtree_control
mkdir -p $cg/a/b $cg/a/d $cg/c
echo +cpu >$cg/a/cgroup.subtree_control
echo 200 >$cg/a/cpu.weight
echo 50 >$cg/a/b/cpu.weight
echo 300 >$cg/a/d/cpu.weight
echo 100 >$cg/c/cpu.weight
nested() { # nested N MIX: N tasks yielding on CPU 0 in each of a/b, a/d and c
	pids=
	for g in a/b a/d c; do
		sh -c "echo \$\$ >$cg/$g/cgroup.procs && exec eevdf-scale --tasks $1 --mix $2 --duration-ms 1000" &
		pids="$pids $!"
	done
	rc=0
	for p in $pids; do wait "$p" || rc=$?; done
	return $rc
}
for mix in uniform weights; do
	for n in 3 27; do
		row "3 nested groups x $n tasks yielding, $mix" nested $n $mix
	done
done
row "hackbench -g 2 -l 200 (80 tasks)" hackbench -g 2 -l 200
for x in 1 0.1; do
	row "waker ${x}x, load 1x, beside hackbench -g 2 -l 200" \
		eevdf-waker --interval-us 1000 --slice-base-x $x --duration-ms 600000 -- hackbench -g 2 -l 200
done
