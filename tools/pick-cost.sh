#!/usr/bin/env bash
# Instructions per pick on the host, the Rust core's pick_eevdf() against 6.12.117's own
# (fair.c, extracted from the pristine tarball by tests/fair-c-diff), on the same
# runqueue states: Documentation/pick-cost.md.
#
#   bash tools/pick-cost.sh [--samples N] [--seed S] [--tasks "2 8 40 80 1000"] [--mixes "uniform slices lag weights"]
#
# Builds tests/fair-c-diff's pick-cost (release: rustc for the core, clang -O2 for the C),
# runs it once per row under `valgrind --tool=callgrind`, collecting only inside its two
# out-of-line picks, and prints a Markdown table: instructions per pick (each side's
# inclusive count over the samples), their ratio, which path the picks took, and how
# often the tree's earliest deadline was eligible where the tree decided.
# Deterministic: the same seed gives the same table. Host numbers, not the kernel's.
source "$(dirname "$0")/lib.sh"
samples=4000
seed=1
tasks="2 8 40 80 1000"
mixes="uniform slices lag weights"
while [ $# -gt 0 ]; do
	case $1 in
	--samples) samples=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--tasks) tasks=$2; shift 2 ;;
	--mixes) mixes=$2; shift 2 ;;
	*) die "unknown argument $1 (see the comment at the top of $0)" ;;
	esac
done
command -v valgrind >/dev/null || die "valgrind missing (apt-get install valgrind)"
[ -f "$KERNEL_TARBALL" ] || die "$KERNEL_TARBALL missing: run tools/setup.sh (linux-source-6.12)"
cd "$EEVDF_REPO"
step "pick-cost: build"
KERNEL_TARBALL=$KERNEL_TARBALL cargo build --quiet --release --locked -p fair-c-diff --bin pick-cost
bin=target/release/pick-cost
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "| mix | tasks | mean nr_running | rust instr/pick | stock instr/pick | rust/stock | rust O(1) leftmost | rust shortcut (E) | stock O(1) leftmost | earliest deadline eligible | parity, one queued |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for mix in $mixes; do
	for n in $tasks; do
		step "pick-cost: $mix, $n tasks"
		valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
			--toggle-collect='pick_cost::rust_pick' --toggle-collect='pick_cost::c_pick' \
			"$bin" --mix "$mix" --tasks "$n" --samples "$samples" --seed "$seed" \
			>"$out/log" 2>"$out/vg" || { cat "$out/log" "$out/vg" >&2; die "pick-cost failed"; }
		callgrind_annotate --inclusive=yes "$out/cg" >"$out/ann" 2>/dev/null
		# Inclusive Ir of the core's out-of-line pick and of fair.c's pick_eevdf().
		ir() { awk -v f="$1" '$0 ~ f { gsub(",", "", $1); print $1; exit }' "$out/ann"; }
		rust=$(ir '[?]:pick_cost::rust_pick ')
		stock=$(ir '[?]:pick_eevdf ')
		awk -v mix="$mix" -v n="$n" -v rust="$rust" -v stock="$stock" '
			/^pick-cost:/ { for (i = 1; i <= NF; i++) if ($i == "nr_running") nr = $(i + 1) }
			/^rust:/ { rl = $7; ro = $3; rp = $5 }
			/^stock:/ { sl = $7 }
			/^tree:/ { for (i = 1; i <= NF; i++) { if ($i == "in") ee = $(i + 1); if ($i == "decides") sc = $(i + 1) } }
			/^samples/ { s = $2 }
			END {
				if (s == 0 || rust == "" || stock == "") { print "no counts" > "/dev/stderr"; exit 1 }
				gsub(",", "", nr)
				printf "| %s | %d | %s | %.1f | %.1f | %.2f | %s | %s | %s | %s | %.1f%% |\n", mix, n, nr,
					rust / s, stock / s, rust / stock, rl, sc, sl, ee, ro + rp
			}' "$out/log"
	done
done
