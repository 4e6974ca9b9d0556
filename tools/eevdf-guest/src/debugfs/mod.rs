//! The scheduler's debugfs files that `eevdfctl` reads: strict parsers (every error names its
//! line), the renderers for the terminal, and the JSON shapes. One module a file or view:
//!
//! - [`Features`] (`features.rs`): `/sys/kernel/debug/sched/features` (stock 6.12): one line
//!   of names, `NO_X` when X is off.
//! - [`Stats`] (`stats.rs`): `/sys/kernel/debug/sched/eevdf/stats` (sched_eevdf kernels
//!   only): a `cpu` header naming the counters, one row per online CPU, then `all`.
//! - [`Timeline`] (`timeline.rs`): `/sys/kernel/debug/sched/eevdf/timeline` (sched_eevdf
//!   kernels only): per CPU, each cfs_rq's summary and its entities in tree order.
//! - [`Placements`] (`place.rs`): `/sys/kernel/debug/sched/eevdf/place` (sched_eevdf
//!   kernels only): each CPU's last placements, as `place_entity()` saw them.
//! - [`render_top`] (`top.rs`): one frame of `eevdfctl top`, from a [`Stats`] delta and a
//!   [`Timeline`].
//! - [`sched_debug_custom_slice`] (`custom_slice.rs`): a task's `custom_slice` flag, from the
//!   task lists of `/sys/kernel/debug/sched/debug` (stock 6.12), which sched_getattr() does
//!   not report.
//!
//! This file holds what they share: the paths, [`ParseError`] and the number parsers, and
//! [`Snapshot`], the three files together for `eevdfctl stats --json`.
//!
//! The stats and timeline formats are the project's own; their column sets are read from the
//! file (stats) or checked against the one this version knows (timeline), so a change on the
//! kernel side shows up as a clear error, never as a silent misparse.

mod custom_slice;
mod features;
mod place;
mod stats;
mod timeline;
mod top;

pub use custom_slice::sched_debug_custom_slice;
pub use features::{on_off, Feature, Features};
pub use place::{
    Placement, Placements, ENQUEUE_INITIAL, ENQUEUE_MIGRATED, ENQUEUE_RESTORE, ENQUEUE_WAKEUP,
    PLACE_HEADER,
};
pub use stats::{Counter, Stats, COUNTERS};
pub use timeline::{
    check_timeline, CfsRq, Entity, EntityState, Timeline, TimelineCpu, TimelineRule,
    TimelineSummary, TIMELINE_COLUMNS, TIMELINE_HEADER,
};
pub use top::render_top;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::fmt;

/// The scheduler's debugfs directory (stock 6.12, CONFIG_SCHED_DEBUG). The names below are
/// relative to it.
pub const SCHED_DEBUGFS: &str = "/sys/kernel/debug/sched";
/// The feature flags (stock 6.12); writing `X` or `NO_X` sets or clears X.
pub const FEATURES: &str = "features";
/// Per-CPU runqueues and every task's scheduling state (stock 6.12).
pub const SCHED_DEBUG: &str = "debug";
/// sched_eevdf's own directory (CONFIG_SCHED_EEVDF_RUST).
pub const EEVDF: &str = "eevdf";
/// sched_eevdf's decision counters; writing `0` resets every CPU's.
pub const STATS: &str = "eevdf/stats";
/// sched_eevdf's snapshot of every CPU's cfs_rqs and their entities.
pub const TIMELINE: &str = "eevdf/timeline";
/// sched_eevdf's record of recent placements (CONFIG_SCHED_EEVDF_RUST_STATS); writing `on`
/// or `off` starts or stops it, `0` clears it.
pub const PLACE: &str = "eevdf/place";

/// A malformed debugfs file: what was wrong and on which line (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line, counting from 1.
    pub line: usize,
    /// What was wrong with it.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: usize, msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        msg: msg.into(),
    })
}

/// A decimal u64, nothing else (no sign, no spaces).
fn parse_u64(line: usize, what: &str, s: &str) -> Result<u64, ParseError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return err(line, format!("{what}: '{s}' is not a decimal u64"));
    }
    s.parse()
        .or_else(|_| err(line, format!("{what}: '{s}' does not fit in a u64")))
}

/// A decimal i64 (optional leading `-`).
fn parse_i64(line: usize, what: &str, s: &str) -> Result<i64, ParseError> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return err(line, format!("{what}: '{s}' is not a decimal i64"));
    }
    s.parse()
        .or_else(|_| err(line, format!("{what}: '{s}' does not fit in an i64")))
}

/// Lines to look at: `(1-based number, text)`, without `#` comments and blank lines.
fn content_lines(s: &str) -> impl Iterator<Item = (usize, &str)> {
    s.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
}

/// Serialize `(key, value)` pairs as a JSON object, in their order.
fn serialize_pairs<S: Serializer, K: Serialize, V: Serialize>(
    pairs: impl ExactSizeIterator<Item = (K, V)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(&k, &v)?;
    }
    m.end()
}

/// `eevdfctl stats --json`: the features, the counters and the timeline, read one after the
/// other (not one atomic snapshot).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// `features`.
    pub features: Features,
    /// `eevdf/stats`.
    pub stats: Stats,
    /// `eevdf/timeline`.
    pub timeline: Timeline,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_json_has_the_three_parts() {
        let snap = Snapshot {
            features: Features::parse("ELIGIBLE NO_X\n").unwrap(),
            stats: Stats::parse("cpu picks\n0 1\nall 1\n").unwrap(),
            timeline: Timeline::parse("cpu 0\n").unwrap(),
        };
        assert_eq!(
            serde_json::to_string(&snap).unwrap(),
            concat!(
                r#"{"features":{"ELIGIBLE":true,"X":false},"stats":{"columns":["picks"],"#,
                r#""cpus":{"0":{"picks":1}},"all":{"picks":1}},"#,
                r#""timeline":[{"cpu":0,"truncated":false,"cfs_rqs":[]}]}"#
            )
        );
    }
}
