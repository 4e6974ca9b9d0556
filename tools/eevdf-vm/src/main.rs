//! Boot a kernel under QEMU with the project's initramfs, run one guest script
//! in it, stream its output, and exit with the guest script's status.
//!
//! The guest userspace is busybox, hackbench and cyclictest (with their shared
//! libraries), the project's guest tools (tools/guest/), the static guest
//! programs (every `eevdf-*` executable and `eevdfctl` in
//! target/x86_64-unknown-linux-musl/release, from package tools/eevdf-guest) and guest
//! tests (tests/guest/), all in an initramfs this program writes for every run. The
//! script and any `--file` go to /job in the guest, which runs `sh /job/run.sh`
//! after mounting proc, sys, devtmpfs, debugfs, tmpfs (/tmp and /dev/shm) and cgroup2.
//!
//! The run fails, whatever the script returns, when the kernel prints a WARNING,
//! BUG, Oops, lockdep report, KASAN or UBSAN report, RCU stall, soft or hard
//! lockup, hung task or panic. It has a hard timeout and never hangs.
//!
//! Exit status: the guest script's status; 124 on timeout; 125 when the kernel
//! reported a problem; 126 when the guest stopped without reporting a status.
//!
//! A guest that times out is asked for its state before it is killed: a serial break
//! and SysRq-t (every task's state and stack and, with SCHED_DEBUG, every runqueue as
//! /proc/sched_debug shows it), read for up to `--hang-dump-s`. A guest whose tasks all
//! sleep with none woken prints no report of its own; the dump is what shows whether a
//! task waits on a runqueue that never runs it (a scheduler bug) or on something else.
//! The kernel needs CONFIG_MAGIC_SYSRQ_SERIAL (kernel/configs/debug.config, Debian's).
//!
//! Acceleration: TCG unless a KVM probe boot finishes within
//! `--kvm-probe-timeout-s`. On the project's machines /dev/kvm exists but KVM
//! guests hang before the kernel prints anything, so the probe result is cached
//! in the cache directory (`$EEVDF_CACHE`, default `~/.cache/sched_eevdf`, as in
//! tools/lib.sh) and the probe costs its timeout once. The guest files come from the
//! repository: `$EEVDF_REPO`, default the checkout this program was built from.

mod cpio;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use hostkit::paths::{cache_dir, repo_root};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Accel {
    /// KVM if the cached probe says it boots here, TCG otherwise.
    Auto,
    /// Software emulation: slow (about 5-10x) but works everywhere.
    Tcg,
    /// Hardware virtualisation, without probing. Hangs at boot on some hosts.
    Kvm,
}

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Kernel to boot: `rust`, `debug`, `debug-verify`, `stock`, `nostats`, `rust-nosmp`,
    /// `rust-nodebug`, `rust-nogroup`, `distro`, `distro-stock`, `distro-debug` or
    /// `distro-debug-stock` (the O= builds of tools/build-kernel.sh), or a path to a bzImage.
    #[arg(long, default_value = "rust")]
    kernel: String,

    /// Guest CPUs. More CPUs exercise migration and load balancing, but under
    /// TCG every vCPU shares the host's cores, so latencies grow with the count.
    #[arg(long, default_value_t = 2)]
    cpus: u32,

    /// Guest memory in MiB. The initramfs lives in it, so below ~128 MiB the
    /// guest may not boot; above what the test needs only costs host memory.
    #[arg(long, default_value_t = 512)]
    mem_mib: u32,

    /// Hard limit on the whole run, boot included, in seconds. Too short fails
    /// slow TCG runs; too long only delays the report of a hung guest.
    #[arg(long, default_value_t = 300)]
    timeout_s: u64,

    /// At the timeout, how long to read the guest's SysRq-t dump before killing it, in
    /// seconds (it ends earlier once 3 s pass without a line); 0 kills at once. The dump
    /// is what a hang without a kernel report leaves to diagnose it (726 lines from an idle
    /// 2-vCPU debug-verify guest, more with more tasks); each timeout costs up to this much
    /// more. A kernel
    /// without CONFIG_MAGIC_SYSRQ_SERIAL prints nothing, and the wait ends after 3 s.
    #[arg(long, default_value_t = 30)]
    hang_dump_s: u64,

    /// How to run the guest; see the program description.
    #[arg(long, value_enum, default_value_t = Accel::Auto)]
    accel: Accel,

    /// How long a KVM probe boot may take before KVM is declared unusable, in
    /// seconds. A healthy KVM boot takes about one second.
    #[arg(long, default_value_t = 8)]
    kvm_probe_timeout_s: u64,

    /// Deterministic TCG timing: the guest's clock advances 2^N ns per executed
    /// instruction (`-icount shift=N,sleep=off`), so guest-measured times count
    /// instructions and no longer depend on how busy the host is. Trades speed
    /// (one host thread for all vCPUs, slower than plain TCG) and realism (a
    /// virtual CPU of 1000/2^N MIPS, every instruction equally expensive) for
    /// runs that are repeatable to a fraction of a percent. TCG only.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=10))]
    icount_shift: Option<u32>,

    /// TCG only: run all vCPUs in one host thread (`-accel tcg,thread=single`) instead of
    /// one thread each. Slower (one host core for all vCPUs), but QEMU 7.2's multi-threaded
    /// TCG can let a vCPU run stale code after another rewrote it: a kernel that patches
    /// its text at run time (JUMP_LABEL: static keys, e.g. Debian's config and so the
    /// distro flavours) then dies with `Oops: int3` in code whose breakpoint was already
    /// removed (seen here in a distro-debug boot, in sched_clock_tick() right after
    /// "sched_clock: Marking stable"). Implied by --icount-shift, and chosen without this
    /// flag for a build whose .config (beside the image's build directory) has
    /// CONFIG_JUMP_LABEL=y; the tiny flavours have none.
    #[arg(long, conflicts_with = "tcg_multi_thread")]
    tcg_single_thread: bool,

    /// TCG only: one host thread per vCPU even for a kernel that rewrites its text
    /// (CONFIG_JUMP_LABEL=y), which otherwise gets single-threaded TCG (see
    /// `--tcg-single-thread`). Faster on a host with a core per vCPU, and what a study of
    /// the `Oops: int3` class needs (Documentation/reliability.md, the feature-flip
    /// storm), at the price of those Oopses. Not with --icount-shift, which needs one thread.
    #[arg(long, conflicts_with = "icount_shift")]
    tcg_multi_thread: bool,

    /// Extra kernel command-line arguments.
    #[arg(long, default_value = "")]
    append: String,

    /// Extra files for the guest, as SRC or SRC:DEST (DEST relative to /job).
    #[arg(long = "file")]
    files: Vec<String>,

    /// Also put perf, built from the 6.12 tree by tools/build-perf.sh (about 3.5 MB with
    /// its 5 shared libraries), into the guest at /usr/bin/perf, for `perf sched record` /
    /// `latency` / `timehist` (tracefs is mounted at /sys/kernel/tracing). Costs initramfs
    /// size and so boot time and guest memory; the kernel needs PERF_EVENTS and the sched
    /// tracepoints (every flavour has them). Not Debian's perf 6.1: on these kernels its
    /// `perf sched latency` loses most delays (Documentation/lab.md).
    #[arg(long)]
    perf: bool,

    /// Also stream the kernel's console messages. They are always scanned for
    /// reports, and reports are always shown, each with the REPORT_TRACE_LINES kernel
    /// lines after it (its registers and call trace); the rest is noise for most runs.
    #[arg(long)]
    show_kernel: bool,

    /// Write the whole console output to this file as well.
    #[arg(long)]
    log: Option<PathBuf>,

    /// Raw argument appended to the QEMU command line; repeat for each word
    /// (`--qemu-arg=-d --qemu-arg=exec`). Reaches any QEMU feature (logging,
    /// a monitor socket, tracing) without a flag of its own, but nothing checks
    /// it: a wrong or conflicting argument makes QEMU fail or change the run.
    #[arg(long = "qemu-arg", allow_hyphen_values = true)]
    qemu_args: Vec<String>,

    /// The guest script, run as `sh /job/run.sh` in the guest.
    script: PathBuf,
}

/// Markers the guest's /init prints around the script.
const START: &str = "EEVDF-GUEST-START";
const EXIT: &str = "EEVDF-GUEST-EXIT=";

/// A marker of /init in a console line, and what follows it there. The console
/// interleaves the kernel's messages with the guest's output byte by byte, so a marker can
/// share its line with a printk (`EEVDF-GUEST-START[    1.116847] input: ...`, the marker's
/// newline coming after the kernel's): a marker counts wherever it starts in the line, and
/// the exit status is the number right after it.
#[derive(Debug, PartialEq)]
enum Marker {
    Start,
    /// The script's exit status; `None` when no number follows the marker.
    Exit(Option<i32>),
}

fn marker_in(line: &str) -> Option<Marker> {
    if line.contains(START) {
        return Some(Marker::Start);
    }
    let (_, rest) = line.split_once(EXIT)?;
    let digits = rest.trim_start();
    let end = digits
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(digits.len(), |(i, _)| i);
    Some(Marker::Exit(digits[..end].parse().ok()))
}

/// Substrings that mark a kernel report: tools/kernel-reports.txt, the list the shell
/// tools use too. Only kernel lines (those with a printk timestamp) are matched, so a guest
/// program printing "WARNING" does not fail the run.
const REPORTS_FILE: &str = include_str!("../../kernel-reports.txt");

/// The patterns of [`REPORTS_FILE`]: its lines but blank ones and comments.
fn reports() -> impl Iterator<Item = &'static str> {
    REPORTS_FILE
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The text after a printk timestamp (`[   12.345678] `), if `line` has one.
fn kernel_message(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('[')?;
    let end = rest.find(']')?;
    let stamp = rest[..end].trim();
    let (secs, frac) = stamp.split_once('.')?;
    if secs.chars().all(|c| c.is_ascii_digit()) && frac.chars().all(|c| c.is_ascii_digit()) {
        Some(&rest[end + 1..])
    } else {
        None
    }
}

/// How many kernel lines after a report line are shown with it: enough for a KASAN or
/// WARN report's header, registers and call trace, which is what makes a report in a CI
/// log useful without the console file.
const REPORT_TRACE_LINES: u32 = 60;

/// The report pattern a console line matches, if any.
fn report_in(line: &str) -> Option<&'static str> {
    let msg = kernel_message(line)?;
    reports().find(|p| msg.contains(p))
}

/// Whether the kernel at `image` (`<build>/arch/x86/boot/bzImage`) was configured with
/// `CONFIG_JUMP_LABEL=y`, read from `<build>/.config`: such a kernel rewrites its text at
/// run time, which needs single-threaded TCG (see `--tcg-single-thread`). False when there
/// is no such file (an image from elsewhere: pass the flag).
fn patches_its_text(image: &Path) -> bool {
    image
        .ancestors()
        .nth(4)
        .and_then(|build| std::fs::read_to_string(build.join(".config")).ok())
        .is_some_and(|c| c.lines().any(|l| l == "CONFIG_JUMP_LABEL=y"))
}

fn kernel_image(spec: &str) -> Result<PathBuf> {
    let path = match spec {
        "rust" | "debug" | "debug-verify" | "stock" | "nostats" | "rust-nosmp" | "rust-nodebug"
        | "rust-nogroup" | "distro" | "distro-stock" | "distro-debug" | "distro-debug-stock" => {
            cache_dir()
                .join("build")
                .join(spec)
                .join("arch/x86/boot/bzImage")
        }
        p => PathBuf::from(p),
    };
    if !path.is_file() {
        bail!(
            "no kernel image at {} (build it with tools/build-kernel.sh {spec})",
            path.display()
        );
    }
    Ok(path)
}

/// The guest's /init. It mounts what the tests read, runs the job and powers off.
const INIT: &str = r#"#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/eevdf/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t tmpfs tmp /tmp
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ln -s /proc/self/fd /dev/fd 2>/dev/null
echo EEVDF-GUEST-START
cd /job && sh ./run.sh
echo "EEVDF-GUEST-EXIT=$?"
sync
poweroff -f
echo o > /proc/sysrq-trigger
"#;

/// Copy a host binary and the shared libraries `ldd` names for it.
fn add_binary(a: &mut cpio::Archive, path: &str, guest: &str) -> Result<()> {
    let data =
        std::fs::read(path).with_context(|| format!("reading {path} (run tools/setup.sh)"))?;
    a.file(guest, 0o755, &data);
    let out = Command::new("ldd")
        .arg(path)
        .output()
        .context("running ldd")?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
        let lib = match line.split_once("=>") {
            Some((_, rhs)) => rhs.split_whitespace().next(),
            None => line
                .split_whitespace()
                .next()
                .filter(|s| s.starts_with('/')),
        };
        if let Some(lib) = lib.filter(|l| l.starts_with('/')) {
            let real = std::fs::canonicalize(lib).with_context(|| format!("resolving {lib}"))?;
            let data = std::fs::read(&real).with_context(|| format!("reading {lib}"))?;
            a.file(lib, 0o755, &data);
        }
    }
    Ok(())
}

/// Add every file under `dir` at `guest_dir`, keeping the executable bit.
fn add_tree(a: &mut cpio::Archive, dir: &Path, guest_dir: &str) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let guest = format!("{guest_dir}/{name}");
        let ft = e.file_type()?;
        if ft.is_dir() {
            add_tree(a, &e.path(), &guest)?;
        } else if ft.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let mode = e.metadata()?.permissions().mode() & 0o777;
            a.file(&guest, mode, &std::fs::read(e.path())?);
        }
    }
    Ok(())
}

/// Whether the file `name` in the musl release directory is a guest program: `eevdf-*` or
/// `eevdfctl`, without a dot (cargo's `.d` dependency files are not programs).
fn is_guest_program(name: &str) -> bool {
    (name.starts_with("eevdf-") || name == "eevdfctl") && !name.contains('.')
}

/// The guest programs the guest tests run; a warning names any that is missing.
const NEEDED_GUEST_PROGRAMS: [&str; 2] = ["eevdf-slice", "eevdfctl"];

/// Add the static guest programs (package tools/eevdf-guest, built with `cargo build
/// --release --target x86_64-unknown-linux-musl -p eevdf-guest`): every executable file
/// in `dir` named `eevdf-*` or `eevdfctl` goes to /eevdf/bin, which is on the guest's PATH.
/// A missing directory adds nothing (with a warning: the guest tests need these programs).
fn add_guest_programs(a: &mut cpio::Archive, dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        eprintln!(
            "eevdf-vm: warning: no guest programs ({} is missing): build them with \
             cargo build --release --target x86_64-unknown-linux-musl -p eevdf-guest",
            dir.display()
        );
        return Ok(());
    };
    let mut names: Vec<_> = rd
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let exec = e
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            is_guest_program(&name) && exec
        })
        .map(|e| e.path())
        .collect();
    names.sort();
    for needed in NEEDED_GUEST_PROGRAMS {
        if !names.iter().any(|p| p.ends_with(needed)) {
            eprintln!(
                "eevdf-vm: warning: no {needed} in {}; the guest tests need it \
                 (cargo build --release --target x86_64-unknown-linux-musl -p eevdf-guest)",
                dir.display()
            );
        }
    }
    for p in names {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let data = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        a.file(&format!("/eevdf/bin/{name}"), 0o755, &data);
    }
    Ok(())
}

fn build_initramfs(args: &Args, init: &str) -> Result<Vec<u8>> {
    let mut a = cpio::Archive::new();
    for d in [
        "dev",
        "proc",
        "sys",
        "tmp",
        "job",
        "sbin",
        "usr/bin",
        "usr/sbin",
        "eevdf/bin",
    ] {
        a.dir(d);
    }
    a.chardev("/dev/console", 5, 1);
    a.chardev("/dev/null", 1, 3);
    let busybox =
        std::fs::read("/bin/busybox").context("reading /bin/busybox (run tools/setup.sh)")?;
    a.file("/bin/busybox", 0o755, &busybox);
    let list = Command::new("/bin/busybox")
        .arg("--list")
        .output()
        .context("busybox --list")?;
    for applet in String::from_utf8_lossy(&list.stdout).lines() {
        // A link named busybox would replace the binary with a link to itself.
        if !applet.is_empty() && applet != "busybox" {
            a.symlink(&format!("/bin/{applet}"), "busybox");
        }
    }
    add_binary(&mut a, "/usr/bin/hackbench", "/usr/bin/hackbench")?;
    add_binary(&mut a, "/usr/bin/cyclictest", "/usr/bin/cyclictest")?;
    if args.perf {
        let perf = cache_dir().join("build/perf/perf");
        if !perf.is_file() {
            bail!(
                "--perf: no {} (build it with tools/build-perf.sh)",
                perf.display()
            );
        }
        add_binary(&mut a, &perf.display().to_string(), "/usr/bin/perf")?;
    }
    // The repository whose tools/guest and tests/guest go into the guest.
    let root = repo_root();
    add_tree(&mut a, &root.join("tools/guest"), "/eevdf/bin")?;
    add_tree(&mut a, &root.join("tests/guest"), "/eevdf/tests")?;
    add_guest_programs(
        &mut a,
        &root.join("target/x86_64-unknown-linux-musl/release"),
    )?;
    a.file("/init", 0o755, init.as_bytes());
    let script = std::fs::read(&args.script)
        .with_context(|| format!("reading the guest script {}", args.script.display()))?;
    a.file("/job/run.sh", 0o755, &script);
    for spec in &args.files {
        let (src, dest) = match spec.split_once(':') {
            Some((s, d)) => (s.to_string(), d.to_string()),
            None => {
                let name = Path::new(spec)
                    .file_name()
                    .with_context(|| format!("--file {spec}: no file name"))?;
                (spec.clone(), name.to_string_lossy().into_owned())
            }
        };
        let data = std::fs::read(&src).with_context(|| format!("--file {spec}: reading {src}"))?;
        a.file(&format!("/job/{dest}"), 0o755, &data);
    }
    Ok(a.finish())
}

/// What a QEMU run ended with.
struct Outcome {
    guest_status: Option<i32>,
    reports: Vec<String>,
    timed_out: bool,
    /// Console lines read after the timeout, the guest's SysRq-t dump.
    dump_lines: usize,
}

/// What QEMU's stdin gets at a timeout: the monitor mux's escape for a serial break
/// (C-a b), then, once the guest saw it, the SysRq key: `t`, every task's state and stack,
/// and with SCHED_DEBUG the runqueues (`sysrq_sched_debug_show()`).
const HANG_DUMP_KEYS: [&[u8]; 2] = [b"\x01b", b"t"];

/// The dump is over once the guest printed nothing for this long.
const HANG_DUMP_QUIET: Duration = Duration::from_secs(3);

/// Asks the guest for its SysRq-t dump ([`HANG_DUMP_KEYS`]) and returns when to stop
/// reading it, `dump` from now. A failed write (QEMU gone) leaves nothing to read: the
/// reader then ends at [`HANG_DUMP_QUIET`] or at QEMU's end of output.
fn start_hang_dump(qemu_in: Option<&mut std::process::ChildStdin>, dump: Duration) -> Instant {
    if let Some(w) = qemu_in {
        for (i, keys) in HANG_DUMP_KEYS.iter().enumerate() {
            if i > 0 {
                // The break is an event and the key data: let the guest take the break
                // first, or the key may arrive before it and be read as plain input.
                std::thread::sleep(Duration::from_millis(300));
            }
            if w.write_all(keys).and_then(|()| w.flush()).is_err() {
                break;
            }
        }
    }
    Instant::now() + dump
}

struct Run<'a> {
    kernel: &'a Path,
    initrd: &'a Path,
    accel: Accel,
    icount_shift: Option<u32>,
    tcg_single_thread: bool,
    cpus: u32,
    mem_mib: u32,
    append: &'a str,
    timeout: Duration,
    /// At the timeout: how long to read a SysRq-t dump (zero: none).
    hang_dump: Duration,
    stream: bool,
    show_kernel: bool,
    log: Option<&'a Path>,
    qemu_args: &'a [String],
}

fn run_qemu(r: &Run<'_>) -> Result<Outcome> {
    // sysrq_always_enabled: the dump at a timeout needs SysRq-t, which Debian's default
    // mask (0x01b6) leaves out.
    let cmdline = format!(
        "console=ttyS0 panic=-1 printk.time=1 sysrq_always_enabled rdinit=/init {}",
        r.append
    );
    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args([
        "-machine",
        "pc",
        "-nodefaults",
        "-no-reboot",
        "-display",
        "none",
    ])
    // The console multiplexed with QEMU's monitor on stdio (`mon:`): its escape, C-a b,
    // sends the serial break that starts a SysRq (see [`HANG_DUMP_KEYS`]).
    .args(["-serial", "mon:stdio"])
    .args(["-smp", &r.cpus.to_string(), "-m", &r.mem_mib.to_string()])
    .arg("-kernel")
    .arg(r.kernel)
    .arg("-initrd")
    .arg(r.initrd)
    .args(["-append", &cmdline]);
    match r.accel {
        Accel::Kvm => cmd.args(["-accel", "kvm", "-cpu", "host"]),
        _ if r.tcg_single_thread => cmd.args(["-accel", "tcg,thread=single", "-cpu", "max"]),
        _ => cmd.args(["-accel", "tcg", "-cpu", "max"]),
    };
    if let Some(shift) = r.icount_shift {
        cmd.args(["-icount", &format!("shift={shift},sleep=off")]);
    }
    cmd.args(r.qemu_args);
    // QEMU dies with this thread: an eevdf-vm killed by a signal (a timeout around it, a
    // ^C) would otherwise leave its guest running, still holding 100% of a host CPU and
    // whatever lock the caller took around eevdf-vm.
    // SAFETY: the closure runs in the child between fork and exec, and calls only
    // async-signal-safe functions (prctl, getppid).
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the prctl: then nobody will signal.
            if libc::getppid() == 1 {
                return Err(std::io::Error::other("eevdf-vm exited before QEMU started"));
            }
            Ok(())
        });
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting qemu-system-x86_64 (run tools/setup.sh)")?;
    let (tx, rx) = mpsc::channel::<Option<String>>();
    let stdout = child.stdout.take().context("qemu stdout")?;
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        let mut rd = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match rd.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf)
                        .trim_end_matches(['\n', '\r'])
                        .to_string();
                    if tx2.send(Some(line)).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = tx2.send(None);
    });
    let mut stderr = child.stderr.take().context("qemu stderr")?;
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    drop(tx);

    let mut log = match r.log {
        Some(p) => {
            Some(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?)
        }
        None => None,
    };
    let deadline = Instant::now() + r.timeout;
    let mut out = Outcome {
        guest_status: None,
        reports: Vec::new(),
        timed_out: false,
        dump_lines: 0,
    };
    let mut qemu_in = child.stdin.take();
    // Set at the timeout while the guest's dump is read: when to stop reading.
    let mut dump_until: Option<Instant> = None;
    let mut started = false;
    // Kernel lines still to show after the last report line (its trace).
    let mut trace_left = 0u32;
    let mut stdout = std::io::stdout().lock();
    loop {
        let now = Instant::now();
        let left = match dump_until {
            Some(end) if end <= now => break,
            Some(end) => (end - now).min(HANG_DUMP_QUIET),
            None if deadline <= now => {
                out.timed_out = true;
                if r.hang_dump.is_zero() {
                    break;
                }
                dump_until = Some(start_hang_dump(qemu_in.as_mut(), r.hang_dump));
                continue;
            }
            None => deadline - now,
        };
        match rx.recv_timeout(left) {
            Ok(Some(line)) => {
                if let Some(f) = log.as_mut() {
                    writeln!(f, "{line}")?;
                }
                if dump_until.is_some() {
                    // The dump's lines: to the log, and shown (the hang's one record).
                    out.dump_lines += 1;
                    if r.stream {
                        writeln!(stdout, "{line}")?;
                    }
                    continue;
                }
                let report = report_in(&line);
                if let Some(p) = report {
                    out.reports.push(format!("{p}  <-  {}", line.trim()));
                }
                let in_trace =
                    report.is_none() && trace_left > 0 && kernel_message(&line).is_some();
                if report.is_some() {
                    trace_left = REPORT_TRACE_LINES;
                } else if in_trace {
                    trace_left -= 1;
                }
                match marker_in(&line) {
                    Some(Marker::Start) => {
                        started = true;
                        continue;
                    }
                    Some(Marker::Exit(rc)) => {
                        out.guest_status = rc;
                        continue;
                    }
                    None => {}
                }
                let from_guest = started && kernel_message(&line).is_none();
                if r.stream && (r.show_kernel || from_guest || report.is_some() || in_trace) {
                    writeln!(stdout, "{line}")?;
                    stdout.flush()?;
                }
            }
            Ok(None) => break,
            // At the deadline (the loop's head starts the dump) or, while dumping, after
            // HANG_DUMP_QUIET without a line: the dump is over.
            Err(mpsc::RecvTimeoutError::Timeout) if dump_until.is_some() => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(qemu_in);
    if out.timed_out {
        let _ = child.kill();
    }
    // QEMU exits right after the guest powers off; give it a moment, no more.
    let grace = Instant::now() + Duration::from_secs(10);
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if Instant::now() > grace {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let err = err_thread.join().unwrap_or_default();
    if !err.trim().is_empty() && out.guest_status.is_none() {
        eprintln!("qemu: {}", err.trim());
    }
    Ok(out)
}

/// Decide TCG or KVM, probing KVM once and caching what the probe saw.
fn choose_accel(args: &Args, kernel: &Path) -> Result<Accel> {
    if args.accel != Accel::Auto {
        return Ok(args.accel);
    }
    let kvm_usable = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    if !kvm_usable {
        return Ok(Accel::Tcg);
    }
    let cache = cache_dir().join("kvm-probe");
    if let Ok(s) = std::fs::read_to_string(&cache) {
        return Ok(if s.trim() == "boots" {
            Accel::Kvm
        } else {
            Accel::Tcg
        });
    }
    eprintln!(
        "eevdf-vm: probing KVM (up to {} s, result cached in {})",
        args.kvm_probe_timeout_s,
        cache.display()
    );
    let init = "#!/bin/sh\necho EEVDF-GUEST-START\necho EEVDF-GUEST-EXIT=0\npoweroff -f\n";
    let mut a = cpio::Archive::new();
    a.dir("dev");
    a.chardev("/dev/console", 5, 1);
    a.file("/bin/busybox", 0o755, &std::fs::read("/bin/busybox")?);
    a.symlink("/bin/sh", "busybox");
    a.symlink("/bin/poweroff", "busybox");
    a.file("/init", 0o755, init.as_bytes());
    let initrd = cache_dir().join("kvm-probe.cpio");
    std::fs::create_dir_all(cache_dir())?;
    std::fs::write(&initrd, a.finish())?;
    let out = run_qemu(&Run {
        kernel,
        initrd: &initrd,
        accel: Accel::Kvm,
        icount_shift: None,
        tcg_single_thread: false,
        cpus: 1,
        mem_mib: 256,
        append: "quiet",
        timeout: Duration::from_secs(args.kvm_probe_timeout_s),
        hang_dump: Duration::ZERO,
        stream: false,
        show_kernel: false,
        log: None,
        qemu_args: &[],
    })?;
    let boots = out.guest_status == Some(0);
    std::fs::write(&cache, if boots { "boots\n" } else { "hangs\n" })?;
    eprintln!(
        "eevdf-vm: KVM {}",
        if boots {
            "boots: using it"
        } else {
            "did not boot in time: using TCG"
        }
    );
    Ok(if boots { Accel::Kvm } else { Accel::Tcg })
}

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("eevdf-vm: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode> {
    let args = Args::parse();
    if args.cpus == 0 || args.cpus > 8 {
        bail!(
            "--cpus must be 1..=8 (the kernel is built with NR_CPUS=8), got {}",
            args.cpus
        );
    }
    if args.mem_mib < 128 {
        bail!("--mem-mib must be at least 128, got {}", args.mem_mib);
    }
    let kernel = kernel_image(&args.kernel)?;
    let accel = if args.icount_shift.is_some() {
        if args.accel == Accel::Kvm {
            bail!("--icount-shift needs TCG, not --accel kvm");
        }
        Accel::Tcg
    } else {
        choose_accel(&args, &kernel)?
    };
    let t0 = Instant::now();
    let initrd_data = build_initramfs(&args, INIT)?;
    let dir = cache_dir().join("vm");
    std::fs::create_dir_all(&dir)?;
    let initrd = dir.join(format!("initramfs.{}.cpio", std::process::id()));
    std::fs::write(&initrd, initrd_data).context("writing the initramfs")?;
    let single_thread =
        args.tcg_single_thread || (!args.tcg_multi_thread && patches_its_text(&kernel));
    eprintln!(
        "eevdf-vm: booting {} ({:?}{}{}, {} CPUs, {} MiB, timeout {} s)",
        kernel.display(),
        accel,
        args.icount_shift
            .map_or(String::new(), |s| format!(" icount shift={s}")),
        match (accel, args.icount_shift, single_thread) {
            (Accel::Tcg, None, true) => " single-threaded",
            (Accel::Tcg, None, false) => " multi-threaded",
            _ => "",
        },
        args.cpus,
        args.mem_mib,
        args.timeout_s
    );
    let out = run_qemu(&Run {
        kernel: &kernel,
        initrd: &initrd,
        accel,
        icount_shift: args.icount_shift,
        tcg_single_thread: single_thread,
        cpus: args.cpus,
        mem_mib: args.mem_mib,
        append: &args.append,
        timeout: Duration::from_secs(args.timeout_s),
        hang_dump: Duration::from_secs(args.hang_dump_s),
        stream: true,
        show_kernel: args.show_kernel,
        log: args.log.as_deref(),
        qemu_args: &args.qemu_args,
    });
    let _ = std::fs::remove_file(&initrd);
    let out = out?;
    let secs = t0.elapsed().as_secs_f64();
    if !out.reports.is_empty() {
        eprintln!("eevdf-vm: FAIL: the kernel reported a problem:");
        for r in &out.reports {
            eprintln!("    {r}");
        }
        return Ok(ExitCode::from(125));
    }
    if out.timed_out {
        let dump = match (args.hang_dump_s, out.dump_lines) {
            (0, _) => String::new(),
            (_, 0) => "; no SysRq-t dump (a kernel without CONFIG_MAGIC_SYSRQ_SERIAL, or a \
                       guest that no longer takes interrupts)"
                .to_string(),
            (_, n) => format!(
                "; its SysRq-t dump, {n} lines, is above{}",
                if args.log.is_some() {
                    " and in the log"
                } else {
                    ""
                }
            ),
        };
        eprintln!("eevdf-vm: FAIL: timed out after {} s{dump}", args.timeout_s);
        return Ok(ExitCode::from(124));
    }
    match out.guest_status {
        Some(rc) => {
            eprintln!("eevdf-vm: guest script exited {rc} after {secs:.1} s");
            Ok(ExitCode::from(u8::try_from(rc).unwrap_or(1)))
        }
        None => {
            eprintln!("eevdf-vm: FAIL: the guest stopped without reporting a status");
            Ok(ExitCode::from(126))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The markers found on their own lines and where a printk shares their line (as a
    /// next preflight's console had it, whose features were then lost).
    #[test]
    fn markers_survive_a_printk_on_their_line() {
        assert_eq!(marker_in("EEVDF-GUEST-START"), Some(Marker::Start));
        assert_eq!(
            marker_in("EEVDF-GUEST-START[    1.116847] input: ImExPS/2 Generic Explorer Mouse"),
            Some(Marker::Start)
        );
        assert_eq!(
            marker_in("[    1.116847] input: AT keyboard\rEEVDF-GUEST-START"),
            Some(Marker::Start)
        );
        assert_eq!(marker_in("EEVDF-GUEST-EXIT=0"), Some(Marker::Exit(Some(0))));
        assert_eq!(
            marker_in("EEVDF-GUEST-EXIT=17[    9.000001] reboot: Power down"),
            Some(Marker::Exit(Some(17)))
        );
        assert_eq!(
            marker_in("EEVDF-GUEST-EXIT=-1"),
            Some(Marker::Exit(Some(-1)))
        );
        assert_eq!(marker_in("EEVDF-GUEST-EXIT="), Some(Marker::Exit(None)));
        assert_eq!(marker_in("@@features PLACE_LAG"), None);
        assert_eq!(marker_in("[    1.0] EEVDF-GUEST"), None);
    }

    #[test]
    fn guest_programs_are_eevdf_dash_and_eevdfctl() {
        for yes in ["eevdf-slice", "eevdf-waker", "eevdfctl"] {
            assert!(is_guest_program(yes), "{yes}");
        }
        for no in [
            "eevdfctl.d",
            "eevdf-slice.d",
            "eevdfctl-extra",
            "eevdf",
            "libeevdf_guest.rlib",
            "build",
        ] {
            assert!(!is_guest_program(no), "{no}");
        }
    }

    #[test]
    fn only_kernel_lines_are_reports() {
        assert_eq!(
            report_in("[    1.234567] WARNING: CPU: 0 PID: 1 at kernel/sched/fair.c:1 foo"),
            Some("WARNING:")
        );
        assert_eq!(
            report_in("[   12.000001] BUG: sleeping function called"),
            Some("BUG:")
        );
        assert_eq!(
            report_in("[ 3.1] watchdog: BUG: soft lockup - CPU#0 stuck"),
            Some("BUG:")
        );
        assert_eq!(
            report_in("[ 3.1] rcu: INFO: rcu_preempt self-detected stall on CPU"),
            Some("rcu: INFO:")
        );
        // Userspace output has no printk timestamp.
        assert_eq!(report_in("WARNING: stat /dev/cpu_dma_latency failed"), None);
        assert_eq!(report_in("[    1.2] sched_eevdf: all good"), None);
        assert_eq!(report_in("[abc] WARNING: not a timestamp"), None);
    }
}
