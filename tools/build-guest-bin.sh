#!/usr/bin/env bash
# Build the guest's static helper programs (tools/guest-src/*.c) into
# $EEVDF_CACHE/guest-bin, which eevdf-vm puts at /eevdf/bin in the guest.
# The guest has no compiler; these are static so they need no libraries.
source "$(dirname "$0")/lib.sh"
out=$EEVDF_CACHE/guest-bin
mkdir -p "$out"
for src in "$EEVDF_REPO"/tools/guest-src/*.c; do
	bin=$out/$(basename "$src" .c)
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		gcc -static -O2 -Wall -Werror -o "$bin" "$src" || die "building $src failed"
		note "built $bin"
	fi
done
