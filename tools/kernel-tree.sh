#!/usr/bin/env bash
# Prepare the patched kernel source tree at $KSRC (under $EEVDF_CACHE/src): the pristine
# linux-source-6.12 with the exported series applied, the tree every kernel here is
# built from.
#
# 1. tools/export-series.sh writes the self-contained series ($EEVDF_CACHE/series: the
#    repository's kernel sources as a patch that adds kernel/sched/eevdf/, then
#    kernel/patches/series), applies it with `git am` to a git repository of the
#    pristine tarball and checks that the written series gives that very tree.
# 2. $KSRC becomes a copy of that tree: every file the series adds or changes (and every
#    file an earlier series did) is copied in when its content differs, and only then,
#    so a file keeps its time stamp while its content stays and an edit of one .rs file
#    or one patch rebuilds what depends on it, not the whole kernel.
#
# No link to the repository: kernel/sched/eevdf/ holds copies, as in a tree a user gets
# from `git am`. Editing a source and rerunning tools/build-kernel.sh is still all it
# takes: the build calls this script, which exports again (a second when nothing changed).
source "$(dirname "$0")/lib.sh"

bash "$EEVDF_REPO/tools/export-series.sh"
repo=$EEVDF_CACHE/src/pristine
base=v$KERNEL_VERSION-pristine
export GIT_CEILING_DIRECTORIES=$EEVDF_CACHE/src
commit=$(git -C "$repo" rev-parse export)
[ "$(git -C "$repo" rev-parse HEAD)" = "$commit" ] || die "$repo is not at its export branch"
list=.sched_eevdf-files

if [ -d "$KSRC" ] && [ "$(cat "$KSRC/.sched_eevdf-export" 2>/dev/null)" = "$commit" ] &&
	[ ! -L "$KSRC/kernel/sched/eevdf" ]; then
	note "kernel tree $KSRC is current (export ${commit:0:12})"
	exit 0
fi

if [ ! -f "$KSRC/Makefile" ]; then
	step "kernel tree: copying the exported tree to $KSRC"
	t0=$(now)
	rm -rf "$KSRC"
	mkdir -p "$KSRC"
	tar -C "$repo" --exclude=./.git -cf - . | tar -C "$KSRC" -xf -
	: >"$KSRC/$list"
	note "copied in $(($(now) - t0)) s"
fi

step "kernel tree: $KSRC to export ${commit:0:12}"
# The tree of the previous series used a link to the repository; the exported one has
# files there.
[ -L "$KSRC/kernel/sched/eevdf" ] && rm "$KSRC/kernel/sched/eevdf"
now_files=$(git -C "$repo" diff --name-only --no-renames "$base" "$commit")
changed=0 removed=0
while read -r f; do
	[ -n "$f" ] || continue
	if [ -f "$repo/$f" ]; then
		if ! cmp -s "$repo/$f" "$KSRC/$f"; then
			mkdir -p "$(dirname "$KSRC/$f")"
			cp "$repo/$f" "$KSRC/$f"
			changed=$((changed + 1))
		fi
	elif [ -e "$KSRC/$f" ]; then
		rm -f "$KSRC/$f"
		removed=$((removed + 1))
	fi
done < <( (echo "$now_files"; cat "$KSRC/$list" 2>/dev/null) | sort -u)
echo "$now_files" >"$KSRC/$list"
# The check: every file of the series is the exported tree's, and nothing links out.
while read -r f; do
	cmp -s "$repo/$f" "$KSRC/$f" || die "$KSRC/$f differs from the exported tree"
done <<<"$now_files"
if links=$(find "$KSRC/kernel/sched" -type l | head -3) && [ -n "$links" ]; then
	die "the kernel tree has symbolic links: $links"
fi
# The series' stamp for tools/build-kernel.sh (which reconfigures when it changes): the
# C patches only; a change of the Rust sources needs no new configuration.
(
	cat "$EEVDF_REPO/kernel/patches/series"
	sed -e 's/#.*//' "$EEVDF_REPO/kernel/patches/series" | while read -r p; do
		[ -n "$p" ] && cat "$EEVDF_REPO/kernel/patches/$p"
	done
) | sha256sum | cut -c1-16 >"$KSRC/.sched_eevdf-series"
echo "$commit" >"$KSRC/.sched_eevdf-export"
note "$changed files copied, $removed removed; $(wc -l <<<"$now_files") files from the series in the tree"
