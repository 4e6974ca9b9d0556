// SPDX-License-Identifier: GPL-2.0

//! The generated parts of Documentation/debugfs.md: the counter table, from the kernel's
//! counter table (kernel/stats_table.rs, through [`eevdf_guest::debugfs::COUNTERS`]), and
//! the feature table, from the core's (features/table.rs, `eevdf_feature_table!`), the two
//! tables the kernel compiles. Each sits between a `<!-- BEGIN generated from SOURCE ...-->`
//! and an `<!-- END generated from SOURCE -->` line; [`debugfs_md_is_generated`] fails when
//! a block differs from what its table generates. Regenerate both with
//!
//! ```sh
//! EEVDF_BLESS=1 cargo test -p eevdf-guest --test docs
//! ```

use eevdf_guest::debugfs::COUNTERS;
use std::path::PathBuf;

#[path = "../../../features/table.rs"]
#[macro_use]
mod feature_table;

/// The command that rewrites the blocks.
const BLESS: &str = "EEVDF_BLESS=1 cargo test -p eevdf-guest --test docs";

/// One row of the feature table.
struct Feature {
    name: &'static str,
    bit: u32,
    default: bool,
    doc: &'static str,
}

macro_rules! features {
    ($( $(#[doc = $doc:expr])* ($name:ident, $bit:literal, $default:literal) ),* $(,)?) => {
        const FEATURES: &[Feature] = &[
            $( Feature {
                name: stringify!($name),
                bit: $bit,
                default: $default,
                doc: concat!($($doc),*),
            }, )*
        ];
    };
}
eevdf_feature_table!(features);

/// A doc comment as one table cell: its lines joined, `|` escaped.
fn cell(doc: &str) -> String {
    doc.split_ascii_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The counters of `/sys/kernel/debug/sched/eevdf/stats`, in the file's order.
fn counter_table() -> String {
    let mut s = String::from("| Counter | Counts |\n|---|---|\n");
    for c in COUNTERS {
        s.push_str(&format!("| `{}` | {} |\n", c.name, cell(c.doc)));
    }
    s
}

/// The features the core reads, in bit order.
fn feature_table() -> String {
    let mut s = String::from("| Feature | Bit | Default | What |\n|---|---|---|---|\n");
    for f in FEATURES {
        let default = if f.default { "on" } else { "off" };
        s.push_str(&format!(
            "| `{}` | {} | {default} | {} |\n",
            f.name,
            f.bit,
            cell(f.doc)
        ));
    }
    s
}

/// Replaces the body of the block generated from `source` in `text` with `body`.
/// Panics when the block's markers are missing.
fn replace_block(text: &str, source: &str, body: &str) -> String {
    let begin = format!("<!-- BEGIN generated from {source} ");
    let end = format!("<!-- END generated from {source} -->\n");
    let b = text
        .find(&begin)
        .unwrap_or_else(|| panic!("no line starting {begin:?}"));
    let body_at = b + text[b..].find('\n').expect("BEGIN line ends") + 1;
    let e = body_at
        + text[body_at..]
            .find(&end)
            .unwrap_or_else(|| panic!("no {end:?} after {begin:?}"));
    format!("{}{body}{}", &text[..body_at], &text[e..])
}

#[test]
fn debugfs_md_is_generated() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../Documentation/debugfs.md");
    let text = std::fs::read_to_string(&path).expect("Documentation/debugfs.md");
    let mut want = replace_block(&text, "kernel/stats_table.rs", &counter_table());
    want = replace_block(&want, "features/table.rs", &feature_table());
    if want == text {
        return;
    }
    if std::env::var_os("EEVDF_BLESS").is_some() {
        std::fs::write(&path, want).expect("write Documentation/debugfs.md");
        eprintln!("rewrote {}", path.display());
        return;
    }
    let first = text
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| text.lines().count().min(want.lines().count()));
    panic!(
        "Documentation/debugfs.md line {}: a generated block differs from its table\n\
         have: {:?}\nwant: {:?}\nregenerate with: {BLESS}",
        first + 1,
        text.lines().nth(first).unwrap_or(""),
        want.lines().nth(first).unwrap_or("")
    );
}

/// The rows are in the kernel's order (bit order), and each counter has a doc.
#[test]
fn tables_are_complete() {
    assert!(FEATURES.windows(2).all(|w| w[0].bit < w[1].bit));
    assert!(FEATURES.iter().all(|f| !f.doc.trim().is_empty()));
    assert!(COUNTERS.iter().all(|c| !c.doc.trim().is_empty()));
    let mut names: Vec<&str> = COUNTERS.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), COUNTERS.len(), "a counter name twice");
}
