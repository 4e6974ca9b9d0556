#!/usr/bin/env bash
# What the live oracle (CONFIG_SCHED_EEVDF_RUST_VERIFY) costs, and where it makes the
# guest too slow: one boot of a VERIFY kernel (default distro-debug), the checks turned
# off and on in turn (`echo off|on > /sys/kernel/debug/sched/eevdf/verify`), the same
# workloads in each state:
#
#   - a pipe ping-pong pinned to CPU 0 (every bounce: a dequeue, an enqueue, a pick, a
#     wakeup decision and two switches of current);
#   - hackbench -g 2 -l 50 on both vCPUs;
#   - eevdf-scale --mode yield with 10, 100 and 1000 tasks on CPU 0: every yield is a
#     pick among all of them, and the checks walk the whole runqueue.
#
#   tools/verify-cost.sh [KERNEL] [REPS] [TASKS]   (defaults: distro-debug, 2, "10 100 1000")
#
# 2 vCPUs under -icount shift=3: guest time counts executed instructions, so the ratio
# on/off is the instructions the checks add, whatever the host's load. The other debug
# options (KASAN, lockdep, ...) are in both states. Prints a table of medians.
# `nosoftlockup`: a KASAN kernel under icount unpacks its initramfs for longer than the
# soft-lockup threshold of guest time (seen: "soft lockup - CPU#0 stuck for 27s!
# [swapper/0:1]" during boot), which would fail the boot before anything is measured.
source "$(dirname "$0")/lib.sh"
kernel=${1:-distro-debug}
reps=${2:-2}
tasks=${3:-10 100 1000}
for n in $tasks; do [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "TASKS must be positive integers, not '$n'"; done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer, not '$reps'"
cd "$EEVDF_REPO"
grep -q '^CONFIG_SCHED_EEVDF_RUST_VERIFY=y' "$KBUILD_ROOT/$kernel/.config" 2>/dev/null ||
	die "$kernel is not built with CONFIG_SCHED_EEVDF_RUST_VERIFY (tools/build-kernel.sh distro-debug)"
cargo build --quiet --release --locked -p eevdf-vm
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/run.sh" <<GUEST
f=/sys/kernel/debug/sched/eevdf/verify
for rep in \$(seq $reps); do
	for st in off on; do
		echo \$st >\$f
		eevdf-pingpong --cpu 0 --duration-ms 1000 |
			sed -n "s/.*\"switches_per_s\":\([0-9.e+]*\).*/@@ \$st pingpong_switches_per_s \1/p"
		hackbench -g 2 -l 50 | sed -n "s/^Time: \([0-9.]*\)/@@ \$st hackbench_s \1/p"
		for n in $tasks; do
			eevdf-scale --cpu 0 --mode yield --tasks \$n --duration-ms 1000 |
				sed -n "s/.*\"ns_per_switch\":\([0-9.e+]*\).*/@@ \$st yield_\${n}_tasks_ns_per_switch \1/p"
		done
	done
done
echo on >\$f
cat \$f
GUEST
step "verify-cost: one boot of $kernel, 2 vCPUs, icount, $reps reps of each state"
t0=$(now)
out=$(target/release/eevdf-vm --kernel "$kernel" --cpus 2 --mem-mib 1024 --icount-shift 3 \
	--timeout-s 3600 --append nosoftlockup --log "$EEVDF_CACHE/verify-cost.console" "$work/run.sh") || die "the boot failed (console: $EEVDF_CACHE/verify-cost.console):
$out"
note "took $(($(now) - t0)) s"
echo "$out" | grep -A5 '^cpu checks' || true
res=$work/res
echo "$out" | sed -n 's/^@@ \(on\|off\) \([a-z0-9_]*\) \([0-9][0-9.e+]*\)$/\1 \2 \3/p' >"$res"
median() { awk -v s="$1" -v m="$2" '$1 == s && $2 == m { print $3 }' "$res" | sort -g |
	awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo
echo "VERIFY cost on $kernel (medians of $reps, 2 vCPUs, -icount shift=3)"
echo "| metric | verify off | verify on | on/off |"
echo "|---|---|---|---|"
for m in $(awk '{ print $2 }' "$res" | awk '!seen[$0]++'); do
	a=$(median off "$m") b=$(median on "$m")
	awk -v m="$m" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.4g | %.4g | %.2f |\n", m, a, b, b / a }'
done
