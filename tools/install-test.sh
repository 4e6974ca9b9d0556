#!/usr/bin/env bash
# Documentation/installing.md, followed step by step on a Debian 12 system in QEMU.
#
#   tools/install-test.sh        (after tools/build-kernel.sh distro --deb; about 20 min
#                                 the first time, which makes the Debian disk image)
#
# 1. Makes a Debian 12 (bookworm) disk image once, as an installer would leave a PC: one
#    ext4 partition, Debian's own kernel (linux-image-amd64), GRUB on the disk's MBR, a
#    serial console. debootstrap, then grub-install from inside one boot of it. Cached in
#    $EEVDF_CACHE/install/bookworm.img; each run works on a copy.
# 2. Copies the packages from $EEVDF_CACHE/deb/ into the copy, with a script that runs at
#    each boot (a systemd unit) and does, boot by boot, what installing.md says a user
#    types: install the packages, check GRUB's entries, boot the new kernel once, confirm
#    the Rust core runs (uname, /sys/kernel/debug/sched/eevdf/, eevdfctl), go back to
#    Debian's kernel, remove the packages.
# 3. Boots the disk with QEMU (TCG, through the BIOS and GRUB: no -kernel), prints the
#    guest's console, and fails unless every step reported ok and the kernel logged no
#    report (WARN, BUG, lockdep, KASAN, ...).
#
# Output: the console in $EEVDF_CACHE/install/console.log; the step lines ("step N ok ...")
# are what the closing notes quote.
source "$(dirname "$0")/lib.sh"

dir=$EEVDF_CACHE/install
img=$dir/bookworm.img
mkdir -p "$dir"
image=$(ls "$EEVDF_CACHE"/deb/linux-image-*.deb 2>/dev/null | grep -v -- -dbg_ | head -1)
ctl=$(ls "$EEVDF_CACHE"/deb/eevdfctl_*.deb 2>/dev/null | head -1)
[ -n "$image" ] && [ -n "$ctl" ] || die "no packages in $EEVDF_CACHE/deb: run tools/build-kernel.sh distro --deb"
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, loop devices, mount)"

mnt=$dir/mnt
loop=
# Unmounts $mnt and frees the loop device of `attach`, if any.
detach() {
	if mountpoint -q "$mnt"; then umount "$mnt"; fi
	if [ -n "$loop" ]; then losetup -d "$loop"; fi
	loop=
}
trap detach EXIT

# Mounts the first partition of disk image $1 (at 1 MiB) at $mnt.
attach() {
	loop=$(losetup -f --show -o $((1024 * 1024)) "$1")
	mkdir -p "$mnt"
	mount "$loop" "$mnt"
}

if [ ! -f "$img" ]; then
	for t in debootstrap sfdisk mkfs.ext4; do
		command -v "$t" >/dev/null || die "$t missing: run tools/setup.sh"
	done
	step "install: making the Debian 12 disk image (debootstrap, then GRUB from inside; once)"
	t0=$(now)
	# The root filesystem is made as its own file and then placed in the disk's first
	# partition: this machine's loop devices do not scan partitions.
	part=$dir/part.img.tmp
	rm -f "$img.tmp" "$part"
	truncate -s 6G "$img.tmp"
	printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk -q "$img.tmp"
	truncate -s $((6 * 1024 - 1))M "$part"
	mkfs.ext4 -q -L root "$part"
	mkdir -p "$mnt"
	mount -o loop "$part" "$mnt"
	debootstrap --include=linux-image-amd64,grub-pc,systemd-sysv,udev,kmod,ca-certificates \
		bookworm "$mnt" http://deb.debian.org/debian >"$dir/debootstrap.log" 2>&1 ||
		{ tail -20 "$dir/debootstrap.log"; die "debootstrap failed (log: $dir/debootstrap.log)"; }
	note "debootstrap: $(($(now) - t0)) s"
	echo "UUID=$(blkid -s UUID -o value "$part") / ext4 errors=remount-ro 0 1" >"$mnt/etc/fstab"
	echo debian-eevdf >"$mnt/etc/hostname"
	chroot "$mnt" passwd -d root >/dev/null
	# As an installer leaves it, plus a serial console (QEMU's) for GRUB and the kernel.
	cat >"$mnt/etc/default/grub" <<'EOF'
GRUB_DEFAULT=0
GRUB_TIMEOUT=3
GRUB_DISTRIBUTOR=Debian
GRUB_CMDLINE_LINUX_DEFAULT="quiet"
GRUB_CMDLINE_LINUX="console=ttyS0,115200"
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --speed=115200"
EOF
	# GRUB goes on the disk from inside the guest, where the disk has its partition: one
	# boot of Debian's kernel with this as init.
	cat >"$mnt/root/grub-setup.sh" <<'EOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -o remount,rw /
if grub-install --target=i386-pc /dev/vda && update-grub; then echo EEVDF-GRUB-OK; fi
rm -f /root/grub-setup.sh
sync
echo o >/proc/sysrq-trigger
sleep 60
EOF
	chmod +x "$mnt/root/grub-setup.sh"
	kver=$(ls "$mnt"/boot/vmlinuz-* | head -1 | sed 's/.*vmlinuz-//')
	cp "$mnt/boot/vmlinuz-$kver" "$dir/vmlinuz.tmp"
	cp "$mnt/boot/initrd.img-$kver" "$dir/initrd.tmp"
	umount "$mnt"
	dd if="$part" of="$img.tmp" bs=1M seek=1 conv=notrunc,sparse status=none
	rm -f "$part"
	note "installing GRUB from inside (Debian's $kver under TCG)"
	timeout 900 qemu-system-x86_64 -machine pc -accel tcg -cpu max -smp 2 -m 1024 \
		-drive file="$img.tmp",format=raw,if=virtio -kernel "$dir/vmlinuz.tmp" \
		-initrd "$dir/initrd.tmp" -append "root=/dev/vda1 rw console=ttyS0 panic=1 init=/root/grub-setup.sh" \
		-display none -serial stdio -no-reboot </dev/null >"$dir/grub-setup.log" 2>&1 || true
	rm -f "$dir/vmlinuz.tmp" "$dir/initrd.tmp"
	grep -q EEVDF-GRUB-OK "$dir/grub-setup.log" ||
		{ tail -20 "$dir/grub-setup.log"; die "GRUB was not installed (log: $dir/grub-setup.log)"; }
	mv "$img.tmp" "$img"
	note "image made in $(($(now) - t0)) s: $img"
fi

step "install: a copy of the image, with the packages and the walk-through"
work=$dir/work.img
cp --sparse=always "$img" "$work"
attach "$work"
mkdir -p "$mnt/root/debs"
cp "$image" "$ctl" "$mnt/root/debs/"
install -m 0755 "$EEVDF_REPO/tools/guest/install-walkthrough.sh" "$mnt/root/walkthrough.sh"
install -m 0644 "$EEVDF_REPO/tools/kernel-reports.txt" "$mnt/root/kernel-reports.txt"
cat >"$mnt/etc/systemd/system/eevdf-walkthrough.service" <<'EOF'
[Unit]
Description=Documentation/installing.md, step by step
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/root/walkthrough.sh
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/eevdf-walkthrough.service \
	"$mnt/etc/systemd/system/multi-user.target.wants/eevdf-walkthrough.service"
rm -f "$mnt/root/walkthrough.state"
detach

step "install: booting the disk (QEMU TCG, BIOS and GRUB; three boots)"
log=$dir/console.log
# The walk-through's lines reach the console through the journal: "[  t] walkthrough.sh[pid]: ".
walk='walkthrough\.sh\[[0-9]+\]: '
t0=$(now)
timeout 2400 qemu-system-x86_64 -machine pc -accel tcg -cpu max -smp 2 -m 2048 \
	-drive file="$work",format=raw,if=virtio -nic user,model=e1000 \
	-display none -serial stdio 2>&1 </dev/null |
	tee "$log" | grep -a --line-buffered -E "$walk(step|walkthrough)" || true
note "QEMU ran $(($(now) - t0)) s"
# Kernel reports, in any of the three boots; the walk-through's own lines (which print the
# commands it runs, a grep for these very words among them) are not the kernel's.
reports=$(kernel_reports "$log" | grep -a -v -E "$walk" || true)
[ -z "$reports" ] || { echo "$reports"; die "the kernel reported a problem (console: $log)"; }
grep -a -q -E "${walk}walkthrough: all steps ok" "$log" || die "the walk-through did not finish (console: $log)"
step "install: every step of installing.md ran as documented (console: $log)"
