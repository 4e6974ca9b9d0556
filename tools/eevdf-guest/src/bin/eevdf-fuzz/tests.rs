//! The fuzzer's own tests: its rules against hand-worked cases.

use super::*;

fn baseline() -> SchedAttr {
    SchedAttr {
        size: 56,
        sched_runtime: 2_100_000,
        sched_util_max: 1024,
        ..Default::default()
    }
}

fn call(attr: SchedAttr) -> Call {
    Call {
        pid: PidArg::Target,
        place: Place::Good,
        sys_flags: 0,
        attr,
        tail: None,
    }
}

#[test]
fn the_generator_is_a_function_of_the_seed() {
    let a: Vec<String> = {
        let mut r = Rng::new(7);
        (0..100)
            .map(|_| format!("{:?}", random_call(&mut r, false)))
            .collect()
    };
    let mut r = Rng::new(7);
    let b: Vec<String> = (0..100)
        .map(|_| format!("{:?}", random_call(&mut r, false)))
        .collect();
    assert_eq!(a, b);
    let mut r = Rng::new(8);
    assert_ne!(format!("{:?}", random_call(&mut r, false)), a[0]);
}

#[test]
fn deadline_keep_params_only_when_asked() {
    let mut r = Rng::new(1);
    for _ in 0..20_000 {
        let c = random_call(&mut r, false);
        let f = c.attr.sched_flags;
        assert!(
            !(c.attr.sched_policy == SCHED_DEADLINE
                && f & SCHED_FLAG_KEEP_PARAMS != 0
                && f & SCHED_FLAG_KEEP_POLICY == 0),
            "{c:?}"
        );
    }
}

#[test]
fn no_deadline_for_other_tasks() {
    let mut r = Rng::new(3);
    for _ in 0..10_000 {
        let mut c = random_call(&mut r, false);
        no_deadline(&mut r, &mut c);
        assert_ne!(c.attr.sched_policy, SCHED_DEADLINE);
    }
}

#[test]
fn attr_bytes_match_the_struct_layout() {
    let a = SchedAttr {
        size: 1,
        sched_policy: 2,
        sched_flags: 3,
        sched_nice: -4,
        sched_priority: 5,
        sched_runtime: 6,
        sched_deadline: 7,
        sched_period: 8,
        sched_util_min: 9,
        sched_util_max: 10,
    };
    let b = attr_bytes(&a);
    // SAFETY: SchedAttr is repr(C) plain data of 56 bytes without padding.
    let raw: [u8; 56] = unsafe { std::mem::transmute(a) };
    assert_eq!(b, raw);
}

#[test]
fn other_slice_is_clamped_and_zero_is_the_base() {
    let b = baseline();
    let mut a = SchedAttr::new(SCHED_OTHER);
    a.sched_runtime = 1;
    let got = SchedAttr {
        sched_runtime: 100_000,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    a.sched_runtime = u64::MAX;
    assert!(contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got).is_some());
    let got = SchedAttr {
        sched_runtime: 100_000_000,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    a.sched_runtime = 0;
    a.sched_nice = -21;
    let got = SchedAttr {
        sched_nice: -20,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
}

#[test]
fn idle_keeps_nice_and_slice_keep_params_keeps_everything() {
    let b = baseline();
    let mut a = SchedAttr::new(SCHED_IDLE);
    a.sched_nice = 10;
    a.sched_runtime = 5_000_000;
    let got = SchedAttr {
        sched_policy: SCHED_IDLE,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    let mut a = SchedAttr::new(SCHED_BATCH);
    a.sched_flags = SCHED_FLAG_KEEP_PARAMS | SCHED_FLAG_RESET_ON_FORK;
    a.sched_nice = 5;
    let got = SchedAttr {
        sched_flags: SCHED_FLAG_RESET_ON_FORK,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    // KEEP_POLICY takes reset_on_fork from the task, not from the call.
    let mut a = SchedAttr::new(SCHED_FIFO);
    a.sched_flags = SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_RESET_ON_FORK;
    a.sched_runtime = 3_000_000;
    let got = SchedAttr {
        sched_runtime: 3_000_000,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
}

#[test]
fn rt_and_deadline_read_back() {
    let b = baseline();
    let mut a = SchedAttr::new(SCHED_RR);
    a.sched_priority = 50;
    let got = SchedAttr {
        sched_policy: SCHED_RR,
        sched_priority: 50,
        sched_runtime: 0,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    let mut a = SchedAttr::new(SCHED_DEADLINE);
    a.sched_flags = SCHED_FLAG_DL_OVERRUN;
    a.sched_runtime = 1_000_000;
    a.sched_deadline = 10_000_000;
    let got = SchedAttr {
        sched_policy: SCHED_DEADLINE,
        sched_flags: SCHED_FLAG_DL_OVERRUN,
        sched_runtime: 1_000_000,
        sched_deadline: 10_000_000,
        sched_period: 10_000_000,
        ..b
    };
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    let wrong = SchedAttr {
        sched_period: 0,
        ..got
    };
    assert!(contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &wrong).is_some());
}

#[test]
fn the_no_change_path_keeps_an_unclamped_base_slice() {
    // base_slice_ns written to 1: a task without a custom slice has slice 1, and a
    // call asking for 1 changes nothing, so it reads back 1, not the clamp's 100 µs.
    let b = SchedAttr {
        sched_runtime: 1,
        ..baseline()
    };
    let mut a = SchedAttr::new(SCHED_OTHER);
    a.sched_runtime = 1;
    let got = b;
    assert_eq!(
        contradiction(&expect_after(&call(a), &b, Some(b.sched_runtime)), &got),
        None
    );
    assert_eq!(contradiction(&expect_after(&call(a), &b, None), &got), None);
}

#[test]
fn refusals_must_change_nothing() {
    let b = baseline();
    assert_eq!(changed_by_refusal(&b, &b, true), None);
    let moved = SchedAttr {
        sched_runtime: 5,
        ..b
    };
    assert!(changed_by_refusal(&b, &moved, true).is_some());
    assert_eq!(changed_by_refusal(&b, &moved, false), None);
    let niced = SchedAttr { sched_nice: 3, ..b };
    assert!(changed_by_refusal(&b, &niced, false).is_some());
}

#[test]
fn errnos_by_call() {
    let mut c = call(SchedAttr::new(SCHED_OTHER));
    assert!(errno_expected(libc::EINVAL, &c, false));
    assert!(!errno_expected(libc::EFAULT, &c, false));
    assert!(!errno_expected(libc::ESRCH, &c, false));
    assert!(errno_expected(libc::ESRCH, &c, true));
    assert!(!errno_expected(libc::ENOMEM, &c, true));
    c.place = Place::Straddle(4);
    assert!(errno_expected(libc::EFAULT, &c, false));
    c.pid = PidArg::Absent;
    assert!(errno_expected(libc::ESRCH, &c, false));
}

#[test]
fn base_slice_words() {
    assert_eq!(base_slice_kept("0"), Some(0));
    assert_eq!(base_slice_kept("4294967295"), Some(u64::from(u32::MAX)));
    assert_eq!(base_slice_kept("4294967296"), Some(0));
    assert_eq!(
        base_slice_kept("18446744073709551615"),
        Some(u64::from(u32::MAX))
    );
    assert_eq!(base_slice_kept("18446744073709551616"), None);
    assert_eq!(base_slice_kept("-1"), None);
}

#[test]
fn task_rows_of_a_timeline() {
    let t = "# sched_eevdf timeline\ncpu 0\n\
             cfs_rq V=1 zero=1 sum_w=2048 nr_queued=2 min_slice_ns=1 path=/\n\
             \x20 S      PID   WEIGHT        VRT-V         DL-V   SLICE_NS C E D NAME\n\
             \x20 R      108     1024     -1682517     -1289872    1400000 - y - cat\n\
             \x20 Q       86     1024      2397704     1092333    1400000 - - y fuzz-sleeping\n\
             \x20 Q        -     2048      6650827      7296779    1400000 y - y /grp a\n";
    assert_eq!(task_states(t), vec![(108, "running"), (86, "delayed")]);
}

#[test]
fn fnv_is_fnv1a() {
    let mut h = Fnv::new();
    h.bytes(b"a");
    assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
}
