//! Random calls: the `struct sched_attr` contents and syscall arguments the fuzzer draws.

use super::*;

/// splitmix64: small, fast, and the same sequence on every machine.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub(crate) fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// One of `fixed`, or (with the same weight as one entry) `random(self)`.
    pub(crate) fn pick_or<T: Copy>(
        &mut self,
        fixed: &[T],
        random: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let i = self.below(fixed.len() as u64 + 1) as usize;
        match fixed.get(i) {
            Some(&v) => v,
            None => random(self),
        }
    }
}

/// 6.12's `sysctl_sched_dl_period_max` default (2^22 µs), ns: the longest deadline period.
pub(crate) const DL_PERIOD_MAX_NS: u64 = 4_194_304_000;
/// The kernel's PAGE_SIZE on x86-64: the largest `size` sched_copy_attr() reads.
pub(crate) const KERNEL_PAGE: u32 = 4096;
/// A pid no task can have: above PID_MAX_LIMIT (2^22).
pub(crate) const ABSENT_PID: libc::pid_t = i32::MAX;

/// What the call's `pid` argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PidArg {
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
pub(crate) enum Place {
    /// At the start of a readable page: the kernel reads up to a page of it.
    Good,
    Null,
    /// On an inaccessible page: the kernel's first read faults.
    Unmapped,
    /// The last `n` bytes before an inaccessible page: reading `size` runs into it.
    Straddle(u16),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Call {
    pub(crate) pid: PidArg,
    pub(crate) place: Place,
    /// The syscall's own `flags` argument (must be 0).
    pub(crate) sys_flags: u32,
    pub(crate) attr: SchedAttr,
    /// A non-zero byte at this offset past our 56-byte struct (the kernel wants zeroes up
    /// to `size`, or E2BIG).
    pub(crate) tail: Option<(u16, u8)>,
}

/// One random call. `dl_leaks` allows SCHED_DEADLINE with KEEP_PARAMS (see Args).
/// The deterministic part's digest depends on this function's every draw.
pub(crate) fn random_call(rng: &mut Rng, dl_leaks: bool) -> Call {
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
pub(crate) fn random_prior(rng: &mut Rng) -> SchedAttr {
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
pub(crate) fn no_deadline(rng: &mut Rng, call: &mut Call) {
    if call.attr.sched_policy == SCHED_DEADLINE {
        call.attr.sched_policy = rng
            .pick_or(&[SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR], |_| {
                SCHED_FIFO
            });
    }
}

/// `attr` as its 56 bytes in memory (x86-64 is little-endian; the struct has no padding).
pub(crate) fn attr_bytes(a: &SchedAttr) -> [u8; 56] {
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
pub(crate) struct Arena {
    pub(crate) base: *mut u8,
    pub(crate) page: usize,
}

impl Arena {
    pub(crate) fn new() -> io::Result<Self> {
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
    pub(crate) fn write(&mut self, at: usize, bytes: &[u8]) {
        assert!(at + bytes.len() <= self.page, "write past the arena's page");
        // SAFETY: the range checked above lies in the writable first page (type
        // invariant), which no reference covers, and `bytes` is not in the arena.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(at), bytes.len()) };
    }

    /// Read 4 bytes at offset `at` of the writable page.
    pub(crate) fn read_u32(&self, at: usize) -> u32 {
        assert!(at + 4 <= self.page, "read past the arena's page");
        let mut b = [0u8; 4];
        // SAFETY: as in `write`; the source range lies in the readable first page.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(at), b.as_mut_ptr(), 4) };
        u32::from_le_bytes(b)
    }

    /// Run `call` against `pid`: place the attr, make the call, clear the page again.
    /// Returns the errno (0 on success) and, when the attr was in memory we can read, its
    /// `size` afterwards (the kernel writes its own size there on E2BIG).
    pub(crate) fn sched_setattr(&mut self, pid: libc::pid_t, call: &Call) -> (i32, Option<u32>) {
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
