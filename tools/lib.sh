# shellcheck shell=bash
# Shared settings and helpers for the pipeline scripts. Sourced, never run.
#
# Every path the pipeline writes outside the repository lives under $EEVDF_CACHE
# (default ~/.cache/sched_eevdf). `tools/clean.sh` removes it.

set -euo pipefail

EEVDF_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EEVDF_CACHE=${EEVDF_CACHE:-$HOME/.cache/sched_eevdf}

# Pinned versions. tools/setup.sh installs exactly these and check_versions() refuses others.
KERNEL_TARBALL=/usr/src/linux-source-6.12.tar.xz
KERNEL_VERSION=6.12.117
# The Debian version of linux-source-6.12 that holds it: setup.sh installs exactly this one
# (bookworm-security keeps older versions beside the newest).
KERNEL_DEB_VERSION=$KERNEL_VERSION-1~deb12u1
# Debian's configuration of the 6.12 series (package linux-config-6.12, the newest 6.12 that
# bookworm-security has: it keeps no older one): the distro flavours' start.
DEBIAN_CONFIG=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
RUST_TOOLCHAIN=1.95.0   # must match rust-toolchain.toml
BINDGEN_VERSION=0.72.1
CARGO_FUZZ_VERSION=0.13.2 # tests only (EEVDF_SETUP_TESTS=1)

KSRC=$EEVDF_CACHE/src/linux-$KERNEL_VERSION
KBUILD_ROOT=$EEVDF_CACHE/build
export PATH=$HOME/.cargo/bin:$PATH
export RUSTUP_TOOLCHAIN=$RUST_TOOLCHAIN

# Kernel make with the pinned tool chain. LLVM=1 everywhere, as the README promises.
# The kernel's report lines in console log $1: lines with a printk timestamp that contain
# a pattern of tools/kernel-reports.txt (the list eevdf-vm fails a run on).
kernel_reports() {
	grep -a -E '^\[ *[0-9]+\.[0-9]+\] ' "$1" |
		grep -a -F -f <(grep -v -e '^#' -e '^$' "$EEVDF_REPO/tools/kernel-reports.txt") || true
}

kmake() {
	make -C "$KSRC" LLVM=1 RUSTC="rustc" BINDGEN="bindgen" "$@"
}

# Progress goes to stderr, prefixed, so that logs and guest output stay readable.
step() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Seconds since the epoch, for the timings the scripts print.
now() { date +%s; }
