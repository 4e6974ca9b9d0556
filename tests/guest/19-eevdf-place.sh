#!/bin/sh
# /sys/kernel/debug/sched/eevdf/place, the record of recent placements: off at boot;
# `on`, `off` and `0` (clear) taken, every other write refused with nothing changed;
# readers hammering it while hackbench runs and the record is switched and cleared (the
# harness fails the run on any WARN or BUG); every row consistent (vruntime = V - lag, a
# lag that is not 0 is vlag + vlag * w / W, a task's |vlag| within its clamp); and
# seed 003's migrated sleeper, beside nice-19 hogs that run V far ahead, placed on its new
# CPU with a wakeup whose saved lag is within the clamp.
. "$(dirname "$0")/lib/common.sh"
d=/sys/kernel/debug/sched/eevdf
p=$d/place
if [ "$EEVDF_KERNEL" = stock ]; then
	[ -e $p ] && { echo "stock kernel has $p"; exit 1; }
	echo "stock kernel: no $p"
	exit 77
fi
[ -e $p ] || { echo "no $p (CONFIG_SCHED_EEVDF_RUST_STATS=n)"; exit 77; }
ncpu=$(grep -c '^processor' /proc/cpuinfo)
hb="" readers="" switcher=""
cleanup() {
	kill $readers $switcher 2>/dev/null
	[ -n "$hb" ] && kill -s KILL -"$hb" 2>/dev/null
	wait 2>/dev/null
	echo off >$p
}
trap cleanup EXIT
on_fail() { eevdfctl place | tail -20; }

# Off at boot (or left off by whoever used it), with its header.
echo off >$p || fail "write 'off' failed"
head -2 $p >/tmp/place.head
[ "$(sed -n 1p /tmp/place.head)" = "enabled 0" ] || fail "first line: $(sed -n 1p /tmp/place.head)"
[ "$(sed -n 2p /tmp/place.head)" = "cpu seq pid flags weight load vlag lag limit V vruntime deadline" ] ||
	fail "header: $(sed -n 2p /tmp/place.head)"

# Bad writes fail and change nothing: the switch stays off, a kept ring stays.
echo 0 >$p || fail "write '0' failed"
[ "$(wc -l <$p)" -eq 2 ] || fail "rows after a clear: $(cat $p)"
long=$(printf '%0100d' 0)
for w in garbage 1 ON " on" "on " onn of -0 +0 0x0 "$long"; do
	if printf '%s' "$w" >$p 2>/dev/null; then fail "write '$w' to place succeeded"; fi
done
if printf '\000' >$p 2>/dev/null; then fail "binary write succeeded"; fi
if printf 'on\000' >$p 2>/dev/null; then fail "binary write succeeded"; fi
[ "$(head -1 $p)" = "enabled 0" ] || fail "a refused write switched the record: $(head -1 $p)"
echo "bad writes refused"

# On: placements arrive, and every row is consistent.
echo on >$p || fail "write 'on' failed"
[ "$(head -1 $p)" = "enabled 1" ] || fail "not enabled after 'on'"
setsid hackbench -g 1 -l "$(scaled 300 30)" >/dev/null 2>&1 &
hb=$!
# Readers of the file and a switcher (on, clear, on...) beside hackbench.
for i in 1 2; do
	(while :; do cat $p >/dev/null; done) &
	readers="$readers $!"
done
(while :; do echo 0 >$p; nap 0.05; echo on >$p; nap 0.2; done) &
switcher=$!
nap 2
kill $switcher
wait $switcher 2>/dev/null
switcher=""
echo on >$p
nap 0.5
cat $p >/tmp/place.txt
rows=$(($(wc -l </tmp/place.txt) - 2))
[ "$rows" -gt 0 ] || fail "no placement recorded under hackbench"
eevdfctl place --from /tmp/place.txt --check --check-limit || fail "inconsistent rows"
kill $readers
readers=""
wait "$hb" 2>/dev/null
hb=""
echo "under hackbench: $rows rows, consistent"

# Off: nothing more is recorded.
echo off >$p
a=$(md5sum <$p)
hackbench -g 1 -l 20 >/dev/null 2>&1
[ "$(md5sum <$p)" = "$a" ] || fail "placements recorded while off"

# Seed 003's sleeper beside nice-19 hogs: its wakeup on the new CPU is in the record, with
# its saved lag within the clamp.
if [ "$ncpu" -ge 2 ]; then
	out=$(eevdf-migrate --from 0 --to 1 --rounds 2 --run-before-ms 50 --sleep-ms 300 \
		--after-ms 100 --hog-nice 19) || fail "eevdf-migrate failed: $out"
	echo "$out" | grep '^eevdf-migrate:'
	echo "$out" | grep -q '"place_record":true' || fail "no record of placements in its result"
	n=$(echo "$out" | grep -c 'at placement: vlag')
	[ "$n" -eq 2 ] || fail "$n of 2 rounds with a wakeup placement"
	# "vlag X us, applied Y us, limit Z us": |X| <= Z.
	echo "$out" | sed -n 's/.*at placement: vlag \(-*[0-9.]*\) us, applied .* limit \([0-9.]*\) us.*/\1 \2/p' |
		awk '{ v = $1 < 0 ? -$1 : $1; if (v > $2) { print "over: " $0; bad = 1 } } END { exit bad }' ||
		fail "a wakeup's saved lag over its clamp"
	[ "$(head -1 $p)" = "enabled 0" ] || fail "eevdf-migrate left the record on"
fi
echo "ok"
