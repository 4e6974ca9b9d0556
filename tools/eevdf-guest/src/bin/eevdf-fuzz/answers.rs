//! Answers and what they must look like: 6.12's rules for an accepted or refused call.

use super::*;

pub(crate) fn errno_name(errno: i32) -> String {
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
pub(crate) fn errno_expected(errno: i32, call: &Call, target_may_be_gone: bool) -> bool {
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

pub(crate) fn fair_policy(p: u32) -> bool {
    p == SCHED_OTHER || p == SCHED_BATCH || p == SCHED_EXT
}

/// What sched_getattr must read back after `call` was accepted by a task whose state was
/// `prior` (its own read-back just before). `None` fields cannot be predicted: the slice
/// of a task without a custom slice follows base_slice_ns, which may change meanwhile.
#[derive(Debug, PartialEq)]
pub(crate) struct Expect {
    pub(crate) policy: u32,
    pub(crate) flags: u64,
    pub(crate) nice: Option<i32>,
    pub(crate) priority: u32,
    /// Allowed `sched_runtime` values (any when empty).
    pub(crate) runtime: Vec<u64>,
    pub(crate) dl: (u64, u64),
}

/// 6.12's sched_setattr() on an accepted `call` (sched_copy_attr, get_params,
/// __sched_setscheduler's no-change path, __setscheduler_params, sched_getattr).
///
/// `base`: the base slice, when it cannot change meanwhile and `prior` (if fair) has no
/// custom slice, so that its `sched_runtime` is that base slice (the deterministic part).
/// Without it, a slice that follows base_slice_ns is not predicted.
pub(crate) fn expect_after(call: &Call, prior: &SchedAttr, base: Option<u64>) -> Expect {
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
pub(crate) fn contradiction(want: &Expect, got: &SchedAttr) -> Option<String> {
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
pub(crate) fn changed_by_refusal(
    prior: &SchedAttr,
    got: &SchedAttr,
    stable_slice: bool,
) -> Option<String> {
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
pub(crate) struct Tally {
    /// (target kind, errno name) -> calls.
    pub(crate) counts: BTreeMap<(String, String), u64>,
    pub(crate) calls: u64,
    /// Wall time inside sched_setattr, ns: the sum, and the longest call with what it was.
    pub(crate) call_ns: u64,
    pub(crate) slowest: (u64, String),
    /// The calling threads' time on a CPU and waiting on a runqueue, ns (schedstat).
    pub(crate) run_ns: u64,
    pub(crate) wait_ns: u64,
    pub(crate) contradictions: u64,
    pub(crate) unexpected: u64,
    /// The first few problems, for the report.
    pub(crate) notes: Vec<String>,
}

impl Tally {
    pub(crate) fn count(&mut self, kind: &str, errno: i32) {
        self.calls += 1;
        *self
            .counts
            .entry((kind.to_string(), errno_name(errno)))
            .or_default() += 1;
    }

    /// Account one call's wall time, `what` describing it.
    pub(crate) fn timed(&mut self, ns: u64, what: impl FnOnce() -> String) {
        self.call_ns += ns;
        if ns > self.slowest.0 {
            self.slowest = (ns, what());
        }
    }

    /// Add the calling thread's schedstat (CPU time, runqueue wait).
    pub(crate) fn own_schedstat(&mut self) {
        if let Ok((run, wait)) = sys::own_schedstat_ns() {
            self.run_ns += run;
            self.wait_ns += wait;
        }
    }

    pub(crate) fn note(&mut self, what: String) {
        if self.notes.len() < 20 {
            self.notes.push(what);
        }
    }

    pub(crate) fn merge(&mut self, o: Tally) {
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

    pub(crate) fn by_errno(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for ((_, e), v) in &self.counts {
            *m.entry(e.clone()).or_default() += v;
        }
        m
    }
}
