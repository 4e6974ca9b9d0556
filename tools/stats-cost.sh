#!/usr/bin/env bash
# What the per-CPU EEVDF counters cost while they count (when nobody reads them):
# the rust kernel against the same tree and config with
# CONFIG_SCHED_EEVDF_RUST_STATS=n, both with schedstats on (the counters count
# only then; schedstats' own cost is then in both).
#
#   tools/stats-cost.sh [BOOTS_PER_KERNEL]     (default 6; about a minute per boot)
#
# Boots alternate (rust, nostats, rust, ...). Each boot runs, three times each, a
# pipe ping-pong pinned to one CPU (every bounce is a pick, a wakeup decision
# and a placement: the paths that count) and hackbench -g 4 -l 200. Prints the
# median of every run per kernel, the interquartile range, and the ratio of
# medians. The guests run with -icount shift=3 (eevdf-vm --icount-shift): guest
# time counts executed instructions, so the host's load does not enter and a
# difference in the instructions the counters add is what the times show.
source "$(dirname "$0")/lib.sh"
boots=${1:-6}
[[ "$boots" =~ ^[1-9][0-9]*$ ]] || die "BOOTS_PER_KERNEL must be a positive integer, not '$boots'"

bash "$EEVDF_REPO/tools/build-kernel.sh" rust
bash "$EEVDF_REPO/tools/build-kernel.sh" nostats
cd "$EEVDF_REPO"
cargo build --quiet --release --locked -p eevdf-vm
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/run.sh" <<'GUEST'
[ -e /sys/kernel/debug/sched/eevdf/stats ] && echo "@@ stats yes" || echo "@@ stats no"
echo 1 >/proc/sys/kernel/sched_schedstats
for i in 1 2 3; do
	eevdf-pingpong --cpu 0 --duration-ms 2000 | sed -n 's/.*"switches_per_s":\([0-9.e+]*\).*/@@ pingpong_switches_per_s \1/p'
	hackbench -g 4 -l 200 | sed -n 's/^Time: \([0-9.]*\)/@@ hackbench_s \1/p'
done
GUEST
res=$work/results
t0=$(now)
total=$((boots * 2))
n=0
for i in $(seq "$boots"); do
	for k in rust nostats; do
		n=$((n + 1))
		note "boot $n/$total: $k ($(($(now) - t0)) s elapsed)"
		out=$(target/release/eevdf-vm --kernel "$KBUILD_ROOT/$k/arch/x86/boot/bzImage" --cpus 2 \
			--icount-shift 3 --timeout-s 600 "$work/run.sh") || die "$k boot $i failed:\n$out"
		want=yes
		[ $k = nostats ] && want=no
		echo "$out" | grep -q "^@@ stats $want" || die "$k kernel: stats file presence is not '$want'"
		echo "$out" | sed -n "s/^@@ \([a-z_]*\) \([0-9][0-9.e+]*\)$/$k \1 \2/p" >>"$res"
	done
done

cp "$res" "$EEVDF_CACHE/stats-cost-results.txt"
echo
echo "counting cost: $boots boots per kernel x 3 runs, 2 vCPUs (QEMU TCG, -icount shift=3)"
echo "(raw runs: $EEVDF_CACHE/stats-cost-results.txt)"
# summary KERNEL METRIC: "median q1 q3 n" of that kernel's runs (sorted with sort -g;
# mawk has no asort).
summary() {
	awk -v k="$1" -v m="$2" '$1 == k && $2 == m { print $3 }' "$res" | sort -g |
		awk '{ v[NR] = $1 } END {
			n = NR; med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			print med, v[int((n + 3) / 4)], v[int((3 * n + 3) / 4)], n }'
}
echo "| metric | rust (counters) median [IQR] | nostats median [IQR] | rust/nostats |"
echo "|---|---|---|---|"
for m in $(awk '{ print $2 }' "$res" | sort -u); do
	read -r a a1 a3 an <<<"$(summary rust "$m")"
	read -r b b1 b3 bn <<<"$(summary nostats "$m")"
	awk -v m="$m" -v a="$a" -v a1="$a1" -v a3="$a3" -v b="$b" -v b1="$b1" -v b3="$b3" 'BEGIN {
		printf "| %s | %.5g [%.5g, %.5g] | %.5g [%.5g, %.5g] | %.4f |\n", m, a, a1, a3, b, b1, b3, a / b }'
done
