#!/usr/bin/env bash
# The boot storm (Documentation/reliability.md): boot one kernel many times, each boot
# running a trivial guest script, and count the boots in which the kernel reported
# anything (a WARN, BUG, KASAN, UBSAN, lockdep report, Oops, stall, VERIFY line: the
# patterns of tools/kernel-reports.txt). Rare reports at boot (SMP bring-up, early
# init) show up only over many boots; this says how many, with each boot's console.
#
#   tools/boot-storm.sh [--kernel K] [--boots N] [--cpus C] [--jobs J] [--timeout-s S]
#                       [--mem-mib M] [--guest-sleep-s S] [--script FILE]
#                       [--append ARGS] [--qemu-arg ARG]... [--tcg-multi-thread]
#                       [--budget-min M]
#
#   --kernel K         a kernel of tools/build-kernel.sh (built beforehand) or a bzImage
#                      path; default distro-debug
#   --boots N          boots to run (default 10)
#   --cpus C           guest vCPUs (default 2)
#   --jobs J           boots at a time (default 1). A distro flavour runs single-threaded
#                      TCG: one host core a boot, so J is the host cores taken
#   --timeout-s S      eevdf-vm's hard limit for one boot, boot included (default 300)
#   --mem-mib M        guest memory (default 512, eevdf-vm's)
#   --guest-sleep-s S  the guest script sleeps S seconds, then exits 0 (default 0: `true`)
#   --script FILE      run FILE in each boot instead (it must exit 0); the output directory
#                      gets its name: <kernel>-<C>cpu-<FILE without .sh>
#   --append ARGS      extra kernel arguments
#   --qemu-arg ARG     one more QEMU argument (eevdf-vm --qemu-arg); repeat for each word,
#                      e.g. --qemu-arg -cpu --qemu-arg max,la57=off (the last -cpu wins)
#   --tcg-multi-thread one host thread a vCPU even for a kernel that rewrites its text
#                      (eevdf-vm --tcg-multi-thread): the QEMU setting under which the
#                      feature-flip storm's Oopses were seen; the directory ends in -mttcg.
#                      C vCPUs then take up to C host cores a boot
#   --budget-min M     start no boot after M minutes (0: no limit); the table counts the
#                      boots that ran
#
# Each boot's full console goes to $EEVDF_CACHE/boot-storm/<kernel>-<C>cpu/<n>.console,
# eevdf-vm's own output to <n>.out; the traces of the boots that reported, to
# reports.txt; the table, to table.md. A directory left by an earlier storm is moved
# aside to <kernel>-<C>cpu.<its date>. The storm does not stop at a report: it counts
# them. At the end it prints the table (kernel, vCPUs, boots, boots with a report,
# boots that failed otherwise, seconds a boot, every report line with the boots it
# appeared in) and exits non-zero when any boot had a kernel report, or failed to boot
# for another reason (timeout, QEMU or eevdf-vm error, the script's non-zero status).
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
kernel=distro-debug
boots=10
cpus=2
jobs=1
timeout_s=300
mem_mib=512
sleep_s=0
script=
append=
qemu_args=()
budget_min=0
mttcg=
usage() { sed -n '2,/^# shellcheck source-path/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift 2 ;;
	--boots) boots=${2:?}; shift 2 ;;
	--cpus) cpus=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--timeout-s) timeout_s=${2:?}; shift 2 ;;
	--mem-mib) mem_mib=${2:?}; shift 2 ;;
	--guest-sleep-s) sleep_s=${2:?}; shift 2 ;;
	--script) script=${2:?}; shift 2 ;;
	--append) append=${2?}; shift 2 ;;
	--qemu-arg) qemu_args+=("--qemu-arg=${2:?}"); shift 2 ;;
	--budget-min) budget_min=${2:?}; shift 2 ;;
	--tcg-multi-thread) mttcg=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
posint() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 wants a whole number above 0, not '$2'"; }
posint --boots "$boots"
posint --cpus "$cpus"
posint --jobs "$jobs"
posint --timeout-s "$timeout_s"
posint --mem-mib "$mem_mib"
[[ "$sleep_s" =~ ^[0-9]+$ ]] || die "--guest-sleep-s wants whole seconds, not '$sleep_s'"
[[ "$budget_min" =~ ^[0-9]+$ ]] || die "--budget-min wants whole minutes, not '$budget_min'"
[ -z "$script" ] || [ -r "$script" ] || die "--script: cannot read '$script'"
[ -z "$script" ] || [ "$sleep_s" = 0 ] || die "--script and --guest-sleep-s exclude each other"
[ "$jobs" -le "$boots" ] || jobs=$boots
((BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1))) ||
	die "needs bash 5.1 or later (wait -n -p), this is $BASH_VERSION"

cd "$EEVDF_REPO" || die "no repository at $EEVDF_REPO"
if [[ "$kernel" == */* ]]; then
	[ -r "$kernel" ] || die "no kernel image '$kernel'"
	kernel=$(realpath "$kernel")
	# <build>/arch/x86/boot/bzImage is named after <build>, anything else after itself.
	case "$kernel" in
	*/arch/x86/boot/bzImage) name=$(basename "${kernel%/arch/x86/boot/bzImage}") ;;
	*) name=$(basename "$kernel") ;;
	esac
else
	[ -e "$KBUILD_ROOT/$kernel/arch/x86/boot/bzImage" ] ||
		die "no $kernel build (bash tools/build-kernel.sh $kernel)"
	name=$kernel
fi
# The guest programs (eevdf-*) only for a --script, which may run them; a trivial boot
# needs none (eevdf-vm adds what target/x86_64-unknown-linux-musl/release has).
step "boot-storm: building eevdf-vm${script:+ and the guest programs}"
cargo build --quiet --release --locked -p eevdf-vm
[ -z "$script" ] || cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest
vm=$EEVDF_REPO/target/release/eevdf-vm

dir=$EEVDF_CACHE/boot-storm/$name-${cpus}cpu${script:+-$(basename "$script" .sh)}${mttcg:+-mttcg}
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
	old=$dir.$(date -r "$dir" +%Y%m%d-%H%M%S)
	mv "$dir" "$old"
	note "an earlier storm's output moved to $old"
fi
mkdir -p "$dir"
guest=$dir/guest.sh
if [ -n "$script" ]; then
	cp "$script" "$guest"
elif [ "$sleep_s" = 0 ]; then
	echo true >"$guest"
else
	echo "sleep $sleep_s" >"$guest"
fi
cmdline="bash tools/boot-storm.sh --kernel $([[ "$kernel" == */* ]] && echo "$kernel" || echo "$name") --boots $boots --cpus $cpus --jobs $jobs --timeout-s $timeout_s --mem-mib $mem_mib"
[ -n "$script" ] && cmdline+=" --script $script"
[ "$sleep_s" = 0 ] || cmdline+=" --guest-sleep-s $sleep_s"
[ -z "$append" ] || cmdline+=" --append \"$append\""
for a in "${qemu_args[@]}"; do cmdline+=" --qemu-arg ${a#--qemu-arg=}"; done
[ -z "$mttcg" ] || cmdline+=" --tcg-multi-thread"
[ "$budget_min" = 0 ] || cmdline+=" --budget-min $budget_min"
echo "$cmdline" >"$dir/command"

# The boots running: eevdf-vm's pid -> boot number, and its start in microseconds.
declare -A running=() started=()
stopping=
# ^C or a TERM: no new boot; the running ones are killed (eevdf-vm takes its QEMU with
# it) and not counted; the table covers the boots that finished.
stop() {
	stopping=$1
	local p
	for p in "${!running[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap 'stop INT' INT
trap 'stop TERM' TERM
usec() { echo "${EPOCHREALTIME/./}"; }
# Why boot N failed, in one line: QEMU's error if it printed one, else eevdf-vm's last.
why() { grep -a -E '^(qemu|eevdf-vm): ' "$dir/$1.out" | grep -a -m 1 '^qemu: ' ||
	grep -a -E '^(qemu|eevdf-vm): ' "$dir/$1.out" | tail -n 1; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
step "boot-storm: $boots boots of $name at $cpus vCPUs, $jobs at a time$(
	[ "$budget_min" = 0 ] || echo ", none started after $budget_min min"
), output in $dir (host load $load0)"
t0=$(now)
next=1 done=0 reported=0 failed=0
: >"$dir/results"
# One finished boot: classify it from eevdf-vm's status and the console, and say so.
finish() { # PID STATUS
	local n=${running[$1]} rc=$2 secs class first
	secs=$(awk -v a="${started[$1]}" -v b="$(usec)" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	unset "running[$1]" "started[$1]"
	# The console's report lines; eevdf-vm's own list of them if the console has none
	# (it was cut short) but eevdf-vm saw one.
	kernel_reports "$dir/$n.console" >"$dir/$n.reports"
	if [ ! -s "$dir/$n.reports" ] && [ "$rc" = 125 ]; then
		sed -n 's/^    .*  <-  //p' "$dir/$n.out" >"$dir/$n.reports"
	fi
	if [ -s "$dir/$n.reports" ]; then
		class=report
		reported=$((reported + 1))
	else
		rm -f "$dir/$n.reports"
		case "$rc" in
		0) class=clean ;;
		124) class=timeout ;;
		126) class=no-status ;;
		2) class="vm-error" ;;
		*) class=script-exit-$rc ;;
		esac
		[ "$class" = clean ] || failed=$((failed + 1))
	fi
	done=$((done + 1))
	echo "$n $rc $secs $class" >>"$dir/results"
	case "$class" in
	clean) note "boot $n: clean, $secs s" ;;
	report)
		first=$(head -n 1 "$dir/$n.reports" | sed -E 's/^\[ *[0-9]+\.[0-9]+\] //')
		note "boot $n: KERNEL REPORT, $secs s: $first ($dir/$n.console)"
		;;
	*) note "boot $n: FAILED ($class, eevdf-vm exit $rc), $secs s: $(why "$n")" ;;
	esac
}
while :; do
	while [ -z "$stopping" ] && [ "$next" -le "$boots" ] && [ "${#running[@]}" -lt "$jobs" ]; do
		if [ "$budget_min" != 0 ] && [ $(($(now) - t0)) -ge $((budget_min * 60)) ]; then
			note "budget of $budget_min min spent: no boot after boot $((next - 1))"
			boots=$((next - 1))
			break
		fi
		"$vm" --kernel "$kernel" --cpus "$cpus" --mem-mib "$mem_mib" --timeout-s "$timeout_s" \
			--append "$append" "${qemu_args[@]}" ${mttcg:+--tcg-multi-thread} --log "$dir/$next.console" "$guest" >"$dir/$next.out" 2>&1 &
		running[$!]=$next
		started[$!]=$(usec)
		next=$((next + 1))
	done
	[ "${#running[@]}" -gt 0 ] || break
	pid='' rc=0
	wait -n -p pid "${!running[@]}" || rc=$?
	# A trapped signal interrupts wait without a child: go round (stop() killed them).
	if [ -z "${pid:-}" ] || [ -z "${running[$pid]:-}" ]; then continue; fi
	if [ -n "$stopping" ]; then
		unset "running[$pid]" "started[$pid]"
		continue
	fi
	finish "$pid" "$rc"
done
took=$(($(now) - t0))
sort -n -o "$dir/results" "$dir/results"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# The traces of the boots that reported: from a few lines before the first report line
# to 150 lines after it (a KASAN report with its memory state, a WARN with its trace).
: >"$dir/reports.txt"
while read -r n rc secs class; do
	[ "$class" = report ] || continue
	{
		echo "=== boot $n (eevdf-vm exit $rc, $secs s): $dir/$n.console"
		awk 'NR == FNR { first[$0] = 1; next }
			!found && ($0 in first) { found = FNR }
			{ line[FNR] = $0 }
			END { if (!found) exit; for (i = (found > 10 ? found - 10 : 1); i <= found + 150 && i in line; i++) print line[i] }' \
			"$dir/$n.reports" "$dir/$n.console"
		echo
	} >>"$dir/reports.txt"
done <"$dir/results"

{
	echo "Boot storm: \`$cmdline\`, $(date -u +%Y-%m-%d), $done boots in $took s ($jobs at a time), host load $load0 at the start, $load1 at the end${stopping:+; stopped by SIG$stopping}."
	echo
	echo "| kernel | vCPUs | boots | clean | with a kernel report | failed to boot | s a boot (median, min-max) |"
	echo "|---|---|---|---|---|---|---|"
	sort -k3,3n "$dir/results" | awk -v k="$name" -v c="$cpus" -v r="$reported" -v f="$failed" '
		{ s[NR] = $3; if ($4 == "clean") clean++ }
		END {
			med = NR == 0 ? "-" : (NR % 2 ? s[(NR + 1) / 2] : sprintf("%.1f", (s[NR / 2] + s[NR / 2 + 1]) / 2))
			printf "| %s | %d | %d | %d | %d | %d | %s (%s-%s) |\n", k, c, NR, clean, r, f, med,
				NR ? s[1] : "-", NR ? s[NR] : "-"
		}'
	echo
	if [ "$reported" = 0 ]; then
		echo "No kernel report in any boot."
	else
		# Every report line, normalised (no timestamp, CPU, PID, task or address), with
		# the boots it appeared in.
		echo "| report line | boots | lines | in boots |"
		echo "|---|---|---|---|"
		while read -r n _ _ class; do
			[ "$class" = report ] || continue
			f=$dir/$n.reports
			sed -E -e 's/^\[ *[0-9]+\.[0-9]+\] //' -e 's/CPU: [0-9]+ (UID: [0-9]+ )?PID: [0-9]+/CPU: N PID: N/' \
				-e 's/CPU#[0-9]+/CPU#N/g' -e 's/[0-9a-f]{16}/X/g' -e 's/ [0-9]+s/ Ns/g' \
				-e 's/\[[^]]*:[0-9]+\]/[TASK]/g' -e 's/\|/\\|/g' "$f" | sed "s/^/$n\t/"
		done <"$dir/results" | awk -F '\t' '
			{ lines[$2]++; if (!(($2, $1) in seen)) { seen[$2, $1] = 1; boots[$2]++; which[$2] = which[$2] (which[$2] == "" ? "" : ", ") $1 } }
			END { for (l in lines) printf "| %s | %d | %d | %s |\n", l, boots[l], lines[l], which[l] }' |
			sort -t '|' -k3,3nr
		echo
		echo "Traces: $dir/reports.txt"
	fi
	if [ "$failed" != 0 ]; then
		echo
		echo "| boot | failure | eevdf-vm exit | s | eevdf-vm's last line |"
		echo "|---|---|---|---|---|"
		while read -r n rc secs class; do
			case "$class" in clean | report) continue ;; esac
			echo "| $n | $class | $rc | $secs | $(why "$n" | sed 's/|/\\|/g') |"
		done <"$dir/results"
	fi
} | tee "$dir/table.md"
note "table: $dir/table.md; consoles: $dir/<n>.console"
[ -z "$stopping" ] || die "stopped by SIG$stopping after $done boots (the running boots were not counted)"
if [ "$reported" != 0 ] || [ "$failed" != 0 ]; then
	die "$reported of $done boots had a kernel report, $failed failed to boot otherwise (timeout, QEMU or eevdf-vm error, script status): see the table above"
fi
