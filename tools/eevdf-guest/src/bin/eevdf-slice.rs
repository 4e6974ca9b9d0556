//! The guest's sched_setattr()/sched_getattr() tool for the per-task slice (`sched_runtime`).
//!
//! - `eevdf-slice check`: round trips, clamps and bad inputs. Each case must get stock 6.12's
//!   answer and leave the slice as it was; one line per case, exit 0 only when all hold.
//! - `eevdf-slice set PID NS [other|batch|idle|fifo]`: give PID (0 = this process) the policy
//!   and, for other/batch/idle, NS as its slice (0 = the base slice); fifo gets priority 1.
//! - `eevdf-slice get PID`: print PID's policy and slice (`sched_runtime`, ns).
//!
//! The periodic waker with a slice is `eevdf-waker --slice-us`.
use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use eevdf_guest::sys::{
    self, policy_name, SchedAttr, SCHED_BATCH, SCHED_FIFO, SCHED_IDLE, SCHED_OTHER,
};
use std::io;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(version, about = "sched_setattr()/sched_getattr() of the per-task slice", long_about = None)]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Round trips, clamps and bad inputs must get stock 6.12's answers and leave the slice
    /// unchanged; prints one line per case and exits 0 only when every case holds.
    Check,
    /// Set PID's policy and slice.
    Set {
        /// The task (0 = this process).
        pid: libc::pid_t,
        /// The slice, ns (0 = the base slice; the kernel clamps to [100 µs, 100 ms]).
        /// Ignored for fifo.
        ns: u64,
        /// The policy to set.
        #[arg(value_enum, default_value_t = Policy::Other)]
        policy: Policy,
    },
    /// Print PID's policy and slice: `policy P slice_ns N`.
    Get {
        /// The task (0 = this process).
        pid: libc::pid_t,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
}

impl Policy {
    fn number(self) -> u32 {
        match self {
            Policy::Other => SCHED_OTHER,
            Policy::Batch => SCHED_BATCH,
            Policy::Idle => SCHED_IDLE,
            Policy::Fifo => SCHED_FIFO,
        }
    }
}

fn errno_name(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::E2BIG) => "E2BIG".into(),
        Some(libc::EINVAL) => "EINVAL".into(),
        Some(libc::ESRCH) => "ESRCH".into(),
        Some(libc::EFAULT) => "EFAULT".into(),
        Some(libc::EPERM) => "EPERM".into(),
        Some(libc::ENOSYS) => "ENOSYS".into(),
        Some(n) => format!("errno {n}"),
        None => e.to_string(),
    }
}

/// A pid no task has (above the default pid_max, below PID_MAX_LIMIT).
const NO_SUCH_PID: libc::pid_t = 4_000_000;
/// The slice every bad call must leave in place, ns.
const KEEP_NS: u64 = 3_000_000;

#[derive(Default)]
struct Checker {
    cases: u32,
    failures: u32,
}

impl Checker {
    fn report(&mut self, what: &str, got: &str, want: &str, ok: bool) {
        self.cases += 1;
        if !ok {
            self.failures += 1;
        }
        println!(
            "{what:<36} got {got:<22} want {want:<22} {}",
            if ok { "ok" } else { "FAIL" }
        );
    }

    /// A good call: set `ns` with `policy`, and sched_getattr must then report `want`.
    fn round_trip(&mut self, what: &str, policy: u32, ns: u64, want: io::Result<u64>) {
        let got = sys::set_slice(0, policy, ns).and_then(|()| sys::slice_ns(0));
        let got_s = got.as_ref().map_or_else(errno_name, u64::to_string);
        match want {
            Ok(w) => self.report(what, &got_s, &w.to_string(), matches!(got, Ok(g) if g == w)),
            Err(e) => self.report(
                what,
                &got_s,
                &format!("? ({}: {e})", sys::BASE_SLICE_PATH),
                false,
            ),
        }
    }

    /// A bad call: it must fail with `want_errno`, and the slice must still be [`KEEP_NS`].
    fn bad(&mut self, what: &str, rc: io::Result<()>, want_errno: i32) {
        let slice = sys::slice_ns(0);
        let got = format!(
            "{}, slice {}",
            rc.as_ref().map_or_else(errno_name, |()| "success".into()),
            slice.as_ref().map_or_else(errno_name, u64::to_string)
        );
        let want_err = io::Error::from_raw_os_error(want_errno);
        let want = format!("{}, slice {KEEP_NS}", errno_name(&want_err));
        let ok = matches!(&rc, Err(e) if e.raw_os_error() == Some(want_errno))
            && matches!(slice, Ok(s) if s == KEEP_NS);
        self.report(what, &got, &want, ok);
    }
}

fn check() -> ExitCode {
    let mut c = Checker::default();
    c.round_trip("OTHER 3 ms kept", SCHED_OTHER, 3_000_000, Ok(3_000_000));
    c.round_trip(
        "OTHER 50 us clamped to 100 us",
        SCHED_OTHER,
        50_000,
        Ok(100_000),
    );
    c.round_trip(
        "OTHER 1 s clamped to 100 ms",
        SCHED_OTHER,
        1_000_000_000,
        Ok(100_000_000),
    );
    c.round_trip("BATCH 2 ms kept", SCHED_BATCH, 2_000_000, Ok(2_000_000));
    c.round_trip(
        "OTHER 0 restores base_slice_ns",
        SCHED_OTHER,
        0,
        sys::base_slice_ns(),
    );
    c.round_trip("OTHER 3 ms again", SCHED_OTHER, KEEP_NS, Ok(KEEP_NS));

    // Each bad call asks for 5 ms: a kernel that took it would change the slice.
    let mut a = SchedAttr {
        size: 8, // below SCHED_ATTR_SIZE_VER0
        sched_runtime: 5_000_000,
        ..Default::default()
    };
    c.bad(
        "bad size (8) -> E2BIG",
        sys::sched_setattr(0, &mut a, 0),
        libc::E2BIG,
    );

    let mut a = SchedAttr::new(SCHED_OTHER);
    a.sched_flags = 1 << 40;
    a.sched_runtime = 5_000_000;
    c.bad(
        "bad sched_flags -> EINVAL",
        sys::sched_setattr(0, &mut a, 0),
        libc::EINVAL,
    );
    a.sched_flags = 0;
    c.bad(
        "bad syscall flags -> EINVAL",
        sys::sched_setattr(0, &mut a, 1),
        libc::EINVAL,
    );
    a.sched_policy = 12345;
    c.bad(
        "bad policy -> EINVAL",
        sys::sched_setattr(0, &mut a, 0),
        libc::EINVAL,
    );
    a.sched_policy = SCHED_OTHER;
    c.bad(
        "pid that does not exist -> ESRCH",
        sys::sched_setattr(NO_SUCH_PID, &mut a, 0),
        libc::ESRCH,
    );
    // SAFETY: a NULL attr; the kernel rejects it before touching memory.
    let rc = unsafe { sys::sched_setattr_ptr(0, std::ptr::null_mut(), 0) };
    c.bad("NULL attr -> EINVAL", rc, libc::EINVAL);
    // SAFETY: address 8 lies in the first page, which is never mapped (vm.mmap_min_addr);
    // the kernel's user copy faults there and answers EFAULT.
    let rc = unsafe { sys::sched_setattr_ptr(0, std::ptr::without_provenance_mut(8), 0) };
    c.bad("bad pointer -> EFAULT", rc, libc::EFAULT);
    c.bad(
        "negative pid -> EINVAL",
        sys::sched_setattr(-1, &mut a, 0),
        libc::EINVAL,
    );

    let mut a = SchedAttr::default();
    c.bad(
        "getattr size too small -> EINVAL",
        sys::sched_getattr(0, &mut a, 8),
        libc::EINVAL,
    );
    c.bad(
        "getattr of a missing pid -> ESRCH",
        sys::sched_getattr(NO_SUCH_PID, &mut a, sys::SCHED_ATTR_SIZE),
        libc::ESRCH,
    );

    println!("{} cases, {} failures", c.cases, c.failures);
    if c.failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> Result<ExitCode> {
    match Args::parse().cmd {
        Cmd::Check => Ok(check()),
        Cmd::Set { pid, ns, policy } => {
            sys::set_slice(pid, policy.number(), ns).with_context(|| {
                format!(
                    "sched_setattr(pid {pid}, {}, sched_runtime={ns})",
                    policy_name(policy.number())
                )
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Get { pid } => {
            let a = sys::getattr(pid).with_context(|| format!("sched_getattr(pid {pid})"))?;
            println!(
                "policy {} slice_ns {}",
                policy_name(a.sched_policy),
                a.sched_runtime
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
