//! A syzkaller-style fuzzer of sched_setattr(2): random `struct sched_attr` contents (size,
//! policy, flags, nice, priority, runtime, deadline, period, util clamps) and bad syscall
//! arguments (pid, pointer, flags), in two parts.
//!
//! - Deterministic: `--deterministic-calls` calls on the calling thread alone, from
//!   `--seed`, before anything else runs. Each call starts from the same state (SCHED_OTHER,
//!   nice 0, the base slice), so its answer depends only on the call; after an accepted call
//!   sched_getattr's read-back is checked against what 6.12's syscalls.c does with the attr
//!   (policy, nice, the slice clamped to [100 µs, 100 ms], priority, deadline parameters),
//!   after a refused one the state must be unchanged, and the thread is reset. A 64-bit
//!   FNV-1a digest over every call, its errno and its read-back is printed: the same seed
//!   on the same VM shape gives the same digest on a kernel whose fair class answers as
//!   stock's does, which is how the Rust core is compared with stock. `--dump-calls-file`
//!   writes one line per call to diff when the digests differ.
//! - Concurrent: for `--duration-s`, `--threads` fuzzing threads aim random calls at
//!   themselves, at running spinner threads, at spinners queued on one CPU, at sleepers on
//!   that CPU (tasks that just went to sleep are the delayed-dequeue entities), at child
//!   processes in a cgroup (cgroup2 only; one of them moves between two groups), and at
//!   short-lived children while they exit (ESRCH is a fair answer there). Meanwhile
//!   /sys/kernel/debug/sched/base_slice_ns (a plain u32 in 6.12: 0 and 4294967295 are its
//!   extremes; 2^32 is taken and truncated to 0, 2^64 is ERANGE, -1 EINVAL) cycles through
//!   those values and is restored at the end, on an error or a SIGTERM/SIGINT too.
//!
//! Safety of the guest: every task that may be made SCHED_FIFO, SCHED_RR or
//! SCHED_DEADLINE runs in bursts bounded by wall-clock time and then sleeps, so no real-time
//! busy loop can starve a CPU; RT throttling (sched_rt_runtime_us) is left as it is. Before
//! tasks are stopped they are reset to SCHED_OTHER, so that a deadline task with a tiny
//! runtime can finish.
//!
//! SCHED_DEADLINE goes only to the calling thread itself unless `--dl-leaks`, because 6.12
//! admits deadline bandwidth (`sched_dl_overflow()`) that it never gives back in three
//! cases the other targets hit: SCHED_DEADLINE with KEEP_PARAMS to a task that is not a
//! deadline task (the policy is not applied); SCHED_DEADLINE to a task that has died (a
//! zombie is never dequeued again); and a sleeping deadline task switched to another
//! policy after its 0-lag time (`switched_from_dl()` gives back only the runqueue's share).
//! Each leaks up to a CPU's worth until the next boot; over a long run they would refuse
//! every later deadline task and CPU offlining (EBUSY). A thread that switches itself is
//! running, so its bandwidth comes back. The admitted bandwidth is printed before and after.
//!
//! Exit status 1 when a task was lost (a thread or child that did not finish), a read-back
//! contradicted an accepted call, a refused call changed something, an errno outside what
//! 6.12's sched_setattr can return came back (EINVAL, E2BIG, EFAULT, ESRCH, EPERM, EBUSY,
//! EOPNOTSUPP, EACCES; and EFAULT only for a bad pointer, ESRCH only for a task that is
//! gone), or base_slice_ns or the cgroups could not be restored. Ends with one `@@json`
//! line (`"kind":"fuzz"`; not one of the lab's records).
use anyhow::{bail, Context, Result};
use clap::Parser;
use eevdf_guest::sys::{
    self, SchedAttr, SCHED_ATTR_SIZE, SCHED_BATCH, SCHED_DEADLINE, SCHED_EXT, SCHED_FIFO,
    SCHED_FLAG_DL_OVERRUN, SCHED_FLAG_KEEP_PARAMS, SCHED_FLAG_KEEP_POLICY, SCHED_FLAG_RECLAIM,
    SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_SUGOV, SCHED_FLAG_UTIL_CLAMP_MAX,
    SCHED_FLAG_UTIL_CLAMP_MIN, SCHED_IDLE, SCHED_OTHER, SCHED_RR,
};
use eevdf_guest::RESULT_PREFIX;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A syzkaller-style sched_setattr(2) fuzzer.
///
/// Deterministic part: --deterministic-calls random calls from --seed on this thread
/// alone, each read back with sched_getattr and checked against 6.12's rules; it prints a
/// digest that must equal the stock kernel's for the same seed, CPU count and config.
///
/// Concurrent part: for --duration-s, --threads fuzzing threads aim random calls at
/// themselves and at running, queued, sleeping (delayed), cgroup and exiting tasks while
/// base_slice_ns swings between its extremes (restored at the end). SCHED_DEADLINE goes
/// to other tasks only with --dl-leaks: stock 6.12 leaks deadline bandwidth there.
///
/// Exit status 1 on a lost task, a read-back that contradicts an accepted call, a refused
/// call that changed something, an errno 6.12 cannot return, or base_slice_ns or the
/// cgroups not restored. Ends with one `@@json` line. See Documentation/building.md.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Seed of every random choice. The deterministic part's digest is a function of the
    /// seed, the call count and the kernel's answers: compare kernels on the same seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Calls of the deterministic part (0 skips it). Each costs four system calls; the
    /// digest covers them all, so kernels compare only at the same count.
    #[arg(long, default_value_t = 10000)]
    deterministic_calls: u32,

    /// Write each deterministic call and its result to this file, one line each, to diff
    /// two kernels' runs when their digests differ.
    #[arg(long)]
    dump_calls_file: Option<PathBuf>,

    /// Length of the concurrent part, seconds (0 skips it). Longer finds rarer races;
    /// everything it starts is stopped and reaped after it.
    #[arg(long, default_value_t = 20)]
    duration_s: u64,

    /// Fuzzing threads of the concurrent part. Each paces itself to at most half a CPU, so
    /// more threads mean more concurrent calls, and more load on a small guest.
    #[arg(long, default_value_t = 2)]
    threads: u32,

    /// A fuzzing thread calls for this long, µs of wall-clock time, then sleeps as long
    /// (at most half a CPU). Longer bursts sleep less often: under single-threaded TCG each
    /// wakeup waits for the other vCPUs' turn, so a sleep per call would cap the rate.
    #[arg(long, default_value_t = 2000)]
    fuzz_burst_us: u64,

    /// Running targets: unpinned threads spinning in bursts (see --spin-burst-us).
    #[arg(long, default_value_t = 2)]
    running_tasks: u32,

    /// Queued targets: threads spinning in bursts, all pinned to the last CPU, so that
    /// some are queued behind others.
    #[arg(long, default_value_t = 3)]
    queued_tasks: u32,

    /// Sleeping targets: threads on the queued CPU that run for half a spinner burst and
    /// sleep half a spinner's sleep. Having run while others waited, they often sleep with
    /// negative lag, which makes them delayed-dequeue entities in 6.12's fair class until
    /// they are eligible again.
    #[arg(long, default_value_t = 2)]
    sleeping_tasks: u32,

    /// Cgroup targets: child processes (a spinner, a sleeper, ...) in two cgroups under
    /// --cgroup-root; none when it is not cgroup2.
    #[arg(long, default_value_t = 2)]
    cgroup_tasks: u32,

    /// Where cgroup2 is mounted; the fuzzer makes eevdf-fuzz.PID/{a,b} there and removes it.
    #[arg(long, default_value = "/sys/fs/cgroup")]
    cgroup_root: PathBuf,

    /// Fork short-lived children in a loop and aim calls at them while they exit.
    /// Forking a large process is slow under TCG and KASAN, so this is one thread.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    exiting_tasks: bool,

    /// A spinner's burst, µs of wall-clock time. Bursts bound how long a task made
    /// SCHED_FIFO can hold its CPU; longer bursts queue tasks more often.
    #[arg(long, default_value_t = 1000)]
    spin_burst_us: u64,

    /// A queued spinner's sleep between bursts, µs (randomised by ±50%; running spinners
    /// and sleepers sleep half of it). With the defaults the queued CPU's targets want 5/6
    /// of it: tasks queue there, yet it keeps idle time. Shorter sleeps can saturate it,
    /// and a saturated CPU starves its low-weight tasks (SCHED_IDLE: 3 against nice -20's
    /// 88761) for seconds; a preempted RCU reader among them stalls RCU.
    #[arg(long, default_value_t = 5000)]
    spin_sleep_us: u64,

    /// How long each base_slice_ns value holds, ms. Tasks take the new base slice at their
    /// next deadline, so very short holds mostly test the write itself.
    #[arg(long, default_value_t = 100)]
    base_slice_hold_ms: u64,

    /// Leave base_slice_ns alone.
    #[arg(long)]
    keep_base_slice: bool,

    /// Also send SCHED_DEADLINE to the other targets (and with KEEP_PARAMS), whose paths
    /// leak deadline bandwidth in 6.12 (see the description). More paths covered, but what
    /// leaks stays leaked until the next boot.
    #[arg(long)]
    dl_leaks: bool,

    /// How long stopping may take, seconds: a thread or child not finished by then is lost.
    #[arg(long, default_value_t = 60)]
    reap_timeout_s: u64,
}

/// Set by SIGTERM, SIGINT and SIGHUP: stop, clean up, restore, exit 1.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
    // SCHED_FLAG_DL_OVERRUN makes the kernel send SIGXCPU when a deadline task overruns,
    // whose default action would kill the fuzzer. Children inherit the disposition.
    // SAFETY: SIG_IGN is a valid disposition for SIGXCPU.
    unsafe { libc::signal(libc::SIGXCPU, libc::SIG_IGN) };
}

mod answers;
mod calls;
mod concurrent;
mod deterministic;
mod report;
#[cfg(test)]
mod tests;

use answers::*;
use calls::*;
use concurrent::*;
use deterministic::*;
use report::*;

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("eevdf-fuzz: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
