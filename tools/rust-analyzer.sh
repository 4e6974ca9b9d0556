#!/usr/bin/env bash
# An editor's view of the kernel glue: writes kernel/rust-project.json, for
# rust-analyzer (any editor that runs it: VS Code, Neovim, Emacs, Helix), so that
# kernel/sched_eevdf_glue.rs and everything it includes (kernel/*.rs, debugfs/*.rs, and
# through its #[path] module the core, sched_eevdf/src/) resolve `kernel::`, `bindings::`
# and the CONFIG_* cfgs of a built kernel. Cargo's view of sched_eevdf/ stays as it is: the
# core is a cargo crate too. Tell rust-analyzer to load both: its setting
# `rust-analyzer.linkedProjects` = ["Cargo.toml", "kernel/rust-project.json"] (VS Code:
# .vscode/settings.json; other editors: their rust-analyzer options). Not at the top: there,
# tools that discover a project the way rust-analyzer does (cargo-modules) take the
# rust-project.json for the workspace and no longer see the cargo one.
#
#   tools/rust-analyzer.sh [KERNEL]
#
#   KERNEL  a build of tools/build-kernel.sh (default rust): its .config decides which
#           cfgs are on (distro-debug has VERIFY and KUnit, whose modules then resolve)
#
# How: the kernel's own `make rust-analyzer` (scripts/generate_rust_analyzer.py) describes
# core, alloc, the kernel, bindings and macros crates of the build, but in 6.12 it looks
# for Rust crates only in samples/ and drivers/, so it misses ours under kernel/sched/eevdf/.
# This adds that crate, rooted at the repository's files (the kernel tree holds copies of
# them), with the kernel's cfgs plus `sched_eevdf_in_kernel`, as Kbuild compiles it. Then
# it checks what it wrote: every crate root exists, and the glue's dependencies are crates
# of the file. The file is ignored by git; rerun after building another kernel.
source "$(dirname "$0")/lib.sh"
kernel=${1:-rust}
build=$KBUILD_ROOT/$kernel
[ -e "$build/include/generated/rustc_cfg" ] || die "no built $kernel kernel (bash tools/build-kernel.sh $kernel)"
step "rust-analyzer: the kernel's crates from make rust-analyzer in $build"
kmake O="$build" rust-analyzer >/dev/null
out=$EEVDF_REPO/kernel/rust-project.json
python3 - "$build/rust-project.json" "$out" "$EEVDF_REPO" <<'PY'
import json, os, sys
src, out, repo = sys.argv[1:]
p = json.load(open(src))
crates = p["crates"]
index = {c["display_name"]: i for i, c in enumerate(crates)}
kernel = crates[index["kernel"]]
deps = [{"crate": index[n], "name": n} for n in ("core", "compiler_builtins", "macros", "build_error", "ffi", "bindings", "uapi", "kernel") if n in index]
crates.append({
    "display_name": "sched_eevdf_glue",
    "root_module": os.path.join(repo, "kernel", "sched_eevdf_glue.rs"),
    "is_workspace_member": True,
    "is_proc_macro": False,
    "deps": deps,
    "cfg": kernel["cfg"] + ["sched_eevdf_in_kernel"],
    "edition": "2021",
    "env": {"RUST_MODFILE": "This is only for rust-analyzer"},
})
missing = [c["root_module"] for c in crates if not os.path.exists(c["root_module"])]
if missing:
    sys.exit(f"rust-analyzer.sh: crate roots that do not exist: {missing[:5]}")
if any(d["crate"] >= len(crates) for c in crates for d in c["deps"]):
    sys.exit("rust-analyzer.sh: a dependency names no crate of the file")
json.dump(p, open(out, "w"), indent=1)
glue = crates[-1]
print(f"{out}: {len(crates)} crates; sched_eevdf_glue at {glue['root_module']}, "
      f"deps {', '.join(d['name'] for d in glue['deps'])}, {len(glue['cfg'])} cfgs")
PY
