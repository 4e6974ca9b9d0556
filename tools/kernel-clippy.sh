#!/usr/bin/env bash
# clippy on the project's kernel crate (kernel/sched_eevdf_glue.rs with the core,
# debugfs/ and the KUnit suites), with the exact flags the kernel build compiles it
# with (its Kbuild command line, from the build's .cmd file), the kernel's clippy lints
# (-Wclippy::all, undocumented_unsafe_blocks, ...) and the crate's own deny list (no
# unwrap, expect, panic, indexing or overflowing arithmetic outside KUnit). Any warning
# fails. It type-checks only (metadata), into a temporary directory: the build's
# objects are untouched.
#
#   tools/kernel-clippy.sh KERNEL     (a kernel built by tools/build-kernel.sh)
source "$(dirname "$0")/lib.sh"
kernel=${1:?usage: tools/kernel-clippy.sh KERNEL}
build="$KBUILD_ROOT/$kernel"
cmdfile="$build/kernel/sched/eevdf/kernel/.sched_eevdf_glue.o.cmd"
[ -f "$cmdfile" ] || die "no $cmdfile: build $kernel first (tools/build-kernel.sh $kernel)"
command -v clippy-driver >/dev/null || die "no clippy-driver: run tools/setup.sh"
cmd=$(sed -n 's#^savedcmd_kernel/sched/eevdf/kernel/sched_eevdf_glue.o := ##p' "$cmdfile")
[[ "$cmd" == *" rustc "* ]] || die "unexpected command line in $cmdfile"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cmd=${cmd/ rustc / clippy-driver }
cmd=$(sed -E "s#--out-dir [^ ]+#--out-dir $out#; s#--emit=dep-info=[^ ]+#--emit=dep-info=$out/glue.d#; s#--emit=obj=[^ ]+#--emit=metadata=$out/glue.rmeta#" <<<"$cmd")
cd "$build"
# The kernel's Makefile exports RUSTC_BOOTSTRAP=1 for its -Z flags.
if ! log=$(RUSTC_BOOTSTRAP=1 eval "$cmd -Dwarnings" 2>&1); then
	printf '%s\n' "$log"
	die "clippy on the $kernel kernel's Rust: the warnings above"
fi
note "clippy clean: the $kernel kernel's Rust, with the kernel's flags and the crate's deny list"
