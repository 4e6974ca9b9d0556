#!/usr/bin/env bash
# What reading /sys/kernel/debug/sched/eevdf/timeline costs a latency-sensitive task on a
# crowded CPU (the fault campaign's "timeline read"). The read copies each CPU's queue (at most
# MAX_ROWS = 32768 rows) under that CPU's runqueue lock with interrupts off
# (debugfs/timeline.rs), then formats it with the lock dropped.
#
#   tools/timeline-latency.sh [--kernel K] [--threads N] [--loops L]
#
#   --kernel K    a kernel of tools/build-kernel.sh (built beforehand), default distro:
#                 Debian's config, no KASAN or lockdep (this is a latency measurement;
#                 distro-debug's checks would multiply every path's cost)
#   --threads N   the crowd: SCHED_OTHER threads spinning on the CPU (default 20000)
#   --runs "R..." which of the runs below, in order (default "none stats timeline debug")
#   --loops L     cyclictest loops of 1 ms per measurement (default 10000: 10 s, which
#                 spans several reads of the timeline of 20,000 rows, about 1 s each,
#                 and at least one of stock's debug file, about 5 s)
#
# One boot, ONE vCPU (nothing on another vCPU can steal the host thread that runs this one:
# QEMU's -icount runs every vCPU in one host thread, round robin), -icount shift=3 (guest
# time counts instructions, 8 ns each: guest µs of a 125-MIPS emulated CPU, comparable with
# each other, not with hardware). Up to four runs, each under eevdf-crowd
# (tools/eevdf-guest/src/bin/eevdf-crowd.rs), which queues N spinning SCHED_OTHER threads
# at nice 19 on CPU 0 and then, from SCHED_FIFO 60 (a fair shell would get 1/(N+1) of the
# CPU), runs the measurement script. Nice 19, because at nice 0 a kworker woken on CPU 0
# waits its turn among N equal spinners (tens of seconds for 20,000 at HZ=250's 4 ms
# tick), and the measurement's forks wait for one: with 2,000 spinners, on stock 6.12 as
# on ours, a fork slept in pcpu_alloc for minutes while kworker/0:1, runnable, held the
# per-CPU allocator's mutex in pcpu_balance_workfn. At weight 15 against 1024 a kworker
# runs within a tick; the queue still holds N entities, which is what the read walks.
# The runs:
#
#   none      no reader
#   stats     a reader at SCHED_FIFO 50 reading /sys/kernel/debug/sched/eevdf/stats in a
#             loop (a lock per CPU, no queue walk): the control for "a reader is running"
#   timeline  the same reader on the timeline
#   debug     the same reader on stock's /sys/kernel/debug/sched/debug, whose print_rq()
#             lists every task of each CPU too (under RCU, not the runqueue lock, and
#             again from the start each time its seq_file buffer doubles): the C
#             kernel's own answer to the same question, for comparison
#
# The kernel runs with rcutree.kthread_prio=1 (the RCU grace-period kthread at SCHED_FIFO
# 1): as a SCHED_OTHER task among 20,000 spinners it waits tens of seconds for each turn,
# and RCU reports a stall (seen with 2000 threads), which fails the boot.
# The reader reads 80% of the time (eevdf-crowd --reader-busy-percent 80: after a read
# that took T it sleeps T/4), so that a measurement meets several reads, and the crowd
# and the kernel's threads still run between them.
# In each run the measurement script counts CPU 0's rows in the timeline (the crowd must
# be in it), counts the policies of eevdf-crowd's threads (N SCHED_OTHER, the main thread
# and the reader SCHED_FIFO), then runs
#
#   cyclictest -q -m -t 1 -a 0 --policy=fifo -p 90 -i 1000 -l L
#
# twice: with the kernel's preemption model voluntary (the distro default) and full
# (/sys/kernel/debug/sched/preempt). Cyclictest at FIFO 90 preempts the crowd and the reader
# as soon as the kernel lets it: under full, as soon as interrupts are back on (its max is
# the baseline plus the longest lock hold); under voluntary, only where the reader's kernel
# path reschedules, so the formatting after the lock counts too. Prints the cyclictest
# summaries, the reads and ms per read, and a markdown table. The guest's output goes to
# $EEVDF_CACHE/timeline-latency.out, its console to $EEVDF_CACHE/timeline-latency.console.
#
# Run it under the VM lock: flock /tmp/sched_eevdf-vm.lock bash tools/timeline-latency.sh
source "$(dirname "$0")/lib.sh"
kernel=distro
threads=20000
loops=10000
runs="none stats timeline debug"
usage() { sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift 2 ;;
	--threads) threads=${2:?}; shift 2 ;;
	--loops) loops=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "--threads must be a positive integer, not '$threads'"
[[ "$loops" =~ ^[1-9][0-9]*$ ]] || die "--loops must be a positive integer, not '$loops'"
for r in $runs; do
	case $r in none | stats | timeline | debug) ;; *) die "--runs: unknown run '$r' (none, stats, timeline, debug)" ;; esac
done
cd "$EEVDF_REPO"
[ -f "$KBUILD_ROOT/$kernel/arch/x86/boot/bzImage" ] || die "no $kernel build (tools/build-kernel.sh $kernel)"
cargo build --quiet --release --locked -p eevdf-vm
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

stack_kib=32
# Each thread: its stack (a page or two of it touched) and about 30 KiB of kernel (task,
# kernel stack); the rest is the initramfs and slack.
mem_mib=$((768 + threads * (stack_kib + 32) / 1024))

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The measurement, run by eevdf-crowd as SCHED_FIFO 60: measure.sh RUN LOOPS.
cat >"$work/measure.sh" <<'GUEST'
run=$1 loops=$2
rows=$(awk '/^cpu / { c = $2; next } c == "0" && /^  [RQ] / { n++ } END { print n + 0 }' \
	/sys/kernel/debug/sched/eevdf/timeline)
echo "@@ $run rows $rows"
# $PPID is eevdf-crowd: its main thread, the reader and the crowd. About 200 of its threads
# (each /proc/.../sched read formats a page of text: all 20,000 take a minute of the
# CPU at SCHED_FIFO 60, which starves the RCU kthread into a stall report).
nt=$(ls /proc/$PPID/task | wc -l)
every=$((nt / 200 + 1))
pol=$(grep -h '^policy' $(ls /proc/$PPID/task | awk -v e=$every -v p=$PPID '
	NR % e == 1 || $1 == p { print "/proc/" p "/task/" $1 "/sched" }') | awk '{ n[$3]++ } END {
	for (p in n) printf "%s%d x policy %d", (s++ ? ", " : ""), n[p], p }')
echo "@@ $run policies of 1 in $every of $nt threads and the main one: $pol (0 = SCHED_OTHER, 1 = SCHED_FIFO)"
p=/sys/kernel/debug/sched/preempt
was=$(sed 's/.*(\(.*\)).*/\1/' $p)
for mode in voluntary full; do
	echo $mode >$p
	t=$(cut -d' ' -f1 /proc/uptime)
	c=$(cyclictest -q -m -t 1 -a 0 --policy=fifo -p 90 -i 1000 -l "$loops" | tail -1)
	echo "@@ $run $mode $c (took $(awk -v t="$t" '{ print $1 - t }' /proc/uptime) s)"
done
echo "$was" >$p
GUEST
cat >"$work/run.sh" <<'GUEST'
# No fair server and no RT throttling: a timeline read of 20,000 rows takes about 1 s of
# CPU at SCHED_FIFO 50, so the deferred fair server (50 ms of each 1 s for starved
# SCHED_OTHER tasks, at deadline priority) would run the crowd for 50 ms in the middle of
# every read, above cyclictest's SCHED_FIFO 90: a 51 ms stall, measured, that is the
# fair server's and not the read's. (The reader still sleeps as long as it reads.)
fs=/sys/kernel/debug/sched/fair_server/cpu0/runtime
echo 0 >$fs
echo -1 >/proc/sys/kernel/sched_rt_runtime_us
echo "@@ note $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPU, preempt: $(cat /sys/kernel/debug/sched/preempt), fair server runtime $(cat $fs) ns, sched_rt_runtime_us $(cat /proc/sys/kernel/sched_rt_runtime_us)"
# Room for the crowd: threads (RAM / 128 KiB by default), pids, two mappings a stack.
echo $((threads + 10000)) >/proc/sys/kernel/threads-max
[ "$(cat /proc/sys/kernel/pid_max)" -gt $((threads + 10000)) ] || echo $((threads + 10000)) >/proc/sys/kernel/pid_max
echo $((2 * threads + 65536)) >/proc/sys/vm/max_map_count
d=/sys/kernel/debug/sched/eevdf
for run in $runs; do
	case $run in
	none) reader= ;;
	debug) reader="--reader-file /sys/kernel/debug/sched/debug --reader-fifo-prio 50 --reader-busy-percent 80" ;;
	*) reader="--reader-file $d/$run --reader-fifo-prio 50 --reader-busy-percent 80" ;;
	esac
	echo "@@ begin $run at $(cut -d' ' -f1 /proc/uptime) s"
	# shellcheck disable=SC2086 # $reader is several words
	eevdf-crowd --threads "$threads" --cpu 0 --stack-kib "$stack_kib" --nice 19 --fifo-prio 60 $reader \
		-- sh /job/measure.sh "$run" "$loops" || { echo "@@ error eevdf-crowd failed: $?"; exit 1; }
done
echo "@@ end at $(cut -d' ' -f1 /proc/uptime) s"
GUEST
sed -i "1i threads=$threads loops=$loops stack_kib=$stack_kib runs='$runs'" "$work/run.sh"

out=$EEVDF_CACHE/timeline-latency.out
log=$EEVDF_CACHE/timeline-latency.console
mkdir -p "$EEVDF_CACHE"
step "timeline-latency: one boot of $kernel, 1 vCPU, $mem_mib MiB, $threads threads, cyclictest $loops loops x 8"
t0=$(now)
# Progress: the guest's @@, crowd: and reader: lines as they come.
if ! target/release/eevdf-vm --kernel "$kernel" --cpus 1 --mem-mib "$mem_mib" --icount-shift 3 \
	--timeout-s 14400 --append "nosoftlockup rcutree.kthread_prio=1" --log "$log" \
	--file "$work/measure.sh:measure.sh" "$work/run.sh" | tee "$out" |
	while IFS= read -r l; do
		case $l in '@@ '* | crowd:* | reader:*) note "[$(($(now) - t0)) s] $l" ;; esac
	done; then
	die "the boot failed (guest output: $out, console: $log)"
fi
note "took $(($(now) - t0)) s"
grep -q '^@@ end' "$out" || die "the guest did not finish (guest output: $out, console: $log)"
echo
grep -E '^(@@ [a-z]+ (rows|policies|voluntary|full) |reader: [0-9])' "$out"
echo
echo "cyclictest (SCHED_FIFO 90, $loops x 1 ms, per preemption model) on CPU 0 with $threads SCHED_OTHER nice 19 spinners queued there; reader SCHED_FIFO 50, busy 80%; $kernel, 1 vCPU, -icount shift=3 (guest µs)"
echo "| reader | preempt | min (µs) | avg (µs) | max (µs) | reads (whole run) | ms per read (longest) | CPU 0 timeline rows |"
echo "|---|---|---|---|---|---|---|---|"
awk '
	/^@@ begin / { run = $3 }
	/^reader: [0-9]/ { reads[run] = $2; per[run] = $7; longest[run] = $12 }
	/^@@ [a-z]+ rows / { rows[$2] = $4 }
	/^@@ [a-z]+ (voluntary|full) / {
		for (i = 4; i <= NF; i++) {
			if ($i == "Min:") mn = $(i + 1)
			if ($i == "Avg:") av = $(i + 1)
			if ($i == "Max:") mx = $(i + 1)
		}
		line[++n] = $2 SUBSEP $3 SUBSEP mn SUBSEP av SUBSEP mx
	}
	END {
		for (i = 1; i <= n; i++) {
			split(line[i], f, SUBSEP)
			r = f[1]
			rd = r == "none" ? "-" : reads[r]
			pr = r == "none" ? "-" : per[r] " (" longest[r] ")"
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r, f[2], f[3], f[4], f[5], rd, pr, rows[r]
		}
	}' "$out"
