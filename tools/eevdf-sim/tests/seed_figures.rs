//! Section 1: `eevdf-sim` prints what the seed thread's program printed.
//!
//! Two independent checks per figure:
//! - the exact bytes, against `tests/fixtures/*.out` (the program's output, whitespace and
//!   all);
//! - the figures as they appear in seed 000 (`tests/fixtures/seed000_thread.txt`), where the
//!   mail archive collapsed runs of blanks and put the EEVDF and EVDF columns side by side:
//!   our two outputs, collapsed the same way and zipped line by line, must give the seed's
//!   lines exactly.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_eevdf-sim");
const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

const THREE: [&str; 7] = ["-e", "0,1024,6", "-e", "1,1024,2", "-e", "2,1024,18", "-v"];

fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run eevdf-sim")
}

fn stdout_of<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

fn three(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v: Vec<&str> = THREE.to_vec();
    v.push("19");
    v.extend_from_slice(extra);
    v
}

fn seven() -> Vec<&'static str> {
    // The seed's own argument order: -n in the middle.
    let mut v = three(&["-n"]);
    for e in ["3,1024,2", "4,1024,2", "5,1024,2", "6,1024,2"] {
        v.push("-e");
        v.push(e);
    }
    v
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIX}/{name}")).expect("fixture")
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The seed's section `## name`, without the comment lines.
fn seed_section(name: &str) -> Vec<String> {
    let all = fixture("seed000_thread.txt");
    let mut out = Vec::new();
    let mut on = false;
    for line in all.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            on = h == name;
            continue;
        }
        if on && !line.starts_with('#') {
            out.push(line.to_string());
        }
    }
    assert!(!out.is_empty(), "section {name}");
    out
}

#[test]
fn eevdf_figure_is_byte_identical() {
    assert_eq!(stdout_of(&three(&[])), fixture("seed_eevdf.out"));
}

#[test]
fn evdf_figure_is_byte_identical() {
    assert_eq!(stdout_of(&three(&["-n"])), fixture("seed_evdf.out"));
}

#[test]
fn seven_entity_run_is_byte_identical() {
    assert_eq!(stdout_of(&seven()), fixture("seed_seven.out"));
}

#[test]
fn both_columns_match_the_thread() {
    let eevdf = stdout_of(&three(&[]));
    let evdf = stdout_of(&three(&["-n"]));
    let want = seed_section("two-column");
    let (l, r): (Vec<&str>, Vec<&str>) = (eevdf.lines().collect(), evdf.lines().collect());
    assert_eq!(l.len(), r.len());
    let got: Vec<String> = l
        .iter()
        .zip(r.iter())
        .map(|(a, b)| collapse(&format!("{a} {b}")))
        .take(want.len())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn seven_entity_step_matches_the_thread() {
    let out = stdout_of(&seven());
    let want = seed_section("seven-entity");
    let lines: Vec<String> = out.lines().map(collapse).collect();
    let at = lines
        .iter()
        .position(|l| *l == want[0])
        .expect("the t=92 step is printed");
    assert_eq!(&lines[at..at + want.len()], &want[..]);
    // And the rows keep their exact indentation: C is picked at v=2.
    assert!(out.contains(">C   |----------------<\n"));
}

#[test]
fn picture_rows_follow_the_spec() {
    // " A" + space + v spaces + '|' + max(0, d-2) dashes + '<'.
    let out = stdout_of(&three(&[]));
    assert!(out.starts_with("d = 6\nd = 2\nd = 18\nq = 2\n\nt=0 V=1\n A |----<\n>B  |<\n C   |----------------<\n   |*--------|"));
    assert!(out.ends_with("lags: -10, 6\n\nBAaaBCccccccccBBBAaaBBBAaaBB\n\n"));
}

#[test]
fn bias_eligible_runs_and_differs_when_it_should() {
    // With every request biasing the threshold, C (r = 18) is eligible from the start and
    // its deadline is not the earliest, so the first pick is still B.
    let out = stdout_of(&three(&["-b"]));
    assert!(out.contains("t=0 V=1\n A |----<\n>B  |<\n"));
    assert!(out.contains("lags: "));
}

#[test]
fn whoopsies_go_to_stdout_like_the_original() {
    let o = run::<&str>(&[]);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Whoopsie!, no entities\n"
    );

    let mut args = Vec::new();
    for _ in 0..9 {
        args.push("-e");
        args.push("0,1024,2");
    }
    let o = run(&args);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Whoopsie! too many entities\n"
    );
}

#[test]
fn out_of_time_stops_like_the_original() {
    let out = stdout_of(&["-e", "40,1024,8", "-e", "44,1024,8", "-v", "100"]);
    assert!(out.ends_with("Whoopsie! out of time\n"), "{out}");
    assert!(!out.contains("lags:"));
}

#[test]
fn malformed_input_is_a_clear_error() {
    for bad in [
        vec!["-e", "1,2"],
        vec!["-e", "1,2,3,4"],
        vec!["-e", "a,1024,2"],
        vec!["-e", "-1,1024,2"],
        vec!["-e", "0,0,2"],
        vec!["-e", "0,1024,0"],
        vec!["-e", "0,4096,1"],
        vec!["-e", "0,1024,2", "-v", "x"],
        vec!["-e", "0,1024,2", "-q"],
        vec!["-e", "0,1024,99999999999999999999"],
    ] {
        let o = run(&bad);
        assert!(!o.status.success(), "{bad:?} should fail");
        assert!(o.stdout.is_empty(), "{bad:?}: nothing on stdout");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("error"), "{bad:?}: {err}");
    }
}
