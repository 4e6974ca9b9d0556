//! The deterministic part: seeded calls on the calling thread alone, each from the same state.

use super::*;

/// FNV-1a, 64 bits.
pub(crate) struct Fnv(pub(crate) u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

pub(crate) fn fmt_attr(a: &SchedAttr) -> String {
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
pub(crate) fn reset_self(uclamp: bool) -> io::Result<()> {
    let mut a = SchedAttr::new(SCHED_OTHER);
    if uclamp {
        a.sched_flags = SCHED_FLAG_UTIL_CLAMP_MIN | SCHED_FLAG_UTIL_CLAMP_MAX;
        a.sched_util_min = u32::MAX; // -1: back to the default, not user-defined
        a.sched_util_max = u32::MAX;
    }
    sys::sched_setattr(0, &mut a, 0)
}

pub(crate) struct Deterministic {
    pub(crate) tally: Tally,
    pub(crate) accepted: u64,
    pub(crate) digest: u64,
    pub(crate) baseline: SchedAttr,
    pub(crate) uclamp: bool,
    pub(crate) seconds: f64,
    /// Calls made (fewer than asked when a signal stopped the run).
    pub(crate) calls: u32,
}

pub(crate) fn deterministic(args: &Args) -> Result<Deterministic> {
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

pub(crate) fn place_code(p: Place) -> u8 {
    match p {
        Place::Good => 0,
        Place::Null => 1,
        Place::Unmapped => 2,
        Place::Straddle(n) => 3u8.wrapping_add(n as u8),
    }
}
