//! The system calls and /proc reads the workloads use, each a small safe wrapper.

use std::io;
use std::sync::atomic::AtomicU32;

/// `struct sched_attr` from include/uapi/linux/sched/types.h (SCHED_ATTR_SIZE_VER1, 56 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAttr {
    pub size: u32,
    pub sched_policy: u32,
    pub sched_flags: u64,
    pub sched_nice: i32,
    pub sched_priority: u32,
    pub sched_runtime: u64,
    pub sched_deadline: u64,
    pub sched_period: u64,
    pub sched_util_min: u32,
    pub sched_util_max: u32,
}

/// `sizeof(struct sched_attr)` as this program knows it (SCHED_ATTR_SIZE_VER1).
pub const SCHED_ATTR_SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;

pub const SCHED_OTHER: u32 = 0;
pub const SCHED_FIFO: u32 = 1;
pub const SCHED_RR: u32 = 2;
pub const SCHED_BATCH: u32 = 3;
pub const SCHED_IDLE: u32 = 5;
pub const SCHED_DEADLINE: u32 = 6;

/// `sched_flags` bit: children start with the default policy (and the base slice).
/// sched_getattr() reports it; an unprivileged sched_setattr() may not clear it.
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
/// `sched_flags` bit of SCHED_DEADLINE: reclaim bandwidth left unused (GRUB).
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;
/// `sched_flags` bit of SCHED_DEADLINE: SIGXCPU when the task overruns its runtime.
pub const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;
/// `sched_flags` bit: keep the task's policy (`sched_policy` is ignored).
pub const SCHED_FLAG_KEEP_POLICY: u64 = 0x08;
/// `sched_flags` bit: keep the task's parameters (nice, slice, priority, deadline).
pub const SCHED_FLAG_KEEP_PARAMS: u64 = 0x10;
/// `sched_flags` bit: set `sched_util_min` (needs CONFIG_UCLAMP_TASK and a VER1 attr).
pub const SCHED_FLAG_UTIL_CLAMP_MIN: u64 = 0x20;
/// `sched_flags` bit: set `sched_util_max` (see [`SCHED_FLAG_UTIL_CLAMP_MIN`]).
pub const SCHED_FLAG_UTIL_CLAMP_MAX: u64 = 0x40;
/// The kernel-internal schedutil flag: user space gets EINVAL for it.
pub const SCHED_FLAG_SUGOV: u64 = 0x1000_0000;
/// `SCHED_EXT`: valid only with CONFIG_SCHED_CLASS_EXT (EINVAL otherwise).
pub const SCHED_EXT: u32 = 7;
/// `SCHED_ATTR_SIZE_VER0`: the smallest `size` the kernel takes (0 also means this).
pub const SCHED_ATTR_SIZE_VER0: u32 = 48;

/// The smallest slice sched_setattr() gives a fair task, ns: 6.12's
/// `__setscheduler_params()` clamps a non-zero `sched_runtime` to
/// `[NSEC_PER_MSEC/10, NSEC_PER_MSEC*100]` (one tick at HZ=1000 / 10, one at HZ=100 * 10).
pub const SLICE_MIN_NS: u64 = 100_000;
/// The largest slice sched_setattr() gives a fair task, ns (see [`SLICE_MIN_NS`]).
pub const SLICE_MAX_NS: u64 = 100_000_000;

/// The slice the kernel keeps when asked for `ns` (non-zero; 0 means the base slice).
pub fn slice_clamp_ns(ns: u64) -> u64 {
    ns.clamp(SLICE_MIN_NS, SLICE_MAX_NS)
}

/// The note `eevdfctl slice set` prints when the kernel kept `got_ns` for a request of
/// `asked_ns`; `None` when there is nothing to say (kept as asked, or 0 = base slice).
pub fn slice_clamp_note(asked_ns: u64, got_ns: u64) -> Option<String> {
    if asked_ns == 0 || asked_ns == got_ns {
        None
    } else if asked_ns != slice_clamp_ns(asked_ns) {
        Some(format!(
            "slice {asked_ns} ns is out of range [{SLICE_MIN_NS}, {SLICE_MAX_NS}]: \
             the kernel clamped it to {got_ns} ns"
        ))
    } else {
        Some(format!(
            "asked for a slice of {asked_ns} ns, but sched_getattr reports {got_ns} ns \
             (did something else change it?)"
        ))
    }
}

/// The name `policy` goes by in eevdfctl and eevdf-slice (`other`, `fifo`, ...).
pub fn policy_name(policy: u32) -> String {
    match policy {
        SCHED_OTHER => "other".into(),
        SCHED_FIFO => "fifo".into(),
        SCHED_RR => "rr".into(),
        SCHED_BATCH => "batch".into(),
        SCHED_IDLE => "idle".into(),
        SCHED_DEADLINE => "deadline".into(),
        n => format!("policy-{n}"),
    }
}

/// Where stock 6.12 shows the base slice every task starts with.
pub const BASE_SLICE_PATH: &str = "/sys/kernel/debug/sched/base_slice_ns";

impl SchedAttr {
    /// A zeroed attr of `policy` with `size` set to [`SCHED_ATTR_SIZE`].
    pub fn new(policy: u32) -> Self {
        SchedAttr {
            size: SCHED_ATTR_SIZE,
            sched_policy: policy,
            ..Default::default()
        }
    }
}

fn check(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// sched_setattr(2) with `attr` as given: whatever its `size`, flags and policy say, so bad
/// values reach the kernel. On E2BIG the kernel writes its own size into `attr.size`.
pub fn sched_setattr(pid: libc::pid_t, attr: &mut SchedAttr, flags: u32) -> io::Result<()> {
    // SAFETY: `attr` is a live, writable sched_attr. The kernel only reads through its
    // fault-checked user copies (a `size` past our struct at worst gives E2BIG) and writes
    // nothing but `attr.size`.
    unsafe { sched_setattr_ptr(pid, attr, flags) }
}

/// sched_setattr(2) with a raw `attr` pointer, for the NULL and bad-pointer cases.
///
/// # Safety
///
/// `attr` must be NULL, point into memory that is not mapped in this process (the kernel then
/// answers EFAULT), or point to a live, writable [`SchedAttr`] whose `size` is at most
/// [`SCHED_ATTR_SIZE`]: on E2BIG the kernel writes to `attr->size`.
pub unsafe fn sched_setattr_ptr(
    pid: libc::pid_t,
    attr: *mut SchedAttr,
    flags: u32,
) -> io::Result<()> {
    // SAFETY: the caller upholds the contract above; the kernel validates every user access.
    check(unsafe { libc::syscall(libc::SYS_sched_setattr, pid, attr, flags) }).map(|_| ())
}

/// sched_setattr(2) with `attr` pointing at raw bytes: a `size` of up to a page (the kernel
/// reads that many), a misaligned or faulting pointer, whatever a fuzzer wants to send.
///
/// # Safety
///
/// `attr` must be NULL, or point where a read faults (the kernel then answers EFAULT), or
/// point to at least 4 writable bytes that no reference covers: the kernel reads up to
/// `size` bytes from `attr` through its fault-checked user copies (reading mapped memory of
/// ours is harmless) and, on E2BIG, writes its own size into the first 4 (`attr->size`).
pub unsafe fn sched_setattr_raw(pid: libc::pid_t, attr: *mut u8, flags: u32) -> io::Result<()> {
    // SAFETY: the caller upholds the contract above; the kernel validates every user access.
    check(unsafe { libc::syscall(libc::SYS_sched_setattr, pid, attr, flags) }).map(|_| ())
}

/// The calling thread's id (what sched_setattr takes as `pid` for one thread).
pub fn gettid() -> libc::pid_t {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::pid_t }
}

/// sched_getattr(2) of `pid` into `attr`, telling the kernel the buffer is `size` bytes.
/// `size` is capped at [`SCHED_ATTR_SIZE`] so the kernel cannot write past `attr`.
pub fn sched_getattr(pid: libc::pid_t, attr: &mut SchedAttr, size: u32) -> io::Result<()> {
    let size = size.min(SCHED_ATTR_SIZE);
    // SAFETY: the kernel writes at most `size` bytes, no more than `attr` holds, into the
    // live, writable `attr`.
    check(unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            pid,
            attr as *mut SchedAttr,
            size,
            0u32,
        )
    })
    .map(|_| ())
}

/// `pid`'s (0 = the caller) scheduling attributes, as sched_getattr reports them.
pub fn getattr(pid: libc::pid_t) -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    sched_getattr(pid, &mut attr, SCHED_ATTR_SIZE)?;
    Ok(attr)
}

/// Give `pid` (0 = the caller) `policy` with `slice_ns` as its slice (`sched_runtime`) and
/// nice 0; SCHED_FIFO gets priority 1 and no slice. For SCHED_OTHER and SCHED_BATCH, 0 gives
/// the base slice back and the kernel clamps the rest to [100 µs, 100 ms].
pub fn set_slice(pid: libc::pid_t, policy: u32, slice_ns: u64) -> io::Result<()> {
    let mut attr = SchedAttr::new(policy);
    if policy == SCHED_FIFO {
        attr.sched_priority = 1;
    } else {
        attr.sched_runtime = slice_ns;
    }
    sched_setattr(pid, &mut attr, 0)
}

/// Make `pid` (0 = the calling thread) SCHED_FIFO at priority `prio` (1..=99; needs
/// CAP_SYS_NICE or an RLIMIT_RTPRIO that allows it).
pub fn set_fifo(pid: libc::pid_t, prio: u32) -> io::Result<()> {
    let mut attr = SchedAttr::new(SCHED_FIFO);
    attr.sched_priority = prio;
    sched_setattr(pid, &mut attr, 0)
}

/// `pid`'s (0 = the caller) slice as sched_getattr reports it (`sched_runtime`), ns.
pub fn slice_ns(pid: libc::pid_t) -> io::Result<u64> {
    Ok(getattr(pid)?.sched_runtime)
}

/// Ask for `slice_ns` as this thread's SCHED_OTHER slice (`sched_runtime`), keeping `nice`.
/// 0 gives the base slice back; the kernel clamps the rest to [100 µs, 100 ms].
pub fn set_own_slice_ns(slice_ns: u64, nice: i32) -> io::Result<()> {
    let mut attr = SchedAttr::new(SCHED_OTHER);
    attr.sched_nice = nice;
    attr.sched_runtime = slice_ns;
    sched_setattr(0, &mut attr, 0)
}

/// This thread's slice as sched_getattr reports it (`sched_runtime`), ns.
pub fn own_slice_ns() -> io::Result<u64> {
    slice_ns(0)
}

/// The base slice, ns, from [`BASE_SLICE_PATH`] (debugfs must be mounted).
pub fn base_slice_ns() -> io::Result<u64> {
    let s = std::fs::read_to_string(BASE_SLICE_PATH)?;
    s.trim().parse().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{BASE_SLICE_PATH}: not a number: {s:?}"),
        )
    })
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

/// Pin `pid` (0 = the caller) to the CPUs of `cpus`.
pub fn pin_to_cpus(pid: libc::pid_t, cpus: &[u32]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; all-zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: CPU_SET writes inside `set`; `cpu` is bounds-checked by the macro's
        // implementation in the libc crate.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
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

/// The calling thread's (voluntary, involuntary) context switches, from getrusage: a
/// voluntary one is a block (a lock, a sleep), an involuntary one a preemption.
pub fn thread_ctxsw() -> (u64, u64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage to write into.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
}

/// This thread's total CPU time and total wait on a runqueue, ns: the first two
/// fields of `/proc/thread-self/schedstat` (needs CONFIG_SCHED_INFO, which
/// SCHEDSTATS selects).
pub fn own_schedstat_ns() -> io::Result<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat")?;
    let mut f = s.split_whitespace().map(|v| v.parse::<u64>().ok());
    match (f.next().flatten(), f.next().flatten()) {
        (Some(run), Some(delay)) => Ok((run, delay)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "malformed schedstat",
        )),
    }
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

/// `(running, total)` from /proc/loadavg's fourth field, `running/total`: the runnable
/// tasks on every CPU (`nr_running()`, the reader included) and all tasks.
pub fn parse_loadavg_tasks(s: &str) -> Option<(u64, u64)> {
    let (running, total) = s.split_whitespace().nth(3)?.split_once('/')?;
    Some((running.parse().ok()?, total.parse().ok()?))
}

/// `pid`'s time on the CPU, ns (first field of `/proc/<pid>/schedstat`).
pub fn task_runtime_ns(pid: libc::pid_t) -> io::Result<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))?;
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad /proc/<pid>/schedstat"))
}

/// `pid`'s voluntary + involuntary context switches, from `/proc/<pid>/status`.
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

/// fork() from a multi-threaded process: the child spins for `spin_ns` of CLOCK_MONOTONIC
/// time and exits with status 0. A short-lived task to aim system calls at while it exits.
pub fn fork_spin_exit(spin_ns: u64) -> io::Result<libc::pid_t> {
    // SAFETY: the child calls only clock_gettime and _exit, which are async-signal-safe, so
    // it needs none of the locks that other threads of the parent may have held at fork.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            let end = now_ns().saturating_add(spin_ns);
            while now_ns() < end {
                std::hint::spin_loop();
            }
            // SAFETY: _exit is async-signal-safe and does not return.
            unsafe { libc::_exit(0) }
        }
        pid => Ok(pid),
    }
}

/// Send `sig` to `pid`.
pub fn kill(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(pid, sig) };
}

/// SIGKILL each of `pids`, then wait for each: the children a program started, on its way
/// out, whichever path it takes.
pub fn reap(pids: &[libc::pid_t]) {
    for &p in pids {
        kill(p, libc::SIGKILL);
    }
    for &p in pids {
        wait_pid(p, true);
    }
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

/// CLOCK_MONOTONIC after a relative sleep of `ns`, retrying on signals.
pub fn sleep_ns(ns: u64) {
    sleep_until_ns(now_ns().saturating_add(ns));
}

/// The calling thread's CPU time, ns (`CLOCK_THREAD_CPUTIME_ID`: the scheduler's
/// `sum_exec_runtime`, brought up to date by the read; a system call, not the vDSO).
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// `clk` now, ns.
pub fn clock_ns(clk: libc::clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write into; a bad clock id gives EINVAL.
    let rc = unsafe { libc::clock_gettime(clk, &mut ts) };
    check(rc as libc::c_long)?;
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The CPU-time clock of thread `t` of this process (`pthread_getcpuclockid`), for
/// [`clock_ns`]: another thread's runtime, read without stopping it. `t` as std's
/// `JoinHandleExt::as_pthread_t` gives it.
pub fn pthread_cpu_clock(t: std::os::unix::thread::RawPthread) -> io::Result<libc::clockid_t> {
    // std's RawPthread is an integer; libc's pthread_t is an integer (glibc) or a pointer
    // (musl) of the same size.
    let t = t as usize as libc::pthread_t;
    let mut clk: libc::clockid_t = 0;
    // SAFETY: `t` names a thread of this process that has not been joined (the caller
    // holds its JoinHandle); `clk` is a valid clockid_t to write into.
    let rc = unsafe { libc::pthread_getcpuclockid(t, &mut clk) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(clk)
}

/// `FUTEX_WAIT_PRIVATE` on `word`: sleep while it holds `expected`, at most `timeout_ns`.
/// Returns `Ok(())` when woken (or on a spurious wakeup); `EAGAIN` when `word` no longer
/// held `expected`, `ETIMEDOUT` and `EINTR` as errors. Callers re-check `word` either way.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout_ns: u64) -> io::Result<()> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as _,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned u32 for the whole call (a shared reference); the
    // kernel only reads it. `ts` is a valid relative timeout; the other arguments are unused
    // by FUTEX_WAIT.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
        )
    };
    check(rc).map(|_| ())
}

/// `FUTEX_WAKE_PRIVATE` on `word`: wake up to `n` waiters; how many were woken. A plain
/// wakeup (`try_to_wake_up()` without `WF_SYNC`), unlike a pipe write.
pub fn futex_wake(word: &AtomicU32, n: i32) -> io::Result<usize> {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE does not access it, it only uses
    // its address as the key.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        )
    };
    check(rc).map(|n| n as usize)
}

/// What `/proc/<pid>/task/<tid>/sched` (CONFIG_SCHED_DEBUG) says about a task's class:
/// what the kernel holds, beside what sched_getattr() reports. 6.12's
/// `proc_sched_show_task()` (kernel/sched/debug.c) prints a `COMM (PID, #threads: N)`
/// line, a rule, then `%-45s:%21Ld` lines (`%14Ld.%06ld` for times, ms and ns); `se.slice`
/// comes after `policy` and `prio`, for a fair task only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcSched {
    /// The pid in the first line (the thread's id for `/proc/<pid>/task/<tid>/sched`).
    pub pid: Option<i32>,
    /// `policy`: SCHED_OTHER = 0, ...
    pub policy: Option<u32>,
    /// `prio`: the effective priority, `120 + nice` for a fair task that no lock boosts.
    pub prio: Option<i32>,
    /// `se.slice`, ns (fair tasks only).
    pub slice_ns: Option<u64>,
    /// `se.load.weight`, as the file shows it: on 64-bit kernels scaled up by 1024
    /// (`scale_load()`), so nice 0 is 1048576.
    pub weight: Option<u64>,
    /// `se.vruntime`, ns (the file prints it as a signed `ms.nnnnnn`).
    pub vruntime_ns: Option<i64>,
}

impl ProcSched {
    /// The nice value `prio` shows: `prio - 120` for a task of the fair class (SCHED_OTHER,
    /// SCHED_BATCH, SCHED_IDLE) whose prio is a nice level; `None` otherwise (an RT or
    /// deadline task's prio is not a nice value).
    pub fn nice(&self) -> Option<i32> {
        match (self.policy?, self.prio?) {
            (SCHED_OTHER | SCHED_BATCH | SCHED_IDLE, p @ 100..=139) => Some(p - 120),
            _ => None,
        }
    }
}

/// The command name and pid of a `sched` file's first line, `COMM (PID, #threads: N)`. The
/// name may hold spaces and parentheses, so the pid is the last `(`'s.
pub fn parse_proc_sched_head(s: &str) -> Option<(String, i32)> {
    let first = s.lines().next()?;
    let (comm, rest) = first.rsplit_once(" (")?;
    let pid = rest.split_once(',')?.0.trim().parse().ok()?;
    Some((comm.to_string(), pid))
}

/// A `PN()` value of a `sched` file, `[-]MS.NNNNNN` (ms and the ns below them), in ns.
fn parse_split_ns(v: &str) -> Option<i64> {
    let (neg, v) = match v.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, v),
    };
    let (ms, ns) = v.split_once('.')?;
    if ns.len() != 6 {
        return None;
    }
    let x = ms
        .parse::<i64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(ns.parse::<i64>().ok()?)?;
    Some(if neg { -x } else { x })
}

/// Parse the `NAME : VALUE` lines of a task's `sched` file that [`ProcSched`] keeps.
pub fn parse_proc_sched(s: &str) -> ProcSched {
    let mut p = ProcSched {
        pid: parse_proc_sched_head(s).map(|(_, pid)| pid),
        ..ProcSched::default()
    };
    for line in s.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "policy" => p.policy = v.parse().ok(),
            "prio" => p.prio = v.parse().ok(),
            "se.slice" => p.slice_ns = v.parse().ok(),
            "se.load.weight" => p.weight = v.parse().ok(),
            "se.vruntime" => p.vruntime_ns = parse_split_ns(v),
            _ => {}
        }
    }
    p
}

/// Process `pid`'s [`ProcSched`] (`/proc/<pid>/sched`: its main thread's); `None`
/// without CONFIG_SCHED_DEBUG.
pub fn proc_sched(pid: libc::pid_t) -> Option<ProcSched> {
    std::fs::read_to_string(format!("/proc/{pid}/sched"))
        .ok()
        .map(|s| parse_proc_sched(&s))
}

/// The parent pid in a `/proc/<pid>/stat` line, `PID (COMM) STATE PPID ...` (COMM may hold
/// spaces and parentheses: the fields start after the last `)`).
pub fn parse_stat_ppid(s: &str) -> Option<i32> {
    let (_, rest) = s.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The processes descended from `root` (children, grandchildren, ...), nearest first and
/// by pid within a generation, from every `/proc/<pid>/stat` (`(pid, ppid)` pairs).
pub fn descendants_of(root: libc::pid_t, procs: &[(libc::pid_t, libc::pid_t)]) -> Vec<libc::pid_t> {
    let mut sorted = procs.to_vec();
    sorted.sort_unstable();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while !frontier.is_empty() {
        let next: Vec<libc::pid_t> = sorted
            .iter()
            .filter(|&&(pid, ppid)| frontier.contains(&ppid) && pid != root && !out.contains(&pid))
            .map(|&(pid, _)| pid)
            .collect();
        out.extend(&next);
        frontier = next;
    }
    out
}

/// `(pid, ppid)` of every process in `/proc` now (a process that exits while it is read is
/// left out).
pub fn proc_parents() -> Vec<(libc::pid_t, libc::pid_t)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: libc::pid_t = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some((pid, parse_stat_ppid(&stat)?))
    })
    .collect()
}

/// Process `pid`'s `/proc/<pid>/sched` as text; `None` when it is gone or the kernel has no
/// CONFIG_SCHED_DEBUG.
pub fn proc_sched_text(pid: libc::pid_t) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/sched")).ok()
}

/// The calling thread's [`ProcSched`] (`/proc/thread-self/sched`); `None` without
/// CONFIG_SCHED_DEBUG.
pub fn own_proc_sched() -> Option<ProcSched> {
    std::fs::read_to_string("/proc/thread-self/sched")
        .ok()
        .map(|s| parse_proc_sched(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sched_file_vruntime() {
        let p = parse_proc_sched(
            "eevdf-migrate (93, #threads: 1)\n---\nse.exec_start : 5123.456789\n\
             se.vruntime                                  :          1234.000567\n\
             se.slice : 1400000\n",
        );
        assert_eq!(p.vruntime_ns, Some(1_234_000_567));
        assert_eq!(p.slice_ns, Some(1_400_000));
        assert_eq!(parse_split_ns("-1.500000"), Some(-1_500_000));
        assert_eq!(parse_split_ns("0.000001"), Some(1));
        assert_eq!(parse_split_ns("12.5"), None);
        assert_eq!(parse_split_ns("x.000000"), None);
    }

    #[test]
    fn loadavg_tasks() {
        assert_eq!(
            parse_loadavg_tasks("0.52 0.18 0.06 20003/20061 20188\n"),
            Some((20003, 20061))
        );
        assert_eq!(parse_loadavg_tasks("0.52 0.18 0.06"), None);
        assert_eq!(parse_loadavg_tasks("0.52 0.18 0.06 3 4"), None);
        assert_eq!(parse_loadavg_tasks("0.52 0.18 0.06 x/4 5"), None);
    }

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
    fn clamp_notes() {
        assert_eq!(slice_clamp_ns(50_000), 100_000);
        assert_eq!(slice_clamp_ns(3_000_000), 3_000_000);
        assert_eq!(slice_clamp_ns(u64::MAX), 100_000_000);
        assert_eq!(slice_clamp_note(0, 700_000), None);
        assert_eq!(slice_clamp_note(3_000_000, 3_000_000), None);
        assert_eq!(
            slice_clamp_note(50_000, 100_000).unwrap(),
            "slice 50000 ns is out of range [100000, 100000000]: the kernel clamped it to 100000 ns"
        );
        assert_eq!(
            slice_clamp_note(200_000_000, 100_000_000).unwrap(),
            "slice 200000000 ns is out of range [100000, 100000000]: \
             the kernel clamped it to 100000000 ns"
        );
        assert!(slice_clamp_note(3_000_000, 2_000_000)
            .unwrap()
            .contains("reports 2000000"));
        assert_eq!(policy_name(SCHED_RR), "rr");
        assert_eq!(policy_name(7), "policy-7");
    }

    #[test]
    fn proc_sched_fields() {
        let s = "eevdf-rtapp (123, #threads: 4)\n\
                 -------------------------------------------------------------------\n\
                 se.exec_start                                :        123456.789012\n\
                 se.load.weight                               :              1048576\n\
                 se.avg.load_sum                              :                 4096\n\
                 policy                                       :                    0\n\
                 prio                                         :                  120\n\
                 se.slice                                     :               100000\n";
        assert_eq!(
            parse_proc_sched(s),
            ProcSched {
                pid: Some(123),
                policy: Some(0),
                prio: Some(120),
                slice_ns: Some(100_000),
                weight: Some(1_048_576),
                vruntime_ns: None,
            }
        );
        assert_eq!(parse_proc_sched("policy : 1\n").slice_ns, None);
    }

    /// `/proc/<pid>/sched` as 6.12.117's `proc_sched_show_task()` prints it (its
    /// `SEQ_printf` formats: `%-45s:%21Ld`, `%-45s:%14Ld.%06ld`), schedstats off, SMP: a
    /// hackbench worker at nice 5 with the base slice of a 1-vCPU guest.
    const SCHED_6_12: &str = "\
hackbench (187, #threads: 1)
-------------------------------------------------------------------
se.exec_start                                :          4182.339012
se.vruntime                                  :          3317.104566
se.sum_exec_runtime                          :           310.982330
se.nr_migrations                             :                    0
nr_switches                                  :                 1290
nr_voluntary_switches                        :                 1043
nr_involuntary_switches                      :                  247
se.load.weight                               :               343040
se.avg.load_sum                              :                20310
se.avg.runnable_sum                          :             20795392
se.avg.util_sum                              :             16384000
se.avg.load_avg                              :                  143
se.avg.runnable_avg                          :                  436
se.avg.util_avg                              :                  343
se.avg.last_update_time                      :        4182338560000
se.avg.util_est                              :                  342
policy                                       :                    0
prio                                         :                  125
se.slice                                     :               700000
clock-delta                                  :                   96
mm->numa_scan_seq                            :                    0
";

    #[test]
    fn proc_sched_of_6_12() {
        let p = parse_proc_sched(SCHED_6_12);
        assert_eq!(
            p,
            ProcSched {
                pid: Some(187),
                policy: Some(SCHED_OTHER),
                prio: Some(125),
                slice_ns: Some(700_000),
                weight: Some(343_040),
                vruntime_ns: Some(3_317_104_566),
            }
        );
        assert_eq!(p.nice(), Some(5));
        assert_eq!(
            parse_proc_sched_head(SCHED_6_12),
            Some(("hackbench".to_string(), 187))
        );
        // A name with spaces and parentheses; the pid is the last parenthesis's.
        assert_eq!(
            parse_proc_sched_head("a (b) c (42, #threads: 3)\n"),
            Some(("a (b) c".to_string(), 42))
        );
        assert_eq!(parse_proc_sched_head("no header\n"), None);
        // An RT task shows no se.slice, and its prio is no nice value.
        let rt = parse_proc_sched("cyclictest (9, #threads: 2)\npolicy : 1\nprio : 98\n");
        assert_eq!((rt.slice_ns, rt.nice()), (None, None));
        // SCHED_BATCH and SCHED_IDLE are fair: their prio is 120 + nice.
        let idle = parse_proc_sched("x (1, #threads: 1)\npolicy : 5\nprio : 139\n");
        assert_eq!(idle.nice(), Some(19));
        assert_eq!(parse_proc_sched("").nice(), None);
    }

    #[test]
    fn stat_parents_and_descendants() {
        assert_eq!(
            parse_stat_ppid("187 (hackbench) S 186 185 185 0 -1 4194560 99 0 0 0"),
            Some(186)
        );
        assert_eq!(parse_stat_ppid("7 (a) b) (c) R 1 7 7 0"), Some(1));
        assert_eq!(parse_stat_ppid("7 (a"), None);
        // 10 is the waker, 11 hackbench, 12-14 its workers, 15 a grandchild, 20 unrelated.
        let procs = [
            (1, 0),
            (20, 1),
            (15, 13),
            (10, 1),
            (14, 11),
            (11, 10),
            (12, 11),
            (13, 11),
        ];
        assert_eq!(descendants_of(11, &procs), vec![12, 13, 14, 15]);
        assert_eq!(descendants_of(10, &procs), vec![11, 12, 13, 14, 15]);
        assert!(descendants_of(20, &procs).is_empty());
    }

    #[test]
    fn sched_attr_is_ver1_sized() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 56);
    }
}
