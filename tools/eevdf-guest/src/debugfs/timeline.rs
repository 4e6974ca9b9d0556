//! `/sys/kernel/debug/sched/eevdf/timeline` (sched_eevdf kernels only): per CPU, each
//! cfs_rq's summary and its entities in tree order. `eevdfctl timeline` parses and renders
//! it; the entity columns are checked against [`TIMELINE_COLUMNS`], the set this version
//! knows.

use super::{content_lines, err, parse_i64, parse_u64, serialize_pairs, ParseError};
use serde::{Serialize, Serializer};

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

/// The first line of the file, as the kernel prints it (up to its explanation).
pub const TIMELINE_HEADER: &str = "# sched_eevdf timeline";

/// How much of the scheduler's invariants [`check_timeline`] asks of a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineRule {
    /// Per cfs_rq: as many rows as `nr_queued`, their weights summing to `sum_w` (the
    /// maintained sums agree with the entities). Holds whatever runs, hotplug included.
    Sums,
    /// [`Sums`](Self::Sums), and per cfs_rq: `min_slice_ns` is `-` exactly when it is
    /// empty, the running row (R) comes first, V lies within the rows' vruntimes (min VRT-V
    /// <= 0 <= max VRT-V), the smallest vruntime is eligible, and the cfs_rq line has no key
    /// this parser does not know (a format change fails it). Holds with any features.
    Eevdf,
    /// [`Eevdf`](Self::Eevdf), and a row is eligible exactly when VRT-V <= 0: the rule with
    /// ELIGIBLE on and BIAS_ELIGIBLE off.
    Plain,
    /// [`Eevdf`](Self::Eevdf), and every row is eligible: the rule with NO_ELIGIBLE.
    AllEligible,
}

/// What [`check_timeline`] looked at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimelineSummary {
    /// CPU sections.
    pub cpus: usize,
    /// cfs_rq lines.
    pub rqs: usize,
    /// Entity rows, group entities included.
    pub rows: usize,
    /// Group entity rows (PID `-`).
    pub groups: usize,
}

impl std::fmt::Display for TimelineSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cpus {} rqs {} rows {} groups {}",
            self.cpus, self.rqs, self.rows, self.groups
        )
    }
}

/// Parse a timeline file and check it by `rule`: its first line is [`TIMELINE_HEADER`], it
/// parses ([`Timeline::parse`]), each cfs_rq keeps `rule`, and with `want_cpus` it has that
/// many CPU sections. The last cfs_rq of a truncated CPU is not checked (its rows were cut
/// short). Every problem found, one string each, naming the CPU and the cfs_rq.
pub fn check_timeline(
    text: &str,
    rule: TimelineRule,
    want_cpus: Option<usize>,
) -> Result<TimelineSummary, Vec<String>> {
    if !text.starts_with(TIMELINE_HEADER) {
        let first = text.lines().next().unwrap_or_default();
        return Err(vec![format!(
            "line 1: '{first}' is not the header '{TIMELINE_HEADER} ...'"
        )]);
    }
    let t = Timeline::parse(text).map_err(|e| vec![e.to_string()])?;
    let mut sum = TimelineSummary {
        cpus: t.0.len(),
        ..TimelineSummary::default()
    };
    let mut bad = Vec::new();
    if let Some(want) = want_cpus.filter(|&w| w != t.0.len()) {
        bad.push(format!("{} cpu sections, want {want}", t.0.len()));
    }
    for cpu in &t.0 {
        let checked = cpu.cfs_rqs.len() - usize::from(cpu.truncated && !cpu.cfs_rqs.is_empty());
        for (i, rq) in cpu.cfs_rqs.iter().enumerate() {
            sum.rqs += 1;
            sum.rows += rq.entities.len();
            sum.groups += rq.entities.iter().filter(|e| e.pid.is_none()).count();
            if i < checked {
                for m in rq.check(rule) {
                    bad.push(format!("cpu {} cfs_rq {}: {m}", cpu.cpu, rq.path));
                }
            }
        }
    }
    if bad.is_empty() {
        Ok(sum)
    } else {
        Err(bad)
    }
}

impl CfsRq {
    /// What is wrong with this cfs_rq by `rule` (empty: nothing).
    pub fn check(&self, rule: TimelineRule) -> Vec<String> {
        let mut bad = Vec::new();
        let rows = self.entities.len() as u64;
        if rows != self.nr_queued {
            bad.push(format!("nr_queued={} but {rows} rows", self.nr_queued));
        }
        let w = self
            .entities
            .iter()
            .fold(0u64, |acc, e| acc.wrapping_add(e.weight));
        if w != self.sum_w {
            bad.push(format!("sum_w={} but the rows weigh {w}", self.sum_w));
        }
        if rule == TimelineRule::Sums {
            return bad;
        }
        // The format check: a key this version does not know is a change of the file that
        // its readers (and this parser's tests) must learn first.
        if !self.extra.is_empty() {
            let keys: Vec<&str> = self.extra.iter().map(|(k, _)| k.as_str()).collect();
            bad.push(format!("unknown cfs_rq keys: {}", keys.join(" ")));
        }
        if (self.nr_queued == 0) != self.min_slice_ns.is_none() {
            bad.push(format!(
                "min_slice_ns={} with nr_queued={}",
                self.min_slice_ns
                    .map_or_else(|| "-".to_string(), |v| v.to_string()),
                self.nr_queued
            ));
        }
        if let Some(i) = self
            .entities
            .iter()
            .position(|e| e.state == EntityState::Running)
            .filter(|&i| i > 0)
        {
            bad.push(format!("the running row is row {}, not the first", i + 1));
        }
        // The first row of the smallest VRT-V (the kernel's order breaks ties).
        let min = self
            .entities
            .iter()
            .reduce(|a, e| if e.vrt_v < a.vrt_v { e } else { a });
        let max = self.entities.iter().map(|e| e.vrt_v).max();
        if let (Some(min), Some(max)) = (min, max) {
            if !(min.vrt_v <= 0 && max >= 0) {
                bad.push(format!(
                    "V outside the vruntimes: VRT-V in [{}, {max}]",
                    min.vrt_v
                ));
            }
            if !min.eligible {
                bad.push(format!(
                    "the smallest vruntime (VRT-V {}) is not eligible",
                    min.vrt_v
                ));
            }
        }
        for e in &self.entities {
            let who = e.pid.map_or_else(|| e.name.clone(), |p| format!("pid {p}"));
            match rule {
                TimelineRule::Plain if (e.vrt_v <= 0) != e.eligible => bad.push(format!(
                    "{who}: E={} with VRT-V {} (ELIGIBLE without BIAS_ELIGIBLE)",
                    if e.eligible { "y" } else { "-" },
                    e.vrt_v
                )),
                TimelineRule::AllEligible if !e.eligible => bad.push(format!(
                    "{who}: not eligible (VRT-V {}) with NO_ELIGIBLE",
                    e.vrt_v
                )),
                _ => {}
            }
        }
        bad
    }
}

impl Timeline {
    /// The delayed entities (D) on `cpu`'s cfs_rqs, group entities included; 0 when the
    /// snapshot does not have `cpu`.
    pub fn delayed_on_cpu(&self, cpu: u32) -> usize {
        self.cpu(cpu).map_or(0, |c| {
            c.cfs_rqs
                .iter()
                .flat_map(|rq| &rq.entities)
                .filter(|e| e.delayed)
                .count()
        })
    }

    /// The delayed entities (D) of the task group `path` (a cgroup path like
    /// `/fault22/a/b/d0`), on every CPU: the rows on its own cfs_rqs, and its group entities
    /// (rows named `path` on its parent's). A throttled group's cfs_rqs are not in the
    /// snapshot.
    pub fn delayed_in_group(&self, path: &str) -> usize {
        self.0
            .iter()
            .flat_map(|c| &c.cfs_rqs)
            .map(|rq| {
                rq.entities
                    .iter()
                    .filter(|e| e.delayed && (rq.path == path || e.name == path))
                    .count()
            })
            .sum()
    }

    /// The largest |VRT-V| or |DL-V| of `cpu`'s rows (virtual ns): how far from V the
    /// entities' vruntimes and deadlines spread. 0 without rows or without `cpu`.
    pub fn max_abs_offset_ns(&self, cpu: u32) -> u64 {
        self.cpu(cpu)
            .into_iter()
            .flat_map(|c| &c.cfs_rqs)
            .flat_map(|rq| &rq.entities)
            .map(|e| e.vrt_v.unsigned_abs().max(e.dl_v.unsigned_abs()))
            .max()
            .unwrap_or(0)
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The format documented in the kernel side's debugfs/timeline.rs, with the odd cases
    /// (negative V, a name with a leading space, an unknown key, truncation); top's test reads
    /// it too.
    pub(in crate::debugfs) const TIMELINE: &str = "\
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

    /// A consistent snapshot: two CPUs, a group with a delayed group entity, a delayed task.
    const CONSISTENT: &str = "\
# sched_eevdf timeline (vns = virtual ns; VRT-V = vruntime - V; lag = -(VRT-V))
cpu 0
cfs_rq V=100 zero=90 sum_w=2048 nr_queued=2 min_slice_ns=3000000 path=/
  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
  R      412     1024        -1234      2998766    3000000 - y - hog
  Q        -     1024         1234      3001234    3000000 - - y /g a
cfs_rq V=7 zero=7 sum_w=15 nr_queued=1 min_slice_ns=700000 path=/g a
  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
  Q       77       15            0     46666666     700000 y y y sleeper
cpu 1
cfs_rq V=5 zero=5 sum_w=1024 nr_queued=1 min_slice_ns=3000000 path=/
  S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME
  Q       78     1024            0 9007199254740993    3000000 - y y x
";

    #[test]
    fn timeline_check_passes_a_consistent_snapshot() {
        for rule in [TimelineRule::Sums, TimelineRule::Eevdf, TimelineRule::Plain] {
            let s = check_timeline(CONSISTENT, rule, Some(2)).unwrap();
            assert_eq!(s.to_string(), "cpus 2 rqs 3 rows 4 groups 1", "{rule:?}");
        }
        // The group entity is not eligible: NO_ELIGIBLE's rule fails on it alone.
        let e = check_timeline(CONSISTENT, TimelineRule::AllEligible, None).unwrap_err();
        assert_eq!(
            e,
            ["cpu 0 cfs_rq /: /g a: not eligible (VRT-V 1234) with NO_ELIGIBLE"]
        );
        // A truncated CPU's last cfs_rq is not checked; the others are.
        let cut = "# sched_eevdf timeline\ncpu 0\n\
            cfs_rq V=1 zero=1 sum_w=0 nr_queued=0 min_slice_ns=- path=/\n\
            cfs_rq V=1 zero=1 sum_w=9 nr_queued=5 min_slice_ns=1 path=/a\ntruncated\n";
        assert!(check_timeline(cut, TimelineRule::Eevdf, Some(1)).is_ok());
        let cut_bad = cut.replacen("sum_w=0 nr_queued=0", "sum_w=1 nr_queued=0", 1);
        assert_eq!(
            check_timeline(&cut_bad, TimelineRule::Sums, None).unwrap_err(),
            ["cpu 0 cfs_rq /: sum_w=1 but the rows weigh 0"]
        );
    }

    #[test]
    fn timeline_check_finds_each_broken_invariant() {
        let row = |s: &str| format!("  S PID WEIGHT VRT-V DL-V SLICE_NS C E D NAME\n{s}");
        let rq = |head: &str, rows: &str| {
            format!(
                "# sched_eevdf timeline\ncpu 3\ncfs_rq {head} path=/\n{}",
                row(rows)
            )
        };
        let cases: Vec<(String, TimelineRule, &str)> = vec![
            (
                rq(
                    "V=1 zero=1 sum_w=2 nr_queued=2 min_slice_ns=1",
                    "  Q 1 2 0 1 1 - y - a\n",
                ),
                TimelineRule::Sums,
                "nr_queued=2 but 1 rows",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=3 nr_queued=1 min_slice_ns=1",
                    "  Q 1 2 0 1 1 - y - a\n",
                ),
                TimelineRule::Sums,
                "sum_w=3 but the rows weigh 2",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=2 nr_queued=1 min_slice_ns=-",
                    "  Q 1 2 0 1 1 - y - a\n",
                ),
                TimelineRule::Eevdf,
                "min_slice_ns=- with nr_queued=1",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=2 nr_queued=1 min_slice_ns=1 lag_max=3",
                    "  Q 1 2 0 1 1 - y - a\n",
                ),
                TimelineRule::Plain,
                "unknown cfs_rq keys: lag_max",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=4 nr_queued=2 min_slice_ns=1",
                    "  Q 1 2 0 1 1 - y - a\n  R 2 2 0 1 1 - y - b\n",
                ),
                TimelineRule::Eevdf,
                "the running row is row 2",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=2 nr_queued=1 min_slice_ns=1",
                    "  Q 1 2 5 1 1 - y - a\n",
                ),
                TimelineRule::Eevdf,
                "V outside the vruntimes: VRT-V in [5, 5]",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=2 nr_queued=1 min_slice_ns=1",
                    "  Q 1 2 0 1 1 - - - a\n",
                ),
                TimelineRule::Eevdf,
                "the smallest vruntime (VRT-V 0) is not eligible",
            ),
            (
                rq(
                    "V=1 zero=1 sum_w=4 nr_queued=2 min_slice_ns=1",
                    "  Q 1 2 -1 1 1 - y - a\n  Q 2 2 1 1 1 - y - b\n",
                ),
                TimelineRule::Plain,
                "pid 2: E=y with VRT-V 1",
            ),
            (
                "# nope\ncpu 0\n".to_string(),
                TimelineRule::Sums,
                "line 1: '# nope' is not the header",
            ),
            (
                "# sched_eevdf timeline\ncpu 0\nbogus\n".to_string(),
                TimelineRule::Sums,
                "line 3: unexpected line 'bogus'",
            ),
        ];
        for (text, rule, msg) in &cases {
            let e = check_timeline(text, *rule, None).unwrap_err();
            assert_eq!(e.len(), 1, "{text:?}: {e:?}");
            assert!(e[0].contains(msg), "{text:?}: {e:?}");
        }
        let e = check_timeline(CONSISTENT, TimelineRule::Sums, Some(4)).unwrap_err();
        assert_eq!(e, ["2 cpu sections, want 4"]);
    }

    #[test]
    fn timeline_counts_delayed_and_spread() {
        let t = Timeline::parse(CONSISTENT).unwrap();
        assert_eq!(t.delayed_on_cpu(0), 2);
        assert_eq!(t.delayed_on_cpu(1), 1);
        assert_eq!(t.delayed_on_cpu(9), 0);
        // The group's own row on cpu 0's root, and the sleeper on its cfs_rq.
        assert_eq!(t.delayed_in_group("/g a"), 2);
        assert_eq!(t.delayed_in_group("/g"), 0);
        assert_eq!(t.delayed_in_group("/"), 2);
        assert_eq!(t.max_abs_offset_ns(0), 46666666);
        assert_eq!(t.max_abs_offset_ns(1), 9007199254740993);
        assert_eq!(t.max_abs_offset_ns(2), 0);
        let min = Timeline::parse(&format!(
            "cpu 0\ncfs_rq V=1 zero=1 sum_w=1 nr_queued=1 min_slice_ns=1 path=/\n\
             {}  Q 1 1 {} 0 1 - y - a\n",
            "  S PID WEIGHT VRT-V DL-V SLICE_NS C E D NAME\n",
            i64::MIN
        ))
        .unwrap();
        assert_eq!(min.max_abs_offset_ns(0), 1u64 << 63);
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
}
