#!/usr/bin/env bash
# Build perf from the 6.12 tree ($KSRC/tools/perf) into $KBUILD_ROOT/perf, for the guests
# (`eevdf-vm --perf`: `perf sched record` / `latency` / `timehist`, seed 002's cells of
# `eevdf-lab seeds`).
#
# Why not Debian's perf (linux-perf, 6.1): on these 6.12 kernels its `perf sched latency`
# loses most delays. A raw run on the tiny rust kernel (eevdf-mixed, 3 compute and 2
# interactive tasks on one vCPU, 0.6 s, `perf sched record`): the sched_switch records show
# the interactive tasks switched out 253 times (173 preempted, which the 6.12 tracepoint
# prints as `R+`, 2 `R`, 78 sleeps), and Debian's perf counted 4 delays for them (its
# "Switches"). The same run with this perf: 255 switch-outs (177 `R+`, 78 sleeps), 257
# delays counted (each task's first run is one too).
#
# Only what `perf sched` needs: libtraceevent (tracepoint formats) and libelf; no Python,
# Perl, BPF, unwinding, DWARF or PMU event tables. About 1.5 min on 2 cores here; a second
# run only relinks what changed.
#
#   tools/build-perf.sh            # -> $KBUILD_ROOT/perf/perf
source "$(dirname "$0")/lib.sh"

out=$KBUILD_ROOT/perf
[ -f "$KSRC/tools/perf/Makefile" ] || bash "$EEVDF_REPO/tools/kernel-tree.sh"
mkdir -p "$out"
step "perf: building tools/perf of $KERNEL_VERSION in $out (log: $out/build.log)"
t0=$(now)
# -j3 as the kernel builds; every NO_ drops an optional library perf sched does not use.
make -C "$KSRC/tools/perf" O="$out" -j3 \
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JEVENTS=1 NO_LIBBPF=1 NO_BPF_SKEL=1 NO_LIBUNWIND=1 \
	NO_LIBDW=1 NO_SLANG=1 NO_GTK2=1 NO_LIBCRYPTO=1 NO_LIBNUMA=1 NO_LIBCAP=1 NO_DEMANGLE=1 \
	NO_LIBLLVM=1 NO_CAPSTONE=1 NO_LIBPFM4=1 NO_LIBBABELTRACE=1 NO_LIBZSTD=1 NO_SDT=1 \
	NO_AUXTRACE=1 NO_LZMA=1 NO_ZLIB=1 >"$out/build.log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	sleep 10
	kill -0 "$pid" 2>/dev/null &&
		note "$(($(now) - t0))s, $(grep -c '^  CC' "$out/build.log") files compiled"
done
wait "$pid" || { tail -20 "$out/build.log" >&2; die "perf: the build failed (see $out/build.log)"; }
"$out/perf" version >/dev/null || die "perf: $out/perf does not run"
step "perf: built $("$out/perf" version) in $(($(now) - t0)) s: $out/perf"
