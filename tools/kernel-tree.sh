#!/usr/bin/env bash
# Prepare the patched kernel source tree at $KSRC (under $EEVDF_CACHE/src).
#
# 1. Unpack the pristine linux-source-6.12 tarball.
# 2. Check, then apply, every patch named in kernel/patches/series, in order,
#    with `git apply` (no fuzz: a patch that does not apply exactly stops here).
# 3. Link the repository in at kernel/sched/eevdf, where patch 0001 looks for
#    its Kbuild and Kconfig. This link is the fast path: the kernel build reads
#    the repository's .rs files in place.
#
# The tree is rebuilt only when the series or a patch changed (a stamp records
# their hash), so reruns take a second.
source "$(dirname "$0")/lib.sh"

series=$EEVDF_REPO/kernel/patches/series
stamp_want=$( (cat "$series"; sed -e 's/#.*//' "$series" | while read -r p; do
	[ -n "$p" ] && cat "$EEVDF_REPO/kernel/patches/$p"; done) | sha256sum | cut -c1-16)
stamp_file=$KSRC/.sched_eevdf-series

if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ]; then
	note "kernel tree $KSRC is current (series $stamp_want)"
else
	step "unpacking $(basename "$KERNEL_TARBALL") into $EEVDF_CACHE/src"
	t0=$(now)
	mkdir -p "$EEVDF_CACHE/src"
	tmp=$EEVDF_CACHE/src/.unpack.$$
	rm -rf "$tmp"
	mkdir "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	tar -C "$tmp" -xf "$KERNEL_TARBALL"
	tree=$tmp/linux-source-6.12
	# git apply must treat the tree as a plain directory, even if the cache
	# sits inside some git work tree.
	export GIT_CEILING_DIRECTORIES=$tmp
	grep -q "^SUBLEVEL = ${KERNEL_VERSION##*.}$" "$tree/Makefile" ||
		die "tarball is not $KERNEL_VERSION: $(grep -m1 '^SUBLEVEL' "$tree/Makefile")"
	n=0
	while read -r p; do
		p=${p%%#*}
		p=$(echo "$p" | xargs)
		[ -n "$p" ] || continue
		f=$EEVDF_REPO/kernel/patches/$p
		[ -f "$f" ] || die "series names $p, which does not exist"
		git -C "$tree" apply --check -p1 "$f" 2>/dev/null ||
			{ git -C "$tree" apply --check -v -p1 "$f" || true; die "$p does not apply cleanly to pristine $KERNEL_VERSION"; }
		git -C "$tree" apply -p1 "$f"
		n=$((n + 1))
		note "applied $p"
	done <"$series"
	echo "$stamp_want" >"$tree/.sched_eevdf-series"
	# tar restores the tarball's mtimes; a patched file whose content is the
	# same as in the tree it replaces keeps that tree's mtime too, so changing
	# one patch rebuilds what that patch changes, not every file that includes
	# a header some other patch touches.
	if [ -d "$KSRC" ]; then
		sed -e 's/#.*//' "$series" | while read -r p; do
			[ -n "$p" ] && sed -n 's|^+++ b/||p' "$EEVDF_REPO/kernel/patches/$p"
		done | sort -u | while read -r f; do
			if [ -f "$KSRC/$f" ] && cmp -s "$KSRC/$f" "$tree/$f"; then
				touch -r "$KSRC/$f" "$tree/$f"
			fi
		done
	fi
	rm -rf "$KSRC"
	mv "$tree" "$KSRC"
	note "$n patches applied in $(($(now) - t0)) s"
fi

link=$KSRC/kernel/sched/eevdf
if [ "$(readlink "$link" 2>/dev/null)" != "$EEVDF_REPO" ]; then
	rm -f "$link"
	ln -s "$EEVDF_REPO" "$link"
	note "linked $link -> $EEVDF_REPO"
fi
