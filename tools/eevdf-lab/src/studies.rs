//! The studies the lab runs: the main matrix (latency, throughput, fairness, scale and the
//! performance bar: `main_matrix.rs`, `report.rs`), upstream's next features (`next.rs`,
//! `next_report.rs`) and the seeds' experiments (`seeds.rs`, `seeds_report.rs`). Each
//! [`Study`] has its cells ([`matrix`]) and its report from a run's records ([`finish`]).
//! This module sits above them all, so that none of them depends on another.

use crate::main_matrix;
use crate::plan::{Cell, Experiment, MatrixKind};
use crate::report::{self, Raw};
use crate::{next_report, seeds_report};
use anyhow::Result;
use std::path::Path;

/// One of the lab's studies.
enum Study {
    /// The main matrix and the bar: rust against stock, one table an experiment.
    Main,
    /// Upstream's next features, off against on, on the rust kernel.
    Next,
    /// The seeds' experiments, each beside its seed's claim.
    Seeds,
}

/// The study a matrix kind belongs to.
fn study(kind: MatrixKind) -> Study {
    if kind.is_next() {
        Study::Next
    } else if kind.is_seeds() {
        Study::Seeds
    } else {
        Study::Main
    }
}

/// The cells of a matrix of `kind` (its study's), in run order, limited to `only`
/// experiments (all when empty).
pub fn matrix(kind: MatrixKind, only: &[Experiment]) -> Vec<Cell> {
    match study(kind) {
        Study::Main => main_matrix::cells(kind, only),
        Study::Next => crate::next::matrix(kind == MatrixKind::NextSmoke, only),
        Study::Seeds => crate::seeds::matrix(kind == MatrixKind::SeedsSmoke, only),
    }
}

/// The report of `raw` by its matrix's study: `report.md` and `summary.json` in `dir`, the
/// page at `results_page` if asked (its plots beside it), and the summary printed.
pub fn finish(raw: &Raw, dir: &Path, results_page: Option<&Path>) -> Result<()> {
    match study(raw.matrix) {
        Study::Main => report::finish(raw, dir, results_page),
        Study::Next => next_report::finish(raw, dir, results_page),
        Study::Seeds => seeds_report::finish(raw, dir, results_page),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{guest_script, plan_boots, Kernel};
    use clap::ValueEnum;

    #[test]
    fn each_kind_is_its_study() {
        assert_eq!(
            matrix(MatrixKind::Next, &[]).len(),
            crate::next::matrix(false, &[]).len()
        );
        assert_eq!(
            matrix(MatrixKind::SeedsSmoke, &[]).len(),
            crate::seeds::matrix(true, &[]).len()
        );
        assert_eq!(
            matrix(MatrixKind::Quick, &[]).len(),
            main_matrix::cells(MatrixKind::Quick, &[]).len()
        );
        assert!(main_matrix::cells(MatrixKind::Next, &[]).is_empty());
    }

    #[test]
    fn ids_are_unique_and_spaceless() {
        for &kind in MatrixKind::value_variants() {
            let ids: Vec<String> = matrix(kind, &[]).iter().map(Cell::id).collect();
            let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
            assert!(ids.iter().all(|i| !i.contains(' ')), "{kind:?}");
            assert_eq!(unique.len(), ids.len(), "{kind:?}");
        }
    }

    #[test]
    fn boots_never_mix_guest_shapes() {
        // The seeds' matrix has cells on 1 vCPU, 1 vCPU with perf, 2 and 4 vCPUs.
        let cells = matrix(MatrixKind::Seeds, &[]);
        let boots = plan_boots(&cells, &[Kernel::Rust, Kernel::Stock], 2, 2, 60.0);
        let mut seen = vec![0; cells.len()];
        for b in &boots {
            for &i in &b.cells {
                assert_eq!(cells[i].cpus, b.cpus, "{}", cells[i].id());
                assert_eq!(cells[i].needs_perf(), b.perf, "{}", cells[i].id());
                if b.rep == 0 && b.kernel == Kernel::Rust {
                    seen[i] += 1;
                }
            }
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "every cell in one batch: {seen:?}"
        );
        for shape in [
            (None, false),
            (None, true),
            (Some(2), false),
            (Some(4), false),
        ] {
            assert!(boots.iter().any(|b| (b.cpus, b.perf) == shape), "{shape:?}");
        }
        // The helpers the seeds' commands call are in every script.
        let script = guest_script(&boots[0], &cells);
        assert!(script.contains("cat > /tmp/eevdf-beside <<'EOF'"));
        assert!(script.contains("perf sched record -q -o /tmp/perf.data"));
        // Cells on their own vCPU count have their own IDs.
        assert!(cells.iter().any(|c| c.id() == "migrate-0to3@4cpu/EEVDF"));
    }

    #[test]
    fn next_cells_read_counters_under_schedstats() {
        let cells = matrix(MatrixKind::NextSmoke, &[]);
        let boots = plan_boots(&cells, &[Kernel::Rust], 1, 1, 1e9);
        let s = guest_script(&boots[0], &cells);
        let c = cells
            .iter()
            .find(|c| c.features.writes() == ["RUN_TO_PARITY", "RUN_TO_PARITY_MIN_SLICE"])
            .unwrap();
        let id = c.id();
        // Each feature the writes name is checked, in order, then all are written.
        assert!(s.contains(&format!(
            "if ! has RUN_TO_PARITY; then\n\techo \"@@cell {id} unavailable RUN_TO_PARITY\"\n\
             elif ! has RUN_TO_PARITY_MIN_SLICE; then\n\techo \"@@cell {id} unavailable \
             RUN_TO_PARITY_MIN_SLICE\"\nelif ! setf RUN_TO_PARITY RUN_TO_PARITY_MIN_SLICE; then"
        )));
        // Counters are read inside schedstats, the run's status after them.
        assert!(s.contains(&format!(
            "\techo 1 > $SS\n\tcounters before\n\ttimeout -s KILL {} {} 2>&1\n\trc=$?\n\
             \tcounters after\n\techo 0 > $SS\n\techo \"@@cell {id} end rc=$rc\"\nfi\n",
            c.timeout_s(),
            c.command()
        )));
    }
}
