//! The system calls and /proc reads the workloads use, each a small safe wrapper.

use std::io;

/// `struct sched_attr` from include/uapi/linux/sched/types.h (SCHED_ATTR_SIZE_VER1, 56 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

const SCHED_OTHER: u32 = 0;

fn check(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Ask for `slice_ns` as this thread's SCHED_OTHER slice (`sched_runtime`), keeping `nice`.
/// 0 gives the base slice back; the kernel clamps the rest to [100 µs, 100 ms].
pub fn set_own_slice_ns(slice_ns: u64, nice: i32) -> io::Result<()> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: SCHED_OTHER,
        sched_nice: nice,
        sched_runtime: slice_ns,
        ..Default::default()
    };
    // SAFETY: `attr` is a valid, initialised sched_attr whose `size` field matches its
    // layout; the kernel only reads `size` bytes from it during the call.
    check(unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0u32) })?;
    Ok(())
}

/// This thread's slice as sched_getattr reports it (`sched_runtime`), ns.
pub fn own_slice_ns() -> io::Result<u64> {
    let mut attr = SchedAttr::default();
    // SAFETY: the kernel writes at most the `size` argument (our struct's size) bytes into
    // `attr`, which is a live, writable sched_attr.
    check(unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0u32,
        )
    })?;
    Ok(attr.sched_runtime)
}

/// Pin the calling process (pid 0) or `pid` to one CPU.
pub fn pin_to_cpu(pid: libc::pid_t, cpu: u32) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; all-zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes inside `set`; `cpu` is bounds-checked by the macro's
    // implementation in the libc crate.
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t and the size passed is its size.
    let rc = unsafe { libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    check(rc as libc::c_long).map(|_| ())
}

/// Set `pid`'s nice value (0 = the caller).
pub fn set_nice(pid: libc::pid_t, nice: i32) -> io::Result<()> {
    // SAFETY: setpriority takes plain integers.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, pid as libc::id_t, nice) };
    check(rc as libc::c_long).map(|_| ())
}

/// CLOCK_MONOTONIC now, ns.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until CLOCK_MONOTONIC reaches `t_ns` (absolute), retrying on signals.
pub fn sleep_until_ns(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as _,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder pointer may be NULL for
        // TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// The calling process's (voluntary, involuntary) context switches, from getrusage.
pub fn own_ctxsw() -> (u64, u64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage to write into.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
}

/// The machine's context switches since boot (`ctxt` in /proc/stat).
pub fn system_ctxsw() -> io::Result<u64> {
    let s = std::fs::read_to_string("/proc/stat")?;
    parse_proc_stat_ctxt(&s)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no ctxt line in /proc/stat"))
}

pub fn parse_proc_stat_ctxt(s: &str) -> Option<u64> {
    s.lines()
        .find_map(|l| l.strip_prefix("ctxt "))
        .and_then(|v| v.trim().parse().ok())
}

/// `pid`'s time on the CPU, ns (first field of /proc/<pid>/schedstat).
pub fn task_runtime_ns(pid: libc::pid_t) -> io::Result<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))?;
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad /proc/<pid>/schedstat"))
}

/// `pid`'s voluntary + involuntary context switches, from /proc/<pid>/status.
pub fn task_ctxsw(pid: libc::pid_t) -> io::Result<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    Ok(parse_status_ctxsw(&s))
}

pub fn parse_status_ctxsw(s: &str) -> u64 {
    s.lines()
        .filter(|l| {
            l.starts_with("voluntary_ctxt_switches") || l.starts_with("nonvoluntary_ctxt_switches")
        })
        .filter_map(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
        .sum()
}

/// `(sched_count, run_delay_ns)` of `cpu` from /proc/schedstat (version 15/16 layout:
/// `cpuN yld_count 0 sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time run_delay
/// pcount`). `None` when schedstats are off or the line is missing.
pub fn cpu_schedstat(cpu: u32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/schedstat").ok()?;
    parse_cpu_schedstat(&s, cpu)
}

pub fn parse_cpu_schedstat(s: &str, cpu: u32) -> Option<(u64, u64)> {
    let name = format!("cpu{cpu}");
    let line = s
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    Some((*f.get(2)?, *f.get(7)?))
}

/// fork(); the child runs `f` and exits with its status, never returning.
pub fn fork_child(f: impl FnOnce() -> i32) -> io::Result<libc::pid_t> {
    // SAFETY: the workloads are single-threaded when they fork, so the child may run
    // arbitrary code; it leaves through _exit, never returning into the caller's frames.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            let rc = f();
            // SAFETY: _exit is always safe to call; it does not return.
            unsafe { libc::_exit(rc) }
        }
        pid => Ok(pid),
    }
}

/// Send `sig` to `pid`.
pub fn kill(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(pid, sig) };
}

/// Wait for `pid`; `Some(status)` once it exited (WNOHANG when `block` is false).
pub fn wait_pid(pid: libc::pid_t, block: bool) -> Option<i32> {
    let mut status = 0;
    // SAFETY: `status` is a valid int to write into.
    let rc = unsafe { libc::waitpid(pid, &mut status, if block { 0 } else { libc::WNOHANG }) };
    if rc == pid {
        Some(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_parsers() {
        assert_eq!(
            parse_proc_stat_ctxt("cpu 1 2\nctxt 12345\nbtime 1\n"),
            Some(12345)
        );
        assert_eq!(parse_proc_stat_ctxt("cpu 1 2\n"), None);
        let st = "Name:\tx\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t5\n";
        assert_eq!(parse_status_ctxsw(st), 15);
        let ss = "version 16\ntimestamp 1\ncpu0 0 0 100 20 30 10 5000 7000 99\ndomain0 3 0 0\ncpu1 1 0 7 1 2 3 4 5 6\n";
        assert_eq!(parse_cpu_schedstat(ss, 0), Some((100, 7000)));
        assert_eq!(parse_cpu_schedstat(ss, 1), Some((7, 5)));
        assert_eq!(parse_cpu_schedstat(ss, 2), None);
    }

    #[test]
    fn sched_attr_is_ver1_sized() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 56);
    }
}
