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
