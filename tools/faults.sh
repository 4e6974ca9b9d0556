#!/usr/bin/env bash
# The fault campaign (Documentation/reliability.md): one boot of a kernel
# (default distro-debug: KASAN, UBSAN, lockdep and the live oracle), 4 vCPUs, 1 GiB, and
# the guest tests tests/guest/2?-fault-*.sh run one after another, in rounds, until the
# soak time has passed (default: one round, the short form CI also runs):
#
#   tools/faults.sh [--kernel K] [--soak-min N] [--load PCT] [--append ARGS]
#
#   --kernel K     a kernel of tools/build-kernel.sh (built beforehand), default distro-debug
#   --soak-min N   start rounds until N minutes have passed (0: one round)
#   --load PCT     eevdf-guest-tests -s: the share of each test's loops (default 100)
#   --append ARGS  extra kernel arguments (e.g. "preempt=none")
#   --table DIR    boot nothing: print the tables of the finished run in DIR (one of
#                  $EEVDF_CACHE/faults/<date>/) again, from its guest.out
#
# Each test runs under the guest runner (eevdf-guest-tests: timeout, processes left behind),
# one runner call a test, with EEVDF_FAULTS_LOG set: the tests append their "tasks:" and
# "faults:" lines there (for a test that does not, the lines are taken from the runner's
# /tmp/test.out). The live oracle's counters (sched/eevdf/verify) are read before and after
# each test; a test that resets them (25-fault-debugfs writes 0) counts from the reset. Then a table:
# per test, rounds passed/failed, time, tasks started and lost, VERIFY checks, picks,
# wakeups, divergences and ties, and every fault kind with its injections; the kernel reports in
# the console (eevdf-vm fails the run on any: WARN, BUG, lockdep, KASAN, RCU stall, VERIFY).
# Everything lands in $EEVDF_CACHE/faults/<date>/: guest.out (the guest's output),
# console.log (the kernel's), table.md. Exits non-zero when a test failed or the kernel
# reported anything.
source "$(dirname "$0")/lib.sh"
kernel=distro-debug
soak_min=0
load=100
append=""
table_dir=""
usage() { sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift 2 ;;
	--soak-min) soak_min=${2:?}; shift 2 ;;
	--load) load=${2:?}; shift 2 ;;
	--table) table_dir=${2:?}; shift 2 ;;
	--append) append=${2?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ "$soak_min" =~ ^[0-9]+$ ]] || die "--soak-min wants whole minutes, not '$soak_min'"
[[ "$load" =~ ^[1-9][0-9]*$ ]] || die "--load wants a percentage, not '$load'"
case "$kernel" in
*debug) kind=debug ;;
*stock) kind=stock ;;
*) kind=rust ;;
esac
cd "$EEVDF_REPO"
# table GUEST_OUT: the tables (per test, and the faults injected) from a run's guest output.
table() {
	awk '
	/^@@test / { r = $2; t = $3; next }
	/^(ok|not ok) 1 - / {
		if (!(t in seen)) { seen[t] = 1; order[++n] = t }
		if ($0 ~ /# SKIP/) skip[t]++
		else if ($1 == "ok") pass[t]++
		else fail[t]++
		if (match($0, /[0-9.]+ s\)/)) {
			s = substr($0, RSTART, RLENGTH - 3) + 0
			if (!(t in tmin) || s < tmin[t]) tmin[t] = s
			if (s > tmax[t]) tmax[t] = s
		}
		next
	}
	/^@@log / && $4 == "tasks:" {
		for (i = 5; i <= NF; i++) { split($i, a, "="); if (a[1] == "started") st[$3] += a[2]; if (a[1] == "finished") fi[$3] += a[2] }
		next
	}
	/^@@log / && $4 == "faults:" {
		for (i = 5; i <= NF; i++) {
			split($i, a, "="); k = $3 SUBSEP a[1]
			if (!(k in fc)) { fo[$3] = fo[$3] " " a[1] }
			fc[k] += a[2]
		}
		next
	}
	/^@@log / && $4 == "spread:" {
		split($5, a, "="); if (a[2] + 0 > spread) spread = a[2] + 0
		next
	}
	# "@@verify ROUND TEST" and the counters before and after the test, k of each: 4
	# (checks picks wakeups divergences) or, since the ties counter, 5. A test that
	# resets them (checks after < before) counts from the reset.
	/^@@verify / && NF >= 11 && (NF - 3) % 2 == 0 && $4 != "-" && $(4 + (NF - 3) / 2) != "-" {
		t = $3; k = (NF - 3) / 2
		for (i = 0; i < k; i++) { b = $(4 + i); e = $(4 + k + i); d[i] = ($(4 + k) < $4) ? e : e - b }
		vc[t] += d[0]; vp[t] += d[1]; vw[t] += d[2]; vd[t] += d[3]; hasv[t] = 1
		if (k >= 5) { vt[t] += d[4]; hast[t] = 1 }
		next
	}
	END {
		print "| test | passed | failed | skipped | time per round (s) | tasks started | tasks lost | VERIFY checks | picks | wakeups | divergences | ties |"
		print "|---|---|---|---|---|---|---|---|---|---|---|---|"
		for (j = 1; j <= n; j++) {
			t = order[j]
			tm = (t in tmin) ? sprintf("%.0f-%.0f", tmin[t], tmax[t]) : "-"
			printf "| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", t, pass[t], fail[t], skip[t], tm,
				(t in st) ? st[t] : "-", (t in st) ? st[t] - fi[t] : "-",
				hasv[t] ? vc[t] : "-", hasv[t] ? vp[t] : "-", hasv[t] ? vw[t] : "-", hasv[t] ? vd[t] : "-",
				hast[t] ? vt[t] : "-"
		}
		print ""
		print "| test | fault | injections |"
		print "|---|---|---|"
		for (j = 1; j <= n; j++) {
			t = order[j]
			m = split(fo[t], ks, " ")
			for (i = 1; i <= m; i++) printf "| %s | %s | %d |\n", t, ks[i], fc[t SUBSEP ks[i]]
		}
		if (spread > 0) {
			k = 0; for (x = spread; x >= 2; x /= 2) k++
			printf "\nLargest |VRT-V| or |DL-V| in the skewed mix of 24-fault-churn: %.0f ns (about 2^%d).\n", spread, k
		}
	}' "$1"
}

if [ -n "$table_dir" ]; then
	[ -f "$table_dir/guest.out" ] || die "no $table_dir/guest.out (a directory of a faults.sh run)"
	echo "Fault campaign: tables re-made from $table_dir/guest.out by \`bash tools/faults.sh --table $table_dir\`."
	echo
	table "$table_dir/guest.out"
	exit 0
fi
if [[ "$kernel" != */* ]]; then
	[ -e "$KBUILD_ROOT/$kernel/arch/x86/boot/bzImage" ] ||
		die "no $kernel build (bash tools/build-kernel.sh $kernel)"
fi
compgen -G 'tests/guest/2?-fault-*.sh' >/dev/null || die "no tests/guest/2?-fault-*.sh"
step "faults: building eevdf-vm and the guest programs"
cargo build --quiet --release --locked -p eevdf-vm
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

out=$EEVDF_CACHE/faults/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
cat >"$out/run.sh" <<EOF
export EEVDF_FAULTS_LOG=/tmp/faults.log
vf=/sys/kernel/debug/sched/eevdf/verify
verify_all() { if [ -r \$vf ]; then sed -n 's/^all //p' \$vf; else echo - - - -; fi; }
tests=\$(cd /eevdf/tests && ls 2?-fault-*.sh | sed 's/\.sh\$//')
start=\$(cut -d. -f1 /proc/uptime)
round=0 rc=0
while :; do
	round=\$((round + 1))
	for t in \$tests; do
		echo "@@test \$round \$t"
		v0=\$(verify_all)
		: >\$EEVDF_FAULTS_LOG
		eevdf-guest-tests -k $kind -t 900 -s $load "\$t" || rc=1
		[ -s \$EEVDF_FAULTS_LOG ] || grep -E '^(tasks|faults):' /tmp/test.out >\$EEVDF_FAULTS_LOG
		sed "s/^/@@log \$round \$t /" \$EEVDF_FAULTS_LOG
		echo "@@verify \$round \$t \$v0 \$(verify_all)"
	done
	[ \$(( \$(cut -d. -f1 /proc/uptime) - start )) -ge $((soak_min * 60)) ] && break
done
echo "@@rounds \$round"
[ -r \$vf ] && cat \$vf
exit \$rc
EOF
timeout_s=$((soak_min * 60 + 2400))
step "faults: one boot of $kernel (4 vCPUs, 1 GiB, load $load%), $(
	[ "$soak_min" = 0 ] && echo "one round" || echo "rounds for $soak_min min"
), output in $out"
t0=$(now)
set +e
target/release/eevdf-vm --kernel "$kernel" --cpus 4 --mem-mib 1024 --timeout-s "$timeout_s" \
	--append "$append" --log "$out/console.log" "$out/run.sh" 2>&1 |
	tee "$out/guest.out" |
	while IFS= read -r line; do
		case "$line" in
		"@@test "*) set -- $line; printf '    round %s: %s ... ' "$2" "$3" >&2 ;;
		"ok 1 - "* | "not ok 1 - "*) echo "${line#* - }" >&2 ;;
		"eevdf-vm: "*) note "$line" ;;
		esac
	done
status=${PIPESTATUS[0]}
set -e
took=$(($(now) - t0))
note "eevdf-vm exited $status after $took s"

# The kernel's reports in the console: the lines eevdf-vm fails a run on.
splats=$(kernel_reports "$out/console.log" | wc -l)
rounds=$(sed -n 's/^@@rounds //p' "$out/guest.out")

{
	echo "Fault campaign: \`bash tools/faults.sh --kernel $kernel --soak-min $soak_min --load $load${append:+ --append \"$append\"}\`, $(date -u +%Y-%m-%d), $took s, ${rounds:-?} rounds; eevdf-vm exit status $status, $splats kernel report lines in the console."
	echo
	table "$out/guest.out"
} | tee "$out/table.md"
note "table: $out/table.md; guest output: $out/guest.out; console: $out/console.log"
failed=$(grep -c '^not ok ' "$out/guest.out" || true)
[ "$status" = 0 ] && [ "$failed" = 0 ] && [ "$splats" = 0 ] ||
	die "the campaign failed: eevdf-vm status $status, $failed failed test runs, $splats kernel report lines"
