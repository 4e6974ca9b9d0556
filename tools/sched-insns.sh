#!/usr/bin/env bash
# The fair class's instructions per switch, Rust against stock, in the kernels themselves:
# tools/insnprof under icount (one vCPU, the kernel's own slice, three 300 ms windows of
# logged translation blocks) on the tiny `rust` and `stock` kernels, one row a workload:
# the pipe ping-pong, tasks yielding on one CPU at several queue lengths and mixes (the
# pick's paths: Documentation/pick-cost.md), and hackbench. A row's figure is fair.c's
# and the Rust core's instructions in task context divided by the switches counted
# (calls of the row's switch function on CPU 0); the guest kernel's total is beside it.
# A row that names a work function (hackbench: `unix_stream_sendmsg`, one call a message)
# is also given per unit of work, in a second table: where the kernels switch at different
# rates for the same work, a switch carries different work, and only the unit of work
# compares like with like.
#
#   tools/sched-insns.sh [--rows "pingpong yield-uniform-8 ..."] [--log-ms MS]
#
#   --rows R     the rows to run (default: all of them, about 2 minutes a row and kernel)
#   --log-ms MS  each of the three logged windows, ms of guest time (default 300; the
#                logs take about 6 GB per 300 ms of ping-pong, deleted after each run:
#                longer windows count more switches, and need the disk)
#
# Needs both kernels built (tools/build-kernel.sh rust; tools/build-kernel.sh stock).
# Prints a markdown table; each run's insnprof directory is kept under
# $EEVDF_CACHE/insnprof/sched-insns/<row>-<kernel>/ (table.tsv, console.txt, params), and
# reused while its kernel's vmlinux is older than its table and its params (the row's
# command, switch function and --log-ms) are the same: after a change of the core, only
# the rust kernel's rows run again.
source "$(dirname "$0")/lib.sh"

# name  switch-function  work-function  guest command (eevdf-vm's /eevdf/bin is on the guest's PATH)
ROWS="
pingpong pipe_write - -
yield-uniform-2 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 2 --duration-ms 100000000
yield-uniform-8 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 8 --duration-ms 100000000
yield-uniform-40 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 40 --duration-ms 100000000
yield-uniform-80 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 80 --duration-ms 100000000
yield-uniform-1000 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 1000 --duration-ms 100000000
yield-weights-8 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 8 --mix weights --duration-ms 100000000
yield-weights-80 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 80 --mix weights --duration-ms 100000000
yield-slices-8 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 8 --mix slices --duration-ms 100000000
yield-slices-80 do_sched_yield - /eevdf/bin/eevdf-scale --tasks 80 --mix slices --duration-ms 100000000
hackbench-g2 __schedule unix_stream_sendmsg hackbench -g 2 -l 1000000
"
rows=$(echo "$ROWS" | awk 'NF { print $1 }' | tr '\n' ' ')
log_ms=300
usage() { sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--rows) rows=${2:?}; shift 2 ;;
	--log-ms) log_ms=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ "$log_ms" =~ ^[1-9][0-9]*$ ]] || die "--log-ms wants whole milliseconds, not '$log_ms'"
for r in $rows; do
	echo "$ROWS" | awk -v r="$r" '$1 == r { f = 1 } END { exit !f }' ||
		die "no row '$r' (rows: $(echo "$ROWS" | awk 'NF { printf "%s ", $1 }'))"
done
for k in rust stock; do
	[ -e "$KBUILD_ROOT/$k/vmlinux" ] || die "no $k build (bash tools/build-kernel.sh $k)"
done
cd "$EEVDF_REPO"
step "sched-insns: building eevdf-vm and the guest programs"
cargo build --quiet --release --locked -p eevdf-vm
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

base=$EEVDF_CACHE/insnprof/sched-insns
# total GROUP TABLE: the task-context instructions a switch of a group (kernel, fair,
# rust) from the header of insnprof's table.tsv.
total() { awk -v g="$1" '$1 == "#" && $2 == "total" && $3 == g ":" { print $5; exit }' "$2"; }
switches() { sed -n 's/.*delta_switches=\([0-9]*\).*/\1/p' "$1" | head -1; }
# calls FUNCTION TABLE: the function's task-context calls a switch (insnprof's column 4).
calls() { awk -F'\t' -v f="$1" '$1 == f { print $4; exit }' "$2"; }
declare -A res
n=0
nrows=$(echo $rows | wc -w)
for r in $rows; do
	n=$((n + 1))
	line=$(echo "$ROWS" | awk -v r="$r" '$1 == r')
	fn=$(echo "$line" | awk '{ print $2 }')
	cmd=$(echo "$line" | cut -d' ' -f4-)
	for k in rust stock; do
		kdir=$base/kernels/$k
		out=$base/$r-$k
		params="fn=$fn log_ms=$log_ms cmd=$cmd"
		t=$out/table.tsv
		if [ "$t" -nt "$KBUILD_ROOT/$k/vmlinux" ] && [ "$(cat "$out/params" 2>/dev/null)" = "$params" ]; then
			res[$r,$k]="$(total fair "$t") $(total rust "$t") $(total kernel "$t") $(switches "$t")"
			note "row $n of $nrows, $r on $k: reused ($out, newer than the kernel)"
			continue
		fi
		step "sched-insns: row $n of $nrows, $r on $k"
		mkdir -p "$kdir"
		for f in arch/x86/boot/bzImage System.map vmlinux kernel/sched/fair.o; do
			cp "$KBUILD_ROOT/$k/$f" "$kdir/"
		done
		rm -rf "$out"
		vars=(INSNPROF_VM_ARGS="--icount-shift 3 --cpus 1 --mem-mib 2048" SLICE_NS=
			LOG_MS="$log_ms" INSNPROF_SWITCH_FN="$fn")
		[ "$cmd" = - ] || vars+=(INSNPROF_WORKLOAD="$cmd")
		# A thousand forks under icount take seconds: the windows start after them.
		case "$r" in *-1000) vars+=(INSNPROF_SETTLE_S=20) ;; esac
		env "${vars[@]}" bash tools/insnprof/profile.sh "$kdir" "$out" >"$base/$r-$k.log" 2>&1 ||
			{ tail -20 "$base/$r-$k.log" >&2; die "insnprof failed: $r on $k"; }
		echo "$params" >"$out/params"
		res[$r,$k]="$(total fair "$t") $(total rust "$t") $(total kernel "$t") $(switches "$t")"
		note "$r $k: fair rust kernel switches = ${res[$r,$k]}"
	done
done

echo
echo "| row | switch counted | rust sched insns/switch | stock sched insns/switch | rust/stock | rust kernel insns/switch | stock kernel insns/switch | switches counted (rust, stock) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for r in $rows; do
	fn=$(echo "$ROWS" | awk -v r="$r" '$1 == r { print $2 }')
	read -r rf rr rk rs <<<"${res[$r,rust]}"
	read -r sf sr sk ss <<<"${res[$r,stock]}"
	awk -v r="$r" -v fn="$fn" -v rf="$rf" -v rr="$rr" -v rk="$rk" -v rs="$rs" \
		-v sf="$sf" -v sr="$sr" -v sk="$sk" -v ss="$ss" 'BEGIN {
		a = rf + rr; b = sf + sr
		printf "| %s | `%s` | %.1f | %.1f | %.3f | %.0f | %.0f | %d, %d |\n",
			r, fn, a, b, a / b, rk, sk, rs, ss
	}'
done

worked=$(for r in $rows; do echo "$ROWS" | awk -v r="$r" '$1 == r && $3 != "-" { print r }'; done)
[ -n "$worked" ] || exit 0
echo
echo "Per unit of work (the rows that name a work function; its calls counted as above):"
echo
echo "| row | work counted | rust sched insns/unit | stock sched insns/unit | rust/stock | rust kernel insns/unit | stock kernel insns/unit | units a switch (rust, stock) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for r in $worked; do
	work=$(echo "$ROWS" | awk -v r="$r" '$1 == r { print $3 }')
	read -r rf rr rk _ <<<"${res[$r,rust]}"
	read -r sf sr sk _ <<<"${res[$r,stock]}"
	ru=$(calls "$work" "$base/$r-rust/table.tsv")
	su=$(calls "$work" "$base/$r-stock/table.tsv")
	[ -n "$ru" ] && [ -n "$su" ] || die "$r: no calls of $work in its tables"
	awk -v r="$r" -v w="$work" -v rf="$rf" -v rr="$rr" -v rk="$rk" -v ru="$ru" \
		-v sf="$sf" -v sr="$sr" -v sk="$sk" -v su="$su" 'BEGIN {
		a = (rf + rr) / ru; b = (sf + sr) / su
		printf "| %s | `%s` | %.1f | %.1f | %.3f | %.0f | %.0f | %.2f, %.2f |\n",
			r, w, a, b, a / b, rk / ru, sk / su, ru, su
	}'
done
