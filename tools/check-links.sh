#!/usr/bin/env bash
# Every relative link of the repository's Markdown pages (README.md, DEVELOPERS.md,
# Documentation/**.md) names a file or directory that exists, and every #anchor into a
# Markdown page names one of its headings (GitHub's slugs: lower case, spaces to dashes,
# punctuation other than - and _ dropped). Prints each broken link; exits 1 if any.
# Every table's delimiter row has as many columns as its header (GitHub shows a table
# whose two differ as plain text).
# tools/test.sh runs it, so that moving or renaming a page cannot leave links behind.
source "$(dirname "$0")/lib.sh"
cd "$EEVDF_REPO"
python3 - README.md DEVELOPERS.md $(git ls-files 'Documentation/*.md' 'Documentation/**/*.md') <<'PY'
import os, re, sys
def slugs(path):
    out, seen = set(), {}
    inside = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            inside = not inside
        if inside or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip()
        s = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out
bad = 0
for page in sys.argv[1:]:
    text = open(page, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest):
            print(f"{page}: broken link {target}: no {dest}")
            bad += 1
        elif anchor and dest.endswith(".md") and anchor not in slugs(dest):
            print(f"{page}: broken link {target}: no heading #{anchor} in {dest}")
            bad += 1
    # Tables: a header row, then its delimiter row; cells split at unescaped pipes.
    cells = lambda row: len(re.split(r"(?<!\\)\|", row.strip().strip("|")))
    rows = text.split("\n")
    for above, row in zip(rows, rows[1:]):
        if re.fullmatch(r"\|?(\s*:?-+:?\s*\|)+\s*(:?-+:?\s*)?", row.strip()) and "|" in above:
            if cells(above) != cells(row):
                print(f"{page}: table header {above.strip()[:60]!r} has {cells(above)} columns, "
                      f"its delimiter row {cells(row)}")
                bad += 1
sys.exit(1 if bad else 0)
PY
