#!/usr/bin/env bash
# Remove what the pipeline wrote outside the repository ($EEVDF_CACHE: the
# patched source tree, the O= build directories, the KVM probe result), and
# cargo's target/. `tools/clean.sh builds` keeps the source tree.
source "$(dirname "$0")/lib.sh"
case "${1:-all}" in
builds) rm -rf "$KBUILD_ROOT" "$EEVDF_CACHE/vm" ;;
all) rm -rf "$EEVDF_CACHE" "$EEVDF_REPO/target" ;;
*) die "usage: tools/clean.sh [all|builds]" ;;
esac
