// SPDX-License-Identifier: GPL-2.0

//! The core's feature table (features/table.rs) and the kernel's
//! kernel/sched/features.h, as patched by kernel/patches/, name the same EEVDF
//! flags with the same defaults and the same bits (a flag's `__SCHED_FEAT_*`
//! number is its position in features.h).
//!
//! - [`patches_add_the_table_flags`] reads only the patches, so it always runs: the
//!   flags patches 0002 and 0007 add to features.h are rows of the table, with the same
//!   defaults, in the same order, at the bits right after the flag they follow.
//! - [`table_matches_features_h`] needs the 6.12 source tarball: every row is in the
//!   patched features.h, with its default and at its bit.
//!
//! The kernel build checks each bit against bindgen's `__SCHED_FEAT_*` as well
//! (kernel/fair.rs); these say which row drifted, without a kernel build.

use sched_eevdf::{FeatureInfo, Features};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One `SCHED_FEAT(NAME, default)` line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Feat {
    name: String,
    default: bool,
}

/// `SCHED_FEAT(NAME, true|false)` in `line` (C source, no diff prefix).
fn sched_feat(line: &str) -> Option<Feat> {
    let rest = line.trim().strip_prefix("SCHED_FEAT(")?;
    let (args, _) = rest.split_once(')')?;
    let (name, default) = args.split_once(',')?;
    let default = match default.trim() {
        "true" => true,
        "false" => false,
        d => panic!("SCHED_FEAT({name}, {d}): default is not true or false"),
    };
    Some(Feat {
        name: name.trim().to_string(),
        default,
    })
}

/// The flags a patch adds to kernel/sched/features.h, each with the flag that
/// precedes it in the patched file (the last `SCHED_FEAT` of the context above
/// it, hunk header included, or the flag added just before it).
fn added_flags(patch: &str) -> Vec<(Feat, String)> {
    let mut in_features_h = false;
    let mut prev: Option<String> = None;
    let mut added = Vec::new();
    for line in patch.lines() {
        if line.starts_with("diff --git ") {
            in_features_h = false;
            continue;
        }
        if let Some(f) = line.strip_prefix("+++ b/") {
            in_features_h = f == "kernel/sched/features.h";
            continue;
        }
        if !in_features_h || line.starts_with("--- ") {
            continue;
        }
        if let Some(hunk) = line.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@ TEXT`: TEXT is the nearest line above the hunk that
            // looks like a definition, here the flag before it.
            prev = hunk
                .split_once("@@")
                .and_then(|(_, t)| sched_feat(t))
                .map(|f| f.name);
            continue;
        }
        let (prefix, text) = line.split_at(line.len().min(1));
        let Some(f) = sched_feat(text) else { continue };
        match prefix {
            "+" => {
                let after = prev
                    .clone()
                    .unwrap_or_else(|| panic!("{}: no SCHED_FEAT above it", f.name));
                prev = Some(f.name.clone());
                added.push((f, after));
            }
            "-" => panic!(
                "the patch removes SCHED_FEAT({}): every later bit moves",
                f.name
            ),
            _ => prev = Some(f.name),
        }
    }
    added
}

/// The patch directory.
fn patches() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel/patches")
}

/// The series' patches in order, with their text.
fn series() -> Vec<(String, String)> {
    let dir = patches();
    let series = std::fs::read_to_string(dir.join("series")).expect("kernel/patches/series");
    series
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|p| {
            let text = std::fs::read_to_string(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
            (p.to_string(), text)
        })
        .collect()
}

/// The table's row for `name`.
fn row(name: &str) -> &'static FeatureInfo {
    Features::TABLE
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("{name} is not a row of features/table.rs"))
}

/// The row's bit, the kernel's `__SCHED_FEAT_*` number.
fn bit(info: &FeatureInfo) -> u32 {
    assert_eq!(info.flag.bits().count_ones(), 1, "{}", info.name);
    info.flag.bits().trailing_zeros()
}

/// The rows are in bit order, one bit each, no bit twice.
#[test]
fn table_is_in_bit_order() {
    let bits: Vec<u32> = Features::TABLE.iter().map(bit).collect();
    assert!(
        bits.windows(2).all(|w| w[0] < w[1]),
        "features/table.rs rows are not in bit order: {bits:?}"
    );
}

/// The flags the series' patch `prefix` adds to features.h: their names, and the flag
/// the first one follows.
fn check_added(prefix: &str, names: &[&str], first_after: &str) -> Vec<(Feat, String)> {
    let series = series();
    let (name, text) = series
        .iter()
        .find(|(p, _)| p.starts_with(prefix))
        .unwrap_or_else(|| panic!("patch {prefix} in kernel/patches/series"));
    let added = added_flags(text);
    let got: Vec<&str> = added.iter().map(|(f, _)| f.name.as_str()).collect();
    assert_eq!(got, names, "{name}: the flags it adds to features.h");
    assert_eq!(added[0].1, first_after, "{name}: {}'s place", names[0]);
    for (f, _) in &added {
        assert_eq!(
            f.default,
            row(&f.name).default,
            "{}: default differs from {name}",
            f.name
        );
    }
    added
}

#[test]
fn patches_add_the_table_flags() {
    // Patch 0002 right after PREEMPT_SHORT, patch 0007 right after 0002's: each follows
    // a row of the table.
    let next = [
        "RUN_TO_PARITY_MIN_SLICE",
        "LAG_CLAMP_MAX_SLICE",
        "NEXT_BUDDY_EEVDF",
        "PROTECT_AT_PICK",
    ];
    let added = [
        check_added("0002-", &["ELIGIBLE", "BIAS_ELIGIBLE"], "PREEMPT_SHORT"),
        check_added("0007-", &next, "BIAS_ELIGIBLE"),
    ];
    for (f, after) in added.iter().flatten() {
        assert_eq!(
            bit(row(&f.name)),
            bit(row(after)) + 1,
            "{}: follows {after} in features.h, so its bit is one more",
            f.name
        );
    }
    // No other patch touches the flags: the bits depend on these two alone.
    for (p, text) in series()
        .iter()
        .filter(|(p, _)| !p.starts_with("0002-") && !p.starts_with("0007-"))
    {
        assert!(
            added_flags(text).is_empty(),
            "{p} adds a flag to features.h"
        );
    }
}

#[test]
fn table_matches_features_h() {
    let tarball = "/usr/src/linux-source-6.12.tar.xz";
    if !Path::new(tarball).exists() {
        eprintln!("skipped: no {tarball}");
        return;
    }
    let out = Command::new("tar")
        .args([
            "-xJOf",
            tarball,
            "linux-source-6.12/kernel/sched/features.h",
        ])
        .output()
        .expect("tar");
    assert!(out.status.success(), "tar failed");
    // The pristine flags in order; an `#else` branch defines the same flag again
    // and takes no bit of its own.
    let mut feats: Vec<Feat> = Vec::new();
    let mut in_else = false;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // `# else` inside an `#ifdef` is `#else` too.
        let line = line.trim();
        let line = match line.strip_prefix('#') {
            Some(directive) => format!("#{}", directive.trim_start()),
            None => line.to_string(),
        };
        match line.as_str() {
            "#else" => in_else = true,
            "#endif" => in_else = false,
            l => {
                if let Some(f) = sched_feat(l).filter(|_| !in_else) {
                    feats.push(f);
                }
            }
        }
    }
    for (_, text) in series() {
        for (f, after) in added_flags(&text) {
            let at = feats
                .iter()
                .position(|g| g.name == after)
                .unwrap_or_else(|| panic!("{after} is not in features.h"));
            feats.insert(at + 1, f);
        }
    }
    for info in Features::TABLE {
        let at = feats
            .iter()
            .position(|f| f.name == info.name)
            .unwrap_or_else(|| panic!("{} is not in features.h (+ series)", info.name));
        assert_eq!(
            feats[at].default, info.default,
            "{}: default differs from features.h",
            info.name
        );
        assert_eq!(
            bit(info) as usize,
            at,
            "{}: bit differs from its position in features.h",
            info.name
        );
    }
}
