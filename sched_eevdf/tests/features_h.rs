// SPDX-License-Identifier: GPL-2.0

//! The core's feature table (features/table.rs) and the kernel's
//! kernel/sched/features.h, as patched by kernel/patches/, name the same EEVDF
//! flags with the same defaults. (The kernel glue also fails to compile when a
//! name is missing from features.h; this test says which and checks defaults.)

use sched_eevdf::Features;
use std::path::Path;
use std::process::Command;

/// `SCHED_FEAT(NAME, default)` lines: from the pristine file and from the
/// `+` lines the series adds to it.
fn parse(text: &str, added_only: bool) -> Vec<(String, bool)> {
    let mut v = Vec::new();
    let mut in_features_h = !added_only;
    for line in text.lines() {
        if added_only {
            if let Some(f) = line.strip_prefix("+++ b/") {
                in_features_h = f == "kernel/sched/features.h";
                continue;
            }
            if !in_features_h {
                continue;
            }
        }
        let l = if added_only {
            match line.strip_prefix('+') {
                Some(l) => l,
                None => continue,
            }
        } else {
            line
        };
        if let Some(rest) = l.trim().strip_prefix("SCHED_FEAT(") {
            let rest = rest.trim_end_matches(')');
            let mut it = rest.split(',').map(str::trim);
            if let (Some(n), Some(d)) = (it.next(), it.next()) {
                v.push((n.to_string(), d == "true"));
            }
        }
    }
    v
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
    let mut feats = parse(&String::from_utf8_lossy(&out.stdout), false);
    let patches = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel/patches");
    let series = std::fs::read_to_string(patches.join("series")).expect("series");
    for p in series
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
    {
        let text = std::fs::read_to_string(patches.join(p)).expect("patch");
        feats.extend(parse(&text, true));
    }
    for info in Features::TABLE {
        let found = feats.iter().find(|(n, _)| n == info.name);
        let (_, def) =
            found.unwrap_or_else(|| panic!("{} is not in features.h (+ series)", info.name));
        assert_eq!(
            *def, info.default,
            "{}: default differs from features.h",
            info.name
        );
    }
}
