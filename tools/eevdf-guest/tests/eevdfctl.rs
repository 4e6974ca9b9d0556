//! eevdfctl end to end on the host, against fake debugfs files (`$EEVDFCTL_SCHED_DIR`):
//! the glue between the parsers, the files and the output. The kernel's side of each file
//! (EINVAL for an unknown feature, the reset) is tested in the guest by
//! tests/guest/17-eevdfctl.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh fake /sys/kernel/debug/sched for one test, removed when dropped.
struct FakeDebugfs(PathBuf);

impl FakeDebugfs {
    fn new(test: &str, eevdf: bool) -> Self {
        let dir = std::env::temp_dir().join(format!("eevdfctl-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("features"),
            "PLACE_LAG RUN_TO_PARITY NO_BIAS_ELIGIBLE ELIGIBLE \n",
        )
        .unwrap();
        if eevdf {
            std::fs::create_dir(dir.join("eevdf")).unwrap();
            std::fs::write(
                dir.join("eevdf/stats"),
                "cpu picks wakeups\n0 100 7\n1 50 3\nall 150 10\n",
            )
            .unwrap();
            std::fs::write(
                dir.join("eevdf/timeline"),
                "# sched_eevdf timeline\n\
                 cpu 0\n\
                 cfs_rq V=100 zero=90 sum_w=1024 nr_queued=1 min_slice_ns=3000000 path=/\n  \
                 S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME\n  \
                 R      412     1024        -1234      2998766    3000000 - y - my prog\n\
                 cpu 1\n\
                 cfs_rq V=5 zero=5 sum_w=0 nr_queued=0 min_slice_ns=- path=/\n",
            )
            .unwrap();
        }
        FakeDebugfs(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_eevdfctl"))
            .args(args)
            .env("EEVDFCTL_SCHED_DIR", &self.0)
            .output()
            .unwrap()
    }
}

impl Drop for FakeDebugfs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn features_list_set_clear_and_unknown() {
    let d = FakeDebugfs::new("features", false);
    let o = d.run(&["features"]);
    assert!(o.status.success());
    assert_eq!(
        text(&o.stdout),
        "PLACE_LAG on\nRUN_TO_PARITY on\nBIAS_ELIGIBLE off\nELIGIBLE on\n"
    );

    // One unknown name: nothing is written, one line per unknown name.
    let before = read(&d.path("features"));
    let o = d.run(&[
        "features",
        "clear",
        "RUN_TO_PARITY",
        "NO_SUCH",
        "NO_ELIGIBLE",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("eevdfctl: unknown feature NO_SUCH\n"), "{err}");
    assert!(
        err.contains(
            "unknown feature NO_ELIGIBLE (to turn ELIGIBLE off: eevdfctl features clear ELIGIBLE)"
        ),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(read(&d.path("features")), before);

    // A plain file keeps only the last write, which is enough to see what was written and
    // that the result is read back.
    let o = d.run(&["features", "clear", "RUN_TO_PARITY"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(read(&d.path("features")), "NO_RUN_TO_PARITY");
    assert_eq!(text(&o.stdout), "RUN_TO_PARITY off\n");
    let o = d.run(&["features", "set", "RUN_TO_PARITY"]);
    assert_eq!(read(&d.path("features")), "RUN_TO_PARITY");
    assert_eq!(text(&o.stdout), "RUN_TO_PARITY on\n");
}

#[test]
fn eevdf_files_missing_is_explained() {
    let d = FakeDebugfs::new("stock", false);
    for args in [
        &["stats"][..],
        &["stats", "--reset"],
        &["timeline"],
        &["top", "--iterations", "1"],
    ] {
        let o = d.run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let want = format!(
            "eevdfctl: no {}/eevdf: not a sched_eevdf kernel (CONFIG_SCHED_EEVDF_RUST) or \
             debugfs not mounted\n",
            d.0.display()
        );
        assert_eq!(text(&o.stderr), want, "{args:?}");
    }
}

#[test]
fn stats_table_json_and_reset() {
    let d = FakeDebugfs::new("stats", true);
    let o = d.run(&["stats"]);
    assert!(o.status.success());
    assert_eq!(
        text(&o.stdout),
        "counter  cpu0  cpu1  all\npicks     100    50  150\nwakeups     7     3   10\n"
    );

    let o = d.run(&["stats", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["features"]["ELIGIBLE"], true);
    assert_eq!(v["features"]["BIAS_ELIGIBLE"], false);
    assert_eq!(
        v["stats"]["columns"],
        serde_json::json!(["picks", "wakeups"])
    );
    assert_eq!(v["stats"]["cpus"]["1"]["picks"], 50);
    assert_eq!(v["stats"]["all"]["wakeups"], 10);
    assert_eq!(
        v["timeline"][0]["cfs_rqs"][0]["entities"][0]["name"],
        "my prog"
    );
    assert_eq!(
        v["timeline"][1]["cfs_rqs"][0]["min_slice_ns"],
        serde_json::Value::Null
    );

    let o = d.run(&["stats", "--reset"]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert_eq!(read(&d.path("eevdf/stats")), "0");

    // What the kernel would never print: the error names the file and the line.
    std::fs::write(d.path("eevdf/stats"), "cpu picks\n0 1\n").unwrap();
    let o = d.run(&["stats"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("eevdf/stats: line 2: no 'all' row"), "{err}");
}

#[test]
fn stats_for_scripts_get_and_check_sums() {
    let d = FakeDebugfs::new("stats-scripts", true);
    let o = d.run(&["stats", "--get", "picks"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "150\n");
    let o = d.run(&["stats", "--get", "wakeups", "--cpu", "1"]);
    assert_eq!(text(&o.stdout), "3\n");
    let o = d.run(&["stats", "--get", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("no counter nope (the file has: picks wakeups)"));
    let o = d.run(&["stats", "--get", "picks", "--cpu", "5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("no row for cpu 5"));
    let o = d.run(&["stats", "--check-sums", "--want-cpus", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "cpus 2 columns 2\n");

    // A saved copy: read, not the live file; its problems are on stdout, exit 1.
    let copy = d.path("copy");
    std::fs::write(&copy, "cpu picks wakeups\n0 1 2\nall 2 2\n").unwrap();
    let c = copy.to_str().unwrap();
    let o = d.run(&["stats", "--from", c, "--get", "picks"]);
    assert_eq!(text(&o.stdout), "2\n");
    let o = d.run(&["stats", "--from", c, "--check-sums", "--want-cpus", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!("{c}: 1 cpu rows, want 2\n{c}: all picks is 2, the cpu rows sum to 1\n")
    );
    let o = d.run(&["stats", "--from", c]);
    assert!(text(&o.stdout).starts_with("counter  cpu0  all\n"));

    // The live oracle's file: the table, then enabled.
    std::fs::write(
        d.path("eevdf/verify"),
        "cpu checks divergences\n0 4 0\n1 5 0\nall 9 0\nenabled 1\n",
    )
    .unwrap();
    let o = d.run(&["stats", "--verify", "--check-sums"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "cpus 2 columns 2\n");
    let o = d.run(&["stats", "--verify"]);
    assert!(text(&o.stdout).ends_with("divergences     0     0    0\nenabled 1\n"));
    let o = d.run(&["stats", "--verify", "--from", c, "--get", "picks"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("line 3: last line 'all 2 2' is not 'enabled 0|1'"));
}

#[test]
fn timeline_for_scripts() {
    let d = FakeDebugfs::new("timeline-scripts", true);
    // (The fake's one row is behind V, so only the sums hold.)
    let o = d.run(&["timeline", "--check", "sums", "--want-cpus", "2"]);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(text(&o.stdout), "cpus 2 rqs 2 rows 1 groups 0\n");
    let o = d.run(&["timeline", "--check", "sums", "--want-cpus", "3"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).ends_with("eevdf/timeline: 2 cpu sections, want 3\n"));
    let o = d.run(&["timeline", "--root-nr-queued", "--cpu", "0"]);
    assert_eq!(text(&o.stdout), "1\n");
    let o = d.run(&["timeline", "--max-offset-ns", "--cpu", "0", "--looks", "2"]);
    assert_eq!(text(&o.stdout), "2998766\n");
    // Nothing delayed: every look is taken (2 here, 1 ms apart).
    let o = d.run(&[
        "timeline",
        "--delayed",
        "--cpu",
        "0",
        "--looks",
        "2",
        "--interval-ms",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "looks 2 delayed 0\n");

    // A group with a delayed entity: the first look sees it and the loop stops.
    let copy = d.path("tl");
    std::fs::write(
        &copy,
        "# sched_eevdf timeline\ncpu 1\n\
         cfs_rq V=1 zero=1 sum_w=15 nr_queued=1 min_slice_ns=700000 path=/g/d0\n\
         \x20 S PID WEIGHT VRT-V DL-V SLICE_NS C E D NAME\n\
         \x20 Q 77 15 9 99 700000 y - y sleeper\n",
    )
    .unwrap();
    let c = copy.to_str().unwrap();
    let o = d.run(&["timeline", "--from", c, "--delayed", "--group", "/g/d0"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "looks 1 delayed 1\n");
    std::fs::copy(&copy, d.path("eevdf/timeline")).unwrap();
    let o = d.run(&["timeline", "--delayed", "--cpu", "1", "--looks", "100"]);
    assert_eq!(text(&o.stdout), "looks 1 delayed 1\n");
    // The check says what is wrong, and where.
    let o = d.run(&["timeline", "--from", c, "--check", "eevdf"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!(
            "{c}: cpu 1 cfs_rq /g/d0: V outside the vruntimes: VRT-V in [9, 9]\n\
             {c}: cpu 1 cfs_rq /g/d0: the smallest vruntime (VRT-V 9) is not eligible\n"
        )
    );
    // A malformed snapshot is an error, whatever the query.
    std::fs::write(&copy, "cpu 0\nbogus\n").unwrap();
    let o = d.run(&["timeline", "--from", c, "--delayed", "--cpu", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("line 2: unexpected line 'bogus'"));
}

#[test]
fn cputime_against_fake_proc() {
    let d = FakeDebugfs::new("cputime", false);
    let proc_dir = d.path("proc");
    let task = |pid: u32, ns: u64, start: u64| {
        let p = proc_dir.join(pid.to_string());
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("schedstat"), format!("{ns} 0 0\n")).unwrap();
        let fields: Vec<String> = (3..=21).map(|i| i.to_string()).collect();
        std::fs::write(
            p.join("stat"),
            format!("{pid} (sh) R {} {start} 0 0\n", fields[1..].join(" ")),
        )
        .unwrap();
        std::fs::write(
            p.join("sched"),
            "sh (1, #threads: 1)\nse.sum_exec_runtime   :   5.0\nprio   :   120\n",
        )
        .unwrap();
    };
    task(10, 5_000_000_000, 1000);
    task(11, 12_000_000_000, 1000);
    std::fs::write(proc_dir.join("uptime"), "20.00 70.00\n").unwrap();
    std::fs::write(proc_dir.join("stat"), "cpu  100 0 100 300 0 0 0 0 0 0\n").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_eevdfctl"))
            .args(args)
            .env("EEVDFCTL_PROC_DIR", &proc_dir)
            .output()
            .unwrap()
    };
    let o = run(&["cputime", "10"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "cpu time: 1 tasks, 5.00 s in all; the most of its age: task 10, 0.500\n"
    );
    // 12 s in 10 s, and a task that is gone: the failures, the summary, the diagnostics.
    let o = run(&["cputime", "--slack-ratio", "1.05", "10", "11", "12"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        "task 11: 12 s of CPU time in 10 s\n\
         task 12 is gone\n\
         cpu time: 2 tasks, 17.00 s in all; the most of its age: task 11, 1.200\n\
         pid 10: se.sum_exec_runtime : 5.0 prio : 120 \n\
         pid 11: se.sum_exec_runtime : 5.0 prio : 120 \n\
         pid 12: \n\
         /proc/stat: 5.0 s of CPU time (all CPUs) in 20.0 s of uptime\n"
    );
    // A looser ratio lets task 11 pass.
    let o = run(&["cputime", "--slack-ratio", "1.2", "11"]);
    assert!(o.status.success(), "{}", text(&o.stdout));
}

#[test]
fn timeline_pretty_json_and_cpu() {
    let d = FakeDebugfs::new("timeline", true);
    let o = d.run(&["timeline", "--cpu", "0"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "cpu 0\n  cfs_rq / V=100 zero=90 sum_w=1024 nr_queued=1 min_slice_ns=3000000\n    \
         S PID WEIGHT VRT-V    DL-V SLICE_NS C E D NAME\n    \
         R 412   1024 -1234 2998766  3000000 - y - my prog\n"
    );
    let o = d.run(&["timeline", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["cfs_rqs"][0]["entities"][0]["vrt_v"], -1234);
    let o = d.run(&["timeline", "--cpu", "7"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("cpu 7 is not in the timeline"));

    std::fs::write(d.path("eevdf/timeline"), "cpu 0\ntruncated\n").unwrap();
    let o = d.run(&["timeline"]);
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("(truncated"));
    assert!(text(&o.stderr).contains("warning: the timeline is truncated after cpu 0"));
}

#[test]
fn top_prints_one_frame_per_iteration_without_a_tty() {
    let d = FakeDebugfs::new("top", true);
    let o = d.run(&[
        "top",
        "--iterations",
        "2",
        "--interval-ms",
        "20",
        "--rows",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(!out.contains('\x1b'), "no screen clearing on a pipe");
    assert_eq!(out.matches("=== eevdfctl top: sample ").count(), 2, "{out}");
    assert!(out.contains("sample 2 of 2"));
    // The counters do not move in a fake file: every rate is 0.
    assert!(
        out.contains("\npicks               0     0    0\n"),
        "{out}"
    );
    assert!(
        out.contains("  (empty)\n\n=== eevdfctl top: sample 2"),
        "{out}"
    );
    assert!(out.contains("cpu 1: cfs_rq / V=5"), "{out}");
}

#[test]
fn slice_get_reads_the_custom_flag_from_sched_debug() {
    let d = FakeDebugfs::new("slice", false);
    let me = std::process::id();
    // This test process, as debug.c's print_task() would list it with a custom slice.
    let line = format!(
        " S {:>15} {me:>5} {:>16}   E   {:>16} S {:>16} {:>16}",
        "cargo test", "1.000000", "2.000000", "3.000000", "4.000000"
    );
    std::fs::write(d.path("debug"), format!("runnable tasks:\n{line}\n")).unwrap();
    let o = d.run(&["slice", "get", &me.to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with(&format!("pid {me} policy ")), "{out}");
    assert!(out.ends_with(" custom yes\n"), "{out}");

    let o = d.run(&["slice", "get", "999999999"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "eevdfctl: no such process: 999999999\n");
}

#[test]
fn run_execs_and_reports_failure_with_127() {
    let d = FakeDebugfs::new("run", false);
    let o = d.run(&["run", "--slice-ns", "0", "--", "/nonexistent/prog", "-x"]);
    assert_eq!(o.status.code(), Some(127));
    assert!(text(&o.stderr).starts_with("eevdfctl: cannot run /nonexistent/prog: "));
    let o = d.run(&["run", "--slice-ns", "0", "--", "sh", "-c", "exit 3"]);
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn place_table_json_check_and_set() {
    let d = FakeDebugfs::new("place", true);
    let good = "enabled 1\n\
        cpu seq pid flags weight load vlag lag limit V vruntime deadline\n\
        0 20 15 0x41 1024 15 2737309 189604270 2800000 235520165471 235330561201 235331961201\n\
        1 3 0 0x1 2048 1024 -5 -15 100 1000 1015 2000\n";
    std::fs::write(d.path("eevdf/place"), good).unwrap();
    let o = d.run(&["place"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("# sched_eevdf placements (recording on;"),
        "{out}"
    );
    assert!(out.contains(" WM "), "{out}");
    let o = d.run(&["place", "--json", "--pid", "15"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["enabled"], true);
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    assert_eq!(v["rows"][0]["lag"], 189604270);
    let o = d.run(&["place", "--check", "--check-limit"]);
    assert!(o.status.success(), "{}", text(&o.stdout));
    assert_eq!(text(&o.stdout), "rows 2\n");
    // A task over its limit: found only when the limit is checked, named with the file.
    std::fs::write(
        d.path("eevdf/place"),
        good.replace(
            "2737309 189604270 2800000 235520165471 235330561201",
            "2800001 193946735 2800000 235520165471 235326218736",
        ),
    )
    .unwrap();
    assert!(d.run(&["place", "--check"]).status.success());
    let o = d.run(&["place", "--check", "--check-limit"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("eevdf/place: cpu 0 seq 20 pid 15: |vlag| 2800001 over"));
    for (set, word) in [("on", "on"), ("off", "off"), ("clear", "0")] {
        let o = d.run(&["place", "--set", set]);
        assert!(o.status.success());
        assert!(o.stdout.is_empty());
        assert_eq!(read(&d.path("eevdf/place")), word);
    }
}
