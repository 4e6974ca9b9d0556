// SPDX-License-Identifier: GPL-2.0

//! `calc_delta()` / `calc_delta_fair()` are bit-identical to the kernel's `__calc_delta()`
//! on 64-bit, which uses `__int128` for `mul_u64_u32_shr()`. The reference below is the
//! C transliterated with `u128` (allowed in tests only).

use sched_eevdf::load::*;

fn ref_mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    (((a as u128) * (mul as u128)) >> shift) as u64
}

/// kernel/sched/fair.c `__calc_delta()` with `__update_inv_weight()`, CONFIG_64BIT.
#[expect(clippy::manual_checked_ops, reason = "transliterates the C")]
fn ref_calc_delta(delta_exec: u64, weight: u64, lw_weight: u64, lw_inv: u32) -> u64 {
    let scale_down = |w: u64| if w != 0 { (w >> 10).max(2) } else { 0 };
    let inv = if lw_inv != 0 {
        lw_inv
    } else {
        let w = scale_down(lw_weight);
        if w >= 0xffff_ffff {
            1
        } else if w == 0 {
            0xffff_ffff
        } else {
            (0xffff_ffffu64 / w) as u32
        }
    };
    let mut fact = scale_down(weight);
    let mut fact_hi = (fact >> 32) as u32;
    let mut shift: i32 = 32;
    if fact_hi != 0 {
        let fs = 32 - fact_hi.leading_zeros() as i32;
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact as u32 as u64) * (inv as u64);
    fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = 32 - fact_hi.leading_zeros() as i32;
        shift -= fs;
        fact >>= fs;
    }
    ref_mul_u64_u32_shr(delta_exec, fact as u32, shift as u32)
}

fn deltas() -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2,
        3,
        999,
        1_000,
        100_000,
        700_000,
        1_000_000,
        4_000_000,
        100_000_000,
        1_000_000_000,
        u32::MAX as u64,
        1 << 32,
        (1 << 40) + 12345,
        1 << 52,
        1 << 63,
        u64::MAX / 3,
        u64::MAX,
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..8 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push(x >> (x % 40));
    }
    v
}

#[test]
fn calc_delta_fair_matches_kernel_for_every_nice_weight() {
    for nice in -20..=19 {
        let lw = LoadWeight::from_nice(nice);
        let i = (nice + 20) as usize;
        assert_eq!(lw.weight, (SCHED_PRIO_TO_WEIGHT[i] as u64) << 10);
        assert_eq!(lw.inv_weight, SCHED_PRIO_TO_WMULT[i]);
        for d in deltas() {
            let want = if lw.weight == NICE_0_LOAD {
                d
            } else {
                ref_calc_delta(d, NICE_0_LOAD, lw.weight, lw.inv_weight)
            };
            assert_eq!(calc_delta_fair(d, lw), want, "nice {nice} delta {d}");
            assert_eq!(
                calc_delta(d, NICE_0_LOAD, lw),
                ref_calc_delta(d, NICE_0_LOAD, lw.weight, lw.inv_weight)
            );
        }
    }
    // The table inverses are 2^32 / w up to rounding.
    for (w, inv) in SCHED_PRIO_TO_WEIGHT.iter().zip(SCHED_PRIO_TO_WMULT) {
        assert!((inv as i64 - ((1i64 << 32) / *w as i64)).abs() <= 1);
    }
}

#[test]
fn calc_delta_fair_matches_kernel_for_every_cgroup_weight() {
    let step = if cfg!(miri) { 9973 } else { 1 };
    let ds = deltas();
    for shares in (MIN_SHARES..=MAX_SHARES).step_by(step) {
        // A group entity's weight: scale_load(shares), inverse computed lazily.
        for lw in [
            LoadWeight::from_weight(scale_load(shares)),
            LoadWeight {
                weight: scale_load(shares),
                inv_weight: 0,
            },
            // calc_group_shares() results are not multiples of 1024.
            LoadWeight::from_weight(scale_load(shares) + 513),
        ] {
            for &d in &ds {
                let want = if lw.weight == NICE_0_LOAD {
                    d
                } else {
                    ref_calc_delta(d, NICE_0_LOAD, lw.weight, lw.inv_weight)
                };
                assert_eq!(calc_delta_fair(d, lw), want, "shares {shares} delta {d}");
            }
        }
    }
}

#[test]
fn calc_delta_general_weights_match_kernel() {
    // __calc_delta(delta, se weight, &cfs_rq->load) as sched_slice() style callers use it.
    let mut x = 12345u64;
    for _ in 0..if cfg!(miri) { 200 } else { 200_000 } {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let weight = x >> (x % 64);
        // The kernel's precondition: weight <= lw.weight (a share of the runqueue).
        let lw_weight = ((x.rotate_left(17)) >> ((x >> 7) % 64)).max(weight);
        let d = x.rotate_left(31) >> ((x >> 13) % 64);
        let lw = LoadWeight {
            weight: lw_weight,
            inv_weight: 0,
        };
        assert_eq!(
            calc_delta(d, weight, lw),
            ref_calc_delta(d, weight, lw_weight, 0),
            "{d} {weight} {lw_weight}"
        );
    }
}

#[test]
fn mul_u64_u32_shr_matches_u128() {
    let mut x = 1u64;
    for _ in 0..if cfg!(miri) { 500 } else { 500_000 } {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let a = x.rotate_left(23) >> (x % 64);
        let m = (x >> 32) as u32;
        let s = (x % 129) as u32;
        let want = if s >= 128 {
            0
        } else {
            ref_mul_u64_u32_shr(a, m, s)
        };
        assert_eq!(mul_u64_u32_shr(a, m, s), want, "{a} {m} {s}");
    }
    assert_eq!(
        mul_u64_u32_shr(u64::MAX, u32::MAX, 0),
        ref_mul_u64_u32_shr(u64::MAX, u32::MAX, 0)
    );
    assert_eq!(
        mul_u64_u32_shr(u64::MAX, u32::MAX, 32),
        ref_mul_u64_u32_shr(u64::MAX, u32::MAX, 32)
    );
}

#[test]
fn scale_load_down_floor_is_two() {
    assert_eq!(scale_load_down(0), 0);
    assert_eq!(scale_load_down(1), 2);
    assert_eq!(scale_load_down(2047), 2);
    assert_eq!(scale_load_down(3072), 3);
    assert_eq!(scale_load_down(NICE_0_LOAD), NICE_0_WEIGHT);
}

/// `div_s64()` truncates toward zero (the quotient in 128 bits, where no divisor
/// overflows), with 0 for the two divisions that have no `i64` quotient: by zero, and
/// `i64::MIN / -1`. The divisors cover both of its paths, a positive divisor and any other.
#[test]
fn div_s64_truncates_toward_zero() {
    let values = [
        i64::MIN,
        i64::MIN + 1,
        -(1 << 40) - 7,
        -1025,
        -3,
        -1,
        0,
        1,
        2,
        3,
        1024,
        88761,
        (1 << 40) + 13,
        i64::MAX - 1,
        i64::MAX,
    ];
    for &a in &values {
        for &b in &values {
            let want = if b == 0 || (a == i64::MIN && b == -1) {
                0
            } else {
                (i128::from(a) / i128::from(b)) as i64
            };
            assert_eq!(div_s64(a, b), want, "{a} / {b}");
        }
    }
}
