#!/bin/sh
# Documentation/installing.md, step by step, on the Debian 12 system that
# tools/install-test.sh boots: run at each boot by a systemd unit, as root, with the
# packages in /root/debs. Each boot does the part of the document that comes before the
# next reboot, and records where it is in /root/walkthrough.state:
#
#   boot 1 (Debian's kernel): install the packages; GRUB's entries; keep Debian's kernel
#          the default and boot the new one once (grub-reboot); reboot
#   boot 2 (the new kernel):  confirm it runs the Rust core: uname, dmesg, debugfs,
#          eevdfctl; reboot (the one-time choice is used up)
#   boot 3 (Debian's kernel again): remove the packages; GRUB's entries; power off
#
# Each step prints "step N ok|FAIL: what" and its commands' output; the last line is
# "walkthrough: all steps ok" or "walkthrough: FAILED at ...".
set -u
state=/root/walkthrough.state
boot=$(cat "$state" 2>/dev/null || echo 1)
fails=0

n=0
# check "what" cmd...: prints the command and its output, then the step's verdict (the
# command's exit status).
check() {
	what=$1
	shift
	n=$((n + 1))
	echo "walkthrough: boot $boot step $n: $what"
	echo "# $*"
	out=$(sh -c "$*" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/    /'
	if [ "$rc" = 0 ]; then
		echo "step $boot.$n ok: $what"
	else
		echo "step $boot.$n FAIL: $what (exit $rc)"
		fails=$((fails + 1))
	fi
}

finish() {
	if [ "$fails" = 0 ]; then
		echo "$1" >"$state"
		sync
		[ "$1" = done ] && echo "walkthrough: all steps ok"
	else
		echo "walkthrough: FAILED at boot $boot ($fails step(s))"
		echo failed >"$state"
		sync
		systemctl poweroff
		exit 1
	fi
}

new=6.12.117
entry="Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux $new"

case $boot in
1)
	check "Debian's own kernel runs" "uname -r | grep -v '^$new\$'"
	# installing.md: "Install"
	check "install the kernel and eevdfctl" "dpkg -i /root/debs/linux-image-*.deb /root/debs/eevdfctl_*.deb"
	check "GRUB lists both kernels" "grep -o \"menuentry '[^']*'\" /boot/grub/grub.cfg && grep -q \"with Linux $new'\" /boot/grub/grub.cfg"
	# installing.md: "Boot it once, keeping Debian's kernel the default"
	check "GRUB remembers a default" "sed -i 's/^GRUB_DEFAULT=.*/GRUB_DEFAULT=saved/' /etc/default/grub && update-grub"
	debian=$(sed -n "s/.*menuentry '\(Debian GNU\/Linux, with Linux [^']*-amd64\)'.*/\1/p" /boot/grub/grub.cfg | head -1)
	check "Debian's kernel stays the default" "grub-set-default 'Advanced options for Debian GNU/Linux>$debian'"
	check "the new kernel for the next boot only" "grub-reboot '$entry' && grub-editenv list"
	finish 2
	systemctl reboot
	;;
2)
	# installing.md: "Check that the Rust core runs"
	check "the new kernel runs" "uname -r | grep -x $new && cat /proc/cmdline"
	check "its config has the Rust EEVDF core" "grep -E '^CONFIG_SCHED_EEVDF_RUST(_STATS)?=y' /boot/config-$new"
	check "its KUnit suites passed at boot" "dmesg | grep -E '(not )?ok [0-9]+ sched_eevdf' && ! dmesg | grep -qE 'not ok [0-9]+ sched_eevdf'"
	check "debugfs has sched/eevdf" "ls /sys/kernel/debug/sched/eevdf/ && head -3 /sys/kernel/debug/sched/eevdf/timeline"
	check "eevdfctl reads the features" "eevdfctl features | head -40"
	check "eevdfctl sets a slice" "sleep 5 & p=\$!; eevdfctl slice set \$p 500us && eevdfctl slice get \$p; kill \$p"
	check "eevdfctl reads the counters" "echo 1 >/proc/sys/kernel/sched_schedstats && sleep 1 && eevdfctl stats"
	# tools/kernel-reports.txt, the list eevdf-vm fails a test run on (copied in by the host).
	check "no kernel report" "grep -v -e '^#' -e '^\$' /root/kernel-reports.txt >/tmp/reports && ! dmesg | grep -F -f /tmp/reports"
	finish 3
	systemctl reboot
	;;
3)
	# installing.md: "Go back to Debian's kernel"
	check "Debian's kernel runs again (the one-time choice is used up)" "uname -r | grep -v '^$new\$'"
	check "remove the packages" "apt-get remove -y linux-image-$new eevdfctl"
	check "GRUB no longer lists the new kernel" "! grep -q \"with Linux $new'\" /boot/grub/grub.cfg && grep -o \"menuentry '[^']*'\" /boot/grub/grub.cfg"
	finish done
	systemctl poweroff
	;;
*)
	echo "walkthrough: nothing to do (state $boot)"
	systemctl poweroff
	;;
esac
