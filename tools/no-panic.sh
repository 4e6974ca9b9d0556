#!/usr/bin/env bash
# The no-panic check: no function in the project's kernel objects may have a path to a
# Rust panic, except the KUnit suites. With CONFIG_RUST_OVERFLOW_CHECKS an overflowing
# `+` panics, as do `unwrap()`, `expect()`, indexing, slicing and `copy_from_slice`
# with a bad length; a panic in the scheduler (or in a debugfs read, which holds a
# runqueue lock with interrupts off while it copies) brings the machine down.
#
#   tools/no-panic.sh KERNEL     check the objects of build KERNEL (e.g. distro-debug)
#   tools/no-panic.sh --canary   check that the check finds what it must: it compiles
#                                tests/no-panic/canary.rs as the kernel compiles Rust
#                                (optimised, overflow checks, panic=abort) and must report
#                                every canary_panics_* function and not canary_clean
#
# What counts as a panic path: a relocation (a call or jump) to anything in
# `core::panicking`, or to a function of `core` whose name has `panic` in it or ends in
# `_fail` or `_failed` (`core::option::unwrap_failed`, `core::result::unwrap_failed`,
# `core::slice::index::slice_index_fail`, `..::len_mismatch_fail`, ...), read from
# `llvm-objdump -dr` with demangled names. Calls into other functions of `core` (the
# formatting machinery, say) are not followed: they are core's own, not ours.
source "$(dirname "$0")/lib.sh"

# panic_paths OBJECT: "FUNCTION -> TARGET" for every panic path in OBJECT.
panic_paths() {
	llvm-objdump -dr --no-show-raw-insn -C "$1" |
		awk '
		/^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); sub(/>:$/, "", fn); next }
		/R_X86_64_/ {
			t = $NF; sub(/[-+]0x[0-9a-f]+$/, "", t)
			if (t !~ /^core::/) next
			last = t; sub(/.*::/, "", last)
			if (t ~ /^core::panicking::/ || last ~ /panic/ || last ~ /_fail(ed)?$/)
				print fn " -> " t
		}' | sort -u
}

if [ "${1:-}" = --canary ]; then
	obj=$(mktemp --suffix=.o)
	trap 'rm -f "$obj"' EXIT
	rustc --edition 2021 --crate-type lib --emit obj -C opt-level=2 -C overflow-checks=on \
		-C panic=abort -o "$obj" "$EEVDF_REPO/tests/no-panic/canary.rs"
	found=$(panic_paths "$obj")
	want=$(grep -o 'pub fn canary_panics_[a-z_]*' "$EEVDF_REPO/tests/no-panic/canary.rs" | sed 's/pub fn //' | sort)
	[ -n "$want" ] || die "no canary_panics_* function in tests/no-panic/canary.rs"
	for f in $want; do
		grep -q "^$f -> " <<<"$found" || die "the check misses the panic path of $f (found: $found)"
	done
	grep -q '^canary_clean ' <<<"$found" && die "the check reports canary_clean, which has no panic path"
	sed 's/^/      /' <<<"$found"
	note "the check finds all $(wc -w <<<"$want") canary panic kinds (above) and passes canary_clean"
	exit 0
fi

kernel=${1:?usage: tools/no-panic.sh KERNEL | --canary}
dir="$KBUILD_ROOT/$kernel/kernel/sched/eevdf"
objs=$(find "$dir" -name '*.o' 2>/dev/null | sort)
[ -n "$objs" ] || die "no objects under $dir: build $kernel first (tools/build-kernel.sh $kernel)"
bad=""
for o in $objs; do
	bad+=$(panic_paths "$o" | awk -F' -> ' '$1 !~ /kunit/ { print "  " $0 }')
done
[ -z "$bad" ] || die "panic paths in the $kernel kernel's Rust (outside KUnit):
$bad"
note "no panic path outside the KUnit suites in $(wc -w <<<"$objs") object(s) of $kernel"
