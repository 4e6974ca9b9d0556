//! The scheduler's instructions per switch, measured by tools/insnprof in the lab's own
//! setting (the bar's deterministic rows): after `bar`'s boots, each kernel is profiled
//! under the ping-pong (icount shift 3, one vCPU, the kernel's own slice, three 300 ms
//! windows), and the fair class's share of the switch path (fair.c's functions and the
//! Rust core's, task context) becomes a row of the report beside the ping-pong's guest
//! instructions.

use crate::plan::{Kernel, Pair};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// What insnprof counted for one kernel: instructions per switch, task context, by group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InsnProf {
    pub kernel: Kernel,
    /// fair.c's functions.
    pub fair: f64,
    /// The Rust core's (`sched_eevdf_*` and Rust symbols).
    pub rust: f64,
    /// The whole kernel.
    pub kernel_total: f64,
    /// Switches counted (pipe_write calls on CPU 0 in the three windows).
    pub switches: u64,
}

impl InsnProf {
    /// The fair class's instructions a switch: fair.c's and the Rust core's.
    pub fn sched(&self) -> f64 {
        self.fair + self.rust
    }
}

/// The metric the report shows it as.
pub const METRIC: &str = "sched_insns_per_switch";

/// Parse the header of insnprof's table.tsv (`# total fair: task X insns/switch, ...`).
pub fn parse_table(k: Kernel, tsv: &str) -> Option<InsnProf> {
    let total = |g: &str| -> Option<f64> {
        let line = tsv
            .lines()
            .find(|l| l.starts_with(&format!("# total {g}: task ")))?;
        line.split_whitespace().nth(4)?.parse().ok()
    };
    let switches = tsv
        .lines()
        .find_map(|l| l.split("delta_switches=").nth(1))
        .and_then(|v| v.trim().parse().ok())?;
    Some(InsnProf {
        kernel: k,
        fair: total("fair")?,
        rust: total("rust")?,
        kernel_total: total("kernel")?,
        switches,
    })
}

/// Profile `k`'s build of `pair` (tools/insnprof/profile.sh, the lab's setting) and read
/// its table. About a minute and a few GB of QEMU logs (deleted) a kernel.
pub fn profile(root: &Path, cache: &Path, pair: Pair, k: Kernel) -> Result<InsnProf> {
    let build = cache.join("build").join(pair.build(k));
    let kdir = cache.join("insnprof/lab").join(pair.build(k));
    let out = cache.join("insnprof/lab-runs").join(pair.build(k));
    std::fs::create_dir_all(&kdir).with_context(|| format!("creating {}", kdir.display()))?;
    for (from, to) in [
        ("arch/x86/boot/bzImage", "bzImage"),
        ("System.map", "System.map"),
        ("vmlinux", "vmlinux"),
        ("kernel/sched/fair.o", "fair.o"),
    ] {
        std::fs::copy(build.join(from), kdir.join(to))
            .with_context(|| format!("copying {from} of {}", build.display()))?;
    }
    let _ = std::fs::remove_dir_all(&out);
    eprintln!(
        "==> eevdf-lab: insnprof of the {} kernel (tools/insnprof/profile.sh, icount, 1 vCPU)",
        k.name()
    );
    let st = Command::new("bash")
        .arg(root.join("tools/insnprof/profile.sh"))
        .arg(&kdir)
        .arg(&out)
        .env("INSNPROF_VM_ARGS", "--icount-shift 3 --cpus 1")
        .env("SLICE_NS", "")
        .env("LOG_MS", "300")
        .status()
        .context("starting tools/insnprof/profile.sh")?;
    if !st.success() {
        bail!("tools/insnprof/profile.sh failed for {} ({st})", k.name());
    }
    let tsv = std::fs::read_to_string(out.join("table.tsv")).context("reading table.tsv")?;
    parse_table(k, &tsv).context("table.tsv has no totals")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_totals_parse() {
        // The header of a real table (rust kernel, the lab's setting).
        let tsv = "# kernel_dir=/k run_dir=/r cpu=0\n\
                   # mode=steady (switches = pipe_write calls)\n\
                   # windows(switches): w1=9204 w2=9255 w3=9310  delta_switches=27769\n\
                   # total kernel: task 4149.3 insns/switch, irq 82.2 insns/switch\n\
                   # total fair: task 687.7 insns/switch, irq 7.2 insns/switch\n\
                   # total rust: task 336.3 insns/switch, irq 0.6 insns/switch\n\
                   function\tgroup\n";
        let p = parse_table(Kernel::Rust, tsv).unwrap();
        assert_eq!((p.fair, p.rust, p.kernel_total), (687.7, 336.3, 4149.3));
        assert_eq!(p.switches, 27769);
        assert!((p.sched() - 1024.0).abs() < 1e-9);
        assert_eq!(
            parse_table(Kernel::Rust, "# total fair: task 1 insns\n"),
            None
        );
    }
}
