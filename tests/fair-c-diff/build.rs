// SPDX-License-Identifier: GPL-2.0

//! Builds fair.c's EEVDF code for the host: takes the pristine 6.12.117 tarball, extracts
//! the functions and macros listed below by name (a missing or ambiguous one stops the
//! build and names it), writes them into one translation unit after `c/shim.h` and
//! before `c/driver.c`, and compiles that with the tarball's `lib/rbtree.c` and rbtree
//! headers. Nothing of fair.c is in the repository.
//!
//! Inputs: `$FAIR_C_DIFF_SRC`, a directory laid out as the kernel tree with at least the
//! files of [`TREE_FILES`]; else `$KERNEL_TARBALL` (default
//! `/usr/src/linux-source-6.12.tar.xz`, Debian's `linux-source-6.12`), unpacked here.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A version pin of tools/lib.sh, the one place that sets them (`KERNEL_VERSION`,
/// `KERNEL_TARBALL`).
fn pin(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    println!(
        "cargo:rerun-if-changed={}",
        root.join("tools/lib.sh").display()
    );
    hostkit::paths::lib_sh_value(&root, name).unwrap_or_else(|e| panic!("{e}"))
}
/// The tree's files the build reads.
const TREE_FILES: &[&str] = &[
    "Makefile",
    "kernel/sched/fair.c",
    "kernel/sched/features.h",
    "kernel/sched/sched.h",
    "include/linux/sched.h",
    "include/linux/math64.h",
    "include/linux/rbtree.h",
    "include/linux/rbtree_augmented.h",
    "include/linux/rbtree_types.h",
    "lib/rbtree.c",
];

/// Macros, by file, in the order they are emitted (first definition in the file: the
/// 64-bit and SMP branches come first in these headers).
const MACROS: &[(&str, &[&str])] = &[
    ("include/linux/sched.h", &["SCHED_FIXEDPOINT_SHIFT"]),
    (
        "kernel/sched/sched.h",
        &[
            "NICE_0_LOAD_SHIFT",
            "scale_load_down",
            "NICE_0_LOAD",
            "WF_EXEC",
            "WF_FORK",
            "WF_TTWU",
            "WF_SYNC",
            "WF_MIGRATED",
            "WF_CURRENT_CPU",
            "WF_RQ_SELECTED",
            "DEQUEUE_SLEEP",
            "DEQUEUE_SAVE",
            "DEQUEUE_MOVE",
            "DEQUEUE_NOCLOCK",
            "DEQUEUE_SPECIAL",
            "DEQUEUE_MIGRATING",
            "DEQUEUE_DELAYED",
            "ENQUEUE_WAKEUP",
            "ENQUEUE_RESTORE",
            "ENQUEUE_MOVE",
            "ENQUEUE_NOCLOCK",
            "ENQUEUE_HEAD",
            "ENQUEUE_REPLENISH",
            "ENQUEUE_MIGRATED",
            "ENQUEUE_INITIAL",
            "ENQUEUE_MIGRATING",
            "ENQUEUE_DELAYED",
        ],
    ),
    (
        "kernel/sched/fair.c",
        &["WMULT_CONST", "WMULT_SHIFT", "__node_2_se", "vruntime_gt"],
    ),
];

/// math64.h's helpers, as x86_64 builds them.
const MATH64: &[&str] = &["div_s64_rem", "div_s64", "mul_u32_u32", "mul_u64_u32_shr"];

/// fair.c's functions: the EEVDF core and the entity-level code around it that the
/// driver calls, emitted in the file's order.
const FAIR_FUNCTIONS: &[&str] = &[
    "update_load_add",
    "update_load_sub",
    "update_load_set",
    "__update_inv_weight",
    "__calc_delta",
    "calc_delta_fair",
    "entity_before",
    "entity_key",
    "avg_vruntime_add",
    "avg_vruntime_sub",
    "update_zero_vruntime",
    "avg_vruntime",
    "entity_lag",
    "update_entity_lag",
    "vruntime_eligible",
    "entity_eligible",
    "cfs_rq_min_slice",
    "__entity_less",
    "__min_vruntime_update",
    "__min_slice_update",
    "min_vruntime_update",
    "__enqueue_entity",
    "__dequeue_entity",
    "__pick_root_entity",
    "__pick_first_entity",
    "set_protect_slice",
    "protect_slice",
    "cancel_protect_slice",
    "pick_eevdf",
    "update_deadline",
    "update_stats_curr_start",
    "update_curr_se",
    "did_preempt_short",
    "do_preempt_short",
    "update_curr",
    "account_entity_enqueue",
    "account_entity_dequeue",
    "reweight_eevdf",
    "reweight_entity",
    "place_entity",
    "enqueue_entity",
    "__clear_buddies_next",
    "clear_buddies",
    "set_delayed",
    "clear_delayed",
    "finish_delayed_dequeue_entity",
    "dequeue_entity",
    "set_next_entity",
    "pick_next_entity",
    "put_prev_entity",
    "requeue_delayed_entity",
    "set_next_buddy",
    "check_preempt_wakeup_fair",
    "yield_task_fair",
];

/// Statements at file scope, found by their first line's start: the augmented rbtree's
/// callbacks.
const FAIR_STATEMENTS: &[&str] = &["RB_DECLARE_CALLBACKS(static, min_vruntime_cb,"];

fn main() {
    if let Err(e) = run() {
        eprintln!("fair-c-diff build: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c");
    println!("cargo:rerun-if-env-changed=FAIR_C_DIFF_SRC");
    println!("cargo:rerun-if-env-changed=KERNEL_TARBALL");

    let src = source_tree(&out)?;
    check_version(&src)?;
    let read = |rel: &str| -> Result<String, String> {
        fs::read_to_string(src.join(rel)).map_err(|e| format!("{}: {e}", src.join(rel).display()))
    };

    let mut unit = String::new();
    unit.push_str(
        "/* Generated by tests/fair-c-diff/build.rs from the pristine Linux tarball: the\n \
         * shim, then fair.c's EEVDF functions as the tarball has them, then the driver. */\n\
         #include \"shim.h\"\n\n",
    );
    for (file, names) in MACROS {
        let text = read(file)?;
        for name in *names {
            let m = extract_macro(&text, name).ok_or_else(|| missing(file, name, "macro"))?;
            let _ = writeln!(unit, "/* {file}: {name} */\n{m}");
        }
    }
    let math = read("include/linux/math64.h")?;
    for name in MATH64 {
        // math64.h defines some twice, under #if: the first is the 64-bit, 128-bit
        // capable one that x86_64 builds.
        let f = extract_function(&math, name, "include/linux/math64.h", true)?;
        let _ = writeln!(unit, "/* include/linux/math64.h: {name}() */\n{}", f.text);
    }

    let fair = read("kernel/sched/fair.c")?;
    let mut items = Vec::new();
    for name in FAIR_FUNCTIONS {
        items.push(extract_function(&fair, name, "kernel/sched/fair.c", false)?);
    }
    for start in FAIR_STATEMENTS {
        items.push(extract_statement(&fair, start)?);
    }
    items.sort_by_key(|f| f.line);
    unit.push_str("\n/* Prototypes of the extracted functions (fair.c declares some ahead). */\n");
    for f in items.iter().filter(|f| !f.proto.is_empty()) {
        let _ = writeln!(unit, "{};", f.proto);
    }
    for f in &items {
        let _ = writeln!(unit, "\n/* kernel/sched/fair.c:{} */\n{}", f.line, f.text);
    }
    unit.push_str("\n#include \"driver.c\"\n");
    let unit_path = out.join("fair_eevdf.c");
    fs::write(&unit_path, unit).map_err(|e| e.to_string())?;

    // The tarball's rbtree headers and features.h, alone in their include directory.
    let inc = out.join("inc");
    if inc.exists() {
        fs::remove_dir_all(&inc).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(inc.join("linux")).map_err(|e| e.to_string())?;
    for h in ["rbtree.h", "rbtree_augmented.h", "rbtree_types.h"] {
        fs::copy(src.join("include/linux").join(h), inc.join("linux").join(h))
            .map_err(|e| format!("{h}: {e}"))?;
    }
    // Not "features.h": that name is glibc's, which <stdint.h> includes.
    fs::copy(
        src.join("kernel/sched/features.h"),
        inc.join("sched_features.h"),
    )
    .map_err(|e| format!("features.h: {e}"))?;

    // As the kernel compiles it: signed overflow wraps (-fno-strict-overflow), no
    // strict aliasing. clang, as LLVM=1 builds the kernel.
    let mut build = cc::Build::new();
    if Command::new("clang").arg("--version").output().is_ok() {
        build.compiler("clang");
    }
    build
        .file(&unit_path)
        .file(src.join("lib/rbtree.c"))
        .include(&inc)
        .include(crate_dir.join("c"))
        .std("gnu11")
        .opt_level(2)
        .flag_if_supported("-fno-strict-overflow")
        .flag("-fwrapv")
        .flag("-fno-strict-aliasing")
        .flag_if_supported("-Wno-unused-function")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-gnu-variable-sized-type-not-at-end")
        .warnings(false)
        .compile("fair_eevdf");
    Ok(())
}

fn missing(file: &str, name: &str, what: &str) -> String {
    let kernel_version = pin("KERNEL_VERSION");
    format!(
        "{what} `{name}` not found in {file} of the {kernel_version} tarball: the extraction \
         list in tests/fair-c-diff/build.rs no longer matches the source"
    )
}

/// The kernel tree to read: `$FAIR_C_DIFF_SRC`, or the tarball's files unpacked into
/// `out/src`.
fn source_tree(out: &Path) -> Result<PathBuf, String> {
    if let Ok(dir) = env::var("FAIR_C_DIFF_SRC") {
        let dir = PathBuf::from(dir);
        for f in TREE_FILES {
            if !dir.join(f).is_file() {
                return Err(format!("$FAIR_C_DIFF_SRC={}: no {f}", dir.display()));
            }
        }
        return Ok(dir);
    }
    let kernel_version = pin("KERNEL_VERSION");
    let tarball = env::var("KERNEL_TARBALL").unwrap_or_else(|_| pin("KERNEL_TARBALL"));
    println!("cargo:rerun-if-changed={tarball}");
    // The tarball's top directory: its name without `.tar.xz` (linux-source-6.12).
    let top = Path::new(&tarball)
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.xz"))
        .ok_or_else(|| format!("{tarball}: not a .tar.xz"))?
        .to_string();
    if !Path::new(&tarball).is_file() {
        return Err(format!(
            "{tarball} not found: install Debian's {top} ({kernel_version}; `bash \
             tools/setup.sh` does), or set $FAIR_C_DIFF_SRC to an unpacked tree"
        ));
    }
    let dest = out.join("src");
    if TREE_FILES.iter().all(|f| dest.join(f).is_file()) {
        return Ok(dest);
    }
    fs::create_dir_all(&dest).map_err(|e| e.to_string())?;
    let status = Command::new("tar")
        .arg("-xJf")
        .arg(&tarball)
        .arg("-C")
        .arg(&dest)
        .arg("--strip-components=1")
        .args(TREE_FILES.iter().map(|f| format!("{top}/{f}")))
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar -xJf {tarball} failed ({status})"));
    }
    Ok(dest)
}

/// The tree must be the kernel this harness judges by.
fn check_version(src: &Path) -> Result<(), String> {
    let mk = fs::read_to_string(src.join("Makefile")).map_err(|e| e.to_string())?;
    let field = |k: &str| {
        mk.lines()
            .find_map(|l| {
                l.strip_prefix(k)
                    .map(|v| v.trim_start_matches([' ', '=']).trim())
            })
            .unwrap_or("")
            .to_string()
    };
    let v = format!(
        "{}.{}.{}",
        field("VERSION"),
        field("PATCHLEVEL"),
        field("SUBLEVEL")
    );
    let kernel_version = pin("KERNEL_VERSION");
    if v != kernel_version {
        return Err(format!(
            "the source is Linux {v}, the harness judges by {kernel_version}"
        ));
    }
    Ok(())
}

/// An extracted item: its text, its prototype (functions) and its first line.
struct Item {
    text: String,
    proto: String,
    line: usize,
}

/// `#define NAME` (or `# define NAME`) with its continuation lines: the first in the file.
fn extract_macro(text: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| {
        let Some(rest) = l.strip_prefix('#') else {
            return false;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            return false;
        };
        let rest = rest.trim_start();
        rest.strip_prefix(name)
            .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t', '(']))
    })?;
    let mut out = String::new();
    for l in &lines[start..] {
        out.push_str(l);
        out.push('\n');
        if !l.ends_with('\\') {
            break;
        }
    }
    Some(out)
}

/// Whether `line` (at file scope) names `name` as a function being declared or defined.
fn names_function(line: &str, name: &str) -> bool {
    if line.is_empty() || line.starts_with([' ', '\t', '#', '*', '/', '}', '{']) {
        return false;
    }
    let pat = format!("{name}(");
    line.match_indices(&pat)
        .any(|(i, _)| i == 0 || line[..i].ends_with([' ', '*', '\t']))
}

/// The definition of function `name` at file scope, kernel style: the signature (its
/// return type may stand on the line above), a line `{`, the body, a line `}`. Exactly
/// one definition must exist, or with `first` the first of several is taken.
fn extract_function(text: &str, name: &str, file: &str, first: bool) -> Result<Item, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !names_function(l, name) {
            continue;
        }
        // The body's opening brace within a few lines, with no `;` before it (else a
        // prototype).
        let mut open = None;
        for (j, s) in lines.iter().enumerate().skip(i).take(8) {
            if *s == "{" {
                open = Some(j);
                break;
            }
            if s.trim_end().ends_with(';') {
                break;
            }
        }
        let Some(open) = open else { continue };
        let mut start = i;
        if l.starts_with(name) {
            while start > 0 {
                let p = lines[start - 1].trim_end();
                if p.is_empty()
                    || p.ends_with(';')
                    || p.ends_with('}')
                    || p.ends_with("*/")
                    || p.starts_with('#')
                {
                    break;
                }
                start -= 1;
            }
        }
        let close = lines[open..]
            .iter()
            .position(|s| *s == "}")
            .map(|k| open + k)
            .ok_or_else(|| format!("{file}: `{name}` has no closing brace"))?;
        found.push(Item {
            text: lines[start..=close].join("\n"),
            proto: lines[start..open].join("\n"),
            line: start + 1,
        });
    }
    match found.len() {
        0 => Err(missing(file, name, "function")),
        1 => Ok(found.remove(0)),
        _ if first => Ok(found.remove(0)),
        n => Err(format!(
            "function `{name}` is defined {n} times in {file} (lines {}): the extraction \
             cannot tell which one the kernel builds",
            found
                .iter()
                .map(|f| f.line.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A statement at file scope starting with `start`, through the line ending in `;`.
fn extract_statement(text: &str, start: &str) -> Result<Item, String> {
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with(start))
        .ok_or_else(|| missing("kernel/sched/fair.c", start, "statement"))?;
    let end = lines[i..]
        .iter()
        .position(|l| l.trim_end().ends_with(';'))
        .map(|k| i + k)
        .ok_or_else(|| format!("kernel/sched/fair.c: `{start}` does not end"))?;
    Ok(Item {
        text: lines[i..=end].join("\n"),
        proto: String::new(),
        line: i + 1,
    })
}
