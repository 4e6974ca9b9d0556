#!/usr/bin/env bash
# Every page the lab generated (Documentation/reports/*.md) is what the lab at this commit
# makes from its kept raw records: each page's "Reproduce with" names the `eevdf-lab report`
# command that made it, and this runs that command with the page written to a scratch
# directory, then compares the page (the scratch path put back) and its plots byte for byte.
# So a change to how the lab words or computes a page fails here until the pages are made
# again by those commands, and no page can keep a sentence its generator no longer writes.
# tools/test.sh runs it. Prints each page that differs, with the diff; exits 1 if any.
source "$(dirname "$0")/lib.sh"
cd "$EEVDF_REPO"
cargo build --quiet --release --locked -p eevdf-lab
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
bad=0
for page in Documentation/reports/*.md; do
	cmd=$(grep -m1 '^target/release/eevdf-lab report ' "$page") ||
		die "$page names no 'target/release/eevdf-lab report' command: make it from a kept raw (Documentation/lab.md, Reading the report)"
	read -r -a words <<<"$cmd"
	[ "${words[-2]}" = --results-page ] && [ "${words[-1]}" = "$page" ] ||
		die "$page: its report command does not end in --results-page $page: $cmd"
	# The raws (words 2 .. n-3) into the scratch directory, where report may write beside them.
	mkdir -p "$scratch/runs"
	raws=()
	for raw in "${words[@]:2:${#words[@]}-4}"; do
		[ -f "$raw" ] || die "$page: its raw $raw is not in the repository"
		cp "$raw" "$scratch/runs/" && raws+=("$scratch/runs/$(basename "$raw")")
	done
	name=$(basename "$page" .md)
	out="$scratch/$name.md"
	"${CARGO_TARGET_DIR:-target}/release/eevdf-lab" report "${raws[@]}" --results-page "$out" >/dev/null 2>"$scratch/err" || {
		cat "$scratch/err" >&2
		die "$page: $cmd failed"
	}
	# The page names the command as it was run: put the repository's paths back.
	sed -i -e "s#$scratch/runs/#$(dirname "${words[2]}")/#g" -e "s#$out#$page#g" "$out"
	if ! diff -u "$page" "$out" >"$scratch/diff"; then
		echo "$page differs from what '$cmd' makes at this commit:"
		head -40 "$scratch/diff"
		bad=1
	fi
	for png in "$scratch/$name"/*.png; do
		[ -e "$png" ] || continue
		cmp -s "$png" "Documentation/reports/$name/$(basename "$png")" || {
			echo "Documentation/reports/$name/$(basename "$png") differs from what '$cmd' draws"
			bad=1
		}
	done
	rm -rf "$scratch/runs" "$scratch/$name" "$out"
done
[ $bad = 0 ] || die "pages out of date: run the report commands above (each page's 'Reproduce with')"
echo "every generated page is what its report command makes"
