#!/bin/sh
# eevdfctl (tools/eevdf-guest) against the booted kernel. On every kernel: the
# feature list and a set/clear round trip, an unknown feature refused with
# nothing written, slices set and read back (the clamps, the errors: no such
# process, not permitted, a FIFO task), `run`, and the exit statuses. On the
# rust and debug kernels also sched_eevdf's debugfs files: stats (table, JSON,
# reset, --get, --check-sums), top and timeline (and the queries the guest tests use:
# --check, --delayed, --max-offset-ns, --root-nr-queued); cputime on any kernel. The
# stock kernel has none of the debugfs files: there the
# script checks eevdfctl says so, then skips (77) the debugfs part.
. "$(dirname "$0")/lib/common.sh"
ctl=/eevdf/bin/eevdfctl
f=/sys/kernel/debug/sched/features
base_slice=/sys/kernel/debug/sched/base_slice_ns
out=/tmp/eevdfctl.out
err=/tmp/eevdfctl.err

features_before=$(cat $f)
restore_features() {
	for w in $features_before; do echo "$w" >$f; done
}
on_fail() {
	[ -s $out ] && sed 's/^/  stdout: /' $out
	[ -s $err ] && sed 's/^/  stderr: /' $err
	restore_features
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
}
# A passed check's output is not shown with the next failure.
ok() {
	echo "ok: $*"
	: >$out
	: >$err
}
# run CMD...: run it with stdout in $out and stderr in $err; $rc is its status.
run() {
	"$@" >$out 2>$err
	rc=$?
}

[ -x $ctl ] || fail "no $ctl: cargo build --release --target x86_64-unknown-linux-musl -p eevdf-guest"

# --- features -------------------------------------------------------------------------
run $ctl features
[ $rc = 0 ] || fail "eevdfctl features exited $rc"
[ "$(wc -l <$out)" = "$(echo $features_before | wc -w)" ] ||
	fail "eevdfctl features lists $(wc -l <$out) features, the file $(echo $features_before | wc -w)"
grep -Eqx 'RUN_TO_PARITY (on|off)' $out || fail "no RUN_TO_PARITY line"
orig=$(sed -n 's/^RUN_TO_PARITY //p' $out)
if [ "$EEVDF_KERNEL" != stock ]; then
	grep -qx 'ELIGIBLE on' $out || fail "ELIGIBLE is not listed as on"
	ok "features lists $(wc -l <$out) features, ELIGIBLE on"
else
	ok "features lists $(wc -l <$out) features"
fi

if [ "$orig" = on ]; then first=clear then=set; else first=set then=clear; fi
run $ctl features $first RUN_TO_PARITY
[ $rc = 0 ] || fail "features $first RUN_TO_PARITY exited $rc"
if [ $first = clear ]; then
	grep -qx 'RUN_TO_PARITY off' $out || fail "features clear did not print RUN_TO_PARITY off"
	grep -qw NO_RUN_TO_PARITY $f || fail "the features file does not say NO_RUN_TO_PARITY"
else
	grep -qx 'RUN_TO_PARITY on' $out || fail "features set did not print RUN_TO_PARITY on"
	grep -qw NO_RUN_TO_PARITY $f && fail "the features file still says NO_RUN_TO_PARITY"
fi
run $ctl features $then RUN_TO_PARITY
[ $rc = 0 ] || fail "features $then RUN_TO_PARITY exited $rc"
[ "$(cat $f)" = "$features_before" ] || fail "the features file is not as before: $(cat $f)"
ok "features $first/$then RUN_TO_PARITY round trip restores the features file"

# One known name that would change something, then an unknown one: nothing written.
run $ctl features $first RUN_TO_PARITY NO_SUCH_FEATURE
[ $rc = 1 ] || fail "an unknown feature: exit $rc, want 1"
grep -q 'unknown feature NO_SUCH_FEATURE' $err || fail "no 'unknown feature NO_SUCH_FEATURE' message"
[ "$(cat $f)" = "$features_before" ] || fail "an unknown feature changed the features file"
ok "features $first RUN_TO_PARITY NO_SUCH_FEATURE: exit 1, '$(head -1 $err)', file unchanged"

# --- slices ---------------------------------------------------------------------------
me=$$
run $ctl slice set $me 3000000
[ $rc = 0 ] || fail "slice set $me 3000000 exited $rc"
[ -s $err ] && fail "slice set $me 3000000 printed a note"
grep -qx "pid $me slice_ns 3000000 (asked 3000000 ns, given in ns)" $out || fail "slice set $me 3000000 said: $(cat $out)"
run $ctl slice get $me
[ $rc = 0 ] || fail "slice get $me exited $rc"
grep -qx "pid $me policy other slice_ns 3000000 custom yes" $out || fail "slice get after set"
ok "slice set $me 3000000; slice get: $(cat $out)"
# With units: 300us and 0.5ms, read back in ns; an unknown unit is a usage error.
for a in "300us 300000 us" "0.5ms 500000 ms"; do
	set -- $a
	run $ctl slice set $me $1
	[ $rc = 0 ] || fail "slice set $me $1 exited $rc"
	grep -qx "pid $me slice_ns $2 (asked $2 ns, given in $3)" $out || fail "slice set $me $1 said: $(cat $out)"
	run $ctl slice get $me
	grep -q " slice_ns $2 custom yes\$" $out || fail "slice get after set $1: want $2"
	ok "slice set $me $1: $(cat $out)"
done
run $ctl slice set $me 3h
[ $rc = 2 ] || fail "slice set $me 3h exited $rc, want 2"
grep -q "want e.g. 300us" $err || fail "slice set $me 3h: no word on the units"
run $ctl slice get $me
grep -q " slice_ns 500000 custom yes\$" $out || fail "slice set $me 3h changed the slice"
ok "slice set $me 3h: refused, nothing changed"

for pair in 50000:100000 200000000:100000000; do
	ns=${pair%:*} want=${pair#*:}
	run $ctl slice set $me $ns
	[ $rc = 0 ] || fail "slice set $me $ns exited $rc (a clamped slice is still set)"
	grep -qx "eevdfctl: slice $ns ns is out of range \[100000, 100000000\]: the kernel clamped it to $want ns" $err ||
		fail "no clamp note for $ns"
	run $ctl slice get $me
	grep -q " slice_ns $want custom yes\$" $out || fail "slice get after set $ns: want $want"
	ok "slice set $me $ns: clamped to $want, read back"
done

run $ctl slice set $me 0
[ $rc = 0 ] || fail "slice set $me 0 exited $rc"
run $ctl slice get $me
grep -qx "pid $me policy other slice_ns $(cat $base_slice) custom no" $out ||
	fail "slice set 0 did not give the base slice $(cat $base_slice) back"
ok "slice set $me 0: $(cat $out)"

run $ctl slice get 999999
[ $rc = 1 ] || fail "slice get 999999: exit $rc, want 1"
grep -qx 'eevdfctl: no such process: 999999' $err || fail "no 'no such process' message"
ok "slice get 999999: exit 1, $(cat $err)"

run $ctl slice set $me -5
[ $rc = 2 ] || fail "slice set $me -5: exit $rc, want 2 (usage)"
run $ctl slice set $me 12abc
[ $rc = 2 ] || fail "slice set $me 12abc: exit $rc, want 2 (usage)"
ok "a negative or non-numeric NS is a usage error (exit 2)"

# Not permitted: pid 1 (root's) from an unprivileged user. busybox su (run by root, so
# no password) needs a passwd entry; the initramfs has no /etc, so make one.
mkdir -p /etc
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
if [ "$(su -s /bin/sh nobody -c 'id -u' 2>/dev/null)" = 65534 ]; then
	init_before=$($ctl slice get 1)
	run su -s /bin/sh nobody -c "$ctl slice set 1 3000000"
	[ $rc = 1 ] || fail "nobody's slice set 1: exit $rc, want 1"
	grep -qx 'eevdfctl: not permitted to change 1 (needs CAP_SYS_NICE or same owner)' $err ||
		fail "no 'not permitted' message"
	[ "$($ctl slice get 1)" = "$init_before" ] || fail "pid 1 changed: $($ctl slice get 1)"
	ok "as nobody, slice set 1 3000000: exit 1, $(cat $err)"
else
	echo "skip: busybox su cannot run a command as nobody here; the EPERM case is not checked"
fi

sleep 30 &
sleeper=$!
eevdf-slice set $sleeper 0 fifo || fail "eevdf-slice could not make pid $sleeper SCHED_FIFO"
run $ctl slice set $sleeper 3000000
[ $rc = 1 ] || fail "slice set on a FIFO task: exit $rc, want 1"
grep -q "pid $sleeper has policy fifo: only other and batch tasks have a slice to set (nothing was changed)" $err ||
	fail "no refusal message for a FIFO task"
run $ctl slice get $sleeper
grep -qx "pid $sleeper policy fifo slice_ns - custom -" $out || fail "slice get of a FIFO task"
kill $sleeper
wait $sleeper 2>/dev/null
sleeper=""
ok "slice set on a SCHED_FIFO task refused; slice get: $(cat $out)"

run $ctl run --slice-ns 500000 -- $ctl slice get 0
[ $rc = 0 ] || fail "run --slice-ns 500000 exited $rc"
grep -q ' policy other slice_ns 500000 custom yes$' $out || fail "run did not give CMD the slice"
ok "run --slice-ns 500000 -- eevdfctl slice get 0: $(cat $out)"
run $ctl run --slice-ns 500000 -- /no/such/program
[ $rc = 127 ] || fail "run of a missing program: exit $rc, want 127"
ok "run of a missing program: exit 127, $(cat $err)"

# --- cputime (any kernel) ---------------------------------------------------------------
sh -c 'while :; do :; done' &
spinner=$!
sleep 1
run $ctl cputime $$ $spinner
kill $spinner
wait $spinner 2>/dev/null
[ $rc = 0 ] || fail "cputime of this shell and a spinner exited $rc"
grep -q '^cpu time: 2 tasks, [0-9.]* s in all; the most of its age: task [0-9]*, [0-9.]*$' $out ||
	fail "cputime printed no summary line"
ok "cputime: $(cat $out)"
# A spinner's second of CPU time exceeds its age at a slack ratio of 0 (and 0 s):
# a failure with the diagnostics.
sh -c 'while :; do :; done' &
spinner=$!
sleep 1
run $ctl cputime --slack-ratio 0 --slack-s 0 $spinner
kill $spinner
wait $spinner 2>/dev/null
[ $rc = 1 ] && grep -q "^task $spinner: .* s of CPU time in .* s$" $out && grep -q "^pid $spinner: " $out &&
	grep -q '^/proc/stat: ' $out || fail "cputime at a slack ratio of 0: exit $rc"
ok "cputime --slack-ratio 0 fails: $(head -1 $out)"

# --- sched_eevdf's debugfs ------------------------------------------------------------
if [ "$EEVDF_KERNEL" = stock ]; then
	run $ctl stats
	[ $rc = 1 ] || fail "stats on the stock kernel: exit $rc, want 1"
	grep -q 'no /sys/kernel/debug/sched/eevdf: not a sched_eevdf kernel' $err ||
		fail "stats on the stock kernel does not say why"
	ok "stats on the stock kernel: $(cat $err)"
	echo "stock kernel: features and slices pass; no sched_eevdf debugfs to test"
	exit 77
fi
[ -d /sys/kernel/debug/sched/eevdf ] || fail "no /sys/kernel/debug/sched/eevdf on the $EEVDF_KERNEL kernel"

# The counters count only while schedstats are on; eevdfctl says so when they are off.
echo 0 >/proc/sys/kernel/sched_schedstats
run $ctl stats
[ $rc = 0 ] || fail "stats with schedstats off exited $rc"
grep -q "schedstats are off" $err || fail "stats with schedstats off does not say so: $(cat $err)"
ok "stats with schedstats off: $(cat $err)"
echo 1 >/proc/sys/kernel/sched_schedstats
sleep 0.2

run $ctl stats
[ $rc = 0 ] || fail "stats exited $rc"
[ -s $err ] && fail "stats with schedstats on printed: $(cat $err)"
cat $out
grep -q '^picks ' $out || fail "no picks row in the stats table"
run $ctl stats --get picks
picks_before=$(cat $out)
[ $rc = 0 ] && [ -n "$picks_before" ] || fail "stats --get picks exited $rc: $(cat $err)"
ok "stats: all picks $picks_before"
run $ctl stats --get no_such_counter
[ $rc = 1 ] && [ ! -s $out ] && grep -q 'no counter no_such_counter' $err ||
	fail "stats --get of an unknown counter: exit $rc, $(cat $out $err)"
run $ctl stats --check-sums --want-cpus "$(grep -c '^processor' /proc/cpuinfo)"
[ $rc = 0 ] || fail "stats --check-sums exited $rc: $(cat $out $err)"
ok "stats --check-sums: $(cat $out)"

run $ctl stats --json
[ $rc = 0 ] || fail "stats --json exited $rc"
[ "$(head -c 1 $out)" = "{" ] && [ "$(tail -n 1 $out)" = "}" ] || fail "stats --json is not one object"
for key in '"features"' '"stats"' '"timeline"' '"columns"' '"picks"' '"ELIGIBLE": true'; do
	grep -q "$key" $out || fail "stats --json has no $key"
done
ok "stats --json: $(wc -c <$out) bytes with features, stats (picks) and timeline"

run $ctl stats --reset
[ $rc = 0 ] || fail "stats --reset exited $rc"
run $ctl stats --get picks
picks_after=$(cat $out)
[ -n "$picks_after" ] && [ "$picks_after" -lt "$picks_before" ] ||
	fail "after stats --reset, all picks is $picks_after (before: $picks_before)"
ok "stats --reset: all picks $picks_before -> $picks_after"

run $ctl top --iterations 2 --interval-ms 200
[ $rc = 0 ] || fail "top exited $rc"
[ "$(grep -c '^=== eevdfctl top: sample' $out)" = 2 ] || fail "top did not print two frames"
grep -q '^picks ' $out || fail "top shows no picks rate"
grep -q '^cpu 0: ' $out || fail "top shows no cpu 0"
sed -n '/sample 2 of 2/,$p' $out
ok "top --iterations 2 --interval-ms 200 printed 2 frames"

run $ctl timeline --json
[ $rc = 0 ] || fail "timeline --json exited $rc"
[ "$(head -c 1 $out)" = "[" ] || fail "timeline --json is not an array"
grep -q '"cfs_rqs"' $out || fail "timeline --json has no cfs_rqs"
ok "timeline --json: $(grep -c '"cpu"' $out) CPUs"
run $ctl timeline --cpu 0
[ $rc = 0 ] || fail "timeline --cpu 0 exited $rc"
head -1 $out | grep -qx 'cpu 0' || fail "timeline --cpu 0 does not start with cpu 0"
grep -q '^  cfs_rq / ' $out || fail "timeline --cpu 0 has no root cfs_rq"
cat $out
ok "timeline --cpu 0"

# The queries the guest tests use.
run $ctl timeline --check eevdf --want-cpus "$(grep -c '^processor' /proc/cpuinfo)"
[ $rc = 0 ] || fail "timeline --check eevdf exited $rc"
grep -Eqx 'cpus [0-9]+ rqs [0-9]+ rows [0-9]+ groups [0-9]+' $out || fail "timeline --check printed no summary"
ok "timeline --check eevdf: $(cat $out)"
run $ctl timeline --delayed --cpu 0 --looks 3 --interval-ms 10
[ $rc = 0 ] || fail "timeline --delayed exited $rc"
grep -Eqx 'looks [1-3] delayed [0-9]+' $out || fail "timeline --delayed printed no count"
ok "timeline --delayed --cpu 0: $(cat $out)"
run $ctl timeline --max-offset-ns --cpu 0
[ $rc = 0 ] && grep -Eqx '[0-9]+' $out || fail "timeline --max-offset-ns exited $rc"
ok "timeline --max-offset-ns --cpu 0: $(cat $out) ns"
run $ctl timeline --root-nr-queued --cpu 0
[ $rc = 0 ] && grep -Eqx '[0-9]+' $out || fail "timeline --root-nr-queued exited $rc"
ok "timeline --root-nr-queued --cpu 0: $(cat $out)"
