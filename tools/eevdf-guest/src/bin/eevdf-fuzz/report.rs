//! The report: the counts, the digest and the summary lines the guest test reads.

use super::*;

#[derive(Serialize)]
pub(crate) struct FuzzResult {
    pub(crate) seed: u64,
    pub(crate) deterministic_calls: u32,
    pub(crate) deterministic_accepted: u64,
    /// FNV-1a over every deterministic call, its errno and read-back, as `0x%016x`.
    pub(crate) digest: String,
    pub(crate) deterministic_errnos: BTreeMap<String, u64>,
    pub(crate) deterministic_s: f64,
    /// The calling thread's read-back slice at the start (the base slice), ns.
    pub(crate) base_slice_ns: u64,
    pub(crate) uclamp: bool,
    /// Calls of the concurrent part, all targets.
    pub(crate) calls: u64,
    pub(crate) errnos: BTreeMap<String, u64>,
    /// Target kind -> errno name -> calls.
    pub(crate) per_target: BTreeMap<String, BTreeMap<String, u64>>,
    pub(crate) duration_s: f64,
    /// Wall time of one concurrent sched_setattr call: the average (µs) and the longest (ms).
    pub(crate) call_avg_us: f64,
    pub(crate) call_max_ms: f64,
    pub(crate) threads: u32,
    pub(crate) tasks_created: u64,
    pub(crate) tasks_lost: u64,
    pub(crate) exiting_forked: u64,
    /// Whether the cgroup targets ran, and with the cpu controller.
    pub(crate) cgroup: bool,
    pub(crate) cgroup_cpu: bool,
    pub(crate) cgroup_moves: u64,
    /// Timeline snapshots read (patched kernels), and target kind -> state -> sightings.
    pub(crate) timeline_samples: u64,
    pub(crate) states_seen: BTreeMap<String, BTreeMap<String, u64>>,
    /// Value written -> its results and read-back.
    pub(crate) base_slice_writes: BTreeMap<String, SliceWrite>,
    pub(crate) base_slice_restored: Option<bool>,
    /// CPU time of the target threads by kind, ns, and how many got none.
    pub(crate) target_cpu_ns: BTreeMap<String, u64>,
    pub(crate) starved_targets: u64,
    /// Deadline bandwidth admitted in the root domain before and after (2^20 = a CPU).
    pub(crate) dl_total_bw_before: Option<u64>,
    pub(crate) dl_total_bw_after: Option<u64>,
    pub(crate) contradictions: u64,
    pub(crate) unexpected_errnos: u64,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Line {
    Fuzz(FuzzResult),
}

pub(crate) fn print_errnos(title: &str, m: &BTreeMap<String, u64>) {
    println!("{title}");
    println!("  {:<12} {:>10}", "errno", "calls");
    for (e, n) in m {
        println!("  {e:<12} {n:>10}");
    }
}

pub(crate) fn run(args: &Args) -> Result<bool> {
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
