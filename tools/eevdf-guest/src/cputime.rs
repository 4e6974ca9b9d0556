//! The fault campaign's CPU-time check (`eevdfctl cputime`, tests/guest/lib/faults.sh's
//! `cpu_ok`): the CPU time the kernel accounted to each task (`sum_exec_runtime`, the first
//! field of `/proc/PID/schedstat`) is above 0 (it ran: nothing starved for good) and at most
//! its age (a task runs on one CPU at a time) times a slack ratio, plus a slack in seconds.
//!
//! The age is the uptime (`/proc/uptime`) less the task's start time (field 22 of
//! `/proc/PID/stat`, in clock ticks). For each task the CPU time, then the uptime, then the
//! start time are read one right after the other, so the age is never shorter than the span
//! the CPU time covers (reading the uptime once for all tasks let the CPU time of the tasks
//! read last grow by what the loop took: Documentation/reliability.md). The reading is
//! `eevdfctl`'s; this module holds the parsers and the verdict, tested on fixed texts.

/// One task's readings, in the order they were taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub pid: u32,
    /// `sum_exec_runtime`, ns; `None` when the task's schedstat could not be read (gone).
    pub cpu_ns: Option<u64>,
    /// The uptime read right after it, s.
    pub uptime_s: f64,
    /// The task's start time, clock ticks since boot; `None` when its stat could not be read
    /// or has no field 22 (gone).
    pub start_ticks: Option<u64>,
}

/// The clock ticks of `/proc/PID/stat`'s times per second: USER_HZ, 100 on x86 (as the
/// shell check had it).
pub const USER_HZ: f64 = 100.0;

/// The first field of `/proc/PID/schedstat` (`sum_exec_runtime`, ns).
pub fn parse_schedstat_ns(text: &str) -> Option<u64> {
    text.split_ascii_whitespace().next()?.parse().ok()
}

/// The first field of `/proc/uptime`, s.
pub fn parse_uptime_s(text: &str) -> Result<f64, String> {
    let f = text.split_ascii_whitespace().next().unwrap_or_default();
    match f.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("/proc/uptime: '{f}' is not a number of seconds")),
    }
}

/// Field 22 of `/proc/PID/stat` (`starttime`, clock ticks since boot). The command name,
/// field 2, is in parentheses and may hold spaces and parentheses itself: the fields are
/// counted from the last `) `.
pub fn parse_stat_start_ticks(text: &str) -> Option<u64> {
    let (_, rest) = text.rsplit_once(") ")?;
    // rest starts with field 3 (the state): field 22 is its 20th.
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

/// The `cpu ` line of `/proc/stat`: the sum of its first eight counters (user, nice, system,
/// idle, iowait, irq, softirq, steal), clock ticks of every CPU.
pub fn parse_proc_stat_cpu_ticks(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    line.split_ascii_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse::<u64>().ok())
        .sum()
}

/// What [`judge`] found: the lines to print, and whether every task passed.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// One line per problem, then the summary
    /// (`cpu time: N tasks, S s in all; the most of its age: task P, R`).
    pub lines: Vec<String>,
    pub ok: bool,
}

/// Judge the samples: a task fails when it is gone, got no CPU time, or got more than its
/// age times `slack_ratio` plus `slack_s`. The summary counts the tasks read, their CPU time
/// in all, and the task with the largest CPU time against its age.
pub fn judge(samples: &[Sample], slack_ratio: f64, slack_s: f64) -> Verdict {
    let mut lines = Vec::new();
    let mut ok = true;
    let (mut n, mut sum) = (0usize, 0.0f64);
    let mut most: Option<(u32, f64)> = None;
    for s in samples {
        let (Some(ns), Some(start)) = (s.cpu_ns, s.start_ticks) else {
            lines.push(format!("task {} is gone", s.pid));
            ok = false;
            continue;
        };
        let age = s.uptime_s - start as f64 / USER_HZ;
        let cpu = ns as f64 / 1e9;
        sum += cpu;
        n += 1;
        if cpu <= 0.0 {
            lines.push(format!(
                "task {} got no CPU time in {} s",
                s.pid,
                fmt_g6(age)
            ));
            ok = false;
        }
        if cpu > age * slack_ratio + slack_s {
            lines.push(format!(
                "task {}: {} s of CPU time in {} s",
                s.pid,
                fmt_g6(cpu),
                fmt_g6(age)
            ));
            ok = false;
        }
        if age > 0.0 && cpu / age > most.map_or(0.0, |(_, r)| r) {
            most = Some((s.pid, cpu / age));
        }
    }
    let (pid, ratio) = most.map_or((String::new(), 0.0), |(p, r)| (p.to_string(), r));
    lines.push(format!(
        "cpu time: {n} tasks, {sum:.2} s in all; the most of its age: task {pid}, {ratio:.3}"
    ));
    Verdict { lines, ok }
}

/// The lines of `/proc/PID/sched` worth a look when the CPU time is off.
const SCHED_DIAG: [&str; 6] = [
    "se.exec_start",
    "se.sum_exec_runtime",
    "se.nr_migrations",
    "nr_switches",
    "policy",
    "prio",
];

/// `pid P: ` and the [`SCHED_DIAG`] lines of the task's `/proc/PID/sched` (`None`: it could
/// not be read), runs of spaces squeezed to one, each line followed by a space.
pub fn sched_diag(pid: u32, sched: Option<&str>) -> String {
    let mut out = format!("pid {pid}: ");
    for line in sched.unwrap_or_default().lines() {
        let wanted = SCHED_DIAG.iter().any(|name| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(' '))
        });
        if wanted {
            let mut prev_space = false;
            for c in line.chars() {
                if c != ' ' || !prev_space {
                    out.push(c);
                }
                prev_space = c == ' ';
            }
            out.push(' ');
        }
    }
    out
}

/// The machine's CPU time against its uptime: `/proc/stat: T s of CPU time (all CPUs) in U s
/// of uptime`.
pub fn machine_diag(stat_ticks: u64, uptime_s: f64) -> String {
    format!(
        "/proc/stat: {:.1} s of CPU time (all CPUs) in {uptime_s:.1} s of uptime",
        stat_ticks as f64 / USER_HZ
    )
}

/// `x` as C's `%.6g` prints it (awk's default number format): six significant digits,
/// trailing zeros dropped, an exponent below 1e-4 and from 1e6 on.
pub fn fmt_g6(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { x.to_string() };
    }
    // The exponent after rounding to six digits (9.999996 is 1.00000e1).
    let e: i32 = format!("{x:.5e}")
        .rsplit_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&e) {
        let s = format!("{x:.5e}");
        let (m, _) = s.split_once('e').unwrap_or((&s, ""));
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(m.to_string()), e.abs())
    } else {
        let decimals = (5 - e) as usize;
        trim(format!("{x:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real /proc/PID/stat line of a shell hog (the command name with a space and a
    /// parenthesis, as a task can set it), start time 1234 ticks.
    const STAT: &str = "4242 (sh (x) y) R 1 4242 1 0 -1 4194560 97 0 0 0 812 3 0 0 20 0 1 0 \
                        1234 2498560 137 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 2 0 0 \
                        0 0 0\n";

    #[test]
    fn proc_parsers() {
        assert_eq!(parse_schedstat_ns("8123456789 1234 56\n"), Some(8123456789));
        assert_eq!(parse_schedstat_ns(""), None);
        assert_eq!(parse_schedstat_ns("x 1 2\n"), None);
        assert_eq!(parse_uptime_s("123.45 400.10\n"), Ok(123.45));
        assert!(parse_uptime_s("").is_err());
        assert!(parse_uptime_s("-1 2\n").unwrap_err().contains("'-1'"));
        assert_eq!(parse_stat_start_ticks(STAT), Some(1234));
        // Cut short, no parentheses, a non-number: gone, not a panic.
        assert_eq!(parse_stat_start_ticks("4242 (sh) R 1 2 3\n"), None);
        assert_eq!(parse_stat_start_ticks("4242 sh R"), None);
        assert_eq!(parse_stat_start_ticks(""), None);
        let bad = STAT.replace(" 1234 ", " x ");
        assert_eq!(parse_stat_start_ticks(&bad), None);
        let stat = "cpu  100 2 30 400 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\nctxt 5\n";
        assert_eq!(parse_proc_stat_cpu_ticks(stat), Some(558));
        assert_eq!(parse_proc_stat_cpu_ticks("cpu  1 x\n"), None);
        assert_eq!(parse_proc_stat_cpu_ticks("ctxt 5\n"), None);
    }

    fn sample(pid: u32, cpu_ns: u64, uptime_s: f64, start_ticks: u64) -> Sample {
        Sample {
            pid,
            cpu_ns: Some(cpu_ns),
            uptime_s,
            start_ticks: Some(start_ticks),
        }
    }

    #[test]
    fn judge_passes_and_summarises() {
        // Task 10: 5 s in 10 s (0.5); task 11: 9.5 s in 9 s, within 9 * 1.05 + 0.1 = 9.55.
        let v = judge(
            &[
                sample(10, 5_000_000_000, 20.0, 1000),
                sample(11, 9_500_000_000, 20.0, 1100),
            ],
            1.05,
            0.1,
        );
        assert!(v.ok, "{v:?}");
        assert_eq!(
            v.lines,
            ["cpu time: 2 tasks, 14.50 s in all; the most of its age: task 11, 1.056"]
        );
    }

    #[test]
    fn judge_fails_gone_starved_and_overaccounted() {
        let gone = Sample {
            pid: 7,
            cpu_ns: None,
            uptime_s: 1.0,
            start_ticks: Some(0),
        };
        let no_stat = Sample {
            start_ticks: None,
            cpu_ns: Some(1),
            ..gone
        };
        let v = judge(
            &[
                gone,
                no_stat,
                sample(8, 0, 12.5, 250),
                sample(9, 9_600_000_000, 20.0, 1100),
            ],
            1.05,
            0.1,
        );
        assert!(!v.ok);
        assert_eq!(
            v.lines,
            [
                "task 7 is gone",
                "task 7 is gone",
                "task 8 got no CPU time in 10 s",
                "task 9: 9.6 s of CPU time in 9 s",
                "cpu time: 2 tasks, 9.60 s in all; the most of its age: task 9, 1.067",
            ]
        );
        // Nothing read: no task to name.
        let v = judge(&[], 1.05, 0.1);
        assert!(v.ok);
        assert_eq!(
            v.lines,
            ["cpu time: 0 tasks, 0.00 s in all; the most of its age: task , 0.000"]
        );
    }

    #[test]
    fn diagnostics() {
        let sched = "sh (4242, #threads: 1)\n---------\n\
                     se.exec_start                                :        123456.789012\n\
                     se.vruntime                                  :         99.000000\n\
                     se.sum_exec_runtime                          :          8123.456789\n\
                     se.nr_migrations                             :                    3\n\
                     nr_switches                                  :                   42\n\
                     nr_switches_x                                :                    1\n\
                     policy                                       :                    0\n\
                     prio                                         :                  120\n";
        assert_eq!(
            sched_diag(4242, Some(sched)),
            "pid 4242: se.exec_start : 123456.789012 se.sum_exec_runtime : 8123.456789 \
             se.nr_migrations : 3 nr_switches : 42 policy : 0 prio : 120 "
        );
        assert_eq!(sched_diag(5, None), "pid 5: ");
        assert_eq!(
            machine_diag(558, 30.04),
            "/proc/stat: 5.6 s of CPU time (all CPUs) in 30.0 s of uptime"
        );
    }

    #[test]
    fn g6_is_awks_number_format() {
        for (x, want) in [
            (0.0, "0"),
            (10.0, "10"),
            (9.6, "9.6"),
            (1.0 / 3.0, "0.333333"),
            (123456.7, "123457"),
            (999999.7, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (-2.5, "-2.5"),
            (9.9999996, "10"),
        ] {
            assert_eq!(fmt_g6(x), want, "{x}");
        }
    }
}
