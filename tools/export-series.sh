#!/usr/bin/env bash
# Export the patched kernel as a self-contained `git format-patch` series for a pristine
# linux-source-6.12 (6.12.117), one that `git am` applies and that refers to nothing
# outside the kernel tree:
#
#   0001 sched: add the Rust EEVDF core at kernel/sched/eevdf
#        the repository's kernel sources, at the same paths under kernel/sched/eevdf/
#        (Kbuild, kernel/Kconfig, kernel/*.rs, debugfs/*.rs, features/*.rs,
#        sched_eevdf/src/*.rs) and a MAINTAINERS entry; generated here, never stored;
#   0002.. kernel/patches/series, in order, as stored.
#
#   tools/export-series.sh [--out DIR]      (default $EEVDF_CACHE/series)
#
# The series is built, and checked, in a git repository of the pristine tarball
# ($EEVDF_CACHE/src/pristine, made once: about a minute): commit the sources on the
# pristine tag, `git am` the stored patches, `git format-patch` the lot; then apply the
# written series again with `git am` on the pristine tag and require the very same tree.
# The repository is left at that tree (branch `export`): tools/kernel-tree.sh builds
# from a copy of it. Nothing is redone when the inputs have not changed (a stamp records
# their hash), so it costs a second on every kernel build.
source "$(dirname "$0")/lib.sh"
out=$EEVDF_CACHE/series
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=${2:?--out wants a directory}; shift 2 ;;
	-h | --help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (tools/export-series.sh [--out DIR])" ;;
	esac
done

repo=$EEVDF_CACHE/src/pristine
base=v$KERNEL_VERSION-pristine
series=$EEVDF_REPO/kernel/patches/series
# git runs on the kernel's repository only, even if the cache sits in some work tree;
# a fixed identity for the commits it makes (the patches keep their own authors).
export GIT_CEILING_DIRECTORIES=$EEVDF_CACHE/src
export GIT_COMMITTER_NAME="sched_eevdf export" GIT_COMMITTER_EMAIL="export@sched-eevdf.invalid"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$repo" "$@"; }

# The series' parts: the stored patches, in order, and the kernel sources of the repository
# (tracked files and new ones not ignored, as they are in the work tree: the export is of
# what one would build).
patches=()
while read -r p; do
	p=${p%%#*}
	p=$(echo "$p" | xargs)
	[ -n "$p" ] || continue
	[ -f "$EEVDF_REPO/kernel/patches/$p" ] || die "kernel/patches/series names $p, which does not exist"
	patches+=("$EEVDF_REPO/kernel/patches/$p")
done <"$series"
sources=()
while read -r f; do
	[ -f "$EEVDF_REPO/$f" ] && sources+=("$f")
done < <(git -C "$EEVDF_REPO" ls-files --cached --others --exclude-standard -- \
	Kbuild kernel/Kconfig 'kernel/*.rs' 'debugfs/*.rs' 'features/*.rs' 'sched_eevdf/src/*.rs')
[ -f "$EEVDF_REPO/Kbuild" ] && [ -f "$EEVDF_REPO/kernel/Kconfig" ] || die "no Kbuild or kernel/Kconfig"
author=$(git -C "$EEVDF_REPO" log -1 --format='%an <%ae>')
date=$(git -C "$EEVDF_REPO" log -1 --format=%aD)
stamp=$( (
	cat "$0" "$series" "${patches[@]}"
	echo "$author $date"
	for f in "${sources[@]}"; do echo "$f"; cat "$EEVDF_REPO/$f"; done
) | sha256sum | cut -c1-16)
head=$(g rev-parse -q --verify export 2>/dev/null || true)
if [ -n "$head" ] && [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] &&
	[ "$head" = "$(cat "$out/.commit" 2>/dev/null)" ]; then
	note "series $out is current ($stamp)"
	exit 0
fi

if ! g rev-parse -q --verify "$base" >/dev/null 2>&1; then
	step "export: a git repository of pristine $KERNEL_VERSION at $repo (once)"
	t0=$(now)
	tmp=$EEVDF_CACHE/src/.pristine.$$
	rm -rf "$tmp" "$repo"
	mkdir -p "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	note "unpacking $(basename "$KERNEL_TARBALL")"
	tar -C "$tmp" -xf "$KERNEL_TARBALL"
	grep -q "^SUBLEVEL = ${KERNEL_VERSION##*.}$" "$tmp/linux-source-6.12/Makefile" ||
		die "tarball is not $KERNEL_VERSION: $(grep -m1 '^SUBLEVEL' "$tmp/linux-source-6.12/Makefile")"
	mv "$tmp/linux-source-6.12" "$repo"
	note "committing $(find "$repo" -type f | wc -l) files"
	g init -q
	g config core.autocrlf false
	g config gc.auto 0
	g add -A -f
	GIT_AUTHOR_NAME="linux-source-6.12" GIT_AUTHOR_EMAIL="linux-source@debian.invalid" \
		GIT_AUTHOR_DATE="$(date -u -r "$repo/Makefile" -R)" GIT_COMMITTER_DATE="$(date -u -r "$repo/Makefile" -R)" \
		g commit -q -m "Linux $KERNEL_VERSION, as Debian's linux-source-6.12 ships it"
	g tag "$base"
	note "done in $(($(now) - t0)) s"
fi

step "export: the series (the sources and ${#patches[@]} patches) onto $base"
g checkout -q -f -B export "$base"
g clean -q -fdx
dst=kernel/sched/eevdf
for f in "${sources[@]}"; do
	mkdir -p "$repo/$dst/$(dirname "$f")"
	cp "$EEVDF_REPO/$f" "$repo/$dst/$f"
done
# MAINTAINERS: an entry for the new directory, after the scheduler's own.
awk -v author="$author" '
	/^SCHEDULER - SCHED_EXT$/ && !done {
		print "SCHEDULER - EEVDF CORE IN RUST"
		print "M:\t" author
		print "L:\tlinux-kernel@vger.kernel.org"
		print "L:\trust-for-linux@vger.kernel.org"
		print "S:\tMaintained"
		print "F:\tkernel/sched/eevdf/"
		print ""
		done = 1
	}
	{ print }
	END { if (!done) exit 1 }' "$repo/MAINTAINERS" >"$repo/MAINTAINERS.new" ||
	die "MAINTAINERS has no 'SCHEDULER - SCHED_EXT' entry to put ours before"
mv "$repo/MAINTAINERS.new" "$repo/MAINTAINERS"
g add -A -f
nfiles=${#sources[@]}
GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=$(echo "${author##*<}" | tr -d '>') GIT_AUTHOR_DATE=$date \
	GIT_COMMITTER_DATE=$date g commit -q -F - <<EOF
sched: add the Rust EEVDF core at kernel/sched/eevdf

Add the sched_eevdf sources: a no_std Rust implementation of the fair
class's EEVDF core (the augmented min-deadline tree, eligibility,
placement, deadlines, the pick and the wakeup-preemption decision) and
the kernel glue that binds it to fair.c. Nothing builds them yet; the
following patches hook them in behind CONFIG_SCHED_EEVDF_RUST.

The directory keeps the layout of the project that develops it, so
that the host simulator and tests run the very files the kernel
compiles:

  Kbuild, kernel/Kconfig    what to build, and the options
  sched_eevdf/src/          the core; uses core only, no kernel API
  features/table.rs         the sched_feat table the core reads
  kernel/                   the glue: the crate root, the table of
                            entry points fair.c calls (entry.rs),
                            the bindgen structs as the core's types
                            (fair.rs), the runqueue lock's proof
                            (rq.rs), the rbtree binding, counters,
                            snapshots, the live oracle
                            (CONFIG_SCHED_EEVDF_RUST_VERIFY) and the
                            KUnit suites
  debugfs/                  /sys/kernel/debug/sched/eevdf/, which
                            reads the scheduler through the glue

$nfiles files, exported from the project's sources by its
tools/export-series.sh.

Signed-off-by: $author
EOF
for p in "${patches[@]}"; do
	g am -q --committer-date-is-author-date "$p" || { g am --abort || true; die "$(basename "$p") does not apply with git am"; }
done
want=$(g rev-parse 'HEAD^{tree}')

tmpout=$(mktemp -d "$EEVDF_CACHE/src/.series.XXXXXX")
trap 'rm -rf "$tmpout"' EXIT
g format-patch -q --zero-commit --no-signature -o "$tmpout" "$base..export"
n=$(find "$tmpout" -name '*.patch' | wc -l)
[ "$n" = $((${#patches[@]} + 1)) ] || die "format-patch wrote $n patches, not $((${#patches[@]} + 1))"

# The check: the written series, applied with git am to the pristine tree, gives the
# same tree.
g checkout -q -f --detach "$base"
for p in "$tmpout"/*.patch; do
	g am -q "$p" || { g am --abort || true; die "the exported $(basename "$p") does not apply to $base"; }
done
got=$(g rev-parse 'HEAD^{tree}')
[ "$got" = "$want" ] || die "the exported series gives tree $got, not $want"
g checkout -q -f export

mkdir -p "$out"
rm -f "$out"/*.patch "$out/series"
mv "$tmpout"/*.patch "$out/"
(cd "$out" && ls ./*.patch | sed 's|^\./||') >"$out/series"
g rev-parse export >"$out/.commit"
echo "$stamp" >"$out/.stamp"
note "$n patches in $out (git am onto $base: tree ${want:0:12}, as built)"
