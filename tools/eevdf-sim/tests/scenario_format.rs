//! The scenario format is strict: every malformed file is refused with a message that
//! names the problem, and the binary exits non-zero without printing a report.

use std::process::Command;

use eevdf_sim::scenario::Scenario;

const BIN: &str = env!("CARGO_BIN_EXE_eevdf-sim");

const GOOD: &str = r#"
name = "ok"
duration_ms = 100
[[task]]
name = "a"
behaviour = { kind = "hog" }
"#;

#[test]
fn the_minimal_scenario_parses_with_defaults() {
    let s = Scenario::parse(GOOD).unwrap();
    assert_eq!(s.hz, 250);
    assert_eq!(s.base_slice_us, 700);
    assert_eq!(s.tasks[0].count, 1);
}

#[test]
fn every_shipped_scenario_parses() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenarios");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            Scenario::load(&p).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 5);
}

/// (what is wrong, the file, a word the error must contain)
fn bad_cases() -> Vec<(&'static str, String, &'static str)> {
    let task = "[[task]]\nname = \"a\"\nbehaviour = { kind = \"hog\" }\n";
    vec![
        ("not TOML", "duration_ms = = 3".into(), "malformed"),
        ("missing duration", task.into(), "duration_ms"),
        ("unknown key", format!("duration_ms = 10\nspeed = 3\n{task}"), "speed"),
        ("zero duration", format!("duration_ms = 0\n{task}"), "duration_ms"),
        ("odd HZ", format!("duration_ms = 10\nhz = 123\n{task}"), "hz"),
        ("negative time", format!("duration_ms = -10\n{task}"), "malformed"),
        ("string for a number", format!("duration_ms = \"10\"\n{task}"), "malformed"),
        ("tiny base slice", format!("duration_ms = 10\nbase_slice_us = 5\n{task}"), "base_slice_us"),
        ("no task", "duration_ms = 10\n".into(), "task"),
        (
            "nice and weight",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nnice = 1\nweight = 1024\nbehaviour = { kind = \"hog\" }\n".into(),
            "not both",
        ),
        (
            "nice out of range",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nnice = 20\nbehaviour = { kind = \"hog\" }\n".into(),
            "nice",
        ),
        (
            "weight too small",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nweight = 1\nbehaviour = { kind = \"hog\" }\n".into(),
            "weight",
        ),
        (
            "duplicate names",
            format!("duration_ms = 10\n{task}{task}"),
            "two tasks",
        ),
        (
            "setattr storm without a slice to set",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nsetattr_every_us = 200\nbehaviour = { kind = \"hog\" }\n".into(),
            "setattr_every_us",
        ),
        (
            "setattr storm too fast",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nslice_us = 300\nsetattr_every_us = 1\nbehaviour = { kind = \"hog\" }\n".into(),
            "setattr_every_us",
        ),
        (
            "unknown behaviour",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"spin\" }\n".into(),
            "malformed",
        ),
        (
            "behaviour key of another kind",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"hog\", period_us = 3 }\n".into(),
            "malformed",
        ),
        (
            "periodic without run",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"periodic\", period_us = 1000 }\n".into(),
            "malformed",
        ),
        (
            "periodic zero period",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"periodic\", period_us = 0, run_us = 5 }\n".into(),
            "period_us",
        ),
        (
            "uniform upside down",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"bursty\", run = { dist = \"uniform\", min_us = 9, max_us = 3 }, sleep = { dist = \"fixed\", us = 1 } }\n".into(),
            "min_us",
        ),
        (
            "zero run",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"bursty\", run = { dist = \"fixed\", us = 0 }, sleep = { dist = \"fixed\", us = 1 } }\n".into(),
            "run",
        ),
        (
            "unknown distribution",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nbehaviour = { kind = \"bursty\", run = { dist = \"normal\", mean_us = 3 }, sleep = { dist = \"fixed\", us = 1 } }\n".into(),
            "malformed",
        ),
        (
            "start after the end",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nstart_ms = 10\nbehaviour = { kind = \"hog\" }\n".into(),
            "start_ms",
        ),
        (
            "stop before start",
            "duration_ms = 10\n[[task]]\nname = \"a\"\nstart_ms = 5\nstop_ms = 5\nbehaviour = { kind = \"hog\" }\n".into(),
            "stop_ms",
        ),
        (
            "zero count",
            "duration_ms = 10\n[[task]]\nname = \"a\"\ncount = 0\nbehaviour = { kind = \"hog\" }\n".into(),
            "count",
        ),
        (
            "messenger waking a hog",
            format!("duration_ms = 10\n{task}[[task]]\nname = \"m\"\nbehaviour = {{ kind = \"messenger\", run_us = 5, wakes = \"a\" }}\n"),
            "worker",
        ),
        (
            "messenger waking nobody",
            "duration_ms = 10\n[[task]]\nname = \"m\"\nbehaviour = { kind = \"messenger\", run_us = 5, wakes = \"w\" }\n".into(),
            "worker",
        ),
        (
            "two messengers",
            "duration_ms = 10\n[[task]]\nname = \"w\"\nbehaviour = { kind = \"worker\", run = { dist = \"fixed\", us = 5 } }\n[[task]]\nname = \"m\"\ncount = 2\nbehaviour = { kind = \"messenger\", run_us = 5, wakes = \"w\" }\n".into(),
            "count",
        ),
        (
            "migration cost too long",
            format!("duration_ms = 10\nmigration_cost_us = 2000000\n{task}"),
            "migration_cost_us",
        ),
        (
            "feature change after the end",
            format!("duration_ms = 10\n{task}[[feature_change]]\nat_ms = 10\nset = {{ ELIGIBLE = false }}\n"),
            "at_ms",
        ),
    ]
}

#[test]
fn malformed_scenarios_are_refused_by_the_parser() {
    for (what, text, word) in bad_cases() {
        let e = Scenario::parse(&text).expect_err(what);
        let msg = format!("{e:#}");
        assert!(msg.contains(word), "{what}: {msg:?} lacks {word:?}");
    }
}

fn run_file(text: &str, extra: &[&str]) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("eevdf-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{:x}.toml", fxhash(text, extra)));
    std::fs::write(&p, text).unwrap();
    let o = Command::new(BIN)
        .arg("run")
        .arg(&p)
        .args(extra)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&p);
    o
}

fn fxhash(text: &str, extra: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes().chain(extra.iter().flat_map(|s| s.bytes())) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[test]
fn malformed_scenarios_fail_the_binary() {
    for (what, text, word) in bad_cases() {
        let o = run_file(&text, &[]);
        assert!(!o.status.success(), "{what}: exit {:?}", o.status);
        assert!(o.stdout.is_empty(), "{what}: no report");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(word), "{what}: {err:?} lacks {word:?}");
    }
}

#[test]
fn unknown_features_are_refused() {
    let text = format!("{GOOD}[features]\nELIGIBEL = false\n");
    let o = run_file(&text, &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("ELIGIBEL"));

    let o = run_file(GOOD, &["--feature", "NO_SUCH"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("SUCH"));

    let text = format!("{GOOD}[[feature_change]]\nat_ms = 5\nset = {{ FOO = true }}\n");
    let o = run_file(&text, &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("FOO"));
}

#[test]
fn missing_file_and_bad_overrides_fail() {
    let o = Command::new(BIN)
        .args(["run", "/nonexistent/x.toml"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/x.toml"));

    for extra in [
        &["--hz", "333"][..],
        &["--duration-ms", "0"][..],
        &["--base-slice-us", "1"][..],
        &["--duration-ms", "abc"][..],
    ] {
        let o = run_file(GOOD, extra);
        assert!(!o.status.success(), "{extra:?}");
        assert!(o.stdout.is_empty(), "{extra:?}");
    }
}

#[test]
fn json_output_is_machine_readable() {
    let o = run_file(GOOD, &["--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tasks"][0]["name"], "a");
    assert_eq!(v["duration_ns"], 100_000_000u64);
    let share = v["tasks"][0]["cpu_share"].as_f64().unwrap();
    assert!(
        (share - 1.0).abs() < 1e-9,
        "a lone hog gets the whole CPU: {share}"
    );
}
