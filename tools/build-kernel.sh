#!/usr/bin/env bash
# Build one kernel configuration into its own O= directory, incrementally.
#
#   tools/build-kernel.sh rust    base + eevdf fragments  (the project's kernel)
#   tools/build-kernel.sh debug   base + eevdf + debug    (lockdep etc., for the guest tests)
#   tools/build-kernel.sh stock   base + stock            (CONFIG_SCHED_EEVDF_RUST=n, same tree)
#   tools/build-kernel.sh nostats base + eevdf + nostats  (rust without the counters: tools/stats-cost.sh)
#   tools/build-kernel.sh debug-verify  base + eevdf + debug + verify  (the live oracle on a
#                                       tiny kernel: its counters, ties included, in minutes
#                                       rather than distro-debug's twenty)
#
# Build-only checks that the glue builds in every configuration of the C core
# (tools/test.sh --full builds them; the fragment goes last, so that it wins):
#
#   tools/build-kernel.sh rust-nosmp    base + eevdf + nosmp    (CONFIG_SMP=n)
#   tools/build-kernel.sh rust-nodebug  base + eevdf + nodebug  (CONFIG_SCHED_DEBUG=n)
#   tools/build-kernel.sh rust-nogroup  base + eevdf + nogroup  (CONFIG_FAIR_GROUP_SCHED=n)
#
# The distro flavours start from Debian's own configuration of this kernel
# (linux-config-6.12, $DEBIAN_CONFIG) with its modules turned off, instead of tinyconfig:
#
#   tools/build-kernel.sh distro        Debian + distro + hardware + eevdf
#   tools/build-kernel.sh distro-stock  Debian + distro + hardware + stock
#   tools/build-kernel.sh distro-debug  Debian + distro + eevdf + debug + sanitizers
#                                       + verify (KASAN, UBSAN, lockdep, the VERIFY oracle;
#                                       for the test guests: no hardware fragment)
#   tools/build-kernel.sh distro-debug-stock  Debian + distro + stock + debug + sanitizers:
#                                       stock 6.12 with distro-debug's checkers, to tell
#                                       what stock does under them (not in CI)
#
# The package a user installs (Documentation/installing.md):
#
#   tools/build-kernel.sh distro --deb  the distro kernel as Debian packages
#                                       (`make bindeb-pkg`), and eevdfctl, static, as
#                                       its own package; into $EEVDF_CACHE/deb/
#
# Output: $KBUILD_ROOT/<name>/arch/x86/boot/bzImage. Prints progress every few
# seconds instead of compiler lines; on failure prints the failing lines and the
# log's path. The config is regenerated only when a fragment changed.
source "$(dirname "$0")/lib.sh"

name=${1:-rust}
deb=
case "${2:-}" in
"") ;;
--deb) deb=1 ;;
*) die "unknown option '$2' (want --deb, after the configuration's name)" ;;
esac
start=tinyconfig
case "$name" in
rust) frags=(base eevdf) ;;
debug) frags=(base eevdf debug) ;;
debug-verify) frags=(base eevdf debug verify) ;;
stock) frags=(base stock) ;;
nostats) frags=(base eevdf nostats) ;;
rust-nosmp) frags=(base eevdf nosmp) ;;
rust-nodebug) frags=(base eevdf nodebug) ;;
rust-nogroup) frags=(base eevdf nogroup) ;;
distro) start=debian frags=(distro hardware eevdf) ;;
distro-stock) start=debian frags=(distro hardware stock) ;;
distro-debug) start=debian frags=(distro eevdf debug sanitizers verify) ;;
distro-debug-stock) start=debian frags=(distro stock debug sanitizers) ;;
*) die "unknown configuration '$name' (want rust, debug, debug-verify, stock, nostats, rust-nosmp, rust-nodebug, rust-nogroup, distro, distro-stock, distro-debug or distro-debug-stock)" ;;
esac
if [ "$start" = debian ] && [ ! -f "$DEBIAN_CONFIG" ]; then
	die "$DEBIAN_CONFIG missing: run tools/setup.sh (it installs linux-config-6.12)"
fi

# One kernel build at a time on this machine (2 cores): a second build waits
# here instead of halving the speed of both.
exec 9>/tmp/sched_eevdf-kernel-build.lock
if ! flock -n 9; then
	note "another kernel build is running; waiting for it"
	flock 9
fi

bash "$EEVDF_REPO/tools/kernel-tree.sh"
out=$KBUILD_ROOT/$name
mkdir -p "$out"
log=$out/build.log

frag_files=()
for f in "${frags[@]}"; do frag_files+=("$EEVDF_REPO/kernel/configs/$f.config"); done
start_files=()
[ "$start" = debian ] && start_files=("$DEBIAN_CONFIG")
cfg_hash=$(cat "${start_files[@]}" "${frag_files[@]}" "$KSRC/.sched_eevdf-series" | sha256sum | cut -c1-16)
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.fragments" 2>/dev/null)" != "$cfg_hash" ]; then
	step "$name: configuring ($start + ${frags[*]})"
	if [ "$start" = debian ]; then
		# Debian's config without its modules: each =m becomes "is not set" before
		# MODULES is turned off, which would otherwise promote every =m to =y.
		xzcat "$DEBIAN_CONFIG" | sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' >"$out/.config"
		echo "debian: $(grep -c '^# CONFIG_.* is not set' "$out/.config") options off" >"$log"
	else
		kmake O="$out" tinyconfig >"$log" 2>&1 || { tail -20 "$log"; die "tinyconfig failed"; }
	fi
	"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frag_files[@]}" >>"$log" 2>&1 ||
		{ tail -20 "$log"; die "merge_config failed"; }
	kmake O="$out" olddefconfig >>"$log" 2>&1 || { tail -20 "$log"; die "olddefconfig failed"; }
	# Every option a fragment asks for must have survived olddefconfig; a
	# dependency that silently dropped one would make the build a different
	# kernel from the one the docs describe.
	python3 - "$out/.config" "${frag_files[@]}" <<'PY' || die "$name: the config lost options (see above)"
import re, sys
have = {}
for line in open(sys.argv[1]):
    m = re.match(r'(CONFIG_\w+)=(.*)', line)
    if m: have[m.group(1)] = m.group(2)
    m = re.match(r'# (CONFIG_\w+) is not set', line)
    if m: have[m.group(1)] = 'n'
want = {}  # later fragments override earlier ones, as in merge_config.sh
for frag in sys.argv[2:]:
    for line in open(frag):
        m = re.match(r'(CONFIG_\w+)=(.*)', line.strip()) or re.match(r'# (CONFIG_\w+) is not set()', line.strip())
        if m: want[m.group(1)] = (m.group(2) or 'n', frag.split("/")[-1])
bad = []
for opt, (w, frag) in want.items():
    got = have.get(opt, 'n')
    if got != w: bad.append(f'  {opt}: want {w}, got {got} ({frag})')
print('\n'.join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	echo "$cfg_hash" >"$out/.fragments"
fi
# The fragments this build merged, in order, for tools/config-diff.sh.
printf '%s\n' "${frags[@]}" >"$out/.fragment-names"

if [ ! -f "$out/.rustavailable" ]; then
	kmake O="$out" rustavailable >>"$log" 2>&1 || {
		tail -20 "$log"
		die "make rustavailable failed: run tools/setup.sh (wants rustc $RUST_TOOLCHAIN + rust-src, bindgen $BINDGEN_VERSION)"
	}
	touch "$out/.rustavailable"
fi

jobs=$(($(nproc) + 1))
step "$name: make -j$jobs bzImage in $out"
t0=$(now)
kmake O="$out" -j"$jobs" bzImage >"$log" 2>&1 &
pid=$!
trap 'pkill -TERM -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true' EXIT
# Progress: objects done so far and the file being built, every 10 s.
while kill -0 "$pid" 2>/dev/null; do
	sleep 10
	kill -0 "$pid" 2>/dev/null || break
	n=$(grep -cE '^  (CC|RUSTC|AS|AR|LD)' "$log" || true)
	last=$(grep -E '^  (CC|RUSTC|AS|LD)' "$log" | tail -1 | awk '{print $NF}' || true)
	note "$(printf '%4ss' $(($(now) - t0))) $n steps, at ${last:-...}"
done
if ! wait "$pid"; then
	echo "---- failing lines from $log" >&2
	grep -nE -B3 -A12 '(error|Error|ERROR)[: []' "$log" | head -80 >&2 || tail -40 "$log" >&2
	die "$name: kernel build failed after $(($(now) - t0)) s (full log: $log)"
fi
# The project's code builds warning-free under the kernel's own lints.
if grep -A4 -E '^(warning|error)' "$log" | grep -q 'kernel/sched/eevdf/'; then
	grep -B2 -A12 -E '^warning' "$log" | head -60 >&2
	die "$name: rustc warned about the project's code (above; full log: $log)"
fi
step "$name: built $(kmake O="$out" -s kernelrelease) in $(($(now) - t0)) s: $out/arch/x86/boot/bzImage"
[ -n "$deb" ] || exit 0

# --- The packages (--deb) ---
# `make bindeb-pkg` packages the tree just built (it builds nothing new): linux-image-<release>
# with the kernel, its config and System.map, and linux-libc-dev. dpkg-buildpackage writes
# the .debs next to the O= directory; they are moved to $EEVDF_CACHE/deb/. The package
# version names the project's commit the kernel was built from.
[ "$start" = debian ] || die "--deb packages a distro flavour (distro, distro-stock), not '$name'"
debdir=$EEVDF_CACHE/deb
mkdir -p "$debdir"
release=$(kmake O="$out" -s kernelrelease)
rev=$(git -C "$EEVDF_REPO" rev-parse --short=12 HEAD)
pkgver="$release-1+eevdf.$rev"
step "$name: make bindeb-pkg ($pkgver)"
t0=$(now)
rm -f "$KBUILD_ROOT"/*.deb "$KBUILD_ROOT"/*.buildinfo "$KBUILD_ROOT"/*.changes
DEBFULLNAME=sched_eevdf DEBEMAIL=sched_eevdf@users.noreply.a-seed-7ecfc918.example \
	kmake O="$out" -j"$jobs" KDEB_PKGVERSION="$pkgver" bindeb-pkg >"$out/deb.log" 2>&1 ||
	{ tail -30 "$out/deb.log"; die "$name: make bindeb-pkg failed (full log: $out/deb.log)"; }
rm -f "$debdir"/linux-*.deb
mv "$KBUILD_ROOT"/linux-*.deb "$debdir/"
rm -f "$KBUILD_ROOT"/*.buildinfo "$KBUILD_ROOT"/*.changes
note "packaged in $(($(now) - t0)) s"

# eevdfctl, the user's tool for features, slices and the debugfs files: the guests' static
# (musl) binary, packaged on its own so that it installs on any amd64 Debian.
step "eevdfctl: static build and package"
(cd "$EEVDF_REPO" && cargo build -q --release --target x86_64-unknown-linux-musl -p eevdf-guest --bin eevdfctl) ||
	die "cargo build of eevdfctl failed"
bin=$EEVDF_REPO/target/x86_64-unknown-linux-musl/release/eevdfctl
ctlver=$(grep -m1 '^version' "$EEVDF_REPO/tools/eevdf-guest/Cargo.toml" | cut -d'"' -f2)+eevdf.$rev
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -D -m 0755 "$bin" "$stage/usr/sbin/eevdfctl"
install -D -m 0644 "$EEVDF_REPO/Documentation/eevdfctl.md" "$stage/usr/share/doc/eevdfctl/eevdfctl.md"
mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<EOF
Package: eevdfctl
Version: $ctlver
Architecture: amd64
Maintainer: sched_eevdf <sched_eevdf@users.noreply.a-seed-7ecfc918.example>
Section: admin
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Description: control the Rust EEVDF core of a sched_eevdf kernel
 Toggles the scheduler features in /sys/kernel/debug/sched/features, sets per-task
 slices with sched_setattr(), and reads /sys/kernel/debug/sched/eevdf/ (counters and
 the timeline). A static binary; features and slices work on any 6.12 kernel.
EOF
rm -f "$debdir"/eevdfctl_*.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$debdir/eevdfctl_${ctlver}_amd64.deb" >/dev/null ||
	die "dpkg-deb failed"
step "packages in $debdir:"
for f in "$debdir"/*.deb; do note "$(basename "$f")  $(du -h "$f" | cut -f1)"; done
