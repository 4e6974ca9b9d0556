#!/bin/bash
# Dynamic per-function instruction profile of a kernel under the pipe ping-pong
# (QEMU TCG `-d in_asm,exec,nochain` logs, switched on and off through the monitor).
#
# usage: profile.sh KERNEL_DIR [OUT_DIR]
#   KERNEL_DIR holds bzImage, System.map, vmlinux (and optionally fair.o, for exact
#   fair.c attribution of global functions). OUT_DIR defaults to
#   ~/.cache/sched_eevdf/insnprof/<kernel dir name>-<time>; it must be under a directory
#   named insnprof (the log-buffering shim keys on that).
#   INSNPROF_VM_ARGS   extra eevdf-vm arguments, e.g. "--icount-shift 3 --cpus 1" (the lab's)
#   INSNPROF_WORKLOAD  (steady mode) the guest command in place of the ping-pong, e.g.
#                    "/eevdf/bin/eevdf-scale --tasks 10 --duration-ms 100000000"
#   INSNPROF_SWITCH_FN (steady mode) the function called once per switch of that
#                    workload (default pipe_write; do_sched_yield for eevdf-scale)
#   INSNPROF_SETTLE_S  (steady mode) seconds from the workload's start to the first
#                    window (default 1)
# env:
#   MODE=steady      steady: log NWIN windows of LOG_MS in the middle of one long
#                    eevdf-pingpong run; switches = pipe_write calls on CPU 0.
#                    diff: log whole eevdf-pingpong runs of SHORT_MS and LONG_MS (PAIRS
#                    pairs) and difference them; switches = 2 * reported round trips.
#   NWIN=3 LOG_MS=3000            (steady)
#   PAIRS=3 SHORT_MS=300 LONG_MS=3000   (diff)
#   SLICE_NS=1000000000  written to /sys/kernel/debug/sched/base_slice_ns before the
#                    runs (default 1 s; SLICE_NS= (empty) keeps the kernel's 1.4 ms).
#                    Logging slows the guest against its real-time clock (~1,500
#                    switches/s, vs ~17-24k/s in plain TCG, 100s of k/s on hardware):
#                    each burst of the ping-pong lasts ~0.4 ms of guest time, not ~2-5 us.
#                    With the stock slice, tasks overrun it, so the run measures extra
#                    (tick and wakeup) preemptions, varying with host load. A 1 s slice
#                    restores a real-hardware-like burst/slice ratio (~1:1000+).
#   KEEP_LOGS=0      1 keeps the QEMU logs (~0.1-0.2 GB per guest second)
#   CPU=0            vCPU to count (the ping-pong is pinned to CPU 0); "all" for every vCPU
# Output: OUT_DIR/table.tsv (per function; see analyze.py), OUT_DIR/console.txt, ...
# Compare: python3 compare.py [--top N] rust R/table.tsv... -- stock S/table.tsv...
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KDIR=$(cd "$1" && pwd)
OUT=${2:-${EEVDF_CACHE:-$HOME/.cache/sched_eevdf}/insnprof/$(basename "$KDIR")-$(date +%Y%m%d-%H%M%S)}
MODE=${MODE:-steady}
CPU=${CPU:-0}
for f in bzImage System.map vmlinux; do
	[ -f "$KDIR/$f" ] || { echo "missing $KDIR/$f" >&2; exit 1; }
done
SHIM=${EEVDF_CACHE:-$HOME/.cache/sched_eevdf}/insnprof/fullbuf.so
mkdir -p "$(dirname "$SHIM")"
[ "$SHIM" -nt "$HERE/fullbuf.c" ] || ${CC:-clang} -O2 -Wall -shared -fPIC -o "$SHIM" "$HERE/fullbuf.c" -ldl
export INSNPROF_SHIM=$SHIM
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case "$OUT" in */insnprof/*) ;; *)
	echo "warning: OUT_DIR is not under a directory named insnprof: the QEMU log" \
		"stays line-buffered (slower guest, more time distortion)" >&2 ;;
esac
SLICE_NS=${SLICE_NS-1000000000}
if [ -n "$SLICE_NS" ]; then
	export INSNPROF_GUEST_SETUP="echo $SLICE_NS > /sys/kernel/debug/sched/base_slice_ns"
fi
WINDOWS=()
NAMES=()
if [ "$MODE" = steady ]; then
	for i in $(seq 1 "${NWIN:-3}"); do WINDOWS+=("w$i@${LOG_MS:-3000}"); NAMES+=("w$i"); done
else
	for i in $(seq 1 "${PAIRS:-3}"); do
		WINDOWS+=("s$i:${SHORT_MS:-300}" "l$i:${LONG_MS:-3000}")
		NAMES+=("s$i" "l$i")
	done
fi
python3 "$HERE/run_vm.py" "$KDIR/bzImage" "$OUT" "${WINDOWS[@]}" >"$OUT/run.txt" 2>&1 || {
	tail -20 "$OUT/run.txt" >&2; exit 1; }
LOGS=()
for n in "${NAMES[@]}"; do LOGS+=("$OUT/$n.log"); done
python3 "$HERE/parse_logs.py" "$KDIR/System.map" "$OUT/" "${LOGS[@]}" 2>"$OUT/parse.txt"
cat "$OUT/parse.txt"
[ "${KEEP_LOGS:-0}" = 1 ] || rm -f "${LOGS[@]}"
python3 "$HERE/analyze.py" "$KDIR" "$OUT" "$OUT/table.tsv" --cpu "$CPU"
echo "table: $OUT/table.tsv"
