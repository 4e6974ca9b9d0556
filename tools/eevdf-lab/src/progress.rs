//! Progress and time estimates: the ETA model that learns from finished cells, and the
//! per-cell progress lines a boot prints on standard error as the guest reports its cells.

use crate::plan::{Boot, Cell, Kernel};
use crate::protocol::{CellEvent, CellLine};
use std::collections::HashMap;
use std::time::Instant;

/// A duration for people: `42s`, `3m07s`.
pub fn fmt_dur(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Time estimates that learn from finished cells (per kernel, since a kernel without a
/// feature skips its cells at once).
pub struct Eta {
    /// Measured seconds of one run of a cell, by kernel and cell ID.
    pub cell_s: HashMap<(Kernel, String), f64>,
    /// Seconds from starting eevdf-vm to the first cell, plus a margin.
    pub boot_overhead_s: f64,
}

impl Eta {
    /// The estimate before anything ran: the cells' own estimates and `boot_overhead_s`.
    pub fn new(boot_overhead_s: f64) -> Eta {
        Eta {
            cell_s: HashMap::new(),
            boot_overhead_s,
        }
    }

    /// One run of cell `c` on kernel `k`: measured on `k`, else measured on another kernel,
    /// else the cell's own estimate.
    fn cell(&self, k: Kernel, c: &Cell) -> f64 {
        let id = c.id();
        self.cell_s
            .get(&(k, id.clone()))
            .or_else(|| {
                self.cell_s
                    .iter()
                    .find(|((_, i), _)| *i == id)
                    .map(|(_, v)| v)
            })
            .copied()
            .unwrap_or_else(|| c.estimate_s())
    }

    /// What is left of boot `b` once `from_cell` of its cell runs (all repetitions counted)
    /// are done; the boot overhead while none is.
    pub fn boot(&self, b: &Boot, cells: &[Cell], from_cell: usize) -> f64 {
        let per_rep: Vec<f64> = b
            .cells
            .iter()
            .map(|&i| self.cell(b.kernel, &cells[i]))
            .collect();
        let total: usize = b.cells.len() * b.inner_reps as usize;
        let left: f64 = (from_cell..total).map(|n| per_rep[n % b.cells.len()]).sum();
        left + if from_cell == 0 {
            self.boot_overhead_s
        } else {
            0.0
        }
    }
}

/// Where a boot stands in the run, for its progress lines.
pub struct BootLabel<'a> {
    /// The boot's index in the run, from 0.
    pub n: usize,
    /// The run's number of boots.
    pub boots: usize,
    /// The kernel build it boots.
    pub build: &'a str,
    /// The width the builds' names are padded to, so that the lines' columns align.
    pub build_w: usize,
    /// Boots per kernel (the `rep R/N` of the line).
    pub boots_per_kernel: u32,
}

/// Follows one boot's cells: prints a line as each begins (elapsed time, position, ETA of
/// the whole run), says when one is unavailable, and teaches the [`Eta`] each cell's time.
pub struct BootProgress<'a> {
    eta: &'a mut Eta,
    boot: &'a Boot,
    cells: &'a [Cell],
    label: BootLabel<'a>,
    /// When the whole run's boots started.
    run_t0: Instant,
    /// When this boot started.
    t_boot: Instant,
    /// The estimate of the boots after this one.
    future_s: f64,
    total_cells: usize,
    done_cells: usize,
    cell_started: Option<(String, Instant)>,
    first_cell_at: Option<f64>,
}

impl<'a> BootProgress<'a> {
    /// Starts following boot `boots[label.n]`, now.
    pub fn new(
        eta: &'a mut Eta,
        boots: &'a [Boot],
        cells: &'a [Cell],
        label: BootLabel<'a>,
        run_t0: Instant,
    ) -> BootProgress<'a> {
        let boot = &boots[label.n];
        let t_boot = Instant::now();
        let future_s = boots[label.n + 1..]
            .iter()
            .map(|fb| eta.boot(fb, cells, 0))
            .sum();
        BootProgress {
            eta,
            boot,
            cells,
            label,
            run_t0,
            t_boot,
            future_s,
            total_cells: boot.cells.len() * boot.inner_reps as usize,
            done_cells: 0,
            cell_started: None,
            first_cell_at: None,
        }
    }

    /// One line of the guest's output; only `@@cell` lines count.
    pub fn line(&mut self, line: &str) {
        let Some(CellLine { id, event }) = CellLine::parse(line) else {
            return;
        };
        match event {
            CellEvent::Begin { .. } => {
                self.first_cell_at
                    .get_or_insert(self.t_boot.elapsed().as_secs_f64());
                let left = self.eta.boot(self.boot, self.cells, self.done_cells) + self.future_s;
                let l = &self.label;
                eprintln!(
                    "    [{:>6}] boot {}/{} {:<name_w$} rep {}/{}  cell {:>2}/{}  {:<28} ETA {}",
                    fmt_dur(self.run_t0.elapsed().as_secs_f64()),
                    l.n + 1,
                    l.boots,
                    l.build,
                    self.boot.rep + 1,
                    l.boots_per_kernel,
                    self.done_cells + 1,
                    self.total_cells,
                    id,
                    fmt_dur(left),
                    name_w = l.build_w
                );
                self.cell_started = Some((id.to_string(), Instant::now()));
            }
            CellEvent::End { .. } | CellEvent::Unavailable { .. } => {
                if let Some((sid, t)) = self.cell_started.take().filter(|(s, _)| s == id) {
                    self.eta
                        .cell_s
                        .insert((self.boot.kernel, sid), t.elapsed().as_secs_f64());
                }
                if let CellEvent::Unavailable { feature } = event {
                    self.eta
                        .cell_s
                        .insert((self.boot.kernel, id.to_string()), 0.05);
                    let feature = if feature.is_empty() { "?" } else { feature };
                    eprintln!("             {id}: not available on this kernel ({feature})");
                }
                self.done_cells += 1;
            }
            CellEvent::Other => {}
        }
    }

    /// The boot is over: its wall time in seconds. The time to its first cell becomes the
    /// [`Eta`]'s boot overhead (plus 2 s).
    pub fn finish(self) -> f64 {
        let wall_s = self.t_boot.elapsed().as_secs_f64();
        if let Some(f) = self.first_cell_at {
            self.eta.boot_overhead_s = f + 2.0;
        }
        wall_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{self, MatrixKind};

    #[test]
    fn eta_learns_and_counts_reps() {
        let cells = crate::main_matrix::cells(MatrixKind::Smoke, &[]);
        let boots = plan::plan_boots(&cells, &[Kernel::Rust], 1, 2, 1e9);
        let mut eta = Eta::new(10.0);
        let per: f64 = cells.iter().map(Cell::estimate_s).sum();
        assert!((eta.boot(&boots[0], &cells, 0) - (10.0 + 2.0 * per)).abs() < 1e-9);
        for c in &cells {
            eta.cell_s.insert((Kernel::Rust, c.id()), 1.0);
        }
        let n = cells.len();
        assert!((eta.boot(&boots[0], &cells, n) - n as f64).abs() < 1e-9);
    }

    #[test]
    fn durations() {
        assert_eq!(fmt_dur(-1.0), "0s");
        assert_eq!(fmt_dur(59.4), "59s");
        assert_eq!(fmt_dur(187.0), "3m07s");
    }
}
