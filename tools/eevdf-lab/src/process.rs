//! The subprocess of one boot: `target/release/eevdf-vm` with the boot's kernel and guest
//! script, its standard output read line by line as it comes (the caller follows the cells
//! on it), its standard error collected on a thread so that neither pipe can fill and stall
//! QEMU.

use anyhow::{Context, Result};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;

/// The eevdf-vm command line of one boot.
pub struct VmCommand<'a> {
    /// The repository, where `target/release/eevdf-vm` is.
    pub root: &'a Path,
    /// The kernel build to boot (`--kernel`).
    pub build: &'a str,
    /// Guest vCPUs (`--cpus`).
    pub cpus: u32,
    /// Guest memory (`--mem-mib`).
    pub mem_mib: u32,
    /// eevdf-vm's watchdog (`--timeout-s`).
    pub timeout_s: u64,
    /// `--icount-shift N` with `--timing icount`, none with realtime TCG.
    pub icount_shift: Option<u32>,
    /// The console log (`--log`).
    pub log: PathBuf,
    /// The guest script to run.
    pub script: &'a Path,
    /// Put Debian's perf into the guest (`--perf`).
    pub perf: bool,
}

/// A running eevdf-vm.
pub struct Vm {
    child: Child,
    stdout: BufReader<ChildStdout>,
    stderr: JoinHandle<String>,
}

impl Vm {
    /// Starts eevdf-vm with both outputs piped.
    pub fn spawn(vc: &VmCommand<'_>) -> Result<Vm> {
        let mut child = Command::new(vc.root.join("target/release/eevdf-vm"))
            .args(["--kernel", vc.build, "--cpus", &vc.cpus.to_string()])
            .args(["--mem-mib", &vc.mem_mib.to_string()])
            .args(["--timeout-s", &vc.timeout_s.to_string()])
            .args(match vc.icount_shift {
                Some(shift) => vec!["--icount-shift".to_string(), shift.to_string()],
                None => vec![],
            })
            .args(if vc.perf { &["--perf"][..] } else { &[] })
            .arg("--log")
            .arg(&vc.log)
            .arg(vc.script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting target/release/eevdf-vm (build it, or drop --no-build)")?;
        let stderr = child.stderr.take().context("eevdf-vm stderr")?;
        let stderr = std::thread::spawn(move || {
            let lines = BufReader::new(stderr).lines().map_while(Result::ok);
            lines.map(|l| l + "\n").collect::<String>()
        });
        let stdout = BufReader::new(child.stdout.take().context("eevdf-vm stdout")?);
        Ok(Vm {
            child,
            stdout,
            stderr,
        })
    }

    /// Reads standard output to its end, calling `each` on every line as it arrives, and
    /// returns all of it (each line ending in `\n`).
    pub fn read_stdout(&mut self, mut each: impl FnMut(&str)) -> Result<String> {
        let mut out = String::new();
        for line in (&mut self.stdout).lines() {
            let line = line.context("reading eevdf-vm output")?;
            out.push_str(&line);
            out.push('\n');
            each(&line);
        }
        Ok(out)
    }

    /// Waits for eevdf-vm to exit: its status and its standard error (empty if the reading
    /// thread panicked).
    pub fn wait(mut self) -> Result<(ExitStatus, String)> {
        let status = self.child.wait().context("waiting for eevdf-vm")?;
        let err = self.stderr.join().unwrap_or_default();
        Ok((status, err))
    }
}
