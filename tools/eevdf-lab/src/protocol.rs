//! The cell protocol: the `@@cell` lines a boot's guest script prints around each cell.
//!
//! [`plan::guest_script`](crate::plan::guest_script) writes them; two readers parse them
//! here, with one tokenisation: the live progress of a boot ([`crate::progress`]) and the
//! report's parser of the saved output ([`crate::parse::parse_boot`]).
//!
//! ```text
//! @@cell ID begin rep=R          the cell starts its R-th run (from 0) in this boot
//! @@cell ID end rc=RC            it ended; RC is the exit status `timeout` gave
//! @@cell ID end rc=99 (writing X failed)
//! @@cell ID unavailable FEATURE  the kernel lacks the sched_feat the cell needs
//! ```
//!
//! IDs ([`crate::plan::Cell::id`]) contain no blanks; fields are separated by one space. The
//! other protocol lines (`@@info`, `@@features`, `@@done`) describe the boot, not a cell,
//! and only the report reads them; so do the `@@counters before|after NAME=VALUE...` lines
//! inside a cell that reads sched_eevdf's counters (`crate::parse::parse_boot`).

/// What an `@@cell` line says about its cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellEvent<'a> {
    /// `begin rep=R`: `rep` is R, 0 when missing or malformed.
    Begin {
        /// The run of the cell inside the boot, from 0.
        rep: u32,
    },
    /// `end rc=RC`: `rc` is the rest of the line after `rc=`, trimmed.
    End {
        /// The exit status, with any explanation the script added.
        rc: &'a str,
    },
    /// `unavailable FEATURE`: `feature` is the rest of the line, trimmed (may be empty).
    Unavailable {
        /// The sched_feat the kernel lacks.
        feature: &'a str,
    },
    /// Any other word after the ID: not part of the protocol, ignored by both readers.
    Other,
}

/// One `@@cell` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellLine<'a> {
    /// The cell's ID.
    pub id: &'a str,
    /// What happened to it.
    pub event: CellEvent<'a>,
}

impl<'a> CellLine<'a> {
    /// Parses one line of guest output (a trailing `\r` of the serial console is ignored);
    /// `None` when it is not an `@@cell` line.
    pub fn parse(line: &'a str) -> Option<CellLine<'a>> {
        let rest = line.trim_end_matches('\r').strip_prefix("@@cell ")?;
        let mut w = rest.splitn(3, ' ');
        let (id, what, tail) = (
            w.next().unwrap_or(""),
            w.next().unwrap_or(""),
            w.next().unwrap_or(""),
        );
        let event = match what {
            "begin" => CellEvent::Begin {
                rep: tail
                    .strip_prefix("rep=")
                    .and_then(|r| r.trim().parse().ok())
                    .unwrap_or(0),
            },
            "end" => CellEvent::End {
                rc: tail.strip_prefix("rc=").unwrap_or(tail).trim(),
            },
            "unavailable" => CellEvent::Unavailable {
                feature: tail.trim(),
            },
            _ => CellEvent::Other,
        };
        Some(CellLine { id, event })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_guest_script_prints() {
        use CellEvent::{Begin, End, Other, Unavailable};
        let c = |id, event| Some(CellLine { id, event });
        for (line, want) in [
            ("hello", None),
            ("@@info uname=6.12", None),
            ("@@cell x begin rep=1\r", c("x", Begin { rep: 1 })),
            ("@@cell a begin", c("a", Begin { rep: 0 })),
            ("@@cell a what", c("a", Other)),
        ] {
            assert_eq!(CellLine::parse(line), want, "{line:?}");
        }
        let feature = "ELIGIBLE";
        let unavailable = CellLine::parse("@@cell a unavailable ELIGIBLE");
        assert_eq!(unavailable, c("a", Unavailable { feature }));
        let rc = "99 (writing NO_ELIGIBLE failed)";
        let line = format!("@@cell a end rc={rc}");
        assert_eq!(CellLine::parse(&line), c("a", End { rc }));
    }
}
