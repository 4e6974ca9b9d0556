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

// ---------------------------------------------------------------------------------------
// Random calls

/// splitmix64: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// One of `fixed`, or (with the same weight as one entry) `random(self)`.
    fn pick_or<T: Copy>(&mut self, fixed: &[T], random: impl FnOnce(&mut Self) -> T) -> T {
        let i = self.below(fixed.len() as u64 + 1) as usize;
        match fixed.get(i) {
            Some(&v) => v,
            None => random(self),
        }
    }
}

/// 6.12's `sysctl_sched_dl_period_max` default (2^22 µs), ns: the longest deadline period.
const DL_PERIOD_MAX_NS: u64 = 4_194_304_000;
/// The kernel's PAGE_SIZE on x86-64: the largest `size` sched_copy_attr() reads.
const KERNEL_PAGE: u32 = 4096;
/// A pid no task can have: above PID_MAX_LIMIT (2^22).
const ABSENT_PID: libc::pid_t = i32::MAX;

/// What the call's `pid` argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PidArg {
    /// The target (0 in the deterministic part: the calling thread).
    Target,
    /// The calling thread by its id (deterministic part only; the target otherwise).
    OwnTid,
    Minus1,
    IntMin,
    Absent,
}

/// Where the attr lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// At the start of a readable page: the kernel reads up to a page of it.
    Good,
    Null,
    /// On an inaccessible page: the kernel's first read faults.
    Unmapped,
    /// The last `n` bytes before an inaccessible page: reading `size` runs into it.
    Straddle(u16),
}

#[derive(Clone, Copy, Debug)]
struct Call {
    pid: PidArg,
    place: Place,
    /// The syscall's own `flags` argument (must be 0).
    sys_flags: u32,
    attr: SchedAttr,
    /// A non-zero byte at this offset past our 56-byte struct (the kernel wants zeroes up
    /// to `size`, or E2BIG).
    tail: Option<(u16, u8)>,
}

/// One random call. `dl_leaks` allows SCHED_DEADLINE with KEEP_PARAMS (see Args).
/// The deterministic part's digest depends on this function's every draw.
fn random_call(rng: &mut Rng, dl_leaks: bool) -> Call {
    let pid = match rng.below(48) {
        0 => PidArg::OwnTid,
        1 => PidArg::Minus1,
        2 => PidArg::IntMin,
        3 => PidArg::Absent,
        _ => PidArg::Target,
    };
    let place = match rng.below(64) {
        0 => Place::Null,
        1 => Place::Unmapped,
        2 => Place::Straddle(4),
        3 => Place::Straddle(24),
        4 => Place::Straddle(52),
        _ => Place::Good,
    };
    let sys_flags = if rng.chance(48) {
        rng.pick_or(&[1, 0x8000_0000], |r| r.next_u64() as u32)
    } else {
        0
    };
    let size = rng.pick_or(
        &[0, 1, 47, 48, 48, 56, 56, 56, 56, 56, 64, KERNEL_PAGE],
        |r| {
            if r.chance(4) {
                r.next_u64() as u32
            } else {
                r.below(u64::from(KERNEL_PAGE) + 100) as u32
            }
        },
    );
    let policy = rng.pick_or(
        &[
            SCHED_OTHER,
            SCHED_OTHER,
            SCHED_BATCH,
            SCHED_IDLE,
            SCHED_FIFO,
            SCHED_RR,
            SCHED_DEADLINE,
            SCHED_DEADLINE,
            SCHED_EXT,
            4,
            0x8000_0000,
        ],
        |r| r.next_u64() as u32,
    );
    let mut flags = 0;
    for bit in [
        SCHED_FLAG_RESET_ON_FORK,
        SCHED_FLAG_RECLAIM,
        SCHED_FLAG_DL_OVERRUN,
        SCHED_FLAG_KEEP_POLICY,
        SCHED_FLAG_KEEP_PARAMS,
        SCHED_FLAG_UTIL_CLAMP_MIN,
        SCHED_FLAG_UTIL_CLAMP_MAX,
    ] {
        if rng.chance(10) {
            flags |= bit;
        }
    }
    if rng.chance(40) {
        flags |= SCHED_FLAG_SUGOV;
    }
    if rng.chance(40) {
        flags = rng.next_u64();
    }
    if policy == SCHED_DEADLINE && flags & SCHED_FLAG_KEEP_POLICY == 0 && !dl_leaks {
        flags &= !SCHED_FLAG_KEEP_PARAMS;
    }
    let nice = rng.pick_or(
        &[-21, -20, -1, 0, 0, 0, 1, 10, 19, 20, i32::MIN, i32::MAX],
        |r| {
            if r.chance(2) {
                r.below(51) as i32 - 25
            } else {
                r.next_u64() as i32
            }
        },
    );
    let rt = policy == SCHED_FIFO || policy == SCHED_RR;
    let priority = if rt && !rng.chance(4) {
        rng.pick_or(&[1, 2, 50, 98, 99], |r| r.below(100) as u32)
    } else {
        rng.pick_or(&[0, 0, 0, 0, 0, 1, 99, 100], |r| r.next_u64() as u32)
    };
    let runtime = rng.pick_or(
        &[
            0,
            0,
            1,
            1023,
            1024,
            99_999,
            100_000,
            100_001,
            2_000_000,
            100_000_000,
            100_000_001,
            u64::MAX,
        ],
        |r| {
            if r.chance(3) {
                r.next_u64()
            } else {
                r.below(200_000_000)
            }
        },
    );
    let dl_time = |r: &mut Rng| {
        r.pick_or(
            &[
                0,
                1,
                1024,
                99_999,
                100_000,
                1_000_000,
                10_000_000,
                100_000_000,
                1_000_000_000,
                DL_PERIOD_MAX_NS,
                DL_PERIOD_MAX_NS + 1,
                1 << 63,
            ],
            |r| {
                if r.chance(3) {
                    r.next_u64()
                } else {
                    r.below(1_000_000_000)
                }
            },
        )
    };
    let deadline = dl_time(rng);
    let period = if rng.chance(3) { 0 } else { dl_time(rng) };
    let util = |r: &mut Rng| r.pick_or(&[0, 1, 512, 1024, 1025, u32::MAX], |r| r.next_u64() as u32);
    let util_min = util(rng);
    let util_max = util(rng);
    let tail = if size > SCHED_ATTR_SIZE && rng.chance(3) {
        let end = size.min(KERNEL_PAGE);
        let off = SCHED_ATTR_SIZE + rng.below(u64::from(end - SCHED_ATTR_SIZE)) as u32;
        Some((off as u16, 1 + rng.below(255) as u8))
    } else {
        None
    };
    Call {
        pid,
        place,
        sys_flags,
        attr: SchedAttr {
            size,
            sched_policy: policy,
            sched_flags: flags,
            sched_nice: nice,
            sched_priority: priority,
            sched_runtime: runtime,
            sched_deadline: deadline,
            sched_period: period,
            sched_util_min: util_min,
            sched_util_max: util_max,
        },
        tail,
    }
}

/// A random valid state to put the calling thread in before a call at itself, so that
/// calls meet every policy: SCHED_OTHER or SCHED_BATCH with a nice and a slice,
/// SCHED_IDLE, SCHED_FIFO or SCHED_RR with a priority, SCHED_DEADLINE with a small
/// bandwidth (admission may still answer EBUSY); reset_on_fork now and then.
fn random_prior(rng: &mut Rng) -> SchedAttr {
    let mut a = SchedAttr::new(SCHED_OTHER);
    match rng.below(8) {
        0..=3 => {
            a.sched_policy = if rng.chance(3) {
                SCHED_BATCH
            } else {
                SCHED_OTHER
            };
            a.sched_nice = rng.below(40) as i32 - 20;
            a.sched_runtime = rng.pick_or(&[0, 0, 100_000, 3_000_000, 100_000_000], |r| {
                r.below(200_000_000)
            });
        }
        4 => a.sched_policy = SCHED_IDLE,
        5 | 6 => {
            a.sched_policy = if rng.chance(2) { SCHED_FIFO } else { SCHED_RR };
            a.sched_priority = 1 + rng.below(99) as u32;
        }
        _ => {
            a.sched_policy = SCHED_DEADLINE;
            a.sched_runtime = rng.pick_or(&[100_000, 1_000_000], |r| 1024 + r.below(1_000_000));
            a.sched_deadline = rng.pick_or(&[10_000_000, 30_000_000], |r| {
                2_000_000 + r.below(50_000_000)
            });
            a.sched_period = if rng.chance(2) { 0 } else { 100_000_000 };
        }
    }
    if rng.chance(4) {
        a.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
    }
    a
}

/// Make `call` one that cannot make its target a deadline task: it goes to a task other
/// than the caller, which 6.12 may leave holding deadline bandwidth (see the description).
/// A target that never becomes a deadline task makes KEEP_POLICY harmless too.
fn no_deadline(rng: &mut Rng, call: &mut Call) {
    if call.attr.sched_policy == SCHED_DEADLINE {
        call.attr.sched_policy = rng
            .pick_or(&[SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR], |_| {
                SCHED_FIFO
            });
    }
}

/// `attr` as its 56 bytes in memory (x86-64 is little-endian; the struct has no padding).
fn attr_bytes(a: &SchedAttr) -> [u8; 56] {
    let mut b = [0u8; 56];
    let fields: [&[u8]; 10] = [
        &a.size.to_le_bytes(),
        &a.sched_policy.to_le_bytes(),
        &a.sched_flags.to_le_bytes(),
        &a.sched_nice.to_le_bytes(),
        &a.sched_priority.to_le_bytes(),
        &a.sched_runtime.to_le_bytes(),
        &a.sched_deadline.to_le_bytes(),
        &a.sched_period.to_le_bytes(),
        &a.sched_util_min.to_le_bytes(),
        &a.sched_util_max.to_le_bytes(),
    ];
    let mut at = 0;
    for f in fields {
        b[at..at + f.len()].copy_from_slice(f);
        at += f.len();
    }
    b
}

/// Two pages: a writable one the attr is placed in, then an inaccessible one.
///
/// # Invariants
///
/// `base` is the start of a private mapping of `2 * page` bytes that this value owns: the
/// first page readable and writable, the second PROT_NONE. No reference points into it.
struct Arena {
    base: *mut u8,
    page: usize,
}

impl Arena {
    fn new() -> io::Result<Self> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = usize::try_from(page)
            .unwrap_or(4096)
            .max(KERNEL_PAGE as usize);
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = base.cast::<u8>();
        // SAFETY: `base + page` is the second page of the mapping just made.
        let rc = unsafe { libc::mprotect(base.add(page).cast(), page, libc::PROT_NONE) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: `base` is the mapping of `2 * page` bytes made above, unused since.
            unsafe { libc::munmap(base.cast(), 2 * page) };
            return Err(e);
        }
        // INVARIANT: a fresh private mapping, first page RW, second PROT_NONE.
        Ok(Arena { base, page })
    }

    /// Write `bytes` at offset `at` of the writable page.
    fn write(&mut self, at: usize, bytes: &[u8]) {
        assert!(at + bytes.len() <= self.page, "write past the arena's page");
        // SAFETY: the range checked above lies in the writable first page (type
        // invariant), which no reference covers, and `bytes` is not in the arena.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(at), bytes.len()) };
    }

    /// Read 4 bytes at offset `at` of the writable page.
    fn read_u32(&self, at: usize) -> u32 {
        assert!(at + 4 <= self.page, "read past the arena's page");
        let mut b = [0u8; 4];
        // SAFETY: as in `write`; the source range lies in the readable first page.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(at), b.as_mut_ptr(), 4) };
        u32::from_le_bytes(b)
    }

    /// Run `call` against `pid`: place the attr, make the call, clear the page again.
    /// Returns the errno (0 on success) and, when the attr was in memory we can read, its
    /// `size` afterwards (the kernel writes its own size there on E2BIG).
    fn sched_setattr(&mut self, pid: libc::pid_t, call: &Call) -> (i32, Option<u32>) {
        let bytes = attr_bytes(&call.attr);
        let (at, len) = match call.place {
            Place::Good => (Some(0), bytes.len()),
            Place::Straddle(n) => (Some(self.page - usize::from(n)), usize::from(n).min(56)),
            Place::Null | Place::Unmapped => (None, 0),
        };
        if let Some(at) = at {
            self.write(at, &bytes[..len]);
        }
        let tail_at = match (call.place, call.tail) {
            (Place::Good, Some((off, byte))) => {
                self.write(usize::from(off), &[byte]);
                Some(usize::from(off))
            }
            _ => None,
        };
        let ptr = match (call.place, at) {
            (Place::Null, _) => std::ptr::null_mut(),
            // SAFETY: `base + page` is the start of the PROT_NONE page (type invariant).
            (Place::Unmapped, _) => unsafe { self.base.add(self.page) },
            // SAFETY: `at` < page, inside the writable page.
            (_, Some(at)) => unsafe { self.base.add(at) },
            (_, None) => std::ptr::null_mut(),
        };
        // SAFETY: `ptr` is NULL, the inaccessible page, or a place in the writable page
        // with at least 4 writable bytes before the inaccessible one (Straddle(n) has
        // n >= 4), covered by no reference (type invariant).
        let rc = unsafe { sys::sched_setattr_raw(pid, ptr, call.sys_flags) };
        let size_after = at.map(|at| self.read_u32(at));
        if let Some(at) = at {
            self.write(at, &[0u8; 56][..len]);
        }
        if let Some(t) = tail_at {
            self.write(t, &[0]);
        }
        let errno = match rc {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(-1),
        };
        (errno, size_after)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: `base` is our mapping of `2 * page` bytes (type invariant), unused after.
        unsafe { libc::munmap(self.base.cast(), 2 * self.page) };
    }
}

// ---------------------------------------------------------------------------------------
// Answers and what they must look like

fn errno_name(errno: i32) -> String {
    match errno {
        0 => "ok".into(),
        libc::EINVAL => "EINVAL".into(),
        libc::E2BIG => "E2BIG".into(),
        libc::EFAULT => "EFAULT".into(),
        libc::ESRCH => "ESRCH".into(),
        libc::EPERM => "EPERM".into(),
        libc::EBUSY => "EBUSY".into(),
        libc::EOPNOTSUPP => "EOPNOTSUPP".into(),
        libc::EACCES => "EACCES".into(),
        libc::ENOSYS => "ENOSYS".into(),
        libc::ERANGE => "ERANGE".into(),
        n => format!("errno{n}"),
    }
}

/// Whether 6.12's sched_setattr may answer `errno` to `call` (syscalls.c, deadline.c):
/// EINVAL (arguments, policy, flags, priority, deadline parameters, util clamps), E2BIG
/// (size), EPERM (capabilities, a deadline task's affinity), EBUSY (deadline admission),
/// EOPNOTSUPP (util clamps without CONFIG_UCLAMP_TASK), EACCES (an LSM, sched_ext);
/// EFAULT only for a pointer that faults, ESRCH only when the task may be gone.
fn errno_expected(errno: i32, call: &Call, target_may_be_gone: bool) -> bool {
    match errno {
        0
        | libc::EINVAL
        | libc::E2BIG
        | libc::EPERM
        | libc::EBUSY
        | libc::EOPNOTSUPP
        | libc::EACCES => true,
        libc::EFAULT => matches!(call.place, Place::Unmapped | Place::Straddle(_)),
        libc::ESRCH => call.pid == PidArg::Absent || target_may_be_gone,
        _ => false,
    }
}

fn fair_policy(p: u32) -> bool {
    p == SCHED_OTHER || p == SCHED_BATCH || p == SCHED_EXT
}

/// What sched_getattr must read back after `call` was accepted by a task whose state was
/// `prior` (its own read-back just before). `None` fields cannot be predicted: the slice
/// of a task without a custom slice follows base_slice_ns, which may change meanwhile.
#[derive(Debug, PartialEq)]
struct Expect {
    policy: u32,
    flags: u64,
    nice: Option<i32>,
    priority: u32,
    /// Allowed `sched_runtime` values (any when empty).
    runtime: Vec<u64>,
    dl: (u64, u64),
}

/// 6.12's sched_setattr() on an accepted `call` (sched_copy_attr, get_params,
/// __sched_setscheduler's no-change path, __setscheduler_params, sched_getattr).
///
/// `base`: the base slice, when it cannot change meanwhile and `prior` (if fair) has no
/// custom slice, so that its `sched_runtime` is that base slice (the deterministic part).
/// Without it, a slice that follows base_slice_ns is not predicted.
fn expect_after(call: &Call, prior: &SchedAttr, base: Option<u64>) -> Expect {
    let a = &call.attr;
    let nice = a.sched_nice.clamp(-20, 19);
    let keep_policy = a.sched_flags & SCHED_FLAG_KEEP_POLICY != 0;
    let keep_params = a.sched_flags & SCHED_FLAG_KEEP_PARAMS != 0;
    let rof = if keep_policy {
        prior.sched_flags & SCHED_FLAG_RESET_ON_FORK
    } else {
        a.sched_flags & SCHED_FLAG_RESET_ON_FORK
    };
    let prior_fair = fair_policy(prior.sched_policy) || prior.sched_policy == SCHED_IDLE;
    // An RT or deadline task's read-back runtime never follows the base slice.
    let prior_runtime = if base.is_some() || !prior_fair {
        vec![prior.sched_runtime]
    } else {
        Vec::new()
    };
    if keep_params {
        // get_params() copied the task's own parameters and __setscheduler_params() is
        // skipped: only reset_on_fork changes.
        return Expect {
            policy: prior.sched_policy,
            flags: (prior.sched_flags & !SCHED_FLAG_RESET_ON_FORK) | rof,
            nice: Some(prior.sched_nice),
            priority: prior.sched_priority,
            runtime: prior_runtime,
            dl: (prior.sched_deadline, prior.sched_period),
        };
    }
    let policy = if keep_policy {
        prior.sched_policy
    } else {
        a.sched_policy
    };
    match policy {
        p if fair_policy(p) => {
            // A custom slice, clamped; 0 gives the base slice back.
            let mut runtime = match (a.sched_runtime, base) {
                (0, Some(b)) => vec![b],
                (0, None) => Vec::new(),
                (r, _) => vec![sys::slice_clamp_ns(r)],
            };
            // The no-change path: with the same policy and nice, a runtime equal to the
            // task's current slice changes nothing, and that slice may be a base slice
            // outside the clamp (base_slice_ns 1, say). Without `base` the current slice
            // is unknown.
            if a.sched_runtime != 0
                && p == prior.sched_policy
                && nice == prior.sched_nice
                && base.is_none_or(|_| a.sched_runtime == prior.sched_runtime)
            {
                runtime.push(a.sched_runtime);
            }
            Expect {
                policy: p,
                flags: rof,
                nice: Some(nice),
                priority: 0,
                runtime,
                dl: (0, 0),
            }
        }
        // SCHED_IDLE is not fair_policy(): __setscheduler_params() keeps nice and slice.
        SCHED_IDLE => Expect {
            policy: SCHED_IDLE,
            flags: rof,
            nice: prior_fair.then_some(prior.sched_nice),
            priority: 0,
            runtime: if prior_fair {
                prior_runtime
            } else {
                Vec::new()
            },
            dl: (0, 0),
        },
        SCHED_FIFO | SCHED_RR => Expect {
            policy,
            flags: rof,
            nice: Some(0),
            priority: a.sched_priority,
            runtime: vec![0],
            dl: (0, 0),
        },
        SCHED_DEADLINE => Expect {
            policy,
            flags: rof | (a.sched_flags & (SCHED_FLAG_RECLAIM | SCHED_FLAG_DL_OVERRUN)),
            nice: Some(0),
            priority: a.sched_priority,
            runtime: vec![a.sched_runtime],
            dl: (
                a.sched_deadline,
                if a.sched_period == 0 {
                    a.sched_deadline
                } else {
                    a.sched_period
                },
            ),
        },
        // An invalid policy was accepted: nothing can match.
        p => Expect {
            policy: p,
            flags: u64::MAX,
            nice: None,
            priority: u32::MAX,
            runtime: Vec::new(),
            dl: (u64::MAX, u64::MAX),
        },
    }
}

/// Where `got` contradicts `want`, if anywhere.
fn contradiction(want: &Expect, got: &SchedAttr) -> Option<String> {
    let mut bad = Vec::new();
    if got.sched_policy != want.policy {
        bad.push(format!(
            "policy {} (want {})",
            got.sched_policy, want.policy
        ));
    }
    if got.sched_flags != want.flags {
        bad.push(format!(
            "flags {:#x} (want {:#x})",
            got.sched_flags, want.flags
        ));
    }
    if let Some(n) = want.nice {
        if got.sched_nice != n {
            bad.push(format!("nice {} (want {n})", got.sched_nice));
        }
    }
    if got.sched_priority != want.priority {
        bad.push(format!(
            "priority {} (want {})",
            got.sched_priority, want.priority
        ));
    }
    if !want.runtime.is_empty() && !want.runtime.contains(&got.sched_runtime) {
        bad.push(format!(
            "runtime {} (want {:?})",
            got.sched_runtime, want.runtime
        ));
    }
    if (got.sched_deadline, got.sched_period) != want.dl {
        bad.push(format!(
            "deadline/period {}/{} (want {}/{})",
            got.sched_deadline, got.sched_period, want.dl.0, want.dl.1
        ));
    }
    (!bad.is_empty()).then(|| bad.join(", "))
}

/// Where a refused call left the task different from `prior`, if anywhere. With
/// `stable_slice` (no base_slice_ns write can happen) the slice must not move either;
/// uclamp values are not compared (they are not modelled).
fn changed_by_refusal(prior: &SchedAttr, got: &SchedAttr, stable_slice: bool) -> Option<String> {
    let key = |a: &SchedAttr| {
        (
            a.sched_policy,
            a.sched_flags,
            a.sched_nice,
            a.sched_priority,
            a.sched_deadline,
            a.sched_period,
        )
    };
    let runtime_moved = stable_slice && prior.sched_runtime != got.sched_runtime;
    (key(prior) != key(got) || runtime_moved).then(|| format!("before {prior:?}, after {got:?}"))
}

/// Counts of answers, and the problems found.
#[derive(Default)]
struct Tally {
    /// (target kind, errno name) -> calls.
    counts: BTreeMap<(String, String), u64>,
    calls: u64,
    /// Wall time inside sched_setattr, ns: the sum, and the longest call with what it was.
    call_ns: u64,
    slowest: (u64, String),
    /// The calling threads' time on a CPU and waiting on a runqueue, ns (schedstat).
    run_ns: u64,
    wait_ns: u64,
    contradictions: u64,
    unexpected: u64,
    /// The first few problems, for the report.
    notes: Vec<String>,
}

impl Tally {
    fn count(&mut self, kind: &str, errno: i32) {
        self.calls += 1;
        *self
            .counts
            .entry((kind.to_string(), errno_name(errno)))
            .or_default() += 1;
    }

    /// Account one call's wall time, `what` describing it.
    fn timed(&mut self, ns: u64, what: impl FnOnce() -> String) {
        self.call_ns += ns;
        if ns > self.slowest.0 {
            self.slowest = (ns, what());
        }
    }

    /// Add the calling thread's schedstat (CPU time, runqueue wait).
    fn own_schedstat(&mut self) {
        if let Ok((run, wait)) = sys::own_schedstat_ns() {
            self.run_ns += run;
            self.wait_ns += wait;
        }
    }

    fn note(&mut self, what: String) {
        if self.notes.len() < 20 {
            self.notes.push(what);
        }
    }

    fn merge(&mut self, o: Tally) {
        for (k, v) in o.counts {
            *self.counts.entry(k).or_default() += v;
        }
        self.calls += o.calls;
        self.call_ns += o.call_ns;
        if o.slowest.0 > self.slowest.0 {
            self.slowest = o.slowest;
        }
        self.run_ns += o.run_ns;
        self.wait_ns += o.wait_ns;
        self.contradictions += o.contradictions;
        self.unexpected += o.unexpected;
        for n in o.notes {
            self.note(n);
        }
    }

    fn by_errno(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for ((_, e), v) in &self.counts {
            *m.entry(e.clone()).or_default() += v;
        }
        m
    }
}

// ---------------------------------------------------------------------------------------
// The deterministic part

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn fmt_attr(a: &SchedAttr) -> String {
    format!(
        "size={} policy={} flags={:#x} nice={} prio={} runtime={} deadline={} period={} \
         umin={} umax={}",
        a.size,
        a.sched_policy,
        a.sched_flags,
        a.sched_nice,
        a.sched_priority,
        a.sched_runtime,
        a.sched_deadline,
        a.sched_period,
        a.sched_util_min,
        a.sched_util_max
    )
}

/// Give the calling thread the deterministic part's starting state: SCHED_OTHER, nice 0,
/// the base slice, no reset_on_fork, and (`uclamp`) default util clamps.
fn reset_self(uclamp: bool) -> io::Result<()> {
    let mut a = SchedAttr::new(SCHED_OTHER);
    if uclamp {
        a.sched_flags = SCHED_FLAG_UTIL_CLAMP_MIN | SCHED_FLAG_UTIL_CLAMP_MAX;
        a.sched_util_min = u32::MAX; // -1: back to the default, not user-defined
        a.sched_util_max = u32::MAX;
    }
    sys::sched_setattr(0, &mut a, 0)
}

struct Deterministic {
    tally: Tally,
    accepted: u64,
    digest: u64,
    baseline: SchedAttr,
    uclamp: bool,
    seconds: f64,
    /// Calls made (fewer than asked when a signal stopped the run).
    calls: u32,
}

fn deterministic(args: &Args) -> Result<Deterministic> {
    let mut dump = match &args.dump_calls_file {
        Some(p) => Some(io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    let uclamp = match reset_self(true) {
        Ok(()) => true,
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => false,
        Err(e) => return Err(e).context("resetting this thread to SCHED_OTHER nice 0"),
    };
    reset_self(uclamp).context("resetting this thread to SCHED_OTHER nice 0")?;
    let baseline = sys::getattr(0).context("sched_getattr of this thread")?;
    let mut h = Fnv::new();
    h.bytes(&attr_bytes(&baseline));
    if let Some(d) = dump.as_mut() {
        writeln!(d, "baseline {} uclamp={uclamp}", fmt_attr(&baseline))?;
    }
    let tid = sys::gettid();
    let mut rng = Rng::new(args.seed);
    let mut arena = Arena::new().context("mapping the attr pages")?;
    let mut r = Deterministic {
        tally: Tally::default(),
        accepted: 0,
        digest: 0,
        baseline,
        uclamp,
        seconds: 0.0,
        calls: 0,
    };
    let t0 = sys::now_ns();
    for i in 0..args.deterministic_calls {
        if SIGNALLED.load(Ordering::SeqCst) {
            break;
        }
        let call = random_call(&mut rng, args.dl_leaks);
        let pid = match call.pid {
            PidArg::Target => 0,
            PidArg::OwnTid => tid,
            PidArg::Minus1 => -1,
            PidArg::IntMin => i32::MIN,
            PidArg::Absent => ABSENT_PID,
        };
        let (errno, size_after) = arena.sched_setattr(pid, &call);
        let got = sys::getattr(0).context("sched_getattr of this thread")?;
        r.tally.count("self", errno);
        r.calls = i + 1;
        if !errno_expected(errno, &call, false) {
            r.tally.unexpected += 1;
            r.tally.note(format!(
                "deterministic call {i}: unexpected {} for {}",
                errno_name(errno),
                fmt_attr(&call.attr)
            ));
        }
        let problem = if errno == 0 {
            r.accepted += 1;
            contradiction(
                &expect_after(&call, &baseline, Some(baseline.sched_runtime)),
                &got,
            )
        } else {
            changed_by_refusal(&baseline, &got, true)
        };
        if let Some(p) = problem {
            r.tally.contradictions += 1;
            r.tally.note(format!(
                "deterministic call {i} ({}) {}: {p}",
                fmt_attr(&call.attr),
                errno_name(errno)
            ));
        }
        h.bytes(&i.to_le_bytes());
        h.bytes(&[call.pid as u8, place_code(call.place)]);
        h.bytes(&call.sys_flags.to_le_bytes());
        h.bytes(&attr_bytes(&call.attr));
        let (toff, tbyte) = call.tail.unwrap_or((0, 0));
        h.bytes(&toff.to_le_bytes());
        h.bytes(&[tbyte]);
        h.bytes(&errno.to_le_bytes());
        h.bytes(&size_after.unwrap_or(u32::MAX).to_le_bytes());
        h.bytes(&attr_bytes(&got));
        if let Some(d) = dump.as_mut() {
            writeln!(
                d,
                "{i} pid={:?} place={:?} sys_flags={:#x} tail={:?} {} -> {} size_after={} | {}",
                call.pid,
                call.place,
                call.sys_flags,
                call.tail,
                fmt_attr(&call.attr),
                errno_name(errno),
                size_after.map_or("-".into(), |s| s.to_string()),
                fmt_attr(&got)
            )?;
        }
        if errno == 0 {
            reset_self(uclamp).context("resetting this thread after an accepted call")?;
            let back = sys::getattr(0).context("sched_getattr of this thread")?;
            if back != baseline {
                r.tally.contradictions += 1;
                r.tally.note(format!(
                    "deterministic call {i}: the reset left {} instead of {}",
                    fmt_attr(&back),
                    fmt_attr(&baseline)
                ));
            }
        }
    }
    r.seconds = sys::now_ns().saturating_sub(t0) as f64 / 1e9;
    r.digest = h.0;
    if let Some(mut d) = dump {
        writeln!(d, "digest {:#018x}", r.digest)?;
        d.flush()?;
    }
    Ok(r)
}

fn place_code(p: Place) -> u8 {
    match p {
        Place::Good => 0,
        Place::Null => 1,
        Place::Unmapped => 2,
        Place::Straddle(n) => 3u8.wrapping_add(n as u8),
    }
}

// ---------------------------------------------------------------------------------------
// The concurrent part

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Running,
    Queued,
    Sleeping,
    Cgroup,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Running => "running",
            Kind::Queued => "queued",
            Kind::Sleeping => "sleeping",
            Kind::Cgroup => "cgroup",
        }
    }
}

/// A task the fuzzing threads aim at.
struct Target {
    kind: Kind,
    /// Its thread or process id; 0 until it runs.
    tid: AtomicI32,
    /// Cleared (by the task, or by main before it kills a child) before the task ends; an
    /// ESRCH while it is still set is a lost task.
    alive: AtomicBool,
    /// The task's CPU time when it ended, ns (threads only).
    cpu_ns: AtomicU64,
}

struct Shared {
    stop: AtomicBool,
    targets: Vec<Target>,
    /// The exiting child the forker is working on (0: none), for main to reap if the
    /// forker does not finish.
    exiting_child: AtomicI32,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || SIGNALLED.load(Ordering::SeqCst)
    }
}

fn sleep_ns(ns: u64) {
    std::thread::sleep(Duration::from_nanos(ns));
}

fn spin_ns(ns: u64) {
    let end = sys::now_ns().saturating_add(ns);
    while sys::now_ns() < end {
        std::hint::spin_loop();
    }
}

/// A target thread: spin `burst_ns`, sleep about `sleep_ns`, until told to stop.
fn target_thread(sh: Arc<Shared>, idx: usize, pin: Option<u32>, burst_ns: u64, pause_ns: u64) {
    let t = &sh.targets[idx];
    if let Some(cpu) = pin {
        // Without the pin it is still a target, only not a queued one.
        let _ = sys::pin_to_cpu(0, cpu);
    }
    t.tid.store(sys::gettid(), Ordering::SeqCst);
    t.alive.store(true, Ordering::SeqCst);
    let mut rng = Rng::new(idx as u64 ^ sys::now_ns());
    while !sh.stopping() {
        spin_ns(burst_ns);
        sleep_ns(pause_ns / 2 + rng.below(pause_ns.max(1)));
    }
    t.alive.store(false, Ordering::SeqCst);
    if let Ok((run, _)) = sys::own_schedstat_ns() {
        t.cpu_ns.store(run, Ordering::SeqCst);
    }
}

/// A fuzzing thread: random calls at itself and at the targets, paced to half a CPU.
fn fuzz_thread(sh: Arc<Shared>, seed: u64, dl_leaks: bool, burst_ns: u64) -> Tally {
    let mut tally = Tally::default();
    let mut arena = match Arena::new() {
        Ok(a) => a,
        Err(e) => {
            tally.unexpected += 1;
            tally.note(format!("fuzzing thread: mapping the attr pages: {e}"));
            return tally;
        }
    };
    let mut rng = Rng::new(seed);
    let me = sys::gettid();
    let mut busy_from = sys::now_ns();
    while !sh.stopping() {
        let mut call = random_call(&mut rng, dl_leaks);
        // A quarter of the calls at itself, the rest at a target.
        let target = if rng.chance(4) || sh.targets.is_empty() {
            None
        } else {
            let t = &sh.targets[rng.below(sh.targets.len() as u64) as usize];
            match t.tid.load(Ordering::SeqCst) {
                0 => {
                    // Not started yet.
                    sleep_ns(1_000_000);
                    continue;
                }
                tid => Some((t, tid)),
            }
        };
        if target.is_some() && !dl_leaks {
            no_deadline(&mut rng, &mut call);
        }
        let pid = match (call.pid, target) {
            (PidArg::Minus1, _) => -1,
            (PidArg::IntMin, _) => i32::MIN,
            (PidArg::Absent, _) => ABSENT_PID,
            (_, Some((_, tid))) => tid,
            (PidArg::OwnTid, None) => me,
            (PidArg::Target, None) => 0,
        };
        // At itself: from a random valid state, reset afterwards, so that the thread
        // is never left SCHED_IDLE, at nice 19 or with a tiny deadline runtime.
        let prior = if target.is_none() {
            let _ = sys::sched_setattr(0, &mut random_prior(&mut rng), 0);
            sys::getattr(0).ok()
        } else {
            None
        };
        let (t0, sw0) = (sys::now_ns(), sys::thread_ctxsw());
        let (errno, _) = arena.sched_setattr(pid, &call);
        let (t1, sw1) = (sys::now_ns(), sys::thread_ctxsw());
        let kind = target.map_or("self", |(t, _)| t.kind.name());
        tally.count(kind, errno);
        tally.timed(t1.saturating_sub(t0), || {
            format!(
                "{kind} {}, blocked {} and preempted {} times in it: {}",
                errno_name(errno),
                sw1.0.saturating_sub(sw0.0),
                sw1.1.saturating_sub(sw0.1),
                fmt_attr(&call.attr)
            )
        });
        let gone = target.is_some_and(|(t, _)| !t.alive.load(Ordering::SeqCst));
        if !errno_expected(errno, &call, gone) {
            tally.unexpected += 1;
            tally.note(format!(
                "{kind} (pid {pid}): unexpected {} for {}",
                errno_name(errno),
                fmt_attr(&call.attr)
            ));
        }
        // Nobody but this thread (and main, after stop) changes this thread: its read-back
        // is checked. The base slice may change meanwhile, so a slice that follows it is not.
        if let (None, Some(prior)) = (target, prior) {
            if let Ok(got) = sys::getattr(0) {
                let problem = if errno == 0 {
                    contradiction(&expect_after(&call, &prior, None), &got)
                } else {
                    changed_by_refusal(&prior, &got, false)
                };
                if let Some(p) = problem {
                    if !sh.stopping() {
                        tally.contradictions += 1;
                        tally.note(format!(
                            "self from {} ({}) {}: {p}",
                            fmt_attr(&prior),
                            fmt_attr(&call.attr),
                            errno_name(errno)
                        ));
                    }
                }
            }
            let _ = sys::set_slice(0, SCHED_OTHER, 0);
        }
        let busy = sys::now_ns().saturating_sub(busy_from);
        if busy >= burst_ns {
            sleep_ns(busy);
            busy_from = sys::now_ns();
        }
    }
    tally.own_schedstat();
    tally
}

/// What the forker did.
#[derive(Default)]
struct ForkerResult {
    tally: Tally,
    forked: u64,
    reaped: u64,
    fork_errors: u64,
}

/// Fork short-lived children and aim calls at each while it exits; reap each one.
fn forker_thread(sh: Arc<Shared>, seed: u64, dl_leaks: bool) -> ForkerResult {
    let mut r = ForkerResult::default();
    let mut arena = match Arena::new() {
        Ok(a) => a,
        Err(e) => {
            r.tally.unexpected += 1;
            r.tally.note(format!("forker: mapping the attr pages: {e}"));
            return r;
        }
    };
    let mut rng = Rng::new(seed);
    while !sh.stopping() {
        let pid = match sys::fork_spin_exit(rng.below(300_000)) {
            Ok(p) => p,
            Err(_) => {
                // EAGAIN under memory pressure: not the kernel's answer under test.
                r.fork_errors += 1;
                sleep_ns(10_000_000);
                continue;
            }
        };
        sh.exiting_child.store(pid, Ordering::SeqCst);
        r.forked += 1;
        for _ in 0..1 + rng.below(3) {
            let mut call = random_call(&mut rng, dl_leaks);
            if !dl_leaks {
                no_deadline(&mut rng, &mut call);
            }
            let target = match call.pid {
                PidArg::Minus1 => -1,
                PidArg::IntMin => i32::MIN,
                PidArg::Absent => ABSENT_PID,
                PidArg::Target | PidArg::OwnTid => pid,
            };
            let (t0, sw0) = (sys::now_ns(), sys::thread_ctxsw());
            let (errno, _) = arena.sched_setattr(target, &call);
            let (t1, sw1) = (sys::now_ns(), sys::thread_ctxsw());
            r.tally.count("exiting", errno);
            r.tally.timed(t1.saturating_sub(t0), || {
                format!(
                    "exiting {}, blocked {} and preempted {} times in it: {}",
                    errno_name(errno),
                    sw1.0.saturating_sub(sw0.0),
                    sw1.1.saturating_sub(sw0.1),
                    fmt_attr(&call.attr)
                )
            });
            if !errno_expected(errno, &call, true) {
                r.tally.unexpected += 1;
                r.tally.note(format!(
                    "exiting (pid {pid}): unexpected {} for {}",
                    errno_name(errno),
                    fmt_attr(&call.attr)
                ));
            }
        }
        // A deadline child with a tiny runtime would take ages to exit: make it fair.
        let _ = sys::set_slice(pid, SCHED_OTHER, 0);
        if sys::wait_pid(pid, true).is_some() {
            r.reaped += 1;
        }
        sh.exiting_child.store(0, Ordering::SeqCst);
    }
    r.tally.own_schedstat();
    r
}

/// The base_slice_ns values written, in order: the extremes of a u32 and what lies outside.
const BASE_SLICE_WRITES: [&str; 9] = [
    "0",
    "1",
    "100000",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "ORIGINAL",
];

/// What writing one value to base_slice_ns did, over all its writes.
#[derive(Clone, Debug, Default, Serialize)]
struct SliceWrite {
    writes: u64,
    /// errno name (or "ok") -> count.
    results: BTreeMap<String, u64>,
    /// What the file read back after the last write.
    readback: Option<u64>,
}

/// The value 6.12's debugfs u32 file keeps for `word` (kstrtoull base 0, then a u32
/// store), or `None` when the write must fail.
fn base_slice_kept(word: &str) -> Option<u64> {
    let v = word.parse::<u64>().ok()?;
    Some(v & 0xffff_ffff)
}

fn write_word(path: &str, word: &str) -> io::Result<()> {
    // One write(2), as `echo word >path` does (O_TRUNC, which debugfs ignores).
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?
        .write_all(word.as_bytes())
}

/// Restores base_slice_ns when dropped: at the end, on an error, on a panic.
struct BaseSliceGuard {
    original: u64,
    restored: bool,
}

impl BaseSliceGuard {
    fn restore(&mut self) -> io::Result<()> {
        write_word(sys::BASE_SLICE_PATH, &self.original.to_string())?;
        let now = sys::base_slice_ns()?;
        if now != self.original {
            return Err(io::Error::other(format!(
                "base_slice_ns reads {now} after restoring {}",
                self.original
            )));
        }
        self.restored = true;
        Ok(())
    }
}

impl Drop for BaseSliceGuard {
    fn drop(&mut self) {
        if !self.restored {
            if let Err(e) = self.restore() {
                eprintln!("eevdf-fuzz: could not restore base_slice_ns: {e}");
            }
        }
    }
}

/// sched_eevdf's runqueue snapshot (patched kernels only); its `D` column marks a
/// delayed-dequeue entity.
const TIMELINE_PATH: &str = "/sys/kernel/debug/sched/eevdf/timeline";

/// The task rows of a timeline snapshot: pid and state, `running`, `queued` or `delayed`
/// (a queued row whose `D` column is `y`).
fn task_states(timeline: &str) -> Vec<(libc::pid_t, &'static str)> {
    timeline
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let pid = f.get(1)?.parse().ok()?;
            match (f.first(), f.get(8)) {
                (_, Some(&"y")) => Some((pid, "delayed")),
                (Some(&"R"), Some(_)) => Some((pid, "running")),
                (Some(&"Q"), Some(_)) => Some((pid, "queued")),
                _ => None,
            }
        })
        .collect()
}

struct SlicerResult {
    /// Timeline snapshots read, and target kind -> state -> times one of its tasks was
    /// in that state in one (no snapshots on a stock kernel).
    timeline_samples: u64,
    states_seen: BTreeMap<String, BTreeMap<String, u64>>,
    writes: BTreeMap<String, SliceWrite>,
    contradictions: u64,
    notes: Vec<String>,
    cgroup_moves: u64,
    cgroup_move_errors: u64,
}

/// Cycle base_slice_ns through [`BASE_SLICE_WRITES`] (unless `original` is None) and move
/// the first cgroup target between the two groups, every `hold_ns`.
fn slicer_thread(
    sh: Arc<Shared>,
    original: Option<u64>,
    hold_ns: u64,
    cgroups: Option<[PathBuf; 2]>,
) -> SlicerResult {
    let mut r = SlicerResult {
        timeline_samples: 0,
        states_seen: BTreeMap::new(),
        writes: BTreeMap::new(),
        contradictions: 0,
        notes: Vec::new(),
        cgroup_moves: 0,
        cgroup_move_errors: 0,
    };
    let mover = sh.targets.iter().find(|t| t.kind == Kind::Cgroup);
    let mut step = 0usize;
    while !sh.stopping() {
        if let Some(orig) = original {
            let word = BASE_SLICE_WRITES[step % BASE_SLICE_WRITES.len()];
            let text = if word == "ORIGINAL" {
                orig.to_string()
            } else {
                word.to_string()
            };
            let before = sys::base_slice_ns().ok();
            let res = write_word(sys::BASE_SLICE_PATH, &text);
            let after = sys::base_slice_ns().ok();
            let w = r.writes.entry(word.to_string()).or_default();
            w.writes += 1;
            let name = match &res {
                Ok(()) => "ok".to_string(),
                Err(e) => errno_name(e.raw_os_error().unwrap_or(-1)),
            };
            *w.results.entry(name).or_default() += 1;
            w.readback = after;
            let want = match (&res, base_slice_kept(&text)) {
                (Ok(()), Some(v)) => Some(v),
                (Err(_), None) => before,
                _ => None, // taken when it should fail, or the reverse
            };
            if after.is_none() || want != after {
                r.contradictions += 1;
                if r.notes.len() < 10 {
                    r.notes.push(format!(
                        "base_slice_ns: writing {text:?} gave {res:?}, reads {after:?}, \
                         want {want:?}"
                    ));
                }
            }
        }
        if let (Some(t), Some(groups)) = (mover, cgroups.as_ref()) {
            let pid = t.tid.load(Ordering::SeqCst);
            if pid != 0 && t.alive.load(Ordering::SeqCst) {
                let to = groups[step % 2].join("cgroup.procs");
                match std::fs::write(&to, pid.to_string()) {
                    Ok(()) => r.cgroup_moves += 1,
                    Err(_) => r.cgroup_move_errors += 1,
                }
            }
        }
        if let Ok(t) = std::fs::read_to_string(TIMELINE_PATH) {
            r.timeline_samples += 1;
            for (pid, state) in task_states(&t) {
                if let Some(k) = sh
                    .targets
                    .iter()
                    .find(|x| x.tid.load(Ordering::SeqCst) == pid)
                {
                    *r.states_seen
                        .entry(k.kind.name().to_string())
                        .or_default()
                        .entry(state.to_string())
                        .or_default() += 1;
                }
            }
        }
        step += 1;
        sleep_ns(hold_ns);
    }
    r
}

/// The two cgroups the cgroup targets live in, under `root`/eevdf-fuzz.PID.
struct Cgroups {
    dir: PathBuf,
    groups: [PathBuf; 2],
    /// Whether the cpu controller is enabled in them (group scheduling).
    cpu: bool,
}

fn make_cgroups(root: &Path) -> Result<Cgroups, String> {
    if !root.join("cgroup.controllers").exists() {
        return Err(format!("no cgroup2 at {}", root.display()));
    }
    let dir = root.join(format!("eevdf-fuzz.{}", std::process::id()));
    // Without the cpu controller the groups still hold tasks, only not as entities.
    let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
    std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    let cpu = std::fs::write(dir.join("cgroup.subtree_control"), "+cpu").is_ok();
    let groups = [dir.join("a"), dir.join("b")];
    for g in &groups {
        if let Err(e) = std::fs::create_dir(g) {
            let _ = std::fs::remove_dir(&groups[0]);
            let _ = std::fs::remove_dir(&dir);
            return Err(format!("mkdir {}: {e}", g.display()));
        }
    }
    Ok(Cgroups { dir, groups, cpu })
}

/// Remove the cgroups (their tasks are reaped by now); the error names what is left.
fn remove_cgroups(c: &Cgroups) -> Result<(), String> {
    let mut last = Ok(());
    for _ in 0..50 {
        last = c
            .groups
            .iter()
            .chain(std::iter::once(&c.dir))
            .filter(|p| p.exists())
            .try_for_each(|p| std::fs::remove_dir(p).map_err(|e| format!("{}: {e}", p.display())));
        if last.is_ok() {
            break;
        }
        sleep_ns(100_000_000);
    }
    last
}

/// The first `dl_bw->total_bw` in /proc/sched_debug's successor (the root domain's
/// admitted deadline bandwidth, 2^20 = one CPU), if debugfs shows it.
fn dl_total_bw() -> Option<u64> {
    let s = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    s.lines()
        .find_map(|l| l.trim().strip_prefix(".dl_bw->total_bw"))
        .and_then(|v| v.trim().trim_start_matches(':').trim().parse().ok())
}

/// Wait until `done()` or the deadline, calling `nudge()` every 100 ms; whether done.
fn wait_until(deadline_ns: u64, mut nudge: impl FnMut(), mut done: impl FnMut() -> bool) -> bool {
    loop {
        if done() {
            return true;
        }
        if sys::now_ns() >= deadline_ns {
            return false;
        }
        nudge();
        sleep_ns(100_000_000);
    }
}

/// Everything the concurrent part measured.
struct Concurrent {
    tally: Tally,
    seconds: f64,
    tasks_created: u64,
    tasks_lost: u64,
    lost: Vec<String>,
    exiting: ForkerResult,
    slicer: Option<SlicerResult>,
    base_slice: Option<(u64, bool)>,
    cgroup: Result<bool, String>,
    cgroup_removed: Result<(), String>,
    cpu_ns: BTreeMap<String, u64>,
    starved: u64,
}

fn concurrent(args: &Args) -> Result<Concurrent> {
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let queued_cpu = ncpu.saturating_sub(1);
    let burst_ns = args.spin_burst_us.saturating_mul(1000);
    let pause_ns = args.spin_sleep_us.saturating_mul(1000);

    // The base slice, restored by the guard whatever happens from here on.
    let mut guard = if args.keep_base_slice {
        None
    } else {
        sys::base_slice_ns().ok().map(|original| BaseSliceGuard {
            original,
            restored: false,
        })
    };

    let mut cg = if args.cgroup_tasks > 0 {
        make_cgroups(&args.cgroup_root)
    } else {
        Err("--cgroup-tasks 0".into())
    };

    let mut targets = Vec::new();
    let mut add = |kind, n| {
        for _ in 0..n {
            targets.push(Target {
                kind,
                tid: AtomicI32::new(0),
                alive: AtomicBool::new(false),
                cpu_ns: AtomicU64::new(0),
            });
        }
    };
    add(Kind::Running, args.running_tasks);
    add(Kind::Queued, args.queued_tasks);
    add(Kind::Sleeping, args.sleeping_tasks);
    let n_cgroup = if cg.is_ok() { args.cgroup_tasks } else { 0 };
    add(Kind::Cgroup, n_cgroup);
    let sh = Arc::new(Shared {
        stop: AtomicBool::new(false),
        targets,
        exiting_child: AtomicI32::new(0),
    });
    let mut tasks_created = 0u64;

    // The cgroup targets are processes (a thread cannot leave its process's cgroup
    // without threaded mode); forked now, while this process has one thread.
    let mut children = Vec::new();
    if let Ok(c) = &cg {
        for (i, t) in sh
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == Kind::Cgroup)
        {
            let (burst, sleep) = if i % 2 == 0 {
                (burst_ns, pause_ns)
            } else {
                (burst_ns / 10, pause_ns)
            };
            let pid = match sys::fork_child(move || loop {
                spin_ns(burst);
                sleep_ns(sleep);
            }) {
                Ok(p) => p,
                Err(e) => {
                    for &p in &children {
                        sys::kill(p, libc::SIGKILL);
                        sys::wait_pid(p, true);
                    }
                    return Err(e).context("forking a cgroup target");
                }
            };
            tasks_created += 1;
            children.push(pid);
            t.tid.store(pid, Ordering::SeqCst);
            t.alive.store(true, Ordering::SeqCst);
            let g = &c.groups[children.len() % 2];
            if let Err(e) = std::fs::write(g.join("cgroup.procs"), pid.to_string()) {
                eprintln!("eevdf-fuzz: moving {pid} to {}: {e}", g.display());
            }
        }
    }

    let t0 = sys::now_ns();
    let mut targets_h: Vec<(usize, JoinHandle<()>)> = Vec::new();
    for (i, t) in sh.targets.iter().enumerate() {
        let (pin, burst, sleep) = match t.kind {
            Kind::Running => (None, burst_ns, pause_ns / 2 + 1),
            Kind::Queued => (Some(queued_cpu), burst_ns, pause_ns),
            Kind::Sleeping => (Some(queued_cpu), burst_ns / 2, pause_ns / 2 + 1),
            Kind::Cgroup => continue,
        };
        let s = Arc::clone(&sh);
        let h = std::thread::Builder::new()
            .name(format!("fuzz-{}", t.kind.name()))
            .spawn(move || target_thread(s, i, pin, burst, sleep))
            .context("spawning a target thread")?;
        tasks_created += 1;
        targets_h.push((i, h));
    }
    let mut fuzzers = Vec::new();
    let mut fuzzer_tids = Vec::new();
    for i in 0..args.threads {
        let s = Arc::clone(&sh);
        let seed = args.seed ^ (u64::from(i) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let tid = Arc::new(AtomicI32::new(0));
        let tid2 = Arc::clone(&tid);
        let dl = args.dl_leaks;
        let burst = args.fuzz_burst_us.saturating_mul(1000);
        let h = std::thread::Builder::new()
            .name("fuzz".into())
            .spawn(move || {
                tid2.store(sys::gettid(), Ordering::SeqCst);
                fuzz_thread(s, seed, dl, burst)
            })
            .context("spawning a fuzzing thread")?;
        tasks_created += 1;
        fuzzers.push(h);
        fuzzer_tids.push(tid);
    }
    let forker = if args.exiting_tasks {
        let s = Arc::clone(&sh);
        let seed = args.seed ^ 0xf0f0_f0f0_f0f0_f0f0;
        let dl = args.dl_leaks;
        tasks_created += 1;
        Some(
            std::thread::Builder::new()
                .name("fuzz-forker".into())
                .spawn(move || forker_thread(s, seed, dl))
                .context("spawning the forker")?,
        )
    } else {
        None
    };
    let slicer = if guard.is_some() || n_cgroup > 0 || Path::new(TIMELINE_PATH).exists() {
        let s = Arc::clone(&sh);
        let original = guard.as_ref().map(|g| g.original);
        let hold = args.base_slice_hold_ms.max(1).saturating_mul(1_000_000);
        let groups = cg.as_ref().ok().map(|c| c.groups.clone());
        tasks_created += 1;
        Some(
            std::thread::Builder::new()
                .name("fuzz-slicer".into())
                .spawn(move || slicer_thread(s, original, hold, groups))
                .context("spawning the base_slice_ns writer")?,
        )
    } else {
        None
    };

    let end = t0.saturating_add(args.duration_s.saturating_mul(1_000_000_000));
    while sys::now_ns() < end && !SIGNALLED.load(Ordering::SeqCst) {
        sleep_ns(50_000_000);
    }
    let seconds = sys::now_ns().saturating_sub(t0) as f64 / 1e9;

    // Stop: every thread sees `stop`; a task left SCHED_DEADLINE with a tiny runtime (or
    // SCHED_IDLE behind busy CPUs) is made SCHED_OTHER so that it can get there.
    sh.stop.store(true, Ordering::SeqCst);
    let reset_all = |sh: &Shared, fuzzers: &[Arc<AtomicI32>]| {
        for t in fuzzers {
            let tid = t.load(Ordering::SeqCst);
            if tid != 0 {
                let _ = sys::set_slice(tid, SCHED_OTHER, 0);
            }
        }
        for t in &sh.targets {
            let tid = t.tid.load(Ordering::SeqCst);
            if tid != 0 {
                let _ = sys::set_slice(tid, SCHED_OTHER, 0);
            }
        }
    };
    let deadline = sys::now_ns().saturating_add(args.reap_timeout_s.saturating_mul(1_000_000_000));
    let mut lost = Vec::new();
    let mut tally = Tally::default();

    // Fuzzers and the forker first (they aim at the targets), then the targets.
    sleep_ns(200_000_000);
    wait_until(
        deadline,
        || reset_all(&sh, &fuzzer_tids),
        || fuzzers.iter().all(|h| h.is_finished()),
    );
    for h in fuzzers {
        if h.is_finished() {
            match h.join() {
                Ok(t) => tally.merge(t),
                Err(_) => lost.push("a fuzzing thread panicked".to_string()),
            }
        } else {
            lost.push("a fuzzing thread did not finish".to_string());
        }
    }
    let mut exiting = ForkerResult::default();
    if let Some(h) = forker {
        let finished = wait_until(
            deadline,
            || {
                let c = sh.exiting_child.load(Ordering::SeqCst);
                if c != 0 {
                    let _ = sys::set_slice(c, SCHED_OTHER, 0);
                }
            },
            || h.is_finished(),
        );
        if finished {
            match h.join() {
                Ok(r) => exiting = r,
                Err(_) => lost.push("the forker panicked".to_string()),
            }
        } else {
            lost.push("the forker did not finish".to_string());
            let c = sh.exiting_child.load(Ordering::SeqCst);
            if c != 0 {
                sys::kill(c, libc::SIGKILL);
                if sys::wait_pid(c, true).is_none() {
                    lost.push(format!("exiting child {c} was not reaped"));
                }
            }
        }
        tasks_created += exiting.forked;
        if exiting.forked > exiting.reaped && finished {
            lost.push(format!(
                "{} exiting children were not reaped",
                exiting.forked - exiting.reaped
            ));
        }
    }
    wait_until(
        deadline,
        || reset_all(&sh, &[]),
        || targets_h.iter().all(|(_, h)| h.is_finished()),
    );
    let mut cpu_ns: BTreeMap<String, u64> = BTreeMap::new();
    let mut starved = 0;
    for (i, h) in targets_h {
        let t = &sh.targets[i];
        if h.is_finished() && h.join().is_ok() {
            let ns = t.cpu_ns.load(Ordering::SeqCst);
            *cpu_ns.entry(t.kind.name().to_string()).or_default() += ns;
            if ns == 0 {
                starved += 1;
            }
        } else {
            lost.push(format!(
                "{} thread {} did not finish",
                t.kind.name(),
                t.tid.load(Ordering::SeqCst)
            ));
        }
    }
    // The cgroup children: made fair, killed, reaped.
    for (t, &pid) in sh
        .targets
        .iter()
        .filter(|t| t.kind == Kind::Cgroup)
        .zip(&children)
    {
        t.alive.store(false, Ordering::SeqCst);
        let _ = sys::set_slice(pid, SCHED_OTHER, 0);
        sys::kill(pid, libc::SIGKILL);
    }
    let mut unreaped: Vec<libc::pid_t> = children.clone();
    wait_until(
        deadline,
        || {},
        || {
            unreaped.retain(|&p| sys::wait_pid(p, false).is_none());
            unreaped.is_empty()
        },
    );
    for p in &unreaped {
        lost.push(format!("cgroup child {p} was not reaped"));
    }
    let slicer = match slicer {
        Some(h) => {
            if wait_until(deadline, || {}, || h.is_finished()) {
                h.join().ok()
            } else {
                lost.push("the base_slice_ns writer did not finish".to_string());
                None
            }
        }
        None => None,
    };
    let base_slice = guard.as_mut().map(|g| {
        let ok = g.restore().is_ok();
        (g.original, ok)
    });
    let cgroup_removed = match &cg {
        Ok(c) if unreaped.is_empty() => remove_cgroups(c),
        Ok(c) => Err(format!("{} still holds unreaped tasks", c.dir.display())),
        Err(_) => Ok(()),
    };
    let cgroup = match &mut cg {
        Ok(c) => Ok(c.cpu),
        Err(e) => Err(std::mem::take(e)),
    };
    Ok(Concurrent {
        tally,
        seconds,
        tasks_created,
        tasks_lost: lost.len() as u64,
        lost,
        exiting,
        slicer,
        base_slice,
        cgroup,
        cgroup_removed,
        cpu_ns,
        starved,
    })
}

// ---------------------------------------------------------------------------------------
// The report

#[derive(Serialize)]
struct FuzzResult {
    seed: u64,
    deterministic_calls: u32,
    deterministic_accepted: u64,
    /// FNV-1a over every deterministic call, its errno and read-back, as `0x%016x`.
    digest: String,
    deterministic_errnos: BTreeMap<String, u64>,
    deterministic_s: f64,
    /// The calling thread's read-back slice at the start (the base slice), ns.
    base_slice_ns: u64,
    uclamp: bool,
    /// Calls of the concurrent part, all targets.
    calls: u64,
    errnos: BTreeMap<String, u64>,
    /// Target kind -> errno name -> calls.
    per_target: BTreeMap<String, BTreeMap<String, u64>>,
    duration_s: f64,
    /// Wall time of one concurrent sched_setattr call: the average (µs) and the longest (ms).
    call_avg_us: f64,
    call_max_ms: f64,
    threads: u32,
    tasks_created: u64,
    tasks_lost: u64,
    exiting_forked: u64,
    /// Whether the cgroup targets ran, and with the cpu controller.
    cgroup: bool,
    cgroup_cpu: bool,
    cgroup_moves: u64,
    /// Timeline snapshots read (patched kernels), and target kind -> state -> sightings.
    timeline_samples: u64,
    states_seen: BTreeMap<String, BTreeMap<String, u64>>,
    /// Value written -> its results and read-back.
    base_slice_writes: BTreeMap<String, SliceWrite>,
    base_slice_restored: Option<bool>,
    /// CPU time of the target threads by kind, ns, and how many got none.
    target_cpu_ns: BTreeMap<String, u64>,
    starved_targets: u64,
    /// Deadline bandwidth admitted in the root domain before and after (2^20 = a CPU).
    dl_total_bw_before: Option<u64>,
    dl_total_bw_after: Option<u64>,
    contradictions: u64,
    unexpected_errnos: u64,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Line {
    Fuzz(FuzzResult),
}

fn print_errnos(title: &str, m: &BTreeMap<String, u64>) {
    println!("{title}");
    println!("  {:<12} {:>10}", "errno", "calls");
    for (e, n) in m {
        println!("  {e:<12} {n:>10}");
    }
}

fn run(args: &Args) -> Result<bool> {
    if args.deterministic_calls == 0 && args.duration_s == 0 {
        bail!("nothing to do: --deterministic-calls 0 and --duration-s 0");
    }
    install_signal_handlers();
    let bw_before = dl_total_bw();

    let det = if args.deterministic_calls > 0 {
        let d = deterministic(args)?;
        println!(
            "eevdf-fuzz: deterministic: seed {} calls {} accepted {} digest {:#018x} ({:.1} s, \
             base slice {} ns, uclamp {})",
            args.seed,
            d.calls,
            d.accepted,
            d.digest,
            d.seconds,
            d.baseline.sched_runtime,
            if d.uclamp { "yes" } else { "no" }
        );
        print_errnos("deterministic calls by errno:", &d.tally.by_errno());
        Some(d)
    } else {
        None
    };

    let conc = if args.duration_s > 0 && !SIGNALLED.load(Ordering::SeqCst) {
        let c = concurrent(args)?;
        println!(
            "eevdf-fuzz: concurrent: {:.1} s, {} fuzzing threads, {} calls, {} exiting children",
            c.seconds,
            args.threads,
            c.tally.calls + c.exiting.tally.calls,
            c.exiting.forked
        );
        let mut per: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for ((k, e), n) in c.tally.counts.iter().chain(c.exiting.tally.counts.iter()) {
            *per.entry(k.clone())
                .or_default()
                .entry(e.clone())
                .or_default() += n;
        }
        let errnos: Vec<String> = {
            let mut v: Vec<String> = per.values().flat_map(|m| m.keys().cloned()).collect();
            v.sort();
            v.dedup();
            v
        };
        print!("  {:<10}", "target");
        for e in &errnos {
            print!(" {e:>10}");
        }
        println!();
        for (k, m) in &per {
            print!("  {k:<10}");
            for e in &errnos {
                print!(" {:>10}", m.get(e).copied().unwrap_or(0));
            }
            println!();
        }
        let t = &c.tally;
        println!(
            "  fuzzing threads: {:.0} µs a call on average, the slowest {:.1} ms ({}); \
             {:.1} s on a CPU, {:.1} s waiting on a runqueue",
            t.call_ns as f64 / 1e3 / t.calls.max(1) as f64,
            t.slowest.0 as f64 / 1e6,
            t.slowest.1,
            t.run_ns as f64 / 1e9,
            t.wait_ns as f64 / 1e9
        );
        let e = &c.exiting.tally;
        println!(
            "  forker: {:.0} µs a call on average, the slowest {:.1} ms ({}); {:.1} s on a \
             CPU, {:.1} s waiting on a runqueue",
            e.call_ns as f64 / 1e3 / e.calls.max(1) as f64,
            e.slowest.0 as f64 / 1e6,
            e.slowest.1,
            e.run_ns as f64 / 1e9,
            e.wait_ns as f64 / 1e9
        );
        match &c.cgroup {
            Ok(cpu) => println!(
                "  cgroup targets: yes (cpu controller {}), {} moves between the groups",
                if *cpu { "on" } else { "off" },
                c.slicer.as_ref().map_or(0, |s| s.cgroup_moves)
            ),
            Err(e) => println!("  cgroup targets: none ({e})"),
        }
        if let Some(s) = &c.slicer {
            if s.timeline_samples > 0 {
                println!(
                    "  targets seen in {} timeline snapshots (sched_eevdf's debugfs):",
                    s.timeline_samples
                );
                for (k, m) in &s.states_seen {
                    println!("    {k:<10} {m:?}");
                }
            }
            for (v, w) in &s.writes {
                println!(
                    "  base_slice_ns <- {v:<22} {:>4} writes {:?}, reads back {}",
                    w.writes,
                    w.results,
                    w.readback.map_or("?".into(), |r| r.to_string())
                );
            }
        }
        match c.base_slice {
            Some((orig, true)) => println!("  base_slice_ns restored to {orig}"),
            Some((orig, false)) => println!("  base_slice_ns NOT restored to {orig}"),
            None => println!("  base_slice_ns left alone"),
        }
        println!(
            "  target CPU time: {:?} ns, {} targets never ran",
            c.cpu_ns, c.starved
        );
        Some((c, per))
    } else {
        None
    };
    // A deadline task that left the class gives its bandwidth back at its 0-lag time, at
    // most a period (DL_PERIOD_MAX_NS) later: wait for that before calling the rest a leak.
    let mut bw_after = dl_total_bw();
    let settle_until = sys::now_ns().saturating_add(DL_PERIOD_MAX_NS + 500_000_000);
    while let (Some(a), Some(b)) = (bw_before, bw_after) {
        if b <= a || sys::now_ns() >= settle_until {
            break;
        }
        sleep_ns(250_000_000);
        bw_after = dl_total_bw();
    }

    let mut ok = true;
    let mut total = Tally::default();
    if let Some(d) = &det {
        total.contradictions += d.tally.contradictions;
        total.unexpected += d.tally.unexpected;
        for n in &d.tally.notes {
            total.note(n.clone());
        }
    }
    if let Some((c, _)) = &conc {
        total.contradictions += c.tally.contradictions + c.exiting.tally.contradictions;
        total.unexpected += c.tally.unexpected + c.exiting.tally.unexpected;
        for n in c.tally.notes.iter().chain(&c.exiting.tally.notes) {
            total.note(n.clone());
        }
        if let Some(s) = &c.slicer {
            total.contradictions += s.contradictions;
            for n in &s.notes {
                total.note(n.clone());
            }
        }
        for l in &c.lost {
            println!("eevdf-fuzz: task lost: {l}");
        }
        if let Err(e) = &c.cgroup_removed {
            println!("eevdf-fuzz: FAIL: cgroups not removed: {e}");
            ok = false;
        }
        if matches!(c.base_slice, Some((_, false))) {
            println!("eevdf-fuzz: FAIL: base_slice_ns not restored");
            ok = false;
        }
        if c.tasks_lost > 0 {
            ok = false;
        }
    }
    for n in &total.notes {
        println!("eevdf-fuzz: {n}");
    }
    if total.contradictions > 0 || total.unexpected > 0 {
        ok = false;
    }
    if let (Some(a), Some(b)) = (bw_before, bw_after) {
        println!("  deadline bandwidth admitted (dl_bw->total_bw): {a} before, {b} after");
        if b > a {
            // Nothing of ours is SCHED_DEADLINE any more: 6.12 kept bandwidth of a task
            // made SCHED_DEADLINE after it died (see Documentation/building.md).
            println!(
                "  deadline bandwidth leaked: {} ({:.4} of a CPU)",
                b - a,
                (b - a) as f64 / f64::from(1u32 << 20)
            );
        }
    }
    let (tasks_created, tasks_lost) = conc
        .as_ref()
        .map_or((0, 0), |(c, _)| (c.tasks_created, c.tasks_lost));
    println!(
        "eevdf-fuzz: tasks created {tasks_created}, lost {tasks_lost}; contradictions {}, \
         unexpected errnos {}",
        total.contradictions, total.unexpected
    );
    let interrupted = SIGNALLED.load(Ordering::SeqCst);
    if interrupted {
        println!("eevdf-fuzz: FAIL: stopped by a signal");
        ok = false;
    }

    let r = FuzzResult {
        seed: args.seed,
        deterministic_calls: det.as_ref().map_or(0, |d| d.calls),
        deterministic_accepted: det.as_ref().map_or(0, |d| d.accepted),
        digest: det
            .as_ref()
            .map_or(String::new(), |d| format!("{:#018x}", d.digest)),
        deterministic_errnos: det.as_ref().map(|d| d.tally.by_errno()).unwrap_or_default(),
        deterministic_s: det.as_ref().map_or(0.0, |d| d.seconds),
        base_slice_ns: det.as_ref().map_or(0, |d| d.baseline.sched_runtime),
        uclamp: det.as_ref().is_some_and(|d| d.uclamp),
        calls: conc
            .as_ref()
            .map_or(0, |(c, _)| c.tally.calls + c.exiting.tally.calls),
        errnos: conc.as_ref().map_or_else(BTreeMap::new, |(_, per)| {
            let mut m = BTreeMap::new();
            for v in per.values() {
                for (e, n) in v {
                    *m.entry(e.clone()).or_default() += n;
                }
            }
            m
        }),
        per_target: conc.as_ref().map(|(_, p)| p.clone()).unwrap_or_default(),
        duration_s: conc.as_ref().map_or(0.0, |(c, _)| c.seconds),
        call_avg_us: conc.as_ref().map_or(0.0, |(c, _)| {
            let (t, e) = (&c.tally, &c.exiting.tally);
            (t.call_ns + e.call_ns) as f64 / 1e3 / (t.calls + e.calls).max(1) as f64
        }),
        call_max_ms: conc.as_ref().map_or(0.0, |(c, _)| {
            c.tally.slowest.0.max(c.exiting.tally.slowest.0) as f64 / 1e6
        }),
        threads: args.threads,
        tasks_created,
        tasks_lost,
        exiting_forked: conc.as_ref().map_or(0, |(c, _)| c.exiting.forked),
        cgroup: conc.as_ref().is_some_and(|(c, _)| c.cgroup.is_ok()),
        cgroup_cpu: conc
            .as_ref()
            .is_some_and(|(c, _)| matches!(c.cgroup, Ok(true))),
        cgroup_moves: conc
            .as_ref()
            .and_then(|(c, _)| c.slicer.as_ref())
            .map_or(0, |s| s.cgroup_moves),
        timeline_samples: conc
            .as_ref()
            .and_then(|(c, _)| c.slicer.as_ref())
            .map_or(0, |s| s.timeline_samples),
        states_seen: conc
            .as_ref()
            .and_then(|(c, _)| c.slicer.as_ref())
            .map(|s| s.states_seen.clone())
            .unwrap_or_default(),
        base_slice_writes: conc
            .as_ref()
            .and_then(|(c, _)| c.slicer.as_ref())
            .map(|s| s.writes.clone())
            .unwrap_or_default(),
        base_slice_restored: conc.as_ref().and_then(|(c, _)| c.base_slice.map(|b| b.1)),
        target_cpu_ns: conc
            .as_ref()
            .map(|(c, _)| c.cpu_ns.clone())
            .unwrap_or_default(),
        starved_targets: conc.as_ref().map_or(0, |(c, _)| c.starved),
        dl_total_bw_before: bw_before,
        dl_total_bw_after: bw_after,
        contradictions: total.contradictions,
        unexpected_errnos: total.unexpected,
    };
    println!(
        "{RESULT_PREFIX}{}",
        serde_json::to_string(&Line::Fuzz(r)).context("serialising the result")?
    );
    Ok(ok)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline() -> SchedAttr {
        SchedAttr {
            size: 56,
            sched_runtime: 2_100_000,
            sched_util_max: 1024,
            ..Default::default()
        }
    }

    fn call(attr: SchedAttr) -> Call {
        Call {
            pid: PidArg::Target,
            place: Place::Good,
            sys_flags: 0,
            attr,
            tail: None,
        }
    }

    #[test]
    fn the_generator_is_a_function_of_the_seed() {
        let a: Vec<String> = {
            let mut r = Rng::new(7);
            (0..100)
                .map(|_| format!("{:?}", random_call(&mut r, false)))
                .collect()
        };
        let mut r = Rng::new(7);
        let b: Vec<String> = (0..100)
            .map(|_| format!("{:?}", random_call(&mut r, false)))
            .collect();
        assert_eq!(a, b);
        let mut r = Rng::new(8);
        assert_ne!(format!("{:?}", random_call(&mut r, false)), a[0]);
    }

    #[test]
    fn deadline_keep_params_only_when_asked() {
        let mut r = Rng::new(1);
        for _ in 0..20_000 {
            let c = random_call(&mut r, false);
            let f = c.attr.sched_flags;
            assert!(
                !(c.attr.sched_policy == SCHED_DEADLINE
                    && f & SCHED_FLAG_KEEP_PARAMS != 0
                    && f & SCHED_FLAG_KEEP_POLICY == 0),
                "{c:?}"
            );
        }
    }

    #[test]
    fn no_deadline_for_other_tasks() {
        let mut r = Rng::new(3);
        for _ in 0..10_000 {
            let mut c = random_call(&mut r, false);
            no_deadline(&mut r, &mut c);
            assert_ne!(c.attr.sched_policy, SCHED_DEADLINE);
        }
    }

    #[test]
    fn attr_bytes_match_the_struct_layout() {
        let a = SchedAttr {
            size: 1,
            sched_policy: 2,
            sched_flags: 3,
            sched_nice: -4,
            sched_priority: 5,
            sched_runtime: 6,
            sched_deadline: 7,
            sched_period: 8,
            sched_util_min: 9,
            sched_util_max: 10,
        };
        let b = attr_bytes(&a);
        // SAFETY: SchedAttr is repr(C) plain data of 56 bytes without padding.
        let raw: [u8; 56] = unsafe { std::mem::transmute(a) };
        assert_eq!(b, raw);
    }

    #[test]
    fn other_slice_is_clamped_and_zero_is_the_base() {
        let b = baseline();
        let mut a = SchedAttr::new(SCHED_OTHER);
        a.sched_runtime = 1;
        let got = SchedAttr {
            sched_runtime: 100_000,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        a.sched_runtime = u64::MAX;
        assert!(contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got).is_some());
        let got = SchedAttr {
            sched_runtime: 100_000_000,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        a.sched_runtime = 0;
        a.sched_nice = -21;
        let got = SchedAttr {
            sched_nice: -20,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
    }

    #[test]
    fn idle_keeps_nice_and_slice_keep_params_keeps_everything() {
        let b = baseline();
        let mut a = SchedAttr::new(SCHED_IDLE);
        a.sched_nice = 10;
        a.sched_runtime = 5_000_000;
        let got = SchedAttr {
            sched_policy: SCHED_IDLE,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        let mut a = SchedAttr::new(SCHED_BATCH);
        a.sched_flags = SCHED_FLAG_KEEP_PARAMS | SCHED_FLAG_RESET_ON_FORK;
        a.sched_nice = 5;
        let got = SchedAttr {
            sched_flags: SCHED_FLAG_RESET_ON_FORK,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        // KEEP_POLICY takes reset_on_fork from the task, not from the call.
        let mut a = SchedAttr::new(SCHED_FIFO);
        a.sched_flags = SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_RESET_ON_FORK;
        a.sched_runtime = 3_000_000;
        let got = SchedAttr {
            sched_runtime: 3_000_000,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
    }

    #[test]
    fn rt_and_deadline_read_back() {
        let b = baseline();
        let mut a = SchedAttr::new(SCHED_RR);
        a.sched_priority = 50;
        let got = SchedAttr {
            sched_policy: SCHED_RR,
            sched_priority: 50,
            sched_runtime: 0,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        let mut a = SchedAttr::new(SCHED_DEADLINE);
        a.sched_flags = SCHED_FLAG_DL_OVERRUN;
        a.sched_runtime = 1_000_000;
        a.sched_deadline = 10_000_000;
        let got = SchedAttr {
            sched_policy: SCHED_DEADLINE,
            sched_flags: SCHED_FLAG_DL_OVERRUN,
            sched_runtime: 1_000_000,
            sched_deadline: 10_000_000,
            sched_period: 10_000_000,
            ..b
        };
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        let wrong = SchedAttr {
            sched_period: 0,
            ..got
        };
        assert!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &wrong).is_some()
        );
    }

    #[test]
    fn the_no_change_path_keeps_an_unclamped_base_slice() {
        // base_slice_ns written to 1: a task without a custom slice has slice 1, and a
        // call asking for 1 changes nothing, so it reads back 1, not the clamp's 100 µs.
        let b = SchedAttr {
            sched_runtime: 1,
            ..baseline()
        };
        let mut a = SchedAttr::new(SCHED_OTHER);
        a.sched_runtime = 1;
        let got = b;
        assert_eq!(
            contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
            None
        );
        assert_eq!(contradiction(&expect_after(&call(a), &b, None), &got), None);
    }

    #[test]
    fn refusals_must_change_nothing() {
        let b = baseline();
        assert_eq!(changed_by_refusal(&b, &b, true), None);
        let moved = SchedAttr {
            sched_runtime: 5,
            ..b
        };
        assert!(changed_by_refusal(&b, &moved, true).is_some());
        assert_eq!(changed_by_refusal(&b, &moved, false), None);
        let niced = SchedAttr { sched_nice: 3, ..b };
        assert!(changed_by_refusal(&b, &niced, false).is_some());
    }

    #[test]
    fn errnos_by_call() {
        let mut c = call(SchedAttr::new(SCHED_OTHER));
        assert!(errno_expected(libc::EINVAL, &c, false));
        assert!(!errno_expected(libc::EFAULT, &c, false));
        assert!(!errno_expected(libc::ESRCH, &c, false));
        assert!(errno_expected(libc::ESRCH, &c, true));
        assert!(!errno_expected(libc::ENOMEM, &c, true));
        c.place = Place::Straddle(4);
        assert!(errno_expected(libc::EFAULT, &c, false));
        c.pid = PidArg::Absent;
        assert!(errno_expected(libc::ESRCH, &c, false));
    }

    #[test]
    fn base_slice_words() {
        assert_eq!(base_slice_kept("0"), Some(0));
        assert_eq!(base_slice_kept("4294967295"), Some(u64::from(u32::MAX)));
        assert_eq!(base_slice_kept("4294967296"), Some(0));
        assert_eq!(
            base_slice_kept("18446744073709551615"),
            Some(u64::from(u32::MAX))
        );
        assert_eq!(base_slice_kept("18446744073709551616"), None);
        assert_eq!(base_slice_kept("-1"), None);
    }

    #[test]
    fn task_rows_of_a_timeline() {
        let t = "# sched_eevdf timeline\ncpu 0\n\
                 cfs_rq V=1 zero=1 sum_w=2048 nr_queued=2 min_slice_ns=1 path=/\n\
                 \x20 S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME\n\
                 \x20 R      108     1024     -1682517     -1289872    1400000 - y - cat\n\
                 \x20 Q       86     1024      2397704     1092333    1400000 - - y fuzz-sleeping\n\
                 \x20 Q        -     2048      6650827      7296779    1400000 y - y /grp a\n";
        assert_eq!(task_states(t), vec![(108, "running"), (86, "delayed")]);
    }

    #[test]
    fn fnv_is_fnv1a() {
        let mut h = Fnv::new();
        h.bytes(b"a");
        assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
    }
}
