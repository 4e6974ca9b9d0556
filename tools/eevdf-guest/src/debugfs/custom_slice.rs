//! A task's `custom_slice` flag, which sched_getattr() does not report, read from the task
//! lists of `/sys/kernel/debug/sched/debug` (stock 6.12) for `eevdfctl slice get`.

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
