//! Several runs of one study as one record (`eevdf-lab report RAW RAW ...`): a study too
//! long for one session runs in parts (`seeds`, then `seeds --only seed000@2cpu`, or one
//! part a kernel, `--kernels rust` beside `--kernels stock`) and its page is made from them
//! all. Later runs replace earlier runs' outcomes cell by cell, on the kernels they booted;
//! the report is then computed from the merged record as from one run's, every verdict from
//! its rows.

use crate::plan::{Cell, Kernel};
use crate::report::{MergedRun, Raw};
use anyhow::{bail, Result};
use std::collections::HashSet;

/// Whether two runs planned the same cell: every field of it (its workload's command and
/// loop counts, its features and tunables, its guest), as the runs' records hold it.
fn same_definition(a: &Cell, b: &Cell) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// Merges `runs` (each its raw.json's name and record), oldest first, into one record:
///
/// - its cells are the first run's, each replaced in place by a later run's cell of the same
///   ID (its definition, e.g. its loop count, is the later run's), then the later runs' new
///   cells in their order;
/// - a cell ID a later run planned drops that cell's outcomes from every earlier run: on the
///   kernels the later run booted, where the two runs define the cell alike (so that two
///   runs of one plan, one on each kernel, make one cell with both); on every kernel where
///   the definitions differ (a later run on one kernel then leaves the cell none of the
///   other's: a ratio across runs would compare two workloads); every other cell keeps its
///   outcomes;
/// - the boots are every run's, in order (a boot whose outcomes were all replaced stays, so
///   that a failed boot is still reported), and `merged` says which are whose.
///
/// One run is returned as it is. The runs must be of one matrix kind, kernel pair, guest
/// vCPU count, timing, statistics (confidence, resamples, seed) and stand-ins, and none a
/// merge itself; otherwise an error says which differ and nothing is merged. Kernels that
/// differ between runs (another build, `uname -r` or features) are merged, and the page's
/// Kernels table shows a row for each build with the runs that booted it.
pub fn merge(runs: Vec<(String, Raw)>, merge_command: &str) -> Result<Raw> {
    let Some((first_name, first)) = runs.first() else {
        bail!("report needs a raw.json");
    };
    if runs.len() == 1 {
        return Ok(first.clone());
    }
    for (name, r) in &runs {
        if !r.merged.is_empty() {
            bail!(
                "{name} is itself a merge of {} runs: name their raw.json files instead",
                r.merged.len()
            );
        }
        if r.matrix.is_next() {
            bail!(
                "{name} is a run of `next`, whose page describes one run: merging is for \
                 run, bar and seeds"
            );
        }
    }
    for (name, r) in &runs[1..] {
        let mut differ: Vec<String> = Vec::new();
        // What a setting is called, and its value in a run.
        let mut check = |what: &str, of: &dyn Fn(&Raw) -> String| {
            let (a, b) = (of(first), of(r));
            if a != b {
                differ.push(format!("{what} {a} against {b}"));
            }
        };
        check("matrix", &|x| format!("{:?}", x.matrix));
        check("kernel pair", &|x| x.pair.name().into());
        check("vCPUs (--cpus)", &|x| x.cpus.to_string());
        check("timing", &|x| format!("{:?}", x.timing));
        check("confidence", &|x| x.confidence.to_string());
        check("bootstrap resamples", &|x| {
            x.bootstrap_resamples.to_string()
        });
        check("bootstrap seed", &|x| x.seed.to_string());
        check("stand-ins", &|x| format!("{:?}", x.stand_ins));
        if !differ.is_empty() {
            bail!(
                "cannot merge {name} into {first_name}: they differ in {} (a page merges runs \
                 of one study, pair and set-up); nothing written",
                differ.join(", ")
            );
        }
    }
    let mut out = first.clone();
    out.cells.clear();
    out.boots.clear();
    out.kernels.clear();
    out.insnprof.clear();
    out.merge_command = merge_command.to_string();
    for (name, r) in runs {
        let ids: HashSet<String> = r.cells.iter().map(|c| c.id()).collect();
        let booted: HashSet<Kernel> = r.boots.iter().map(|b| b.kernel).collect();
        // The IDs whose definition differs from the merged record's so far: replaced on
        // every kernel.
        let redefined: HashSet<String> = r
            .cells
            .iter()
            .filter(|c| {
                out.cells
                    .iter()
                    .find(|x| x.id() == c.id())
                    .is_some_and(|x| !same_definition(x, c))
            })
            .map(|c| c.id())
            .collect();
        let replaced = |id: &str, k: Kernel| {
            ids.contains(id) && (booted.contains(&k) || redefined.contains(id))
        };
        for b in &mut out.boots {
            b.outcomes.retain(|o| !replaced(&o.id, b.kernel));
        }
        for m in &mut out.merged {
            let theirs = &out.boots[m.first_boot..m.first_boot + m.n_boots];
            m.cells
                .retain(|c| theirs.iter().any(|b| !replaced(c, b.kernel)));
        }
        for c in &r.cells {
            let id = c.id();
            match out.cells.iter_mut().find(|x| x.id() == id) {
                Some(x) => *x = c.clone(),
                None => out.cells.push(c.clone()),
            }
        }
        for k in &r.kernels {
            match out.kernels.iter_mut().find(|x| x.kernel == k.kernel) {
                Some(x) => *x = k.clone(),
                None => out.kernels.push(k.clone()),
            }
        }
        if !r.insnprof.is_empty() {
            out.insnprof = r.insnprof.clone();
        }
        out.merged.push(MergedRun {
            raw: name,
            started_utc: r.started_utc.clone(),
            command: r.command.clone(),
            boots_per_kernel: r.boots_per_kernel,
            inner_reps: r.inner_reps,
            kernels: r.kernels.clone(),
            first_boot: out.boots.len(),
            n_boots: r.boots.len(),
            n_cells: r.cells.len(),
            cells: r.cells.iter().map(|c| c.id()).collect(),
        });
        out.boots.extend(r.boots);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Outcome;
    use crate::plan::{Kernel, MatrixKind};
    use crate::report::{self, BootRun, KernelInfo, ReportPaths};
    use crate::verdict::has;
    use crate::{seeds, seeds_report};
    use eevdf_guest::Record;

    fn boot(kernel: Kernel, uname: &str, outcomes: Vec<Outcome>) -> BootRun {
        let mut b = BootRun::for_test(kernel, outcomes);
        b.info.uname = uname.into();
        b
    }

    fn kernels() -> Vec<KernelInfo> {
        [Kernel::Rust, Kernel::Stock]
            .map(|kernel| KernelInfo {
                kernel,
                image: "bzImage".into(),
                config_sched_eevdf_rust: Some(kernel == Kernel::Rust),
                build_current: Some(true),
            })
            .to_vec()
    }

    /// A seeds run over `cells` (seed 000's first three at 1 vCPU, the first two at 2), each
    /// outcome's metric `rate`, on kernels whose `uname -r` is `uname`.
    fn run(started: &str, cells: &[usize], rate: f64, uname: &str) -> Raw {
        let all = seeds::matrix(false, &[crate::plan::Experiment::Seed(0)]);
        let cells: Vec<_> = cells.iter().map(|&i| all[i].clone()).collect();
        let ids: Vec<String> = cells.iter().map(|c| c.id()).collect();
        let outcomes = || {
            ids.iter()
                .map(|i| Outcome::pingpong_for_test(i, rate))
                .collect::<Vec<_>>()
        };
        Raw {
            started_utc: started.into(),
            command: format!("target/release/eevdf-lab seeds # {started}"),
            kernels: kernels(),
            boots: vec![
                boot(Kernel::Rust, uname, outcomes()),
                boot(Kernel::Stock, uname, outcomes()),
            ],
            ..Raw::for_test(MatrixKind::Seeds, cells)
        }
    }

    /// The seeds page of `raw`.
    fn seeds_page(raw: &Raw) -> String {
        let rows = report::summarise(raw);
        seeds_report::markdown(raw, &rows, &ReportPaths { img_prefix: "" }, &[])
    }

    fn rates(raw: &Raw, id: &str) -> Vec<f64> {
        raw.boots
            .iter()
            .flat_map(|b| &b.outcomes)
            .filter(|o| o.id == id)
            .map(|o| match &o.records[0] {
                Record::PingPong(p) => p.switches_per_s,
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn later_runs_replace_cells_and_keep_the_rest() {
        let all = seeds::matrix(false, &[crate::plan::Experiment::Seed(0)]);
        let at2 = all.iter().position(|c| c.cpus == Some(2)).unwrap();
        let a = run("2026-01-01 00:00:00", &[0, 1, 2, at2], 1.0, "6.12.117");
        let b = run("2026-01-02 00:00:00", &[at2, at2 + 1], 2.0, "6.12.117");
        let (kept, replaced, added) = (all[0].id(), all[at2].id(), all[at2 + 1].id());
        let m = merge(
            vec![("a/raw.json".into(), a.clone()), ("b/raw.json".into(), b)],
            "eevdf-lab report a/raw.json b/raw.json",
        )
        .unwrap();
        assert_eq!(rates(&m, &kept), [1.0, 1.0]);
        assert_eq!(rates(&m, &replaced), [2.0, 2.0], "the later run's alone");
        assert_eq!(rates(&m, &added), [2.0, 2.0]);
        let ids: Vec<String> = m.cells.iter().map(|c| c.id()).collect();
        assert_eq!(ids.len(), 5);
        assert_eq!(ids[3], replaced, "replaced in place");
        assert_eq!(ids[4], added, "new cells after");
        assert_eq!(m.boots.len(), 4, "every boot stays");
        assert_eq!(m.merged[0].cells.len(), 3);
        assert_eq!((m.merged[1].first_boot, m.merged[1].n_boots), (2, 2));
        // The page: both runs and every command, one Kernels row a kernel (same builds).
        let page = seeds_page(&m);
        has(&page, "Merged from 2 runs of matrix `Seeds`");
        assert!(page.contains("1. Run 2026-01-01 00:00:00 UTC (`a/raw.json`)"));
        assert!(page.contains("the page takes 3 of its 4 cells (a later run replaced"));
        assert!(page.contains(&format!("the page takes all 2 of its cells: `{replaced}`")));
        assert!(page.contains(
            "```sh\ntarget/release/eevdf-lab seeds # 2026-01-01 00:00:00\n\
             target/release/eevdf-lab seeds # 2026-01-02 00:00:00\n\
             eevdf-lab report a/raw.json b/raw.json\n```"
        ));
        has(&page, "| 6.12.117 | `` | 1, 2 |");
        assert!(!page.contains("different builds"));
        // One run is itself, its page as before.
        let one = merge(vec![("a/raw.json".into(), a.clone())], "x").unwrap();
        assert!(one.merged.is_empty() && one.merge_command.is_empty());
        assert_eq!(
            serde_json::to_string(&one).unwrap(),
            serde_json::to_string(&a).unwrap()
        );
        // A run merged with itself: the second replaces the first wholesale, same numbers.
        let aa = merge(vec![("a".into(), a.clone()), ("a".into(), a.clone())], "r").unwrap();
        assert!(aa.merged[0].cells.is_empty());
        assert!(seeds_page(&aa)
            .contains("the page takes none of its 4 cells (later runs replaced them all)"));
        let (ra, raa) = (report::summarise(&a), report::summarise(&aa));
        assert_eq!(
            serde_json::to_string(&ra).unwrap(),
            serde_json::to_string(&raa).unwrap()
        );
    }

    #[test]
    fn runs_of_other_studies_or_set_ups_are_refused() {
        let a = run("2026-01-01 00:00:00", &[0], 1.0, "6.12.117");
        let refused = |b: Raw| {
            merge(vec![("a".into(), a.clone()), ("b".into(), b)], "r")
                .unwrap_err()
                .to_string()
        };
        let changed = |f: &dyn Fn(&mut Raw)| {
            let mut b = a.clone();
            f(&mut b);
            refused(b)
        };
        let e = changed(&|b| b.matrix = MatrixKind::SeedsSmoke);
        has(
            &e,
            "cannot merge b into a: they differ in matrix Seeds against SeedsSmoke",
        );
        let e = changed(&|b| b.pair = crate::plan::Pair::Distro);
        assert!(e.contains("kernel pair tiny against distro"));
        let e = changed(&|b| (b.cpus, b.seed) = (2, 7));
        has(&e, "vCPUs (--cpus) 1 against 2, bootstrap seed 1 against 7");
        let mut b = Raw::for_test(MatrixKind::Quick, vec![]);
        b.started_utc = "x".into();
        assert!(refused(b).contains("matrix Seeds against Quick"));
        let next = Raw::for_test(MatrixKind::Next, vec![]);
        assert!(
            merge(vec![("n".into(), next.clone()), ("n".into(), next)], "r")
                .unwrap_err()
                .to_string()
                .contains("run of `next`")
        );
        // A merge is not merged again.
        let m = merge(vec![("a".into(), a.clone()), ("a".into(), a.clone())], "r").unwrap();
        assert!(refused(m).contains("is itself a merge of 2 runs"));
    }

    /// Two runs of one plan, one on each kernel (a study split by `--kernels` to run a part
    /// a core), make cells with both kernels' outcomes; a later run on one kernel that
    /// defines a cell otherwise (here its hackbench loops) leaves it the later run's
    /// kernel alone.
    #[test]
    fn runs_on_one_kernel_each_make_one_cell() {
        // A run of `cells` on kernel `k` alone, each outcome's metric `rate`.
        let on = |k: Kernel, started: &str, cells: &[usize], rate: f64| {
            let mut r = run(started, cells, rate, "6.12.117");
            r.kernels.retain(|x| x.kernel == k);
            r.boots.retain(|b| b.kernel == k);
            r
        };
        let all = seeds::matrix(false, &[crate::plan::Experiment::Seed(0)]);
        let id = all[0].id();
        let rust = on(Kernel::Rust, "2026-01-01 00:00:00", &[0, 1], 1.0);
        let stock = on(Kernel::Stock, "2026-01-01 00:00:01", &[0], 2.0);
        let m = merge(
            vec![("r".into(), rust.clone()), ("s".into(), stock.clone())],
            "r",
        )
        .unwrap();
        assert_eq!(rates(&m, &id), [1.0, 2.0], "rust's then stock's");
        assert_eq!(rates(&m, &all[1].id()), [1.0]);
        assert_eq!(
            m.merged[0].cells.len(),
            2,
            "the rust run keeps both its cells"
        );
        assert_eq!(m.merged[1].cells, std::slice::from_ref(&id));
        let rows = report::summarise(&m);
        assert!(rows.iter().any(|r| r.cell_id == id
            && r.kernels.contains_key(&Kernel::Rust)
            && r.kernels.contains_key(&Kernel::Stock)
            && r.ratio.is_some()));
        // A later stock run whose cell runs other loops: the rust outcomes go too.
        let mut other = stock.clone();
        match &mut other.cells[0].workload {
            crate::plan::Workload::Latency { hb_loops, .. } => *hb_loops += 1,
            w => panic!("seed 000's first cell is a latency cell, not {w:?}"),
        }
        let m = merge(vec![("r".into(), rust), ("s".into(), other)], "r").unwrap();
        assert_eq!(
            rates(&m, &id),
            [2.0],
            "the redefined cell: the later run's alone"
        );
        assert_eq!(m.merged[0].cells, [all[1].id()]);
    }

    /// Runs on different builds of a kernel merge; the Kernels table has a row for each
    /// build, with its runs, and says they differ.
    #[test]
    fn differing_kernels_get_a_row_each() {
        let a = run("2026-01-01 00:00:00", &[0], 1.0, "6.12.117");
        let mut b = run("2026-01-02 00:00:00", &[1], 2.0, "6.12.118");
        b.kernels.retain(|k| k.kernel == Kernel::Stock);
        b.boots.retain(|x| x.kernel == Kernel::Stock);
        let page = seeds_page(&merge(vec![("a".into(), a), ("b".into(), b)], "r").unwrap());
        let table: Vec<&str> = page
            .lines()
            .skip_while(|l| !l.starts_with("## Kernels"))
            .skip(4)
            .take_while(|l| l.starts_with('|'))
            .collect();
        assert_eq!(table.len(), 3, "{page}");
        assert!(table[0].starts_with("| rust |") && table[0].ends_with("| 1 |"));
        assert!(table[1].contains("6.12.117") && table[1].ends_with("| 1 |"));
        assert!(table[2].contains("6.12.118") && table[2].ends_with("| 2 |"));
        assert!(page.contains("**The merged runs booted different builds of the stock kernel**"));
    }
}
