#!/bin/sh
# Fault campaign (Documentation/reliability.md): debugfs under attack.
# The writable files are sched/features and sched/base_slice_ns (the C kernel's) and, on a
# kernel with them, sched/eevdf/stats and sched/eevdf/verify (ours). Nothing here ever
# writes "corrupt ..." to verify (that plants a bug on purpose, for the harness self-test).
#   1. Writes at an offset (dd seek=, conv=notrunc: lseek then write), overlong, binary and
#      garbage writes, and a write to the read-only timeline: each must fail, and change
#      nothing: the features, the base slice, verify's "enabled 1", and the stats (not
#      reset: their picks do not go down).
#   2. As an unprivileged user (busybox su to nobody, with a throwaway /etc/passwd): every
#      write fails (the debugfs root is 0700, then, remounted 0755, the files' own modes
#      refuse), reads succeed once the root is 0755, and nothing changed.
#   3. Concurrent writers to every writable file, two each for features and base_slice_ns,
#      mixing good writes (feature toggles, base slices of 0.7..4 ms, stats resets, verify
#      0/off/on) with garbage, while readers check every read under hackbench and hogs:
#      features only ever lists known names, base_slice_ns is only ever a value written,
#      stats' and verify's "all" lines are the sums of their CPU rows.
# Passes when every good write succeeded, every bad one failed, every read succeeded and
# was well formed, every task finished, the hogs' CPU time (schedstat) is above 0 and at
# most their age, and everything is as it was at the end. Kernel reports fail the run in
# eevdf-vm. Ends with "tasks:" and "faults:" lines, also appended to $EEVDF_FAULTS_LOG
# (tools/faults.sh sums them).
# EEVDF_LOAD (eevdf-guest-tests -s): the share of the writers' iterations, at least a floor.
. "$(dirname "$0")/lib/common.sh"
DBG=/sys/kernel/debug
S=$DBG/sched
F=$S/features
B=$S/base_slice_ns
D=$S/eevdf
T=/tmp/fault25
[ -w $F ] && [ -w $B ] || { echo "no $F or $B"; exit 77; }
rm -rf $T && mkdir -p $T
mkfifo $T/fifo
feats0=$(cat $F)
base0=$(cat $B)
st=0 vf=0
[ -w $D/stats ] && st=1
[ -w $D/verify ] && vf=1
[ $vf = 1 ] && ! grep -qx 'enabled 1' $D/verify && { echo "verify is off at the start"; exit 1; }
mode0=$(stat -c %a $DBG)
made_passwd=0 ss0=""

offset=0 overlong=0 garbage=0 unpriv_w=0 unpriv_r=0 good=0 reads=0
started=0 finished=0 stopped=0
bg="" hogs="" hb=""
stop_all() {
	[ $stopped = 1 ] && return
	stopped=1
	touch $T/stop
	kill $hogs 2>/dev/null
	for p in $hogs; do
		wait $p
		[ $? = 143 ] && finished=$((finished + 1))
	done
	for p in $bg; do wait $p; done
	if [ -n "$hb" ]; then
		wait $hb && finished=$((finished + 40))
	fi
}
restore() {
	for x in $feats0; do echo "$x" >$F 2>/dev/null; done
	echo "$base0" >$B
	[ $vf = 1 ] && echo on >$D/verify
	mount -o remount,mode=$mode0 $DBG 2>/dev/null
	[ $made_passwd = 1 ] && rm -f /etc/passwd /etc/group
	[ -n "$ss0" ] && echo "$ss0" >/proc/sys/kernel/sched_schedstats
	return 0
}
report() {
	{
		echo "tasks: started=$started finished=$finished"
		echo "faults: offset_writes=$offset overlong_writes=$overlong garbage_writes=$garbage unpriv_writes=$unpriv_w unpriv_reads=$unpriv_r good_writes=$good reads=$reads"
	} | tee -a "${EEVDF_FAULTS_LOG:-/dev/null}"
}
trap 'stop_all; restore; report' EXIT
# picks: the stats' "all" picks.
picks() { eevdfctl stats --get picks; }
# unchanged: features, base slice and verify's switch as at the start.
unchanged() {
	[ "$(cat $F)" = "$feats0" ] || { echo "features changed: $(cat $F)"; return 1; }
	[ "$(cat $B)" = "$base0" ] || { echo "base_slice_ns changed: $(cat $B)"; return 1; }
	[ $vf = 0 ] || grep -qx 'enabled 1' $D/verify || { echo "verify switched off"; return 1; }
}
# refused WHAT CMD...: CMD (a write) must fail.
refused() {
	w=$1
	shift
	if "$@" 2>/dev/null; then fail "$w was accepted"; fi
}
# at FILE OFFSET TEXT: write TEXT at byte OFFSET of FILE (lseek, then one write).
at() { printf '%s' "$3" | dd of="$1" bs=${#3} count=1 seek="$2" oflag=seek_bytes conv=notrunc 2>/dev/null; }

# 1. Offsets, overlong, binary, garbage, the read-only timeline. The stats count while
# schedstats are on; a short hackbench gives them picks that a reset would lose.
p0=""
if [ $st = 1 ]; then
	ss0=$(cat /proc/sys/kernel/sched_schedstats)
	echo 1 >/proc/sys/kernel/sched_schedstats
	hackbench -g 1 -l 5 >/dev/null || fail "hackbench"
	p0=$(picks)
fi
for o in 1 3 64 4096 4294967296; do
	if [ $st = 1 ]; then refused "stats: 0 at offset $o" at $D/stats $o 0; offset=$((offset + 1)); fi
	if [ $vf = 1 ]; then
		refused "verify: off at offset $o" at $D/verify $o off
		refused "verify: 0 at offset $o" at $D/verify $o 0
		offset=$((offset + 2))
	fi
	# The C files: base_slice_ns has no lseek (ESPIPE), features ignores the offset (stock).
	refused "base_slice_ns: 1000000 at offset $o" at $B $o 1000000
	refused "features: garbage at offset $o" at $F $o NO_SUCH_FEATURE
	offset=$((offset + 2))
done
cur=ELIGIBLE
case " $feats0 " in *" NO_ELIGIBLE "*) cur=NO_ELIGIBLE ;; *" ELIGIBLE "*) ;; *) cur=$(echo $feats0 | cut -d' ' -f1) ;; esac
if at $F 5 "$cur"; then echo "features: '$cur' at offset 5 is accepted (stock sched_feat_write ignores the offset)"; else echo "features: '$cur' at offset 5 is refused"; fi
long=$(printf '%0100d' 0)
for f in $D/stats $D/verify; do
	[ -w $f ] || continue
	if printf '%s' "$long" >$f 2>/dev/null; then fail "$f: 100 bytes accepted"; fi
	if head -c 1048576 /dev/zero >$f 2>/dev/null; then fail "$f: 1 MiB of zeros accepted"; fi
	if printf '0%064d' 0 >$f 2>/dev/null; then fail "$f: 65 bytes accepted"; fi
	overlong=$((overlong + 3))
done
n=0
for g in garbage -1 " 0" 0x0 1e3 18446744073709551616 "0 0"; do
	if [ $st = 1 ] && printf '%s' "$g" >$D/stats 2>/dev/null; then fail "stats: '$g' accepted"; fi
	if [ $vf = 1 ] && printf '%s' "$g" >$D/verify 2>/dev/null; then fail "verify: '$g' accepted"; fi
	n=$((n + 2))
done
for g in 1 x ON onn of "on off" "off\n\n"; do
	if [ $vf = 1 ] && printf "$g" >$D/verify 2>/dev/null; then fail "verify: '$g' accepted"; fi
	n=$((n + 1))
done
for g in NO_SUCH_FEATURE eligible NO_ NO_NO_ELIGIBLE "ELIGIBLE ELIGIBLE" '\001\002' '\377'; do
	if printf "$g" >$F 2>/dev/null; then fail "features: '$g' accepted"; fi
	n=$((n + 1))
done
for g in abc -1 99999999999999999999 1.5 1e6 12abc " "; do
	if printf '%s' "$g" >$B 2>/dev/null; then fail "base_slice_ns: '$g' accepted"; fi
	n=$((n + 1))
done
if [ $st = 1 ] && printf '\000' >$D/stats 2>/dev/null; then fail "stats: a NUL accepted"; fi
[ $st = 1 ] && garbage=$((garbage + 1))
if [ -e $D/timeline ]; then
	if echo 0 >$D/timeline 2>/dev/null; then fail "a write to timeline accepted"; fi
	garbage=$((garbage + 1))
fi
garbage=$((garbage + n))
unchanged || fail "a refused write changed something"
if [ $st = 1 ]; then
	p1=$(picks)
	[ "$p1" -ge "$p0" ] || fail "a refused write reset the stats ($p0 -> $p1 picks)"
	echo "stats kept: $p0 -> $p1 picks"
fi
echo "refused: $offset writes at an offset, $overlong overlong, $garbage garbage; nothing changed"

# 2. As nobody.
if ! grep -q '^nobody:' /etc/passwd 2>/dev/null; then
	if [ -e /etc/passwd ]; then
		echo "/etc/passwd without nobody: not touching it"
	else
		mkdir -p /etc
		echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >/etc/passwd
		echo 'nogroup:x:65534:' >/etc/group
		made_passwd=1
	fi
fi
if grep -q '^nobody:' /etc/passwd 2>/dev/null && [ "$(su -s /bin/sh nobody -c 'id -u')" = 65534 ]; then
	files="$F $B"
	[ $st = 1 ] && files="$files $D/stats"
	[ $vf = 1 ] && files="$files $D/verify"
	for m in $mode0 755; do
		mount -o remount,mode=$m $DBG || fail "remount $DBG mode=$m"
		for f in $files; do
			for w in 0 off NO_ELIGIBLE 1000000; do
				if su -s /bin/sh nobody -c "echo $w >$f" 2>/dev/null; then fail "nobody wrote '$w' to $f (root mode $m)"; fi
				unpriv_w=$((unpriv_w + 1))
			done
		done
		if [ $m = 755 ]; then
			for f in $files $D/timeline; do
				[ -r $f ] || continue
				su -s /bin/sh nobody -c "cat $f" >/dev/null || fail "nobody could not read $f (root mode 755)"
				unpriv_r=$((unpriv_r + 1))
			done
		fi
	done
	mount -o remount,mode=$mode0 $DBG
	[ "$(stat -c %a $DBG)" = "$mode0" ] || fail "$DBG mode not restored"
	unchanged || fail "an unprivileged write changed something"
	echo "nobody: $unpriv_w writes refused (root $mode0, then 755), $unpriv_r reads"
else
	echo "no way to become nobody here: unprivileged writes not tried"
fi

# 3. Concurrent writers and readers under load.
for i in 1 2; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
hackbench -g 1 -l 20 >$T/hb 2>&1 &
hb=$!
started=$((2 + 40))
iters=$(scaled 150 30)
feats=""
for x in ELIGIBLE RUN_TO_PARITY PLACE_LAG PREEMPT_SHORT PLACE_REL_DEADLINE DELAY_DEQUEUE DELAY_ZERO \
	PLACE_DEADLINE_INITIAL RUN_TO_PARITY_MIN_SLICE LAG_CLAMP_MAX_SLICE NEXT_BUDDY_EEVDF PROTECT_AT_PICK; do
	case " $feats0 " in *" $x "* | *" NO_$x "*) feats="$feats $x" ;; esac
done
slices="700000 1000000 2100000 3000000 4000000"
# writer NAME: its loop; leaves "good_ok good_failed garbage_accepted" in $T/NAME.
writer() {
	name=$1
	gok=0 gbad=0 acc=0 i=0
	while [ $i -lt $iters ]; do
		case $name in
		feat*)
			set -- $feats
			shift $((i % $#))
			if echo "NO_$1" >$F && echo "$1" >$F; then gok=$((gok + 2)); else gbad=$((gbad + 1)); fi
			printf 'NO_SUCH_%d' $i >$F 2>/dev/null && acc=$((acc + 1))
			printf '\001' >$F 2>/dev/null && acc=$((acc + 1))
			;;
		base*)
			set -- $slices
			shift $((i % 5))
			if echo $1 >$B; then gok=$((gok + 1)); else gbad=$((gbad + 1)); fi
			printf 'x%d' $i >$B 2>/dev/null && acc=$((acc + 1))
			printf -- '-%d' $i >$B 2>/dev/null && acc=$((acc + 1))
			;;
		stats)
			if echo 0 >$D/stats; then gok=$((gok + 1)); else gbad=$((gbad + 1)); fi
			printf '%d' $((i + 1)) >$D/stats 2>/dev/null && acc=$((acc + 1))
			printf 'zero' >$D/stats 2>/dev/null && acc=$((acc + 1))
			;;
		verify)
			case $((i % 3)) in
			0) w=0 ;;
			1) w=off ;;
			2) w=on ;;
			esac
			if echo $w >$D/verify; then gok=$((gok + 1)); else gbad=$((gbad + 1)); fi
			printf 'on%d' $i >$D/verify 2>/dev/null && acc=$((acc + 1))
			printf '%d' $((i + 1)) >$D/verify 2>/dev/null && acc=$((acc + 1))
			;;
		esac
		i=$((i + 1))
	done
	echo "$gok $gbad $acc" >$T/$name
}
# reader N: reads every file until $T/stop; leaves "reads bad" in $T/readN.
known=$(for x in $feats0; do echo "${x#NO_}"; done | sort -u | tr '\n' ' ')
sumcheck() { # FILE stats|verify: it parses, and its "all" line is the sum of the CPU lines
	v=""
	[ "$2" = verify ] && v=--verify
	sums=$(eevdfctl stats --from "$1" $v --check-sums) || { echo "$sums"; return 1; }
}
reader() {
	r=0 bad=0
	while [ ! -e $T/stop ]; do
		cat $F >$T/f$1 || bad=$((bad + 1))
		for x in $(cat $T/f$1); do
			case " $known " in *" ${x#NO_} "*) ;; *) echo "reader: unknown feature '$x'"; bad=$((bad + 1)) ;; esac
		done
		b=$(cat $B) || bad=$((bad + 1))
		case " $slices $base0 " in *" $b "*) ;; *) echo "reader: base_slice_ns '$b'"; bad=$((bad + 1)) ;; esac
		r=$((r + 2))
		for f in stats verify; do
			[ -r $D/$f ] || continue
			cat $D/$f >$T/$f$1 && sumcheck $T/$f$1 $f || { echo "reader: bad $f"; cat $T/$f$1; bad=$((bad + 1)); }
			r=$((r + 1))
		done
		if [ -r $D/timeline ]; then
			cat $D/timeline >/dev/null || bad=$((bad + 1))
			r=$((r + 1))
		fi
	done
	echo "$r $bad" >$T/read$1
}
writers="feat1 feat2 base1 base2"
[ $st = 1 ] && writers="$writers stats"
[ $vf = 1 ] && writers="$writers verify"
for w in $writers; do
	writer $w &
	bg="$bg $!"
done
wpids=$bg
for r in 1 2; do
	reader $r &
	bg="$bg $!"
done
t0=$(cut -d' ' -f1 /proc/uptime)
for p in $wpids; do wait $p; done
t1=$(cut -d' ' -f1 /proc/uptime)
# slack: how far a task's accounted CPU time may exceed its wall time. Under TCG the
# scheduler's clock and uptime's drift apart by up to 2%; on a nohz_full CPU stock 6.12
# itself accounts a task alone on it up to 1.44 times its wall time (measured on
# distro-stock, Documentation/reliability.md), so the bound is 1.5 times there.
slack=1.05
case "$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)" in '' | '(null)') ;; *) slack=1.5 ;; esac
# The hogs' CPU time (schedstat: above 0, at most their age times $slack plus 0.1 s; each
# task's CPU time, the uptime and its start time read one right after the other), then the
# end of the load.
eevdfctl cputime --slack-ratio "$slack" --slack-s 0.1 $hogs || fail "CPU time of the hogs"
stop_all
grep Time $T/hb
grep -q '^Time: [0-9]' $T/hb || fail "hackbench under the writers did not finish"
acc=0 gbad=0
for w in $writers; do
	set -- $(cat $T/$w 2>/dev/null || echo "0 1 0")
	echo "writer $w: $1 good writes, $2 failed, $3 garbage accepted"
	good=$((good + $1)) gbad=$((gbad + $2)) acc=$((acc + $3))
	garbage=$((garbage + (iters * 2)))
done
rbad=0
for r in 1 2; do
	set -- $(cat $T/read$r 2>/dev/null || echo "0 1")
	reads=$((reads + $1)) rbad=$((rbad + $2))
done
echo "writers: $(awk "BEGIN { print $t1 - $t0 }") s; readers: $reads reads, $rbad bad"
[ "$gbad" = 0 ] || fail "$gbad good writes failed"
[ "$acc" = 0 ] || fail "$acc garbage writes were accepted"
[ "$rbad" = 0 ] || fail "$rbad bad reads"
[ "$finished" = "$started" ] || fail "$((started - finished)) of $started tasks did not finish"
restore
unchanged || fail "not back as it was"
echo ok
