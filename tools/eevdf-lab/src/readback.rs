//! The latency cells' slices held against their plan.
//!
//! 6.12 keeps a task's `custom_slice` across fork, so a waker that set its slice and then
//! forked its load ran every task of the cell at its own slice. eevdf-waker now sets the
//! load's slice in the child before its exec and reads back, while the cell runs, the
//! policy, nice value and `se.slice` of itself and of the load (`/proc/<pid>/sched`,
//! [`eevdf_guest::TaskReadback`]). A run whose read-back differs from what its cell names
//! (or that read back no waker or no load task) fails, with a message that names the cell,
//! the task and the planned and read values, and its numbers stay out of the tables.

use crate::parse::{BootInfo, Outcome, Status};
use crate::plan::{slices_name, Cell, Kernel, Workload};
use eevdf_guest::{slice_held_ns, slice_request_ns, Record, TaskReadback};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// What a cell plans for one of its tasks: the policy, nice value and slice (ns) that
/// `/proc/<pid>/sched` should show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub policy: &'static str,
    pub nice: i32,
    pub slice_ns: u64,
}

impl Planned {
    /// SCHED_OTHER at nice 0 with a slice of `slice_ns`: every task the cells plan.
    fn other(slice_ns: u64) -> Planned {
        Planned {
            policy: "other",
            nice: 0,
            slice_ns,
        }
    }

    /// Whether `t` read back this policy, nice value and slice.
    fn held_by(&self, t: &TaskReadback) -> bool {
        t.policy.as_deref() == Some(self.policy)
            && t.nice == Some(self.nice)
            && t.slice_ns == Some(self.slice_ns)
    }

    fn describe(&self) -> String {
        format!(
            "{} nice {} slice {} ns",
            self.policy, self.nice, self.slice_ns
        )
    }

    /// Each of `tasks` that does not hold this plan: what it read back, against the plan.
    fn missed_by<'a>(&self, tasks: impl IntoIterator<Item = &'a TaskReadback>) -> Vec<String> {
        let plan = self.describe();
        tasks
            .into_iter()
            .filter(|t| !self.held_by(t))
            .map(|t| format!("{} task {}, planned {plan}", t.role, t.describe()))
            .collect()
    }
}

/// The plan of a latency cell that names its load's slice, on a kernel whose base slice is
/// `base_ns`: (waker, load), both SCHED_OTHER at nice 0. The waker asks for
/// `round(base × x)` and holds its clamp; the load at 1x holds the base slice (it asks for
/// 0), at any other multiple the clamp of its request. `None` for other cells, and for runs
/// from before the load-slice fix (`load_slice_x` None).
pub fn planned(cell: &Cell, base_ns: u64) -> Option<(Planned, Planned)> {
    let Workload::Latency {
        slice_x,
        load_slice_x: Some(load_x),
        ..
    } = cell.workload
    else {
        return None;
    };
    let held = |x| slice_held_ns(slice_request_ns(base_ns, x), base_ns);
    let load_ns = if load_x == 1.0 { base_ns } else { held(load_x) };
    Some((Planned::other(held(slice_x)), Planned::other(load_ns)))
}

/// `cell {cell} did not run the {what} it names: {why; ...}` (`what it names` when `what` is
/// empty), the reason a run failed its read-back; `None` when there is no `why`.
fn unheld(cell: String, what: &str, why: &[String]) -> Option<String> {
    let what = if what.is_empty() {
        "what".to_string()
    } else {
        format!("the {what}")
    };
    (!why.is_empty()).then(|| {
        format!(
            "cell {cell} did not run {what} it names: {}",
            why.join("; ")
        )
    })
}

/// The waker's record among `records`.
fn waker_of(records: &[Record]) -> Option<&eevdf_guest::WakerResult> {
    records.iter().find_map(|r| match r {
        Record::Waker(w) => Some(w),
        _ => None,
    })
}

/// Why the read-back of a run of `cell` does not hold its plan; `None` when it does, or when
/// the cell plans no slices (or the run has no waker record: the run failed otherwise).
pub fn mismatch(cell: &Cell, base_ns: u64, records: &[Record]) -> Option<String> {
    let (slice_x, load_x) = match cell.workload {
        Workload::Mixed { .. } => return mixed_mismatch(cell, base_ns, records),
        Workload::Migrate { hog_nice, .. } => return hogs_mismatch(cell, hog_nice, records),
        Workload::Latency {
            slice_x,
            load_slice_x: Some(load_x),
            ..
        } => (slice_x, load_x),
        _ => return None,
    };
    let w = waker_of(records)?;
    let id = cell.id();
    let names = slices_name(slice_x, Some(load_x));
    if base_ns == 0 {
        return Some(format!(
            "cell {id} ({names}): the boot reported no base slice, so its slices cannot be \
             checked"
        ));
    }
    let (waker, load) = planned(cell, base_ns)?;
    let mut why = Vec::new();
    for (role, plan) in [("waker", &waker), ("load", &load)] {
        let tasks: Vec<&TaskReadback> = w.readback.iter().filter(|t| t.role == role).collect();
        if tasks.is_empty() {
            why.push(format!(
                "no {role} task was read back (planned {})",
                plan.describe()
            ));
        }
        why.extend(plan.missed_by(tasks));
    }
    unheld(
        format!("{id} ({names}, base slice {base_ns} ns)"),
        "slices",
        &why,
    )
}

/// Why a run of `cell` did not hold the scheduler tunables its feature set writes, as
/// `read` (the run's `@@tunables` read-back) shows them; `None` when it held them all.
fn tunables_mismatch(cell: &Cell, read: &BTreeMap<String, u64>) -> Option<String> {
    let why: Vec<String> = cell
        .features
        .tunables()
        .iter()
        .filter(|t| read.get(&t.file) != Some(&t.value))
        .map(|t| match read.get(&t.file) {
            Some(v) => format!("{} read back {v}, planned {}", t.file, t.value),
            None => format!("{} not read back, planned {}", t.file, t.value),
        })
        .collect();
    unheld(cell.id(), "tunables", &why)
}

/// Why a seed 002 run (eevdf-mixed) did not hold its plan: every task SCHED_OTHER at nice 0
/// with the base slice (`base_ns`, the cell's own `base_slice_ns` when it writes one).
/// `None` when it did, or for records from before eevdf-mixed read its tasks back.
fn mixed_mismatch(cell: &Cell, base_ns: u64, records: &[Record]) -> Option<String> {
    let r = records.iter().find_map(|r| match r {
        Record::Mixed(m) => Some(m),
        _ => None,
    })?;
    if r.readback.is_empty() {
        return None;
    }
    let why = Planned::other(base_ns).missed_by(&r.readback);
    unheld(format!("{} (base slice {base_ns} ns)", cell.id()), "", &why)
}

/// Why a seed 003 run (eevdf-migrate) did not hold its plan: its hogs SCHED_OTHER at the
/// cell's nice (19 runs V far ahead; a hog that stayed at 0 would not). `None` when they
/// did, or for records from before eevdf-migrate read its hogs back (and runs without hogs).
fn hogs_mismatch(cell: &Cell, hog_nice: i32, records: &[Record]) -> Option<String> {
    let r = records.iter().find_map(|r| match r {
        Record::Migrate(m) => Some(m),
        _ => None,
    })?;
    let why: Vec<String> = r
        .hogs
        .iter()
        .filter(|t| t.policy.as_deref() != Some("other") || t.nice != Some(hog_nice))
        .map(|t| format!("hog {}, planned other nice {hog_nice}", t.describe()))
        .collect();
    unheld(cell.id(), "hogs", &why)
}

/// Fails every successful run in `outcomes` (one boot's) whose cell in `cells` plans
/// slices or scheduler tunables that its read-back does not show; `info` gives the boot's
/// base slice, which a cell's own `base_slice_ns` tunable replaces.
pub fn check_boot(cells: &[Cell], info: &BootInfo, outcomes: &mut [Outcome]) {
    for o in outcomes.iter_mut().filter(|o| o.status == Status::Ok) {
        let Some(cell) = cells.iter().find(|c| c.id() == o.id) else {
            continue;
        };
        let base = cell.features.base_slice_ns().unwrap_or(info.base_slice_ns);
        if let Some(why) =
            tunables_mismatch(cell, &o.tunables).or_else(|| mismatch(cell, base, &o.records))
        {
            o.status = Status::Failed(why);
        }
    }
}

/// The report's table of what the latency cells read back, a row a cell and kernel: the
/// slices planned (waker, load) and the distinct slices read back for each role, µs, and how
/// many runs read back and how many of those did not hold the plan. `boots` are each boot's
/// kernel, info and outcomes; `run_cpus` the run's vCPUs (a cell without its own). Empty
/// when no cell plans its load's slice (runs from before the load-slice fix).
pub fn table<'a>(
    cells: &[Cell],
    run_cpus: u32,
    boots: impl IntoIterator<Item = (Kernel, &'a BootInfo, &'a [Outcome])> + Clone,
) -> String {
    let us = |set: &BTreeSet<u64>| {
        if set.is_empty() {
            "-".to_string()
        } else {
            let v: Vec<String> = set
                .iter()
                .map(|ns| format!("{}", *ns as f64 / 1e3))
                .collect();
            v.join(", ")
        }
    };
    let mut t = String::new();
    for c in cells {
        let Workload::Latency {
            load_slice_x: Some(_),
            ..
        } = c.workload
        else {
            continue;
        };
        let id = c.id();
        for k in [Kernel::Stock, Kernel::Rust] {
            // The slices planned for the waker and the load, then those read back.
            let mut sets: [BTreeSet<u64>; 4] = Default::default();
            let (mut runs, mut bad) = (0, 0);
            for (_, info, outcomes) in boots.clone().into_iter().filter(|b| b.0 == k) {
                for o in outcomes.iter().filter(|o| o.id == id) {
                    let Some(w) = waker_of(&o.records).filter(|w| !w.readback.is_empty()) else {
                        continue;
                    };
                    runs += 1;
                    if let Some((pw, pl)) = planned(c, info.base_slice_ns) {
                        sets[0].insert(pw.slice_ns);
                        sets[1].insert(pl.slice_ns);
                    }
                    for r in &w.readback {
                        sets[2 + usize::from(r.role != "waker")].extend(r.slice_ns);
                    }
                    bad += usize::from(mismatch(c, info.base_slice_ns, &o.records).is_some());
                }
            }
            if runs == 0 {
                continue;
            }
            let sets: Vec<String> = sets.iter().map(us).collect();
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {runs} | {bad} |",
                c.label(),
                c.features.name(),
                k.name(),
                sets.join(" | "),
            );
        }
    }
    if t.is_empty() {
        return t;
    }
    format!(
        "The slices the latency cells ran at: `se.slice` of the waker and of the \
         load's tasks (the command and two of its descendants), read from `/proc/<pid>/sched` \
         while each run ran, against the plan, µs; policy and nice are checked too. A run that \
         does not hold its plan failed, and its numbers are not in the tables.\n\n| workload \
         | features | kernel | planned: waker | planned: load | read: waker | read: load | \
         runs read | runs off plan |\n|---|---|---|---|---|---|---|---|---|\n{t}\n{}",
        clamped(cells, run_cpus, boots.into_iter().map(|b| b.1))
    )
}

/// The cells whose waker asks for a slice the kernel does not hold as asked (`sched_attr`'s
/// runtime is clamped to [0.1 ms, 100 ms]), so that the multiple in the cell's name is not
/// the one it ran: one sentence each request, from the base slices that the boots at the
/// cell's vCPU count (`run_cpus` for a cell without its own) reported, or nothing when every
/// request was held.
pub fn clamped<'a>(
    cells: &[Cell],
    run_cpus: u32,
    infos: impl IntoIterator<Item = &'a BootInfo>,
) -> String {
    let bases: BTreeSet<(u32, u64)> = infos
        .into_iter()
        .map(|i| (i.cpus, i.base_slice_ns))
        .filter(|&(_, b)| b > 0)
        .collect();
    let mut seen = BTreeSet::new();
    let mut s = String::new();
    for c in cells {
        let Workload::Latency { slice_x, .. } = c.workload else {
            continue;
        };
        let cpus = c.cpus_in(run_cpus);
        for base in bases.iter().filter(|b| b.0 == cpus).map(|b| b.1) {
            let asked = slice_request_ns(base, slice_x);
            let held = slice_held_ns(asked, base);
            if held == asked || !seen.insert((slice_x.to_bits(), base)) {
                continue;
            }
            let _ = writeln!(
                s,
                "Where the base slice is {} µs, the {slice_x}x waker asks for {} µs and holds \
                 {} µs, the kernel's bound on `sched_attr`'s runtime ([0.1 ms, 100 ms]): it ran \
                 at {:.2}x the base slice, not {slice_x}x.",
                base as f64 / 1e3,
                asked as f64 / 1e3,
                held as f64 / 1e3,
                held as f64 / base as f64,
            );
        }
    }
    if s.is_empty() {
        s
    } else {
        s + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::main_matrix::cells as matrix;
    use crate::plan::{Experiment, FeatureSet, MatrixKind};
    use crate::verdict::has;
    use eevdf_guest::WakerResult;

    fn cell(slice_x: f64, load_slice_x: Option<f64>) -> Cell {
        crate::plan::latency_for_test(slice_x, load_slice_x, FeatureSet::eevdf())
    }

    fn task(role: &str, pid: i32, comm: &str, nice: i32, slice_ns: u64) -> TaskReadback {
        TaskReadback {
            role: role.into(),
            pid,
            comm: comm.into(),
            policy: Some("other".into()),
            nice: Some(nice),
            slice_ns: Some(slice_ns),
        }
    }

    /// The waker (pid 90) at `waker_ns` and its hackbench load (pids 91 on) at `load_ns`.
    fn ran(waker_ns: u64, load_ns: &[u64]) -> Vec<Record> {
        let load = load_ns
            .iter()
            .zip(91..)
            .map(|(&ns, pid)| task("load", pid, "hackbench", 0, ns));
        waker(
            std::iter::once(task("waker", 90, "eevdf-waker", 0, waker_ns))
                .chain(load)
                .collect(),
        )
    }

    fn waker(readback: Vec<TaskReadback>) -> Vec<Record> {
        vec![Record::Waker(WakerResult {
            slice_requested_ns: 70_000,
            slice_effective_ns: 100_000,
            load_slice_requested_ns: Some(0),
            readback,
            load_tasks: 81,
            ..crate::parse::waker_for_test()
        })]
    }

    /// 6.12 on one vCPU: the base slice is 0.7 ms; 0.1x asks 70 µs and holds 100 µs.
    const BASE: u64 = 700_000;

    /// A boot whose base slice is [`BASE`].
    fn base_info() -> BootInfo {
        BootInfo {
            base_slice_ns: BASE,
            ..BootInfo::default()
        }
    }

    #[test]
    fn the_plan_of_a_cell() {
        let (plan, other) = (|x, l| planned(&cell(x, l), BASE), Planned::other);
        assert_eq!(plan(0.1, Some(1.0)), Some((other(100_000), other(700_000))));
        assert_eq!(
            plan(10.0, Some(10.0)),
            Some((other(7_000_000), other(7_000_000)))
        );
        assert_eq!(plan(0.1, None), None);
        let hb = matrix(MatrixKind::Quick, &[Experiment::Throughput]);
        assert_eq!(planned(&hb[0], BASE), None);
    }

    /// The bug the load-slice fix fixed: the load inherited the waker's 0.1x slice.
    #[test]
    fn an_inherited_slice_fails_the_cell_and_says_where() {
        let recs = ran(100_000, &[100_000]);
        let c = cell(0.1, Some(1.0));
        let why = mismatch(&c, BASE, &recs).expect("a mismatch");
        assert_eq!(
            why,
            "cell lat-w0.1x-l1x/EEVDF (waker 0.1x, load 1x, base slice 700000 ns) did not run \
             the slices it names: load task pid 91 (hackbench): other nice 0 slice 100000 ns, \
             planned other nice 0 slice 700000 ns"
        );
        // check_boot fails that run and leaves the others: a read-back that holds the plan
        // passes.
        let mut outcomes = vec![Outcome::new(&c.id(), 0), Outcome::new(&c.id(), 1)];
        outcomes[0].records = recs;
        outcomes[1].records = ran(100_000, &[700_000, 700_000]);
        assert_eq!(mismatch(&c, BASE, &outcomes[1].records), None);
        let info = base_info();
        check_boot(&[c], &info, &mut outcomes);
        assert!(matches!(&outcomes[0].status, Status::Failed(w) if w.contains("task pid 91")));
        assert_eq!(outcomes[1].status, Status::Ok);
    }

    /// A run whose tunables read back otherwise than planned, or not at all, fails.
    #[test]
    fn a_run_that_did_not_hold_its_tunables_fails() {
        let c = Cell::new(
            Experiment::Throughput,
            FeatureSet::eevdf().with_tunable("EEVDF-mc0", "migration_cost_ns", 0),
            Workload::PingPong { duration_ms: 100 },
        );
        let mut outcomes: Vec<Outcome> = (0..3).map(|r| Outcome::new(&c.id(), r)).collect();
        outcomes[0].tunables.insert("migration_cost_ns".into(), 0);
        outcomes[1]
            .tunables
            .insert("migration_cost_ns".into(), 500_000);
        check_boot(&[c], &BootInfo::default(), &mut outcomes);
        assert_eq!(outcomes[0].status, Status::Ok);
        assert!(matches!(&outcomes[1].status,
            Status::Failed(w) if w.contains("migration_cost_ns read back 500000, planned 0")));
        assert!(matches!(&outcomes[2].status,
            Status::Failed(w) if w.contains("migration_cost_ns not read back")));
    }

    /// Seed 002's tasks are held to the cell's base slice (its own tunable where it writes
    /// one); a task at another slice fails the run, and records without a read-back pass.
    #[test]
    fn a_mixed_run_is_held_to_its_base_slice() {
        let cells = crate::seeds::matrix(false, &[crate::plan::Experiment::Seed(2)]);
        let long = cells
            .iter()
            .find(|c| c.features.base_slice_ns().is_some())
            .unwrap()
            .clone();
        let rec = |slices: &[u64]| {
            let tasks = slices.iter().zip(100..);
            let t = tasks.map(|(&ns, pid)| task("interactive", pid, "eevdf-mixed", 0, ns));
            vec![crate::parse::mixed_for_test(Vec::new(), t.collect())]
        };
        let info = base_info();
        let mut outcomes: Vec<Outcome> = (0..3).map(|r| Outcome::new(&long.id(), r)).collect();
        for o in &mut outcomes {
            o.tunables.insert("base_slice_ns".into(), 3_000_000);
        }
        outcomes[0].records = rec(&[3_000_000, 3_000_000]);
        outcomes[1].records = rec(&[3_000_000, BASE]);
        outcomes[2].records = rec(&[]);
        check_boot(std::slice::from_ref(&long), &info, &mut outcomes);
        assert_eq!(outcomes[0].status, Status::Ok);
        assert!(matches!(&outcomes[1].status,
            Status::Failed(w) if w.contains("slice 700000 ns, planned other nice 0 slice 3000000")));
        assert_eq!(outcomes[2].status, Status::Ok);
    }

    /// Seed 003's nice-19 cell fails a run whose hogs did not run at nice 19.
    #[test]
    fn a_migrate_run_is_held_to_its_hogs_nice() {
        let cells = crate::seeds::matrix(false, &[crate::plan::Experiment::Seed(3)]);
        let c = cells
            .iter()
            .find(|c| matches!(c.workload, Workload::Migrate { hog_nice: 19, .. }))
            .unwrap();
        let rec = |nice: i32| {
            vec![Record::Migrate(eevdf_guest::MigrateResult {
                hog_nice: 19,
                hogs: vec![task("hog", 7, "eevdf-migrate", nice, BASE)],
                ..crate::parse::migrate_for_test(Vec::new())
            })]
        };
        assert_eq!(mismatch(c, BASE, &rec(19)), None);
        let why = mismatch(c, BASE, &rec(0)).expect("a mismatch");
        assert!(
            why.starts_with(&format!(
                "cell {} did not run the hogs it names: hog ",
                c.id()
            )) && why.contains("nice 0")
                && why.contains("planned other nice 19"),
            "{why}"
        );
    }

    #[test]
    fn the_table_shows_planned_and_read_slices() {
        let c = cell(0.1, Some(1.0));
        let info = base_info();
        let mut good = Outcome::new(&c.id(), 0);
        good.records = ran(100_000, &[700_000]);
        let mut inherited = Outcome::new(&c.id(), 1);
        inherited.records = ran(100_000, &[100_000]);
        let stock = [good.clone()];
        let rust = [good, inherited];
        let t = table(
            std::slice::from_ref(&c),
            info.cpus,
            [
                (Kernel::Stock, &info, &stock[..]),
                (Kernel::Rust, &info, &rust[..]),
            ],
        );
        assert!(t.starts_with("The slices the latency cells ran at"), "{t}");
        assert!(
            t.contains("| waker 0.1x, load 1x (hackbench -g 2 -l 70) | EEVDF | stock | 100 | 700 | 100 | 700 | 1 | 0 |"),
            "{t}"
        );
        assert!(
            t.contains("| waker 0.1x, load 1x (hackbench -g 2 -l 70) | EEVDF | rust | 100 | 700 | 100 | 100, 700 | 2 | 1 |"),
            "{t}"
        );
        has(
            &t,
            "Where the base slice is 700 µs, the 0.1x waker asks for 70 µs and holds 100 µs, \
             the kernel's bound on `sched_attr`'s runtime ([0.1 ms, 100 ms]): it ran at 0.14x \
             the base slice, not 0.1x.",
        );
        // A request the kernel holds as asked is not named.
        let one = cell(1.0, Some(1.0));
        assert_eq!(clamped(std::slice::from_ref(&one), info.cpus, [&info]), "");
        // A base slice reported at another vCPU count says nothing of this cell.
        let cs = std::slice::from_ref(&c);
        assert_eq!(clamped(cs, info.cpus + 1, [&info]), "");
        // Runs from before the load-slice fix plan no load slice: no table.
        let (old, boots) = ([cell(0.1, None)], [(Kernel::Rust, &info, &rust[..])]);
        assert_eq!(table(&old, info.cpus, boots), "");
    }

    #[test]
    fn policy_nice_and_missing_tasks_fail_too() {
        let c = cell(10.0, Some(1.0));
        let mut niced = task("load", 91, "hackbench", 5, 700_000);
        let recs = waker(vec![
            task("waker", 90, "eevdf-waker", 0, 7_000_000),
            niced.clone(),
        ]);
        let why = mismatch(&c, BASE, &recs).unwrap();
        assert!(
            why.contains(
                "load task pid 91 (hackbench): other nice 5 slice 700000 ns, planned other nice 0"
            ),
            "{why}"
        );
        niced.nice = Some(0);
        niced.policy = Some("batch".into());
        let recs = waker(vec![task("waker", 90, "eevdf-waker", 0, 7_000_000), niced]);
        assert!(mismatch(&c, BASE, &recs).unwrap().contains("batch nice 0"));
        // No load read back (it ended before the read), or nothing at all.
        let recs = ran(7_000_000, &[]);
        let why = mismatch(&c, BASE, &recs).unwrap();
        assert!(
            why.ends_with("no load task was read back (planned other nice 0 slice 700000 ns)"),
            "{why}"
        );
        let why = mismatch(&c, BASE, &waker(vec![])).unwrap();
        assert!(
            why.contains("no waker task") && why.contains("no load task"),
            "{why}"
        );
        assert!(mismatch(&c, 0, &waker(vec![]))
            .unwrap()
            .contains("no base slice"));
        // A run from before the load-slice fix plans nothing and is not checked.
        assert_eq!(mismatch(&cell(10.0, None), BASE, &waker(vec![])), None);
    }
}
