//! The seeds' claims, checked on the scenarios under tests/scenarios/ with asserted
//! thresholds. Each test prints the numbers it asserts on (`cargo test -- --nocapture`).

use std::path::PathBuf;

use eevdf_sim::scenario::Scenario;
use eevdf_sim::sim::{RunOptions, Sim};
use eevdf_sim::stats::{Report, TaskStats};

fn scenario(name: &str) -> Scenario {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/scenarios")
        .join(name);
    Scenario::load(&p).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()))
}

fn run(sc: &Scenario, features: &[(&str, bool)]) -> Report {
    let opts = RunOptions {
        feature_overrides: features.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..RunOptions::default()
    };
    Sim::run(sc, &opts).expect("run").report
}

fn task<'a>(r: &'a Report, name: &str) -> &'a TaskStats {
    r.task(name).unwrap_or_else(|| panic!("no task {name}"))
}

/// Seed 000: nice −4 against nice 0 on one CPU splits about 70/30, with the eligibility
/// test on and off (stock 6.12: 0.707 / 0.293; the weights give 2501/3525 = 0.7095).
#[test]
fn nice_split_is_70_30_with_and_without_eligibility() {
    let sc = scenario("nice_split.toml");
    for eligible in [true, false] {
        let r = run(&sc, &[("ELIGIBLE", eligible)]);
        let hi = task(&r, "hog-nice-4").cpu_share;
        let lo = task(&r, "hog-nice0").cpu_share;
        println!("ELIGIBLE={eligible}: nice -4 {hi:.4}, nice 0 {lo:.4}");
        assert!((0.70..=0.72).contains(&hi), "nice -4 share {hi}");
        assert!((0.28..=0.30).contains(&lo), "nice 0 share {lo}");
        assert!(hi + lo > 0.999, "the CPU is never idle: {}", hi + lo);
    }
}

struct Lat {
    avg_us: f64,
    max_us: f64,
    min_us: f64,
    share: f64,
}

fn waker(file: &str, features: &[(&str, bool)]) -> Lat {
    let r = run(&scenario(file), features);
    let t = task(&r, "cyclictest");
    Lat {
        avg_us: t.wakeup_latency_avg_ns / 1e3,
        max_us: t.wakeup_latency_max_ns as f64 / 1e3,
        min_us: t.wakeup_latency_min_ns as f64 / 1e3,
        share: t.cpu_share,
    }
}

/// Seed 000 (hackbench vs cyclictest): EVDF helps the short slice and "utterly slaughters
/// the large slices"; BIAS_ELIGIBLE "only manages to murder the high end".
#[test]
fn evdf_helps_short_slices_and_slaughters_long_ones() {
    let mut rows = Vec::new();
    for (label, file) in [
        ("10x", "hackbench_waker_10x.toml"),
        ("1x", "hackbench_waker_1x.toml"),
        ("0.1x", "hackbench_waker_0.1x.toml"),
    ] {
        let eevdf = waker(file, &[]);
        let evdf = waker(file, &[("ELIGIBLE", false)]);
        let bias = waker(file, &[("BIAS_ELIGIBLE", true)]);
        for (name, l) in [("EEVDF", &eevdf), ("EVDF", &evdf), ("BIAS", &bias)] {
            println!(
                "slice {label:>4} {name:>5}: min {:>8.1} avg {:>9.1} max {:>9.1} us, share {:.4}",
                l.min_us, l.avg_us, l.max_us, l.share
            );
            // The waker always gets its 20 us per 1 ms in the end.
            assert!(l.share > 0.0195, "{label} {name}: share {}", l.share);
        }
        rows.push((label, eevdf, evdf, bias));
    }
    let (_, eevdf10, evdf10, bias10) = &rows[0];
    // Long slice: EVDF blows it up (Peter: avg 692 -> 188239 us, max 94633 -> 961241 us).
    assert!(evdf10.avg_us > 20.0 * eevdf10.avg_us);
    assert!(evdf10.max_us > 10.0 * eevdf10.max_us);
    // BIAS_ELIGIBLE murders the high end too.
    assert!(bias10.avg_us > 20.0 * eevdf10.avg_us);
    // Equal slices: EVDF's tail is no worse (Peter: max 41475 -> 13297 us).
    let (_, eevdf1, evdf1, _) = &rows[1];
    assert!(evdf1.max_us <= eevdf1.max_us);
    // Short slice: EVDF helps (Peter: avg 344 -> 56 us, max 20061 -> 860 us).
    let (_, eevdf01, evdf01, _) = &rows[2];
    assert!(evdf01.avg_us <= eevdf01.avg_us);
    assert!(evdf01.max_us <= eevdf01.max_us);
    // And under EEVDF a shorter slice means a shorter wait.
    assert!(eevdf01.avg_us < eevdf1.avg_us && eevdf1.avg_us < eevdf10.avg_us);
    assert!(eevdf01.max_us < eevdf1.max_us && eevdf1.max_us < eevdf10.max_us);
}

/// Seed 001 (ULE): a task that uses a small part of its slice and sleeps, against hogs,
/// must not wait a full slice at every wakeup; its wait stays bounded by about a slice.
#[test]
fn partial_slice_sleeper_waits_about_a_slice_at_most() {
    let sc = scenario("partial_slice.toml");
    let slice_us = sc.base_slice_us as f64;
    let r = run(&sc, &[]);
    let s = task(&r, "sleeper");
    let (avg, p99, max) = (
        s.wakeup_latency_avg_ns / 1e3,
        s.wakeup_latency_p99_ns as f64 / 1e3,
        s.wakeup_latency_max_ns as f64 / 1e3,
    );
    println!(
        "base slice: avg {avg:.1} p99 {p99:.1} max {max:.1} us (slice {slice_us} us), share {:.4}, wakeups {}",
        s.cpu_share, s.wakeups
    );
    // Not a full slice per wakeup (ULE's bug): the average wait is a small part of it.
    assert!(avg < 0.2 * slice_us, "avg {avg}");
    // Bounded: 99% of the waits within two slices, all within three.
    assert!(p99 <= 2.2 * slice_us, "p99 {p99}");
    assert!(max <= 3.0 * slice_us, "max {max}");
    // It gets most of what it asks for (100 us per 600 us at best: 1/6).
    assert!(s.cpu_share > 0.09, "share {}", s.cpu_share);
    assert!(s.wakeups > 4000);

    // With a request that fits its burst, PREEMPT_SHORT bounds every wait by about one
    // (base) slice.
    let sc = scenario("partial_slice_short.toml");
    let r = run(&sc, &[]);
    let s = task(&r, "sleeper");
    let (avg, p99, max) = (
        s.wakeup_latency_avg_ns / 1e3,
        s.wakeup_latency_p99_ns as f64 / 1e3,
        s.wakeup_latency_max_ns as f64 / 1e3,
    );
    println!(
        "300 us request: avg {avg:.1} p99 {p99:.1} max {max:.1} us, share {:.4}",
        s.cpu_share
    );
    assert!(avg < 0.2 * slice_us, "avg {avg}");
    assert!(max <= 1.2 * slice_us, "max {max}");
    assert!(s.cpu_share > 0.09);
}

/// Upstream 6.17 (RUN_TO_PARITY_MIN_SLICE), Vincent Guittot's claim: with slices that
/// differ, lag errors (a dequeue's lag outside ±(slice + tick); ±max(slice, base + tick)
/// without RUN_TO_PARITY) go from some cases to none, under RUN_TO_PARITY and
/// NO_RUN_TO_PARITY (his rt-app table: 14/37 -> 0/37 both ways). Here one case: the
/// short-slice task waits behind a hog's 10 ms slice under 6.12 and has lag errors; with
/// the feature the hog is protected for the smallest queued slice, the task's longest
/// wait shrinks to a couple of ticks, its lag errors vanish, and the CPU shares stay.
#[test]
fn run_to_parity_min_slice_removes_lag_errors() {
    let sc = scenario("run_to_parity_min_slice.toml");
    for rtp in [true, false] {
        let off = run(&sc, &[("RUN_TO_PARITY", rtp)]);
        let on = run(
            &sc,
            &[("RUN_TO_PARITY", rtp), ("RUN_TO_PARITY_MIN_SLICE", true)],
        );
        let (a, b) = (task(&off, "periodic"), task(&on, "periodic"));
        println!(
            "RUN_TO_PARITY={rtp}: lag errors {} -> {}, periodic wait_max {:.1} -> {:.1} ms, \
             lag_max {:.2} -> {:.2} vms, share {:.4} -> {:.4}",
            off.lag_errors,
            on.lag_errors,
            a.wait_max_ns as f64 / 1e6,
            b.wait_max_ns as f64 / 1e6,
            a.lag_max_vns as f64 / 1e6,
            b.lag_max_vns as f64 / 1e6,
            a.cpu_share,
            b.cpu_share
        );
        // 6.12: the periodic task waits out a hog's slice, and its lag leaves the bound.
        assert!(
            a.wait_max_ns >= 9_000_000,
            "6.12 wait_max {}",
            a.wait_max_ns
        );
        assert!(off.lag_errors > 100, "6.12 lag errors {}", off.lag_errors);
        // 6.17: no lag errors, waits of a tick or two.
        assert_eq!(on.lag_errors, 0);
        assert!(
            b.wait_max_ns <= 2_000_000,
            "6.17 wait_max {}",
            b.wait_max_ns
        );
        assert!(b.lag_max_vns < a.lag_max_vns);
        // What each task gets stays: the weights decide it, not the protection.
        for (x, y) in off.tasks.iter().zip(&on.tasks) {
            assert!((x.cpu_share - y.cpu_share).abs() < 0.002, "{}", x.name);
        }
    }
}

/// Upstream 7.0 (PROTECT_AT_PICK): with RUN_TO_PARITY_MIN_SLICE a hog whose slice is
/// set every 200 us restarts its protected window at each sched_change and runs its whole
/// 3 ms slice; with the protection set only at the pick its runs are bounded by its window
/// (the other hog's 0.7 ms slice) and the next update_curr() after it: no longer than
/// without the storm.
#[test]
fn protect_at_pick_keeps_a_sched_change_from_restarting_the_window() {
    let sc = scenario("sched_change_storm.toml");
    let mut calm = sc.clone();
    calm.tasks
        .iter_mut()
        .for_each(|t| t.setattr_every_us = None);
    let min = ("RUN_TO_PARITY_MIN_SLICE", true);
    let run_max = |sc: &Scenario, pap: bool| {
        let r = run(sc, &[min, ("PROTECT_AT_PICK", pap)]);
        let (t, o) = (task(&r, "tuned"), task(&r, "other"));
        (t.run_max_ns, o.wait_max_ns, t.cpu_share)
    };
    let (storm, storm_wait, storm_share) = run_max(&sc, false);
    let (kept, kept_wait, kept_share) = run_max(&sc, true);
    let (alone, alone_wait, _) = run_max(&calm, true);
    println!(
        "tuned run_max: storm {:.1} ms, storm + PROTECT_AT_PICK {:.1} ms, no storm {:.1} ms; \
         other's wait_max {:.1} / {:.1} / {:.1} ms",
        storm as f64 / 1e6,
        kept as f64 / 1e6,
        alone as f64 / 1e6,
        storm_wait as f64 / 1e6,
        kept_wait as f64 / 1e6,
        alone_wait as f64 / 1e6
    );
    assert!(storm >= 3_000_000, "the window restarts: {storm}");
    assert!(kept <= alone + 100_000, "kept {kept}, alone {alone}");
    assert!(kept <= 1_000_000, "kept {kept}");
    assert!(kept_wait < storm_wait);
    // Both hogs get half the CPU either way.
    assert!((storm_share - 0.5).abs() < 0.01 && (kept_share - 0.5).abs() < 0.01);
}

/// Same file, same numbers; another seed, other numbers.
/// Upstream 7.0 ("sched/eevdf: Fix lag clamp", LAG_CLAMP_MAX_SLICE): with a 100 ms-slice
/// hog on the runqueue, the sleepers' lags are no longer cut at max(2 * slice, tick) when
/// they leave: their clamps (the kernel's lag_clamped_pos + lag_clamped_neg) vanish, and
/// the service they were owed is kept across the sleep, so their CPU share moves up
/// toward the fair one.
#[test]
fn lag_clamp_max_slice_stops_clamping_short_slice_sleepers() {
    let sc = scenario("long_sleepers_mixed_slices.toml");
    let off = run(&sc, &[]);
    let on = run(&sc, &[("LAG_CLAMP_MAX_SLICE", true)]);
    let clamps = |r: &Report, g: &str| -> u64 {
        r.group(g)
            .map(|t| t.lag_clamped_pos + t.lag_clamped_neg)
            .sum()
    };
    let share = |r: &Report, g: &str| -> f64 { r.group(g).map(|t| t.cpu_share).sum() };
    for g in ["sleeper-0.1ms", "sleeper-base", "hog-100ms", "hog"] {
        println!(
            "{g:>14}: clamps {:>3} -> {:>3}, share {:.4} -> {:.4}",
            clamps(&off, g),
            clamps(&on, g),
            share(&off, g),
            share(&on, g)
        );
    }
    for g in ["sleeper-0.1ms", "sleeper-base"] {
        // Off: 6.12 clamps the lags of the sleepers that leave while owed service.
        assert!(clamps(&off, g) >= 40, "{g}: {} clamps off", clamps(&off, g));
        // On: the limit is the largest queued slice plus a tick, 104 ms.
        assert!(
            clamps(&on, g) * 10 <= clamps(&off, g),
            "{g}: {} clamps on, {} off",
            clamps(&on, g),
            clamps(&off, g)
        );
    }
    let sleepers = |r: &Report| share(r, "sleeper-0.1ms") + share(r, "sleeper-base");
    assert!(
        sleepers(&on) > sleepers(&off),
        "sleepers' share {} on, {} off",
        sleepers(&on),
        sleepers(&off)
    );
}

#[test]
fn runs_are_deterministic_for_a_seed() {
    let mut sc = scenario("speed_100.toml");
    sc.duration_ms = 1000;
    let a = serde_json::to_string(&run(&sc, &[])).unwrap();
    let b = serde_json::to_string(&run(&sc, &[])).unwrap();
    assert_eq!(a, b);
    sc.seed += 1;
    let c = serde_json::to_string(&run(&sc, &[])).unwrap();
    assert_ne!(a, c);
}

/// The core's invariant checker passes after every event of a run that has every kind of
/// task, forks, exits and a feature change.
#[test]
fn core_invariants_hold_after_every_event() {
    let mut sc = scenario("speed_100.toml");
    sc.duration_ms = 300;
    sc.tasks.iter_mut().for_each(|t| {
        if t.start_ms >= 100 {
            t.start_ms = 100;
            t.stop_ms = Some(200);
        }
    });
    sc.feature_changes[0].at_ms = 150;
    let opts = RunOptions {
        check_invariants: true,
        ..RunOptions::default()
    };
    let r = Sim::run(&sc, &opts).expect("invariants hold").report;
    assert!(r.events > 1000);
}

/// Time is conserved: runtimes plus idle add up to the simulated time, and an exited or
/// unborn task gets nothing outside its life.
#[test]
fn cpu_time_is_conserved() {
    let sc = scenario("speed_100.toml");
    let mut sc = sc;
    sc.duration_ms = 2000;
    for t in sc.tasks.iter_mut() {
        if t.name == "late" {
            t.start_ms = 500;
            t.stop_ms = Some(1500);
        }
    }
    let r = run(&sc, &[]);
    let total: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum::<u64>() + r.idle_ns;
    assert_eq!(total, r.duration_ns);
    for t in r.group("late") {
        assert!(t.runtime_ns <= 1_000_000_000);
        assert!(t.runtime_ns > 0);
    }
}

/// A feature change at a given time takes effect then: ELIGIBLE off halfway blows up the
/// long-slice waker's worst wait.
#[test]
fn feature_changes_apply_at_their_time() {
    let mut sc = scenario("hackbench_waker_10x.toml");
    let base = run(&sc, &[]);
    sc.feature_changes.push(eevdf_sim::scenario::FeatureChange {
        at_ms: sc.duration_ms / 2,
        set: [("ELIGIBLE".to_string(), false)].into_iter().collect(),
    });
    let changed = run(&sc, &[]);
    let (a, b) = (task(&base, "cyclictest"), task(&changed, "cyclictest"));
    println!(
        "avg {:.0} -> {:.0} us, max {:.0} -> {:.0} us",
        a.wakeup_latency_avg_ns / 1e3,
        b.wakeup_latency_avg_ns / 1e3,
        a.wakeup_latency_max_ns as f64 / 1e3,
        b.wakeup_latency_max_ns as f64 / 1e3
    );
    assert!(b.wakeup_latency_avg_ns > 5.0 * a.wakeup_latency_avg_ns);
    assert!(b.wakeup_latency_max_ns > a.wakeup_latency_max_ns);
}

/// 10 simulated seconds of 100 tasks in under a second (release build only:
/// `cargo test --release -p eevdf-sim -- --include-ignored speed`).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "timing is meaningful in a release build only"
)]
fn speed_100_tasks_10_seconds_under_a_second() {
    let sc = scenario("speed_100.toml");
    assert_eq!(sc.duration_ms, 10_000);
    let t0 = std::time::Instant::now();
    let r = run(&sc, &[]);
    let dt = t0.elapsed();
    println!("{} tasks, {} events in {:?}", r.tasks.len(), r.events, dt);
    assert_eq!(r.tasks.len(), 100);
    assert!(dt.as_secs_f64() < 1.0, "{dt:?}");
}

/// Upstream 6.19's NEXT_BUDDY_EEVDF ("Reimplement NEXT_BUDDY to align with EEVDF goals")
/// claims lower schbench wakeup latencies, the tail most (p99 119.61 -> 89.94 us, p99.9
/// 3193.78 -> 328.22 us), measured with NEXT_BUDDY on and with a branch since reverted
/// ("Revert force wakeup preemption"). On one CPU with the schbench-shaped
/// messenger_workers.toml (all futex wakeups, a hog for contention):
///
/// - 6.19 as released (NEXT_BUDDY off): identical to 6.12, as nothing here forks or wakes
///   a delayed task and no buddy is ever made;
/// - with NEXT_BUDDY, the messenger, woken by every posted request, becomes the buddy and,
///   eligible, preempts through the running task's slice protection: its wakeup latency
///   tail collapses (the direction upstream claims), and the workers' mean latency drops;
/// - but the workers' tail grows: a messenger/worker pair that keeps making each other
///   the buddy holds the one CPU while other woken workers wait until the pair is no
///   longer eligible (on upstream's many CPUs the waiting ones could run elsewhere).
#[test]
fn next_buddy_cuts_the_woken_messengers_latency_tail() {
    let sc = scenario("messenger_workers.toml");
    let v612 = run(&sc, &[]);
    let released = run(&sc, &[("NEXT_BUDDY_EEVDF", true)]);
    let nb = run(&sc, &[("NEXT_BUDDY_EEVDF", true), ("NEXT_BUDDY", true)]);
    let same = |a: &Report, b: &Report| {
        a.context_switches == b.context_switches
            && a.tasks.iter().zip(&b.tasks).all(|(x, y)| {
                (
                    x.runtime_ns,
                    x.wakeup_latency_p99_ns,
                    x.wakeup_latency_max_ns,
                ) == (
                    y.runtime_ns,
                    y.wakeup_latency_p99_ns,
                    y.wakeup_latency_max_ns,
                )
            })
    };
    assert!(
        same(&v612, &released),
        "6.19 without NEXT_BUDDY differs from 6.12 here"
    );
    let us = |ns: u64| ns as f64 / 1e3;
    let workers = |r: &Report| {
        let w: Vec<&TaskStats> = r.group("worker").collect();
        let n = w.len() as f64;
        (
            w.iter().map(|t| t.wakeup_latency_avg_ns).sum::<f64>() / n / 1e3,
            w.iter().map(|t| us(t.wakeup_latency_p99_ns)).sum::<f64>() / n,
        )
    };
    for (name, r) in [("6.12", &v612), ("6.19 + NEXT_BUDDY", &nb)] {
        let m = task(r, "messenger");
        let (avg, p99) = workers(r);
        println!(
            "{name:>17}: messenger p99 {:>6.1} max {:>7.1} us; workers avg {avg:>6.1} p99 {p99:>7.1} us",
            us(m.wakeup_latency_p99_ns),
            us(m.wakeup_latency_max_ns)
        );
    }
    let (m0, m1) = (task(&v612, "messenger"), task(&nb, "messenger"));
    assert!(m1.wakeup_latency_p99_ns * 3 < m0.wakeup_latency_p99_ns);
    assert!(m1.wakeup_latency_max_ns * 3 < m0.wakeup_latency_max_ns);
    let ((avg0, p99_0), (avg1, p99_1)) = (workers(&v612), workers(&nb));
    assert!(avg1 < avg0, "workers' mean latency {avg0} -> {avg1} us");
    assert!(
        p99_1 > p99_0,
        "workers' tail {p99_0} -> {p99_1} us (buddy chains)"
    );
}

/// The messenger scenario with NEXT_BUDDY on, NEXT_BUDDY_EEVDF toggled mid-run, futex and
/// pipe (WF_SYNC) wakeups: the core's invariant checker (the next buddy included) passes
/// after every event. Sync wakeups only make the buddy (6.19's preempt_sync() sees a waker
/// that ran 0 ns), so the messenger preempts less often than with futex wakeups.
#[test]
fn next_buddy_runs_hold_the_invariants() {
    use eevdf_sim::scenario::{Behaviour, FeatureChange};
    let mut switches = Vec::new();
    for sync in [false, true] {
        let mut sc = scenario("messenger_workers.toml");
        sc.duration_ms = 600;
        if let Behaviour::Messenger { sync: s, .. } = &mut sc.tasks[0].behaviour {
            *s = sync;
        }
        for (at_ms, on) in [(200, false), (400, true)] {
            sc.feature_changes.push(FeatureChange {
                at_ms,
                set: [("NEXT_BUDDY_EEVDF".to_string(), on)].into_iter().collect(),
            });
        }
        let opts = RunOptions {
            check_invariants: true,
            feature_overrides: vec![
                ("NEXT_BUDDY_EEVDF".to_string(), true),
                ("NEXT_BUDDY".to_string(), true),
            ],
            ..RunOptions::default()
        };
        let r = Sim::run(&sc, &opts).expect("invariants hold").report;
        let m = task(&r, "messenger");
        println!("sync={sync}: messenger preempted {} times", m.preempted);
        switches.push(m.preempted);
    }
    assert!(switches[1] < switches[0], "{switches:?}");
}

/// Seed 000's claim where it holds, the waker inside its share (4% of a CPU against 1/3):
/// with a 0.1x slice (clamped to 100 us) its earlier deadline preempts a hog at once, every
/// time; with a 10x slice it waits, at times, for a hog's protected slice. The lab's in-share
/// latency cells are the kernel's side (Documentation/lab.md: the kernel has a tail at 0.1x
/// that this does not predict).
#[test]
fn in_share_waker_a_short_slice_cuts_latency() {
    let lat = |file| {
        let r = run(&scenario(file), &[]);
        let t = task(&r, "waker");
        println!(
            "{file}: avg {:.1} us, p99 {:.1} us, max {:.1} us, share {:.4}",
            t.wakeup_latency_avg_ns / 1e3,
            t.wakeup_latency_p99_ns as f64 / 1e3,
            t.wakeup_latency_max_ns as f64 / 1e3,
            t.cpu_share
        );
        (
            t.wakeup_latency_avg_ns / 1e3,
            t.wakeup_latency_p99_ns as f64 / 1e3,
            t.cpu_share,
        )
    };
    let (short_avg, short_p99, short_share) = lat("waker_in_share_0.1x.toml");
    let (long_avg, long_p99, long_share) = lat("waker_in_share_10x.toml");
    assert!(
        short_p99 < 1.0 && short_avg < 1.0,
        "0.1x: {short_avg} / {short_p99}"
    );
    assert!(
        long_avg > 50.0 && long_p99 >= 700.0,
        "10x: {long_avg} / {long_p99}"
    );
    // Inside its share either way: it gets all it asks for (40 us a millisecond).
    for s in [short_share, long_share] {
        assert!((0.039..=0.041).contains(&s), "share {s}");
    }
}
