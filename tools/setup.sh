#!/usr/bin/env bash
# Bring a fresh Debian 12 machine to a working state. Idempotent: a second run
# checks versions and does nothing else.
#
#   - Debian packages: kernel source, LLVM tool chain, QEMU, busybox, rt-tests, and what
#     the Debian package and its install test use (dpkg-dev, debhelper, kmod, rsync,
#     debootstrap, fdisk);
#   - bindgen-cli $BINDGEN_VERSION from crates.io;
#   - Rust $RUST_TOOLCHAIN with rust-src, rustfmt, clippy and the musl target (and nightly's miri
#     for the tests, when EEVDF_SETUP_TESTS=1).
#
# It ends by checking every pinned version; a mismatch stops it with a message
# that says what was found and what is wanted.
source "$(dirname "$0")/lib.sh"

# The kernel's source is pinned to $KERNEL_DEB_VERSION (lib.sh): the series, the C-parity
# harness and every measured number are of that version, and bookworm-security moves on
# (6.12.118 came on 2026-12-02) while it keeps the older linux-source packages. It keeps
# only the newest linux-config-6.12, so Debian's config is taken from whichever 6.12 it
# has: a point release's config differs from its neighbour's by a few symbols at most,
# which the build's olddefconfig settles.
KERNEL_PACKAGES=(linux-source-6.12)
APT_PACKAGES=(linux-config-6.12 clang lld llvm libclang-dev flex bison bc libelf-dev
	libssl-dev cpio xz-utils make qemu-system-x86 busybox-static rt-tests python3
	git python3-ply # python3-ply: checkpatch.pl checks the SPDX lines of new files with it
	dpkg-dev debhelper kmod rsync # make bindeb-pkg's build dependencies (tools/build-kernel.sh --deb)
	debootstrap fdisk # the package's install test (tools/install-test.sh)
	libtraceevent-dev) # perf sched in the guest: tools/build-perf.sh builds 6.12's perf with it

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
for p in "${KERNEL_PACKAGES[@]}"; do
	[ "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null)" = "$KERNEL_DEB_VERSION" ] ||
		missing+=("$p=$KERNEL_DEB_VERSION")
done
if [ ${#missing[@]} -gt 0 ]; then
	step "apt: installing ${missing[*]}"
	t0=$(now)
	sudo_ apt-get update -qq
	sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		--allow-downgrades "${missing[@]}" >/dev/null ||
		die "apt-get could not install ${missing[*]} (is $KERNEL_DEB_VERSION still in bookworm-security? apt-cache policy linux-source-6.12)"
	note "apt took $(($(now) - t0)) s"
fi

if ! command -v rustup >/dev/null; then
	die "rustup not found: install it from your distribution or rustup.rs, then rerun"
fi
if ! rustup toolchain list | grep -q "^$RUST_TOOLCHAIN"; then
	step "rustup: installing $RUST_TOOLCHAIN"
	rustup toolchain install "$RUST_TOOLCHAIN" --profile minimal
fi
for c in rust-src rustfmt clippy; do
	if ! rustup component list --toolchain "$RUST_TOOLCHAIN" --installed | grep -q "^$c"; then
		step "rustup: adding $c to $RUST_TOOLCHAIN"
		rustup component add "$c" --toolchain "$RUST_TOOLCHAIN"
	fi
done
# The guest programs (tools/eevdf-guest: the guest tests' and the lab's) are static musl binaries.
# musl: the static guest programs; none: the core built for a kernel-like target.
for t in x86_64-unknown-linux-musl x86_64-unknown-none; do
	if ! rustup target list --toolchain "$RUST_TOOLCHAIN" --installed | grep -q "^$t\$"; then
		step "rustup: adding target $t to $RUST_TOOLCHAIN"
		rustup target add "$t" --toolchain "$RUST_TOOLCHAIN"
	fi
done
if [ "${EEVDF_SETUP_TESTS:-0}" = 1 ]; then
	if ! rustup toolchain list | grep -q '^nightly'; then
		rustup toolchain install nightly --profile minimal
	fi
	for c in miri rust-src; do
		rustup component list --toolchain nightly --installed | grep -q "^$c" ||
			rustup component add "$c" --toolchain nightly
	done
	if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
		step "cargo: installing cargo-fuzz $CARGO_FUZZ_VERSION (about 1 minute)"
		cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet
	fi
fi

have_bindgen=$(bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have_bindgen" != "$BINDGEN_VERSION" ]; then
	step "cargo: installing bindgen-cli $BINDGEN_VERSION (about 2 minutes)"
	t0=$(now)
	cargo install bindgen-cli --version "$BINDGEN_VERSION" --locked --quiet
	note "bindgen took $(($(now) - t0)) s"
fi

# The checks. Each names what it found and what it wants.
v=$(rustc --version | awk '{print $2}')
[ "$v" = "$RUST_TOOLCHAIN" ] || die "rustc is $v, want $RUST_TOOLCHAIN (rust-toolchain.toml pins it)"
v=$(bindgen --version | awk '{print $2}')
[ "$v" = "$BINDGEN_VERSION" ] || die "bindgen is $v, want $BINDGEN_VERSION"
[ -f "$KERNEL_TARBALL" ] || die "$KERNEL_TARBALL missing: apt-get install linux-source-6.12"
v=$(dpkg-query -W -f='${Version}' linux-source-6.12)
case "$v" in
"$KERNEL_DEB_VERSION") ;;
*) die "linux-source-6.12 is $v, want $KERNEL_DEB_VERSION (bookworm-security)" ;;
esac
v=$(dpkg-query -W -f='${Version}' linux-config-6.12)
case "$v" in
6.12.*) ;;
*) die "linux-config-6.12 is $v, want a 6.12 release (the distro flavours' config must be of the source's series)" ;;
esac
step "setup: rustc $RUST_TOOLCHAIN, bindgen $BINDGEN_VERSION, linux-source $KERNEL_DEB_VERSION, linux-config $v"
