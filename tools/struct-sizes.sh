#!/usr/bin/env bash
# Print sizeof(struct sched_entity) and sizeof(struct cfs_rq) as a kernel build
# sees them: compile a two-line C file with the exact command line Kbuild used
# for kernel/sched/fair.o in that build directory, and read the constants from
# the assembly. No debug info or pahole needed.
#
#   tools/struct-sizes.sh rust|debug|stock
source "$(dirname "$0")/lib.sh"
name=${1:-rust}
out=$KBUILD_ROOT/$name
cmdfile=$out/kernel/sched/.fair.o.cmd
[ -f "$cmdfile" ] || die "no $cmdfile: build it first (tools/build-kernel.sh $name)"
cmd=$(sed -n 's/^savedcmd_kernel\/sched\/fair.o := //p' "$cmdfile")
src=$(mktemp --suffix=.c)
trap 'rm -f "$src" "$src.s"' EXIT
cat >"$src" <<C
#include <linux/mmu_context.h>
#include "$KSRC/kernel/sched/sched.h"
const unsigned long eevdf_sizeof_sched_entity = sizeof(struct sched_entity);
const unsigned long eevdf_sizeof_cfs_rq = sizeof(struct cfs_rq);
C
# Same flags, our file in, assembly out. The command starts with the compiler;
# drop its -Wp,-MMD dependency output and its -c/-o pair.
cmd=$(echo "$cmd" | sed -e 's/-Wp,-MMD,[^ ]*//' -e 's/ -c -o [^ ]* [^ ]*fair\.c//' -e 's/ -o [^ ]*fair\.o//' -e 's/ [^ ]*kernel\/sched\/fair\.c//')
(cd "$out" && eval "$cmd -S -o $src.s $src") || die "compiling the size probe failed"
for sym in sched_entity cfs_rq; do
	v=$(awk -v s="eevdf_sizeof_$sym:" '$1 == s { getline; print $2; exit }' "$src.s")
	printf '%-20s %s bytes\n' "struct $sym" "$v"
done
