//! `/sys/kernel/debug/sched/eevdf/place` (sched_eevdf kernels only): each CPU's last
//! placements as `place_entity()` saw them. A line `enabled 0|1`, the header
//! [`PLACE_HEADER`], and one row per kept placement, CPU by CPU, oldest first. Writing `on`
//! or `off` starts or stops the record, `0` clears it.

use super::{content_lines, err, parse_i64, parse_u64, ParseError};
use serde::{Deserialize, Serialize};

/// The header line this version knows; another is an error, not a guess.
pub const PLACE_HEADER: &str = "cpu seq pid flags weight load vlag lag limit V vruntime deadline";

/// `ENQUEUE_WAKEUP`: a wakeup.
pub const ENQUEUE_WAKEUP: u32 = 0x01;
/// `ENQUEUE_RESTORE`: a dequeue/enqueue pair around a change (affinity, nice, class).
pub const ENQUEUE_RESTORE: u32 = 0x02;
/// `ENQUEUE_MIGRATED`: the task changed CPU (on SMP).
pub const ENQUEUE_MIGRATED: u32 = 0x40;
/// `ENQUEUE_INITIAL`: a new task.
pub const ENQUEUE_INITIAL: u32 = 0x80;

/// One placement. Virtual ns unless said otherwise; weights scaled down (nice 0 = 1024).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The CPU that placed it.
    pub cpu: u32,
    /// Its number on that CPU since the record was last cleared, from 1.
    pub seq: u64,
    /// The task's pid; 0 for a group entity.
    pub pid: i32,
    /// The `ENQUEUE_*` flags.
    pub flags: u32,
    /// The entity's weight, w.
    pub weight: u64,
    /// W: the queue's weight without the entity, current's included when it is queued.
    pub load: u64,
    /// The lag saved at dequeue (clamped there), before placement.
    pub vlag: i64,
    /// The lag applied: `vlag + vlag * w / W` with PLACE_LAG on a non-empty queue, else 0.
    pub lag: i64,
    /// The clamp `update_entity_lag()` holds `vlag` to, for this entity now:
    /// `calc_delta_fair(max(2 r, tick), w)` on 6.12.
    pub limit: u64,
    /// V at placement.
    pub avruntime: u64,
    /// The vruntime set: `V - lag`.
    pub vruntime: u64,
    /// The deadline set.
    pub deadline: u64,
}

impl Placement {
    /// Whether `vlag` lies within `±limit`.
    pub fn within_limit(&self) -> bool {
        self.vlag.unsigned_abs() <= self.limit
    }

    /// The lag PLACE_LAG's scaling gives for this `vlag`, `w` and `W`, as the kernel computes
    /// it (`vlag + vlag * w / W`, truncating); `vlag` itself when W is 0.
    pub fn scaled_lag(&self) -> i64 {
        if self.load == 0 {
            return self.vlag;
        }
        let w = self.weight.min(i64::MAX as u64) as i64;
        let load = self.load.min(i64::MAX as u64) as i64;
        self.vlag
            .wrapping_add(self.vlag.wrapping_mul(w).checked_div(load).unwrap_or(0))
    }

    /// The flags as letters: `W` wakeup, `R` restore, `M` migrated, `I` initial; `-` none.
    pub fn flag_letters(&self) -> String {
        let mut s: String = [
            (ENQUEUE_WAKEUP, 'W'),
            (ENQUEUE_RESTORE, 'R'),
            (ENQUEUE_MIGRATED, 'M'),
            (ENQUEUE_INITIAL, 'I'),
        ]
        .iter()
        .filter(|(b, _)| self.flags & b != 0)
        .map(|(_, c)| *c)
        .collect();
        if s.is_empty() {
            s.push('-');
        }
        s
    }
}

/// The file: whether it records, and the placements kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placements {
    /// `enabled 1`.
    pub enabled: bool,
    /// In the file's order: CPU by CPU, oldest first.
    pub rows: Vec<Placement>,
}

impl Placements {
    /// Parses the file.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut lines = content_lines(s);
        let enabled = match lines.next() {
            Some((_, "enabled 1")) => true,
            Some((_, "enabled 0")) => false,
            Some((l, x)) => return err(l, format!("want 'enabled 0|1', got '{x}'")),
            None => return err(1, "empty file (want 'enabled 0|1')"),
        };
        match lines.next() {
            Some((_, h)) if h.split_whitespace().eq(PLACE_HEADER.split_whitespace()) => {}
            Some((l, h)) => return err(l, format!("want the header '{PLACE_HEADER}', got '{h}'")),
            None => return err(2, "no header line"),
        }
        let mut rows = Vec::new();
        for (l, line) in lines {
            let f: Vec<&str> = line.split_whitespace().collect();
            let [cpu, seq, pid, flags, weight, load, vlag, lag, limit, v, vr, dl] = f[..] else {
                return err(l, format!("want 12 fields, got {}", f.len()));
            };
            let Some(hex) = flags.strip_prefix("0x") else {
                return err(l, format!("flags: '{flags}' is not 0x-hex"));
            };
            let flags = u32::from_str_radix(hex, 16)
                .or_else(|_| err(l, format!("flags: '{flags}' is not a hex u32")))?;
            let pid = parse_i64(l, "pid", pid)?;
            rows.push(Placement {
                cpu: u32::try_from(parse_u64(l, "cpu", cpu)?)
                    .or_else(|_| err(l, "cpu out of range"))?,
                seq: parse_u64(l, "seq", seq)?,
                pid: i32::try_from(pid).or_else(|_| err(l, "pid out of range"))?,
                flags,
                weight: parse_u64(l, "weight", weight)?,
                load: parse_u64(l, "load", load)?,
                vlag: parse_i64(l, "vlag", vlag)?,
                lag: parse_i64(l, "lag", lag)?,
                limit: parse_u64(l, "limit", limit)?,
                avruntime: parse_u64(l, "V", v)?,
                vruntime: parse_u64(l, "vruntime", vr)?,
                deadline: parse_u64(l, "deadline", dl)?,
            });
        }
        Ok(Placements { enabled, rows })
    }

    /// The placements of `pid`, in the file's order.
    pub fn of_pid(&self, pid: i32) -> Vec<Placement> {
        self.rows.iter().filter(|p| p.pid == pid).copied().collect()
    }

    /// Checks every row: the vruntime is `V - lag`; an applied lag that is not 0 is
    /// `vlag + vlag * w / W` (PLACE_LAG's scaling, as the kernel truncates it); with
    /// `limit`, a task's `|vlag|` is within its clamp (a group entity's weight and slice
    /// change between its dequeue and its placement, so its limit then is not the one that
    /// clamped it). Returns `rows N` or each finding.
    pub fn check(&self, limit: bool) -> Result<String, Vec<String>> {
        let mut bad = Vec::new();
        for p in &self.rows {
            let at = format!("cpu {} seq {} pid {}", p.cpu, p.seq, p.pid);
            if p.vruntime != p.avruntime.wrapping_sub(p.lag as u64) {
                bad.push(format!("{at}: vruntime {} is not V - lag", p.vruntime));
            }
            if p.lag != 0 && p.lag != p.scaled_lag() {
                bad.push(format!(
                    "{at}: lag {} is not vlag + vlag * w / W = {}",
                    p.lag,
                    p.scaled_lag()
                ));
            }
            if limit && p.pid != 0 && !p.within_limit() {
                bad.push(format!(
                    "{at}: |vlag| {} over its limit {}",
                    p.vlag, p.limit
                ));
            }
        }
        if bad.is_empty() {
            Ok(format!("rows {}", self.rows.len()))
        } else {
            Err(bad)
        }
    }

    /// The table for a terminal: aligned, flags as letters, `-` for a group's pid.
    pub fn render(&self) -> String {
        let row = |c: [&str; 12]| {
            format!(
                "{:>3} {:>8} {:>7} {:>5} {:>7} {:>8} {:>12} {:>12} {:>11} {:>20} {:>20} {:>20}\n",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
            )
        };
        let mut s = format!(
            "# sched_eevdf placements (recording {}; virtual ns; LAG = VLAG + VLAG * WEIGHT / W)\n",
            if self.enabled { "on" } else { "off" }
        );
        s += &row([
            "CPU", "SEQ", "PID", "FLAGS", "WEIGHT", "W", "VLAG", "LAG", "LIMIT", "V", "VRUNTIME",
            "DEADLINE",
        ]);
        for p in &self.rows {
            let pid = if p.pid == 0 {
                "-".to_string()
            } else {
                p.pid.to_string()
            };
            let n = [
                p.cpu.to_string(),
                p.seq.to_string(),
                pid,
                p.flag_letters(),
                p.weight.to_string(),
                p.load.to_string(),
                p.vlag.to_string(),
                p.lag.to_string(),
                p.limit.to_string(),
                p.avruntime.to_string(),
                p.vruntime.to_string(),
                p.deadline.to_string(),
            ];
            s += &row(n.each_ref().map(String::as_str));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "enabled 1\n\
        cpu seq pid flags weight load vlag lag limit V vruntime deadline\n\
        0 7 0 0x1 2048 1024 -5 -15 100 1000 1015 2000\n\
        1 3 42 0x41 1024 1024 -300000 -600000 2800000 5000000 5600000 6300000\n\
        1 4 43 0x80 15 1024 0 0 186666666 5000000 5000000 50000000\n";

    #[test]
    fn parses_and_checks_rows() {
        let p = Placements::parse(FILE).unwrap();
        assert!(p.enabled);
        assert_eq!(p.rows.len(), 3);
        let r = p.of_pid(42);
        assert_eq!(r.len(), 1);
        let r = r[0];
        assert_eq!((r.cpu, r.seq, r.flags), (1, 3, 0x41));
        assert_eq!(r.flag_letters(), "WM");
        assert!(r.within_limit());
        // -300000 + -300000 * 1024 / 1024.
        assert_eq!(r.scaled_lag(), r.lag);
        assert_eq!(p.rows[0].flag_letters(), "W");
        assert_eq!(p.rows[2].flag_letters(), "I");
        let over = Placement {
            vlag: -2_800_001,
            ..r
        };
        assert!(!over.within_limit());
        assert_eq!(p.check(true), Ok("rows 3".to_string()));
        assert!(p.render().contains(" WM "), "{}", p.render());
    }

    #[test]
    fn check_flips_on_each_rule() {
        let mut p = Placements::parse(FILE).unwrap();
        // A task over its limit fails only with the limit checked; a group never does.
        let fix = |r: &mut Placement, vlag| {
            r.vlag = vlag;
            r.lag = r.scaled_lag();
            r.vruntime = r.avruntime.wrapping_sub(r.lag as u64);
        };
        fix(&mut p.rows[1], -2_800_001);
        assert!(p.check(false).is_ok());
        let bad = p.check(true).unwrap_err();
        assert_eq!(bad.len(), 1);
        assert!(bad[0].contains("over its limit"), "{bad:?}");
        fix(&mut p.rows[0], -500);
        assert_eq!(p.check(true).unwrap_err().len(), 1);
        // A lag that is not the scaled vlag (and so not V - lag), a vruntime off by one.
        let mut q = Placements::parse(FILE).unwrap();
        q.rows[1].lag += 1;
        q.rows[2].vruntime += 1;
        let bad = q.check(false).unwrap_err();
        assert_eq!(bad.len(), 3, "{bad:?}");
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        for bad in [
            "",
            "enabled 2\n",
            "enabled 1\ncpu seq pid\n",
            "enabled 1\ncpu seq pid flags weight load vlag lag limit V vruntime deadline\n0 1\n",
            "enabled 1\ncpu seq pid flags weight load vlag lag limit V vruntime deadline\n\
             0 1 2 41 1 1 1 1 1 1 1 1\n",
            "enabled 1\ncpu seq pid flags weight load vlag lag limit V vruntime deadline\n\
             0 1 2 0x1 1 1 x 1 1 1 1 1\n",
        ] {
            assert!(Placements::parse(bad).is_err(), "{bad:?}");
        }
        let empty = "enabled 0\ncpu seq pid flags weight load vlag lag limit V vruntime deadline\n";
        assert_eq!(Placements::parse(empty).unwrap().rows, vec![]);
    }
}
