//! The concurrent part: calls against other tasks while they run, sleep, fork and exit.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Running,
    Queued,
    Sleeping,
    Cgroup,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Running => "running",
            Kind::Queued => "queued",
            Kind::Sleeping => "sleeping",
            Kind::Cgroup => "cgroup",
        }
    }
}

/// A task the fuzzing threads aim at.
pub(crate) struct Target {
    pub(crate) kind: Kind,
    /// Its thread or process id; 0 until it runs.
    pub(crate) tid: AtomicI32,
    /// Cleared (by the task, or by main before it kills a child) before the task ends; an
    /// ESRCH while it is still set is a lost task.
    pub(crate) alive: AtomicBool,
    /// The task's CPU time when it ended, ns (threads only).
    pub(crate) cpu_ns: AtomicU64,
}

pub(crate) struct Shared {
    pub(crate) stop: AtomicBool,
    pub(crate) targets: Vec<Target>,
    /// The exiting child the forker is working on (0: none), for main to reap if the
    /// forker does not finish.
    pub(crate) exiting_child: AtomicI32,
}

impl Shared {
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || SIGNALLED.load(Ordering::SeqCst)
    }
}

pub(crate) fn sleep_ns(ns: u64) {
    std::thread::sleep(Duration::from_nanos(ns));
}

pub(crate) fn spin_ns(ns: u64) {
    let end = sys::now_ns().saturating_add(ns);
    while sys::now_ns() < end {
        std::hint::spin_loop();
    }
}

/// A target thread: spin `burst_ns`, sleep about `sleep_ns`, until told to stop.
pub(crate) fn target_thread(
    sh: Arc<Shared>,
    idx: usize,
    pin: Option<u32>,
    burst_ns: u64,
    pause_ns: u64,
) {
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
pub(crate) fn fuzz_thread(sh: Arc<Shared>, seed: u64, dl_leaks: bool, burst_ns: u64) -> Tally {
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
pub(crate) struct ForkerResult {
    pub(crate) tally: Tally,
    pub(crate) forked: u64,
    pub(crate) reaped: u64,
    pub(crate) fork_errors: u64,
}

/// Fork short-lived children and aim calls at each while it exits; reap each one.
pub(crate) fn forker_thread(sh: Arc<Shared>, seed: u64, dl_leaks: bool) -> ForkerResult {
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
pub(crate) const BASE_SLICE_WRITES: [&str; 9] = [
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
pub(crate) struct SliceWrite {
    pub(crate) writes: u64,
    /// errno name (or "ok") -> count.
    pub(crate) results: BTreeMap<String, u64>,
    /// What the file read back after the last write.
    pub(crate) readback: Option<u64>,
}

/// The value 6.12's debugfs u32 file keeps for `word` (kstrtoull base 0, then a u32
/// store), or `None` when the write must fail.
pub(crate) fn base_slice_kept(word: &str) -> Option<u64> {
    let v = word.parse::<u64>().ok()?;
    Some(v & 0xffff_ffff)
}

pub(crate) fn write_word(path: &str, word: &str) -> io::Result<()> {
    // One write(2), as `echo word >path` does (O_TRUNC, which debugfs ignores).
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?
        .write_all(word.as_bytes())
}

/// Restores base_slice_ns when dropped: at the end, on an error, on a panic.
pub(crate) struct BaseSliceGuard {
    pub(crate) original: u64,
    pub(crate) restored: bool,
}

impl BaseSliceGuard {
    pub(crate) fn restore(&mut self) -> io::Result<()> {
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
pub(crate) const TIMELINE_PATH: &str = "/sys/kernel/debug/sched/eevdf/timeline";

/// The task rows of a timeline snapshot: pid and state, `running`, `queued` or `delayed`
/// (a queued row whose `D` column is `y`).
pub(crate) fn task_states(timeline: &str) -> Vec<(libc::pid_t, &'static str)> {
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

pub(crate) struct SlicerResult {
    /// Timeline snapshots read, and target kind -> state -> times one of its tasks was
    /// in that state in one (no snapshots on a stock kernel).
    pub(crate) timeline_samples: u64,
    pub(crate) states_seen: BTreeMap<String, BTreeMap<String, u64>>,
    pub(crate) writes: BTreeMap<String, SliceWrite>,
    pub(crate) contradictions: u64,
    pub(crate) notes: Vec<String>,
    pub(crate) cgroup_moves: u64,
    pub(crate) cgroup_move_errors: u64,
}

/// Cycle base_slice_ns through [`BASE_SLICE_WRITES`] (unless `original` is None) and move
/// the first cgroup target between the two groups, every `hold_ns`.
pub(crate) fn slicer_thread(
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
pub(crate) struct Cgroups {
    pub(crate) dir: PathBuf,
    pub(crate) groups: [PathBuf; 2],
    /// Whether the cpu controller is enabled in them (group scheduling).
    pub(crate) cpu: bool,
}

pub(crate) fn make_cgroups(root: &Path) -> Result<Cgroups, String> {
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
pub(crate) fn remove_cgroups(c: &Cgroups) -> Result<(), String> {
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
pub(crate) fn dl_total_bw() -> Option<u64> {
    let s = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    s.lines()
        .find_map(|l| l.trim().strip_prefix(".dl_bw->total_bw"))
        .and_then(|v| v.trim().trim_start_matches(':').trim().parse().ok())
}

/// Wait until `done()` or the deadline, calling `nudge()` every 100 ms; whether done.
pub(crate) fn wait_until(
    deadline_ns: u64,
    mut nudge: impl FnMut(),
    mut done: impl FnMut() -> bool,
) -> bool {
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
pub(crate) struct Concurrent {
    pub(crate) tally: Tally,
    pub(crate) seconds: f64,
    pub(crate) tasks_created: u64,
    pub(crate) tasks_lost: u64,
    pub(crate) lost: Vec<String>,
    pub(crate) exiting: ForkerResult,
    pub(crate) slicer: Option<SlicerResult>,
    pub(crate) base_slice: Option<(u64, bool)>,
    pub(crate) cgroup: Result<bool, String>,
    pub(crate) cgroup_removed: Result<(), String>,
    pub(crate) cpu_ns: BTreeMap<String, u64>,
    pub(crate) starved: u64,
}

pub(crate) fn concurrent(args: &Args) -> Result<Concurrent> {
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
