//! The scheduler's debugfs files that `eevdfctl` reads: strict parsers (every error names its
//! line), the renderers for the terminal, and the JSON shapes.
//!
//! - [`Features`]: `/sys/kernel/debug/sched/features` (stock 6.12): one line of names,
//!   `NO_X` when X is off.
//! - [`Stats`]: `/sys/kernel/debug/sched/eevdf/stats` (sched_eevdf kernels only): a `cpu`
//!   header naming the counters, one row per online CPU, then `all`.
//! - [`Timeline`]: `/sys/kernel/debug/sched/eevdf/timeline` (sched_eevdf kernels only): per
//!   CPU, each cfs_rq's summary and its entities in tree order.
//! - [`sched_debug_custom_slice`]: a task's `custom_slice` flag, from the task lists of
//!   `/sys/kernel/debug/sched/debug` (stock 6.12), which sched_getattr() does not report.
//!
//! The stats and timeline formats are the project's own; their column sets are read from the
//! file (stats) or checked against the one this version knows (timeline), so a change on the
//! kernel side shows up as a clear error, never as a silent misparse.

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

/// A malformed debugfs file: what was wrong and on which line (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
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

/// A virtual time (`V=`, `zero=`): a u64 that wraps, as the kernel's `u64 vruntime` does.
/// Accepted printed as unsigned or as signed (`%lld`): the kernel starts `zero_vruntime` at
/// `(u64)-(1 << 20)`, which `%lld` prints as `-1048576`. Both denote the same value mod 2^64.
fn parse_vtime(line: usize, what: &str, s: &str) -> Result<u64, ParseError> {
    if s.starts_with('-') {
        Ok(parse_i64(line, what, s)? as u64)
    } else {
        parse_u64(line, what, s)
    }
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

// ---------------------------------------------------------------------------------------------
// Features

/// One scheduler feature flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feature {
    pub name: String,
    pub enabled: bool,
}

/// `/sys/kernel/debug/sched/features`, in the kernel's order (features.h).
///
/// Serialises as a JSON object `{NAME: bool, ...}` in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features(pub Vec<Feature>);

impl Features {
    /// Parse the file: exactly one line of space-separated names, `NO_X` meaning X is off
    /// (debug.c's `sched_feat_show()` ends it with a space, which is fine).
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut lines = s.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((i, line)) = lines.next() else {
            return err(1, "no features (empty file)");
        };
        if let Some((j, _)) = lines.next() {
            return err(j + 1, "more than one line (the features file is one line)");
        }
        let mut out: Vec<Feature> = Vec::new();
        for word in line.split_ascii_whitespace() {
            let (name, enabled) = match word.strip_prefix("NO_") {
                Some(n) => (n, false),
                None => (word, true),
            };
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            {
                return err(i + 1, format!("'{word}' is not a feature name"));
            }
            if out.iter().any(|f| f.name == name) {
                return err(i + 1, format!("{name} is listed twice"));
            }
            out.push(Feature {
                name: name.to_string(),
                enabled,
            });
        }
        Ok(Features(out))
    }

    /// Whether `name` is on; `None` when there is no such feature.
    pub fn get(&self, name: &str) -> Option<bool> {
        self.0.iter().find(|f| f.name == name).map(|f| f.enabled)
    }

    /// The names in `names` that are not features, in order.
    pub fn unknown<'a>(&self, names: &'a [String]) -> Vec<&'a str> {
        names
            .iter()
            .filter(|n| self.get(n).is_none())
            .map(String::as_str)
            .collect()
    }

    /// One line per feature: `NAME on` or `NAME off`.
    pub fn render(&self) -> String {
        self.0
            .iter()
            .map(|f| format!("{} {}\n", f.name, on_off(f.enabled)))
            .collect()
    }
}

/// `on` or `off`.
pub fn on_off(enabled: bool) -> &'static str {
    if enabled {
        "on"
    } else {
        "off"
    }
}

impl Serialize for Features {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_pairs(self.0.iter().map(|f| (&f.name, f.enabled)), s)
    }
}

// ---------------------------------------------------------------------------------------------
// Stats

/// `/sys/kernel/debug/sched/eevdf/stats`: counters per CPU and summed.
///
/// # Invariants
///
/// Every row (each CPU's and `all`) has one value per column; `columns` are unique and
/// `cpus` has no CPU twice.
///
/// Serialises as `{"columns": [NAME...], "cpus": {"CPU": {NAME: u64...}...},
/// "all": {NAME: u64...}}`, the objects in the file's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The counter names, as the header line gives them.
    pub columns: Vec<String>,
    /// `(cpu, values)` in the file's order.
    pub cpus: Vec<(u32, Vec<u64>)>,
    /// The `all` row.
    pub all: Vec<u64>,
}

impl Stats {
    /// Parse the file: a header `cpu NAME...`, one row `CPU VALUE...` per CPU, then one row
    /// `all VALUE...`, fields separated by blanks. The column list is taken from the header,
    /// so the kernel may add counters. `#` lines and blank lines are skipped.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut lines = content_lines(s);
        let Some((hl, header)) = lines.next() else {
            return err(1, "empty file (want a header line 'cpu NAME...')");
        };
        let mut h = header.split_ascii_whitespace();
        if h.next() != Some("cpu") {
            return err(
                hl,
                format!("header '{header}' does not start with 'cpu' (want 'cpu NAME...')"),
            );
        }
        let mut columns: Vec<String> = Vec::new();
        for c in h {
            if c == "cpu" || c == "all" || columns.iter().any(|x| x == c) {
                return err(hl, format!("column '{c}' repeated or reserved"));
            }
            columns.push(c.to_string());
        }
        if columns.is_empty() {
            return err(hl, "the header names no counters");
        }
        let mut cpus: Vec<(u32, Vec<u64>)> = Vec::new();
        let mut all: Option<Vec<u64>> = None;
        for (n, line) in lines {
            let mut f = line.split_ascii_whitespace();
            let key = f.next().unwrap_or_default();
            if all.is_some() {
                return err(n, format!("'{line}' after the 'all' row (it must be last)"));
            }
            let values = f
                .enumerate()
                .map(|(i, v)| {
                    let what = columns.get(i).map_or("extra value", String::as_str);
                    parse_u64(n, what, v)
                })
                .collect::<Result<Vec<_>, _>>()?;
            if values.len() != columns.len() {
                return err(
                    n,
                    format!(
                        "{} values for {} columns in '{line}'",
                        values.len(),
                        columns.len()
                    ),
                );
            }
            if key == "all" {
                all = Some(values);
            } else {
                let cpu = u32::try_from(parse_u64(n, "cpu", key)?)
                    .or_else(|_| err(n, format!("cpu {key} is out of range")))?;
                if cpus.iter().any(|(c, _)| *c == cpu) {
                    return err(n, format!("cpu {cpu} listed twice"));
                }
                cpus.push((cpu, values));
            }
        }
        let Some(all) = all else {
            return err(
                s.lines().count().max(1),
                "no 'all' row at the end (truncated file?)",
            );
        };
        // INVARIANT: every row was checked against `columns.len()`, names and CPUs are unique.
        Ok(Stats { columns, cpus, all })
    }

    /// The value of `column` on `cpu` (`None` = the `all` row).
    pub fn value(&self, cpu: Option<u32>, column: &str) -> Option<u64> {
        let i = self.columns.iter().position(|c| c == column)?;
        match cpu {
            None => Some(self.all[i]),
            Some(cpu) => self.cpus.iter().find(|(c, _)| *c == cpu).map(|(_, v)| v[i]),
        }
    }

    /// What was counted between `earlier` and `self`, per CPU and in all.
    ///
    /// A counter that went down was reset in between (`stats --reset`): it restarted from 0,
    /// so its whole current value is what was counted since. A CPU missing from `earlier`
    /// (it came online) counts from 0 too.
    pub fn delta(&self, earlier: &Stats) -> Result<Stats, String> {
        if self.columns != earlier.columns {
            return Err("the stats columns changed between two reads".into());
        }
        let sub = |now: &[u64], then: Option<&[u64]>| -> Vec<u64> {
            now.iter()
                .enumerate()
                .map(|(i, &v)| match then {
                    Some(t) => v.checked_sub(t[i]).unwrap_or(v),
                    None => v,
                })
                .collect()
        };
        Ok(Stats {
            columns: self.columns.clone(),
            cpus: self
                .cpus
                .iter()
                .map(|(cpu, v)| {
                    let then = earlier
                        .cpus
                        .iter()
                        .find(|(c, _)| c == cpu)
                        .map(|(_, t)| t.as_slice());
                    (*cpu, sub(v, then))
                })
                .collect(),
            all: sub(&self.all, Some(&earlier.all)),
        })
    }

    /// The counters as a table: one row per counter, one column per CPU, then `all`.
    pub fn render(&self) -> String {
        self.render_with("counter", |v| v.to_string())
    }

    /// The counters as a table whose cells are `cell(value)`, headed by `first`.
    pub fn render_with(&self, first: &str, cell: impl Fn(u64) -> String) -> String {
        let mut head = vec![first.to_string()];
        head.extend(self.cpus.iter().map(|(c, _)| format!("cpu{c}")));
        head.push("all".into());
        let rows: Vec<Vec<String>> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let mut r = vec![name.clone()];
                r.extend(self.cpus.iter().map(|(_, v)| cell(v[i])));
                r.push(cell(self.all[i]));
                r
            })
            .collect();
        render_table(&head, &rows)
    }
}

/// Left-align the first column, right-align the others, two spaces apart.
fn render_table(head: &[String], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(head).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(&width).enumerate() {
            if i == 0 {
                line.push_str(&format!("{c:<w$}"));
            } else {
                line.push_str(&format!("  {c:>w$}"));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

impl Serialize for Stats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Row<'a>(&'a [String], &'a [u64]);
        impl Serialize for Row<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serialize_pairs(self.0.iter().zip(self.1), s)
            }
        }
        struct Cpus<'a>(&'a Stats);
        impl Serialize for Cpus<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serialize_pairs(
                    self.0
                        .cpus
                        .iter()
                        .map(|(c, v)| (c.to_string(), Row(&self.0.columns, v))),
                    s,
                )
            }
        }
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("columns", &self.columns)?;
        m.serialize_entry("cpus", &Cpus(self))?;
        m.serialize_entry("all", &Row(&self.columns, &self.all))?;
        m.end()
    }
}

// ---------------------------------------------------------------------------------------------
// Timeline

/// The entity rows' column header, as the kernel prints it (the `NAME` column is the rest of
/// the line).
pub const TIMELINE_COLUMNS: [&str; 10] = [
    "S", "PID", "WEIGHT", "VRT-V", "DL-V", "SLICE_NS", "C", "E", "D", "NAME",
];

/// `/sys/kernel/debug/sched/eevdf/timeline`: one entry per CPU, in the file's order.
///
/// Serialises as the JSON array of its CPUs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Timeline(pub Vec<TimelineCpu>);

/// One CPU's part of the timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TimelineCpu {
    pub cpu: u32,
    /// A `truncated` line followed this CPU's rows: the kernel's snapshot ran out of room,
    /// so rows (and any later CPUs) are missing.
    pub truncated: bool,
    /// The CPU's cfs_rqs in the file's order (the root's path is `/`).
    pub cfs_rqs: Vec<CfsRq>,
}

/// A `cfs_rq` line and the entity rows under it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CfsRq {
    /// V, the weighted average vruntime (virtual ns, wraps mod 2^64).
    #[serde(rename = "V")]
    pub v: u64,
    /// `zero_vruntime`, the origin of the relative sums (virtual ns, wraps mod 2^64).
    pub zero: u64,
    /// Sum of the queued entities' weights.
    pub sum_w: u64,
    pub nr_queued: u64,
    /// The smallest slice queued, ns; `None` (`-`) when the queue is empty.
    pub min_slice_ns: Option<u64>,
    /// The task group's cgroup path (`/` for the root).
    pub path: String,
    /// `key=value` pairs this version does not know, in order (omitted when none).
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "serialize_extra"
    )]
    pub extra: Vec<(String, String)>,
    /// The running entity (if it is on this cfs_rq) and the queued ones in tree order.
    pub entities: Vec<Entity>,
}

fn serialize_extra<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    serialize_pairs(v.iter().map(|(k, v)| (k, v)), s)
}

/// `R`: the cfs_rq's current entity; `Q`: queued in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntityState {
    Running,
    Queued,
}

/// One entity row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entity {
    pub state: EntityState,
    /// The task's pid; `None` (`-`) for a group entity.
    pub pid: Option<u32>,
    pub weight: u64,
    /// vruntime - V, virtual ns (the lag is its negation).
    pub vrt_v: i64,
    /// deadline - V, virtual ns.
    pub dl_v: i64,
    pub slice_ns: u64,
    /// `C`: the slice was set with sched_setattr() (or is a group's min slice).
    pub custom: bool,
    /// `E`: eligible now (vruntime <= V, weighted).
    pub eligible: bool,
    /// `D`: dequeue delayed (sleeping, kept until its lag is spent).
    pub delayed: bool,
    /// The task's comm or the group's cgroup path (may contain spaces, may be empty).
    pub name: String,
}

impl CfsRq {
    /// Parse a `cfs_rq` line: `key=value` pairs separated by single spaces, `path=` last
    /// with the rest of the line as its value.
    fn parse(n: usize, line: &str) -> Result<Self, ParseError> {
        let Some(mut rest) = line.strip_prefix("cfs_rq ") else {
            return err(n, "not a cfs_rq line");
        };
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        let path = loop {
            if let Some(p) = rest.strip_prefix("path=") {
                break p;
            }
            let Some((tok, after)) = rest.split_once(' ') else {
                return err(
                    n,
                    format!("no path= at the end of the cfs_rq line (last field '{rest}')"),
                );
            };
            let Some((k, v)) = tok
                .split_once('=')
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            else {
                return err(
                    n,
                    format!("'{tok}' is not key=value (fields are separated by one space)"),
                );
            };
            if pairs.iter().any(|(x, _)| *x == k) {
                return err(n, format!("{k}= given twice"));
            }
            pairs.push((k, v));
            rest = after;
        };
        if path.is_empty() {
            return err(n, "empty path=");
        }
        let take = |pairs: &mut Vec<(&str, &str)>, k: &str| -> Result<String, ParseError> {
            match pairs.iter().position(|(x, _)| *x == k) {
                Some(i) => Ok(pairs.remove(i).1.to_string()),
                None => err(n, format!("the cfs_rq line has no {k}=")),
            }
        };
        let v = parse_vtime(n, "V", &take(&mut pairs, "V")?)?;
        let zero = parse_vtime(n, "zero", &take(&mut pairs, "zero")?)?;
        let sum_w = parse_u64(n, "sum_w", &take(&mut pairs, "sum_w")?)?;
        let nr_queued = parse_u64(n, "nr_queued", &take(&mut pairs, "nr_queued")?)?;
        let min_slice = take(&mut pairs, "min_slice_ns")?;
        let min_slice_ns = match min_slice.as_str() {
            "-" => None,
            s => Some(parse_u64(n, "min_slice_ns", s)?),
        };
        Ok(CfsRq {
            v,
            zero,
            sum_w,
            nr_queued,
            min_slice_ns,
            path: path.to_string(),
            extra: pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            entities: Vec::new(),
        })
    }
}

/// The next space-separated field of `s` (leading spaces skipped) and what follows it.
fn next_field(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches(' ');
    if s.is_empty() {
        return None;
    }
    let end = s.find(' ').unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

fn parse_flag(n: usize, what: &str, s: &str) -> Result<bool, ParseError> {
    match s {
        "y" => Ok(true),
        "-" => Ok(false),
        _ => err(n, format!("{what}: '{s}' is neither 'y' nor '-'")),
    }
}

impl Entity {
    /// Parse an entity row: two spaces, `R` or `Q`, eight more space-separated columns, one
    /// space, and the name (the rest of the line).
    fn parse(n: usize, line: &str) -> Result<Self, ParseError> {
        let mut rest = line.strip_prefix("  ").ok_or_else(|| ParseError {
            line: n,
            msg: "an entity row starts with two spaces".into(),
        })?;
        let mut f: [&str; 9] = [""; 9];
        for (i, slot) in f.iter_mut().enumerate() {
            let Some((field, after)) = next_field(rest) else {
                return err(
                    n,
                    format!("entity row ends before its {} column", TIMELINE_COLUMNS[i]),
                );
            };
            *slot = field;
            rest = after;
        }
        let Some(name) = rest.strip_prefix(' ') else {
            return err(n, "entity row has no NAME column after D");
        };
        let state = match f[0] {
            "R" => EntityState::Running,
            "Q" => EntityState::Queued,
            s => return err(n, format!("S: '{s}' is neither R nor Q")),
        };
        let pid = match f[1] {
            "-" => None,
            s => Some(
                u32::try_from(parse_u64(n, "PID", s)?)
                    .or_else(|_| err(n, format!("PID {s} is out of range")))?,
            ),
        };
        Ok(Entity {
            state,
            pid,
            weight: parse_u64(n, "WEIGHT", f[2])?,
            vrt_v: parse_i64(n, "VRT-V", f[3])?,
            dl_v: parse_i64(n, "DL-V", f[4])?,
            slice_ns: parse_u64(n, "SLICE_NS", f[5])?,
            custom: parse_flag(n, "C", f[6])?,
            eligible: parse_flag(n, "E", f[7])?,
            delayed: parse_flag(n, "D", f[8])?,
            name: name.to_string(),
        })
    }
}

impl Timeline {
    /// Parse the file (see the module doc and `eevdfctl timeline --help` for the format).
    ///
    /// Strict: a `cfs_rq` line needs a `cpu` line before it, entity rows need a `cfs_rq`
    /// line and the column header, at most one `R` row per cfs_rq, CPUs are unique, and after
    /// `truncated` only a new `cpu` line may follow. `#` lines and blank lines are skipped.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        #[derive(PartialEq)]
        enum At {
            Start,
            Cpu,
            CfsRq { header: bool },
            Truncated,
        }
        let mut cpus: Vec<TimelineCpu> = Vec::new();
        let mut at = At::Start;
        for (n, line) in content_lines(s) {
            if let Some(c) = line.strip_prefix("cpu ") {
                let cpu = u32::try_from(parse_u64(n, "cpu", c)?)
                    .or_else(|_| err(n, format!("cpu {c} is out of range")))?;
                if cpus.iter().any(|x| x.cpu == cpu) {
                    return err(n, format!("cpu {cpu} listed twice"));
                }
                cpus.push(TimelineCpu {
                    cpu,
                    truncated: false,
                    cfs_rqs: Vec::new(),
                });
                at = At::Cpu;
            } else if line == "truncated" {
                let Some(cpu) = cpus.last_mut() else {
                    return err(n, "'truncated' before any cpu line");
                };
                if at == At::Truncated {
                    return err(n, "'truncated' twice");
                }
                cpu.truncated = true;
                at = At::Truncated;
            } else if at == At::Truncated {
                return err(
                    n,
                    format!("'{line}' after 'truncated' (only a cpu line may follow it)"),
                );
            } else if line.starts_with("cfs_rq ") || line == "cfs_rq" {
                let Some(cpu) = cpus.last_mut() else {
                    return err(n, "cfs_rq line before any cpu line");
                };
                cpu.cfs_rqs.push(CfsRq::parse(n, line)?);
                at = At::CfsRq { header: false };
            } else if line.starts_with("  S ") || line == "  S" {
                match at {
                    At::CfsRq { header: false } => {}
                    At::CfsRq { header: true } => {
                        return err(n, "a second column header in one cfs_rq")
                    }
                    _ => return err(n, "column header before any cfs_rq line"),
                }
                let got: Vec<&str> = line.split_ascii_whitespace().collect();
                if got != TIMELINE_COLUMNS {
                    return err(
                        n,
                        format!(
                            "unexpected column header '{}' (want '{}')",
                            got.join(" "),
                            TIMELINE_COLUMNS.join(" ")
                        ),
                    );
                }
                at = At::CfsRq { header: true };
            } else if line.starts_with("  R ") || line.starts_with("  Q ") {
                match at {
                    At::CfsRq { header: true } => {}
                    At::CfsRq { header: false } => {
                        return err(n, "entity row before the column header")
                    }
                    _ => return err(n, "entity row before any cfs_rq line"),
                }
                let e = Entity::parse(n, line)?;
                let rq = cpus
                    .last_mut()
                    .and_then(|c| c.cfs_rqs.last_mut())
                    .expect("At::CfsRq means a cfs_rq was pushed");
                if e.state == EntityState::Running
                    && rq.entities.iter().any(|x| x.state == EntityState::Running)
                {
                    return err(n, "a second R (running) row in one cfs_rq");
                }
                rq.entities.push(e);
            } else {
                return err(n, format!("unexpected line '{line}'"));
            }
        }
        Ok(Timeline(cpus))
    }

    /// `cpu`'s part, if the file has it.
    pub fn cpu(&self, cpu: u32) -> Option<&TimelineCpu> {
        self.0.iter().find(|c| c.cpu == cpu)
    }

    /// The CPUs whose rows were cut short.
    pub fn truncated_cpus(&self) -> Vec<u32> {
        self.0
            .iter()
            .filter(|c| c.truncated)
            .map(|c| c.cpu)
            .collect()
    }

    /// Every CPU, every cfs_rq and every entity, aligned.
    pub fn render(&self) -> String {
        self.0.iter().map(TimelineCpu::render).collect()
    }
}

impl TimelineCpu {
    /// The root cfs_rq: the one whose path is `/`, else the first.
    pub fn root(&self) -> Option<&CfsRq> {
        self.cfs_rqs
            .iter()
            .find(|c| c.path == "/")
            .or(self.cfs_rqs.first())
    }

    /// `cpu N`, then each cfs_rq's summary and all its rows.
    pub fn render(&self) -> String {
        let mut out = format!("cpu {}\n", self.cpu);
        if self.cfs_rqs.is_empty() {
            out.push_str("  (no cfs_rq)\n");
        }
        for rq in &self.cfs_rqs {
            out.push_str(&format!("  cfs_rq {} {}\n", rq.path, rq.summary()));
            out.push_str(&rq.render_entities(usize::MAX, "    "));
        }
        if self.truncated {
            out.push_str("  (truncated: the kernel's snapshot ran out of room here)\n");
        }
        out
    }
}

impl CfsRq {
    /// The `key=value` fields but the path, in the kernel's order.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "V={} zero={} sum_w={} nr_queued={} min_slice_ns={}",
            self.v,
            self.zero,
            self.sum_w,
            self.nr_queued,
            self.min_slice_ns
                .map_or_else(|| "-".to_string(), |v| v.to_string())
        );
        for (k, v) in &self.extra {
            s.push_str(&format!(" {k}={v}"));
        }
        s
    }

    /// The column header and the first `max_rows` entity rows, aligned, each line after
    /// `indent`; `(empty)` when there are none.
    pub fn render_entities(&self, max_rows: usize, indent: &str) -> String {
        if self.entities.is_empty() {
            return format!("{indent}(empty)\n");
        }
        let yn = |b: bool| if b { "y" } else { "-" }.to_string();
        let rows: Vec<Vec<String>> = self
            .entities
            .iter()
            .take(max_rows)
            .map(|e| {
                vec![
                    match e.state {
                        EntityState::Running => "R",
                        EntityState::Queued => "Q",
                    }
                    .to_string(),
                    e.pid.map_or_else(|| "-".to_string(), |p| p.to_string()),
                    e.weight.to_string(),
                    e.vrt_v.to_string(),
                    e.dl_v.to_string(),
                    e.slice_ns.to_string(),
                    yn(e.custom),
                    yn(e.eligible),
                    yn(e.delayed),
                    e.name.clone(),
                ]
            })
            .collect();
        let head: Vec<String> = TIMELINE_COLUMNS.iter().map(|s| s.to_string()).collect();
        let mut width: Vec<usize> = head.iter().map(String::len).collect();
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.len());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&head).chain(&rows) {
            out.push_str(indent);
            // S, the six numbers right-aligned, the three flags, then the name as it is.
            out.push_str(&format!("{:<w$}", r[0], w = width[0]));
            for i in 1..6 {
                out.push_str(&format!(" {:>w$}", r[i], w = width[i]));
            }
            for c in &r[6..9] {
                out.push_str(&format!(" {c}"));
            }
            out.push(' ');
            out.push_str(&r[9]);
            out.push('\n');
        }
        if self.entities.len() > max_rows {
            out.push_str(&format!(
                "{indent}... {} more\n",
                self.entities.len() - max_rows
            ));
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Everything at once

/// `eevdfctl stats --json`: the features, the counters and the timeline, read one after the
/// other (not one atomic snapshot).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub features: Features,
    pub stats: Stats,
    pub timeline: Timeline,
}

// ---------------------------------------------------------------------------------------------
// `eevdfctl top`

/// One frame of `eevdfctl top`: a header line, each counter's rate per second over the
/// `secs` that `delta` covers (per CPU and all), then per CPU its root cfs_rq's summary and
/// its first `rows` entity rows.
///
/// `sample` counts from 1; `of` is the number of frames asked for (0 = until interrupted).
pub fn render_top(
    sample: u64,
    of: u64,
    secs: f64,
    delta: &Stats,
    timeline: &Timeline,
    rows: usize,
) -> String {
    let of = if of == 0 {
        String::new()
    } else {
        format!(" of {of}")
    };
    let mut out = format!(
        "=== eevdfctl top: sample {sample}{of}, {:.0} ms ===\n",
        secs * 1000.0
    );
    out.push_str(&delta.render_with("counter (per s)", |v| {
        if secs > 0.0 {
            format!("{:.0}", v as f64 / secs)
        } else {
            "-".into()
        }
    }));
    for c in &timeline.0 {
        out.push('\n');
        match c.root() {
            None => out.push_str(&format!("cpu {}: no cfs_rq\n", c.cpu)),
            Some(rq) => {
                out.push_str(&format!(
                    "cpu {}: cfs_rq {} {} ({} cfs_rq{} on this CPU{})\n",
                    c.cpu,
                    rq.path,
                    rq.summary(),
                    c.cfs_rqs.len(),
                    if c.cfs_rqs.len() == 1 { "" } else { "s" },
                    if c.truncated { ", truncated" } else { "" }
                ));
                out.push_str(&rq.render_entities(rows, "  "));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The custom-slice flag

/// Whether task `pid` has a custom slice (`se.custom_slice`), from the task lists of
/// `/sys/kernel/debug/sched/debug`; `None` when `pid` is not listed there.
///
/// sched_getattr() cannot tell: 6.12's `get_params()` reports `p->se.slice` as
/// `sched_runtime` whether or not it was set by sched_setattr(). debug.c's `print_task()`
/// prints every task of each CPU (all of them, not only the runnable ones) as
/// `" %c %15s %5d %9Ld.%06ld   %c   %9Ld.%06ld %c %9Ld.%06ld ..."`: state (`>R` for the
/// running task), comm, pid, vruntime, eligible `E`/`N`, deadline, then `S` when
/// `custom_slice` is set (a blank otherwise), then the slice. The comm field is always 15
/// bytes (TASK_COMM_LEN - 1) and may contain spaces, so the fields are counted from byte
/// 18, after it.
pub fn sched_debug_custom_slice(text: &[u8], pid: u32) -> Option<bool> {
    let want = pid.to_string();
    for line in text.split(|&b| b == b'\n') {
        if line.len() < 20 || !matches!(line[0], b' ' | b'>') || line[2] != b' ' {
            continue;
        }
        let f: Vec<&[u8]> = line[18..]
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        if f.len() < 6 || f[0] != want.as_bytes() || !matches!(f[2], b"E" | b"N") {
            continue;
        }
        // With the flag, the slice moves one field to the right.
        return match f[4] {
            b"S" => Some(true),
            w if w.contains(&b'.') => Some(false),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_parse_render_and_reject() {
        let f = Features::parse("PLACE_LAG NO_RUN_TO_PARITY ELIGIBLE NO_BIAS_ELIGIBLE \n").unwrap();
        assert_eq!(f.get("PLACE_LAG"), Some(true));
        assert_eq!(f.get("RUN_TO_PARITY"), Some(false));
        assert_eq!(f.get("NO_RUN_TO_PARITY"), None);
        assert_eq!(
            f.render(),
            "PLACE_LAG on\nRUN_TO_PARITY off\nELIGIBLE on\nBIAS_ELIGIBLE off\n"
        );
        let names = ["ELIGIBLE".to_string(), "NOPE".into(), "NO_ELIGIBLE".into()];
        assert_eq!(f.unknown(&names), ["NOPE", "NO_ELIGIBLE"]);
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"PLACE_LAG":true,"RUN_TO_PARITY":false,"ELIGIBLE":true,"BIAS_ELIGIBLE":false}"#
        );

        assert_eq!(Features::parse("").unwrap_err().line, 1);
        let e = Features::parse("A B\nC\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(Features::parse("A NO_ B")
            .unwrap_err()
            .msg
            .contains("'NO_'"));
        assert!(Features::parse("A lower").is_err());
        assert!(Features::parse("A NO_A").unwrap_err().msg.contains("twice"));
    }

    const STATS: &str = "\
cpu picks picks_parity wakeups
0 1234 5 6
1 10 0 18446744073709551615
all 1244 5 18446744073709551615
";

    #[test]
    fn stats_parse_dynamic_columns() {
        let s = Stats::parse(STATS).unwrap();
        assert_eq!(s.columns, ["picks", "picks_parity", "wakeups"]);
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.value(Some(1), "wakeups"), Some(u64::MAX));
        assert_eq!(s.value(None, "picks"), Some(1244));
        assert_eq!(s.value(Some(2), "picks"), None);
        assert_eq!(s.value(None, "nope"), None);
        // One more counter, a comment and a blank line: still fine.
        let s2 = Stats::parse("# c\ncpu a b c d\n\n3 1 2 3 4\nall 1 2 3 4\n").unwrap();
        assert_eq!(s2.columns.len(), 4);
        assert_eq!(s2.cpus, [(3, vec![1, 2, 3, 4])]);
        // No CPU rows at all (only `all`) is well-formed.
        assert!(Stats::parse("cpu a\nall 0\n").unwrap().cpus.is_empty());
    }

    #[test]
    fn stats_json_keeps_the_file_order() {
        let s = Stats::parse("cpu z a\n1 1 2\n0 3 4\nall 4 6\n").unwrap();
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"columns":["z","a"],"cpus":{"1":{"z":1,"a":2},"0":{"z":3,"a":4}},"all":{"z":4,"a":6}}"#
        );
    }

    #[test]
    fn stats_reject_malformed_with_line_numbers() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty"),
            ("picks 1\n", 1, "does not start with 'cpu'"),
            ("cpu\nall\n", 1, "no counters"),
            ("cpu a a\nall 1 1\n", 1, "repeated"),
            ("cpu a b\n0 1\nall 1 2\n", 2, "1 values for 2 columns"),
            ("cpu a b\n0 1 2 3\nall 1 2\n", 2, "3 values for 2 columns"),
            ("cpu a b\n0 1 2 x\nall 1 2\n", 2, "extra value: 'x'"),
            ("cpu a\n0 -1\nall 1\n", 2, "'-1' is not a decimal u64"),
            ("cpu a\n0 x\nall 1\n", 2, "a: 'x'"),
            ("cpu a\n0 18446744073709551616\nall 1\n", 2, "does not fit"),
            ("cpu a\nzero 1\nall 1\n", 2, "cpu: 'zero'"),
            ("cpu a\n0 1\n0 1\nall 1\n", 3, "cpu 0 listed twice"),
            ("cpu a\n0 1\nall 1\n1 1\n", 4, "after the 'all' row"),
            ("cpu a\n0 1\n1 1\n", 3, "no 'all' row"),
            ("cpu a\n0 1\n4294967296 1\nall 1\n", 3, "out of range"),
        ];
        for (text, line, msg) in cases {
            let e = Stats::parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.msg.contains(msg), "{text:?}: {e}");
        }
    }

    #[test]
    fn stats_delta_and_reset() {
        let a = Stats::parse("cpu x y\n0 10 5\n1 1 1\nall 11 6\n").unwrap();
        let b = Stats::parse("cpu x y\n0 15 2\n1 1 4\n2 7 7\nall 23 13\n").unwrap();
        let d = b.delta(&a).unwrap();
        // y on cpu0 went 5 -> 2: reset, so 2 were counted since; cpu2 is new.
        assert_eq!(d.cpus, [(0, vec![5, 2]), (1, vec![0, 3]), (2, vec![7, 7])]);
        assert_eq!(d.all, [12, 7]);
        let other = Stats::parse("cpu x\nall 1\n").unwrap();
        assert!(b.delta(&other).is_err());
    }

    #[test]
    fn stats_table() {
        let s = Stats::parse("cpu picks wakeups\n0 1234 5\n1 1 60\nall 1235 65\n").unwrap();
        assert_eq!(
            s.render(),
            "\
counter  cpu0  cpu1   all
picks    1234     1  1235
wakeups     5    60    65
"
        );
    }

    const TIMELINE: &str = "\
# sched_eevdf timeline (vns = virtual ns; VRT-V = vruntime - V; lag = -(VRT-V))
cpu 0
cfs_rq V=81234567890 zero=81234560000 sum_w=3072 nr_queued=3 min_slice_ns=3000000 path=/
  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
  R      412     1024        -1234      2998766    3000000 - y - hackbench
  Q      413     1024         5000      3005000    3000000 y - - my prog
  Q        -      512       -20000      5980000    3000000 - y - /a
cfs_rq V=-1048576 zero=-1048576 sum_w=1024 nr_queued=1 min_slice_ns=- path=/a b/c
  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
  Q       77     1024            0      3000000    3000000 - y y  lead space
cpu 1
cfs_rq V=5 zero=5 sum_w=0 nr_queued=0 min_slice_ns=- path=/
cpu 2
cpu 3
cfs_rq V=5 zero=5 sum_w=0 nr_queued=0 min_slice_ns=- new_key=7 path=/
  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
  Q        9        2            1            2          3 - - -\x20
truncated
";

    #[test]
    fn timeline_parses_the_documented_sample() {
        let t = Timeline::parse(TIMELINE).unwrap();
        assert_eq!(t.0.len(), 4);
        let c0 = t.cpu(0).unwrap();
        assert_eq!(c0.cfs_rqs.len(), 2);
        let root = c0.root().unwrap();
        assert_eq!(
            (
                root.v,
                root.zero,
                root.sum_w,
                root.nr_queued,
                root.min_slice_ns
            ),
            (81234567890, 81234560000, 3072, 3, Some(3000000))
        );
        assert_eq!(root.path, "/");
        assert_eq!(root.entities.len(), 3);
        let r = &root.entities[0];
        assert_eq!(r.state, EntityState::Running);
        assert_eq!(
            (r.pid, r.weight, r.vrt_v, r.dl_v),
            (Some(412), 1024, -1234, 2998766)
        );
        assert_eq!((r.custom, r.eligible, r.delayed), (false, true, false));
        assert_eq!(r.name, "hackbench");
        assert_eq!(root.entities[1].name, "my prog");
        assert!(root.entities[1].custom);
        let g = &root.entities[2];
        assert_eq!((g.pid, g.weight, g.name.as_str()), (None, 512, "/a"));
        let a = &c0.cfs_rqs[1];
        assert_eq!(a.path, "/a b/c");
        assert_eq!(a.v, (-1048576i64) as u64);
        assert_eq!(a.min_slice_ns, None);
        assert_eq!(a.entities[0].name, " lead space");
        assert!(a.entities[0].delayed);
        // An empty root, a CPU without any cfs_rq, an unknown key, an empty name.
        assert!(t.cpu(1).unwrap().cfs_rqs[0].entities.is_empty());
        assert!(t.cpu(2).unwrap().cfs_rqs.is_empty());
        assert!(t.cpu(2).unwrap().root().is_none());
        let c3 = t.cpu(3).unwrap();
        assert_eq!(
            c3.cfs_rqs[0].extra,
            [("new_key".to_string(), "7".to_string())]
        );
        assert_eq!(c3.cfs_rqs[0].entities[0].name, "");
        assert_eq!(t.truncated_cpus(), [3]);
        assert!(Timeline::parse("").unwrap().0.is_empty());
    }

    #[test]
    fn timeline_json_shape() {
        let t = Timeline::parse(
            "cpu 1\ncfs_rq V=1 zero=2 sum_w=3 nr_queued=1 min_slice_ns=- path=/x y\n  S PID WEIGHT VRT-V DL-V SLICE_NS C E D NAME\n  R - 2 -3 4 5 y y - n m\n",
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            concat!(
                r#"[{"cpu":1,"truncated":false,"cfs_rqs":[{"V":1,"zero":2,"sum_w":3,"nr_queued":1,"#,
                r#""min_slice_ns":null,"path":"/x y","entities":[{"state":"running","pid":null,"#,
                r#""weight":2,"vrt_v":-3,"dl_v":4,"slice_ns":5,"custom":true,"eligible":true,"#,
                r#""delayed":false,"name":"n m"}]}]}]"#
            )
        );
    }

    #[test]
    fn timeline_rejects_malformed_with_line_numbers() {
        const RQ: &str = "cfs_rq V=1 zero=1 sum_w=0 nr_queued=0 min_slice_ns=- path=/\n";
        const HDR: &str = "  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME\n";
        let good_row = "  Q 1 2 3 4 5 - - - x\n";
        let cases: Vec<(String, usize, &str)> = vec![
            (RQ.to_string(), 1, "before any cpu"),
            (format!("cpu 0\n{HDR}"), 2, "header before any cfs_rq"),
            (format!("cpu 0\n{good_row}"), 2, "before any cfs_rq"),
            (
                format!("cpu 0\n{RQ}{good_row}"),
                3,
                "before the column header",
            ),
            (format!("cpu 0\n{RQ}{HDR}{HDR}"), 4, "second column header"),
            (
                format!("cpu 0\n{RQ}  S PID WEIGHT LAG DL-V SLICE_NS C E D NAME\n"),
                3,
                "unexpected column header",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  R 1 2 3 4 5 - - - a\n  R 2 2 3 4 5 - - - b\n"),
                5,
                "second R",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q 1 2 3 4 5 - - -\n"),
                4,
                "no NAME column",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q 1 2 3 4\n"),
                4,
                "before its SLICE_NS column",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q x 2 3 4 5 - - - a\n"),
                4,
                "PID: 'x'",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q 1 -2 3 4 5 - - - a\n"),
                4,
                "WEIGHT: '-2'",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q 1 2 3.5 4 5 - - - a\n"),
                4,
                "VRT-V: '3.5'",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q 1 2 3 4 5 n - - a\n"),
                4,
                "C: 'n'",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}  Q 1 2 3 4 5 - Y - a\n"),
                4,
                "E: 'Y'",
            ),
            (
                format!("cpu 0\n{RQ}{HDR}   Q 1 2 3 4 5 - - - a\n"),
                4,
                "unexpected line",
            ),
            ("cpu 0\ncpu 0\n".into(), 2, "listed twice"),
            ("cpu x\n".into(), 1, "cpu: 'x'"),
            ("cpu  1\n".into(), 1, "cpu: ' 1'"),
            ("truncated\n".into(), 1, "before any cpu"),
            (format!("cpu 0\ntruncated\n{RQ}"), 3, "after 'truncated'"),
            ("cpu 0\ntruncated\ntruncated\n".into(), 3, "twice"),
            ("cpu 0\nbogus\n".into(), 2, "unexpected line 'bogus'"),
            (
                "cpu 0\ncfs_rq V=1 zero=1 sum_w=0 nr_queued=0 min_slice_ns=-\n".into(),
                2,
                "no path=",
            ),
            (
                "cpu 0\ncfs_rq V=1  zero=1 sum_w=0 nr_queued=0 min_slice_ns=- path=/\n".into(),
                2,
                "is not key=value",
            ),
            (
                "cpu 0\ncfs_rq V=1 zero=1 sum_w=0 min_slice_ns=- path=/\n".into(),
                2,
                "no nr_queued=",
            ),
            (
                "cpu 0\ncfs_rq V=1 V=1 zero=1 sum_w=0 nr_queued=0 min_slice_ns=- path=/\n".into(),
                2,
                "V= given twice",
            ),
            (
                "cpu 0\ncfs_rq V=1 zero=1 sum_w=0 nr_queued=0 min_slice_ns=x path=/\n".into(),
                2,
                "min_slice_ns: 'x'",
            ),
            (
                "cpu 0\ncfs_rq V=1 zero=1 sum_w=-3 nr_queued=0 min_slice_ns=- path=/\n".into(),
                2,
                "sum_w: '-3'",
            ),
            (
                "cpu 0\ncfs_rq V=1 zero=1 sum_w=0 nr_queued=0 min_slice_ns=- path=\n".into(),
                2,
                "empty path",
            ),
            (
                "cpu 0\ncfs_rq V=a zero=1 sum_w=0 nr_queued=0 min_slice_ns=- path=/\n".into(),
                2,
                "V: 'a'",
            ),
        ];
        for (text, line, msg) in &cases {
            let e = Timeline::parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.msg.contains(msg), "{text:?}: {e}");
        }
        // Comments count in the line numbers.
        let e = Timeline::parse(&format!("# x\n\ncpu 0\n{RQ}{good_row}")).unwrap_err();
        assert_eq!(e.line, 5);
    }

    #[test]
    fn timeline_renders_aligned() {
        let t = Timeline::parse(TIMELINE).unwrap();
        let out = t.cpu(0).unwrap().render();
        let want = "\
cpu 0
  cfs_rq / V=81234567890 zero=81234560000 sum_w=3072 nr_queued=3 min_slice_ns=3000000
    S PID WEIGHT  VRT-V    DL-V SLICE_NS C E D NAME
    R 412   1024  -1234 2998766  3000000 - y - hackbench
    Q 413   1024   5000 3005000  3000000 y - - my prog
    Q   -    512 -20000 5980000  3000000 - y - /a
  cfs_rq /a b/c V=18446744073708503040 zero=18446744073708503040 sum_w=1024 nr_queued=1 min_slice_ns=-
    S PID WEIGHT VRT-V    DL-V SLICE_NS C E D NAME
    Q  77   1024     0 3000000  3000000 - y y  lead space
";
        assert_eq!(out, want);
        let all = t.render();
        assert!(all.contains("cpu 2\n  (no cfs_rq)\n"));
        assert!(all.contains(
            "cpu 1\n  cfs_rq / V=5 zero=5 sum_w=0 nr_queued=0 min_slice_ns=-\n    (empty)\n"
        ));
        assert!(all.contains("new_key=7"));
        assert!(all.ends_with("  (truncated: the kernel's snapshot ran out of room here)\n"));
        let two = t.cpu(0).unwrap().root().unwrap().render_entities(2, "");
        assert!(two.ends_with("... 1 more\n"), "{two}");
        assert_eq!(two.lines().count(), 4);
    }

    #[test]
    fn top_frame() {
        let a = Stats::parse("cpu picks\n0 10\n1 0\nall 10\n").unwrap();
        let b = Stats::parse("cpu picks\n0 110\n1 50\nall 160\n").unwrap();
        let t = Timeline::parse(TIMELINE).unwrap();
        let out = render_top(1, 2, 0.5, &b.delta(&a).unwrap(), &t, 1);
        let want_head = "\
=== eevdfctl top: sample 1 of 2, 500 ms ===
counter (per s)  cpu0  cpu1  all
picks             200   100  300

cpu 0: cfs_rq / V=81234567890 zero=81234560000 sum_w=3072 nr_queued=3 min_slice_ns=3000000 (2 cfs_rqs on this CPU)
  S PID WEIGHT VRT-V    DL-V SLICE_NS C E D NAME
  R 412   1024 -1234 2998766  3000000 - y - hackbench
  ... 2 more

cpu 1: cfs_rq / V=5 zero=5 sum_w=0 nr_queued=0 min_slice_ns=- (1 cfs_rq on this CPU)
  (empty)

cpu 2: no cfs_rq
";
        assert!(out.starts_with(want_head), "{out}");
        assert!(
            out.contains("new_key=7 (1 cfs_rq on this CPU, truncated)"),
            "{out}"
        );
        assert!(render_top(3, 0, 1.0, &a, &Timeline::default(), 5)
            .starts_with("=== eevdfctl top: sample 3, 1000 ms ===\n"));
    }

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

    /// One line as debug.c's `print_task()` prints it (up to the group path).
    fn task_line(state: &str, comm: &str, pid: u32, vruntime: &str, custom: bool) -> String {
        format!(
            "{state} {comm:>15} {pid:>5} {vruntime:>16}   E   {:>16} {} {:>16} {:>16} {:>9}   {:>5} \
             {:>16} {:>16} {:>16}        /",
            "5.402335",
            if custom { 'S' } else { ' ' },
            "3.000000",
            "6.052101",
            92,
            120,
            "0.000000",
            "0.000000",
            "0.000000"
        )
    }

    #[test]
    fn custom_slice_from_sched_debug() {
        // print_rq()'s header, then tasks: one running, two with spaces in the comm, two
        // with the custom-slice flag.
        let text = [
            "runnable tasks:".to_string(),
            " S            task   PID       vruntime   eligible    deadline             slice"
                .to_string(),
            "-".repeat(80),
            task_line(" S", "init", 1, "3.419727", false),
            task_line(">R", "my prog", 77, "-1.048576", true),
            task_line(" S", "1 2 3 4 5 6 7 8", 4000, "12345.000000", true),
            task_line(" R", "x", 123456, "1.000000", false),
        ]
        .join("\n");
        let text = text.as_bytes();
        assert_eq!(sched_debug_custom_slice(text, 1), Some(false));
        assert_eq!(sched_debug_custom_slice(text, 77), Some(true));
        assert_eq!(sched_debug_custom_slice(text, 4000), Some(true));
        assert_eq!(sched_debug_custom_slice(text, 123456), Some(false));
        assert_eq!(sched_debug_custom_slice(text, 2), None);
        assert_eq!(sched_debug_custom_slice(b"", 1), None);
    }
}
