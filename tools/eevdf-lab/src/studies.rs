//! The studies the lab runs, and which one a matrix kind is: the main matrix (latency,
//! throughput, fairness, scale: `plan.rs`), upstream's next features (`next.rs`) and the
//! seeds' experiments (`seeds.rs`). This module sits above the three, so that none of them
//! depends on another's cells.

use crate::plan::{main_matrix, Cell, Experiment, MatrixKind};

/// The cells of a matrix of `kind`, in run order, limited to `only` experiments (all when
/// empty).
pub fn matrix(kind: MatrixKind, only: &[Experiment]) -> Vec<Cell> {
    if kind.is_next() {
        crate::next::matrix(kind == MatrixKind::NextSmoke, only)
    } else if kind.is_seeds() {
        crate::seeds::matrix(kind == MatrixKind::SeedsSmoke, only)
    } else {
        main_matrix(kind, only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{guest_script, plan_boots, Kernel};

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
            main_matrix(MatrixKind::Quick, &[]).len()
        );
        assert!(main_matrix(MatrixKind::Next, &[]).is_empty());
    }

    #[test]
    fn ids_are_unique_and_spaceless() {
        for kind in [
            MatrixKind::Smoke,
            MatrixKind::Quick,
            MatrixKind::Full,
            MatrixKind::Next,
            MatrixKind::NextSmoke,
        ] {
            let cells = matrix(kind, &[]);
            let mut ids: Vec<String> = cells.iter().map(Cell::id).collect();
            assert!(ids.iter().all(|i| !i.contains(' ')));
            let n = ids.len();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), n, "{kind:?}");
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
