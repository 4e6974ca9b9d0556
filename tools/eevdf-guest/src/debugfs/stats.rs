//! `/sys/kernel/debug/sched/eevdf/stats` (sched_eevdf kernels only): the decision counters, a
//! `cpu` header naming them, one row per online CPU, then `all`. `eevdfctl stats` parses,
//! renders and diffs it; the column set comes from the file's header.

use super::{content_lines, err, parse_u64, serialize_pairs, ParseError};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// One counter of the kernel's counter table: its name in the file and what it counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// The column name in the file (`picks`).
    pub name: &'static str,
    /// What it counts: the doc comment of its row, its lines concatenated (each begins with
    /// a space).
    pub doc: &'static str,
}

macro_rules! counters {
    ($( $(#[doc = $doc:expr])* ($v:ident, $name:literal) ),* $(,)?) => {
        /// The counters of this version's kernel side, in the file's order: generated from
        /// the table the kernel compiles (`kernel/stats_table.rs`), so the names and their
        /// meanings are the kernel's. [`Stats::parse`] takes its columns from the file's
        /// header instead, so an older or newer kernel's file still parses.
        pub const COUNTERS: &[Counter] = &[
            $( Counter { name: $name, doc: concat!($($doc),*) }, )*
        ];
    };
}
include!("../../../../kernel/stats_table.rs");
eevdf_stats_table!(counters);

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

    /// Parse the live oracle's `eevdf/verify` file: the same table as the stats file, then
    /// one last line `enabled 0|1` (whether its checks run). Returns the table and the switch.
    pub fn parse_verify(s: &str) -> Result<(Self, bool), ParseError> {
        let Some((n, last)) = content_lines(s).last() else {
            return err(1, "empty file (want a header line 'cpu NAME...')");
        };
        let enabled = match last.strip_prefix("enabled ") {
            Some("1") => true,
            Some("0") => false,
            Some(v) => return err(n, format!("enabled: '{v}' is neither 0 nor 1")),
            None => return err(n, format!("last line '{last}' is not 'enabled 0|1'")),
        };
        // The table is everything before that line (the line numbers stay the file's).
        let table_len: usize = s.split_inclusive('\n').take(n - 1).map(str::len).sum();
        Ok((Self::parse(&s[..table_len])?, enabled))
    }

    /// Check that the `all` row is the sum of the CPU rows, column by column (the kernel
    /// sums the CPUs it prints; the counters wrap, so the sum does too). With `want_cpus`,
    /// check that the file has that many CPU rows. Every problem found, one string each.
    pub fn check_sums(&self, want_cpus: Option<usize>) -> Result<(), Vec<String>> {
        let mut bad = Vec::new();
        if let Some(want) = want_cpus.filter(|&w| w != self.cpus.len()) {
            bad.push(format!("{} cpu rows, want {want}", self.cpus.len()));
        }
        for (i, name) in self.columns.iter().enumerate() {
            let sum = self
                .cpus
                .iter()
                .fold(0u64, |acc, (_, v)| acc.wrapping_add(v[i]));
            if sum != self.all[i] {
                bad.push(format!(
                    "all {name} is {}, the cpu rows sum to {sum}",
                    self.all[i]
                ));
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn stats_check_sums() {
        let s = Stats::parse("cpu picks wakeups\n0 1234 5\n1 10 0\nall 1244 5\n").unwrap();
        assert_eq!(s.check_sums(Some(2)), Ok(()));
        // The all row of a counter that wrapped is the wrapped sum.
        let w = Stats::parse("cpu a\n0 18446744073709551615\n1 2\nall 1\n").unwrap();
        assert_eq!(w.check_sums(None), Ok(()));
        let bad = Stats::parse("cpu a b\n0 1 2\n1 3 4\nall 4 7\n").unwrap();
        assert_eq!(
            bad.check_sums(Some(4)),
            Err(vec![
                "2 cpu rows, want 4".to_string(),
                "all b is 7, the cpu rows sum to 6".to_string()
            ])
        );
        // No CPU rows: every all value must be 0.
        let none = Stats::parse("cpu a\nall 3\n").unwrap();
        assert!(none.check_sums(None).is_err());
    }

    #[test]
    fn verify_file_parses_with_its_switch() {
        let text = "cpu checks divergences\n0 5 0\n1 6 0\nall 11 0\nenabled 1\n";
        let (s, on) = Stats::parse_verify(text).unwrap();
        assert!(on);
        assert_eq!(s.value(None, "checks"), Some(11));
        assert_eq!(s.check_sums(Some(2)), Ok(()));
        let (_, on) = Stats::parse_verify("cpu a\nall 0\nenabled 0").unwrap();
        assert!(!on);
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty"),
            ("cpu a\nall 0\n", 2, "not 'enabled 0|1'"),
            ("cpu a\nall 0\nenabled on\n", 3, "enabled: 'on'"),
            ("cpu a\n0 x\nall 0\nenabled 1\n", 2, "a: 'x'"),
            ("cpu a\n0 1\nenabled 1\n", 2, "no 'all' row"),
            ("enabled 1\n", 1, "empty"),
        ];
        for (text, line, msg) in cases {
            let e = Stats::parse_verify(text).unwrap_err();
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
}
