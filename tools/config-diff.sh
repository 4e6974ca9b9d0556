#!/usr/bin/env bash
# Every difference between Debian's configuration of 6.12 ($DEBIAN_CONFIG) and a distro
# flavour's final .config, grouped by cause, as Markdown:
#
#   tools/config-diff.sh [distro|distro-stock|distro-debug|distro-debug-stock]   (default: distro)
#
# 1. options a fragment sets (their reasons are the fragment's comments);
# 2. Debian's modules (=m), all off: counted, not listed;
# 3. the rest of what changed, as Kconfig's consequences of 1 and 2 (an option whose
#    dependency went away, the compiler's clang-only and gcc-only options, new options
#    that the changes made visible), listed one by one.
# The distro flavours must have been configured (tools/build-kernel.sh NAME).
source "$(dirname "$0")/lib.sh"
name=${1:-distro}
case "$name" in
distro | distro-stock | distro-debug | distro-debug-stock) ;;
*) die "unknown distro flavour '$name' (want distro, distro-stock, distro-debug or distro-debug-stock)" ;;
esac
cfg=$KBUILD_ROOT/$name/.config
[ -f "$cfg" ] || die "no $cfg: run tools/build-kernel.sh $name first"
# The fragments the build merged, as tools/build-kernel.sh recorded them (its table of
# flavours is the one list).
names=$KBUILD_ROOT/$name/.fragment-names
[ -f "$names" ] || die "no $names: run tools/build-kernel.sh $name (it records its fragments)"
mapfile -t frags <"$names"
frag_files=()
for f in "${frags[@]}"; do frag_files+=("$EEVDF_REPO/kernel/configs/$f.config"); done
python3 - "$name" <(xzcat "$DEBIAN_CONFIG") "$cfg" "${frag_files[@]}" <<'PY'
import re, sys
name, deb_path, cfg_path, frags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def read(path):
    d = {}
    for line in open(path):
        line = line.strip()
        m = re.match(r'(CONFIG_\w+)=(.*)', line)
        if m: d[m.group(1)] = m.group(2)
        m = re.match(r'# (CONFIG_\w+) is not set', line)
        if m: d[m.group(1)] = 'n'
    return d
deb, new = read(deb_path), read(cfg_path)
setby = {}
for f in frags:
    for k in read(f):
        setby[k] = f.split('/')[-1]
keys = sorted(set(deb) | set(new))
changed = [k for k in keys if deb.get(k, 'n') != new.get(k, 'n')]
frag_rows = [k for k in changed if k in setby]
modules = [k for k in changed if k not in setby and deb.get(k) == 'm']
rest = [k for k in changed if k not in setby and deb.get(k) != 'm']
print(f"## `{name}`: differences from Debian's config.amd64_none_amd64\n")
print(f"{len(changed)} options differ: {len(frag_rows)} set by a fragment, "
      f"{len(modules)} of Debian's modules (=m) off, {len(rest)} consequences.\n")
print("### Set by a fragment (reasons: the fragment's comments)\n")
print("| option | Debian | here | fragment |\n|---|---|---|---|")
for k in frag_rows:
    print(f"| `{k}` | {deb.get(k, '(absent)')} | {new.get(k, 'n')} | {setby[k]} |")
print(f"\n### Consequences ({len(rest)})\n")
print("Debian's value, then this build's (`absent`: the option does not exist in that "
      "configuration, e.g. gcc-only or clang-only).\n")
print("| option | Debian | here |\n|---|---|---|")
for k in rest:
    print(f"| `{k}` | {deb.get(k, 'absent')} | {new.get(k, 'absent') if k in new else 'absent'} |")
PY
