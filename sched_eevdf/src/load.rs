// SPDX-License-Identifier: GPL-2.0

//! Load weights and the fixed-point `delta / w` of fair.c, in 64-bit arithmetic only.
//!
//! The kernel on 64-bit keeps `load.weight` at high resolution (`scale_load(w) = w << 10`,
//! so `NICE_0_LOAD = 1 << 20`) and uses `scale_load_down()` (the table value, at least 2)
//! wherever products could grow: avg_vruntime, placement, the BIAS term. [`LoadWeight`]
//! stores the high-resolution value, so that `calc_delta_fair()` can test
//! `weight != NICE_0_LOAD` exactly as the kernel does, and it is bit-identical for group
//! entities whose weight is not a table value.

/// Fixed-point shift of load and capacity (`SCHED_FIXEDPOINT_SHIFT`).
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;
/// Shift of `NICE_0_LOAD` on 64-bit (two fixed-point shifts).
pub const NICE_0_LOAD_SHIFT: u32 = 2 * SCHED_FIXEDPOINT_SHIFT;
/// The high-resolution weight of a nice-0 entity (`1 << 20`).
pub const NICE_0_LOAD: u64 = 1 << NICE_0_LOAD_SHIFT;
/// `scale_load_down(NICE_0_LOAD)` = 1024: the nice-0 weight in the scaled-down units that
/// avg_vruntime and the `BIAS_ELIGIBLE` term use ("NICE_0_LOAD" in the EEVDF formulas).
pub const NICE_0_WEIGHT: u64 = NICE_0_LOAD >> SCHED_FIXEDPOINT_SHIFT;
/// `WMULT_CONST` (`~0U`): the numerator of the inverse weights.
pub const WMULT_CONST: u32 = !0;
/// `WMULT_SHIFT`: inverse weights are 2^32 / w.
pub const WMULT_SHIFT: u32 = 32;
/// Lowest cgroup weight (`MIN_SHARES`, before `scale_load`).
pub const MIN_SHARES: u64 = 2;
/// Highest cgroup weight (`MAX_SHARES`, before `scale_load`).
pub const MAX_SHARES: u64 = 1 << 18;

/// `sched_prio_to_weight[]` (kernel/sched/core.c): nice -20..=19, scaled down.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291, //
    /* -15 */ 29154, 23254, 18705, 14949, 11916, //
    /* -10 */ 9548, 7620, 6100, 4904, 3906, //
    /*  -5 */ 3121, 2501, 1991, 1586, 1277, //
    /*   0 */ 1024, 820, 655, 526, 423, //
    /*   5 */ 335, 272, 215, 172, 137, //
    /*  10 */ 110, 87, 70, 56, 45, //
    /*  15 */ 36, 29, 23, 18, 15, //
];

/// `sched_prio_to_wmult[]`: 2^32 / weight, precomputed (note: rounded, so not always equal
/// to `WMULT_CONST / w`; nice 0 has 4194304 here and 4194303 from `__update_inv_weight`).
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    /* -20 */ 48388, 59856, 76040, 92818, 118348, //
    /* -15 */ 147320, 184698, 229616, 287308, 360437, //
    /* -10 */ 449829, 563644, 704093, 875809, 1099582, //
    /*  -5 */ 1376151, 1717300, 2157191, 2708050, 3363326, //
    /*   0 */ 4194304, 5237765, 6557202, 8165337, 10153587, //
    /*   5 */ 12820798, 15790321, 19976592, 24970740, 31350126, //
    /*  10 */ 39045157, 49367440, 61356676, 76695844, 95443717, //
    /*  15 */ 119304647, 148102320, 186737708, 238609294, 286331153, //
];

/// `scale_load(w)`: table units to high resolution.
#[inline]
pub const fn scale_load(w: u64) -> u64 {
    w.wrapping_shl(SCHED_FIXEDPOINT_SHIFT)
}

/// `scale_load_down(w)`: high resolution to table units, never below 2 for a non-zero
/// weight (so group entities with tiny shares still count).
#[inline]
pub const fn scale_load_down(w: u64) -> u64 {
    if w == 0 {
        return 0;
    }
    let d = w >> SCHED_FIXEDPOINT_SHIFT;
    if d < 2 {
        2
    } else {
        d
    }
}

/// `struct load_weight`: a high-resolution weight and its cached inverse.
///
/// # Invariants
///
/// None are required for soundness. `inv_weight == 0` means "not computed yet" and is
/// treated like the kernel's lazy `__update_inv_weight()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadWeight {
    /// High-resolution weight (`scale_load(table value)` for a task).
    pub weight: u64,
    /// 2^32 / scaled-down weight, or 0 for "compute on use".
    pub inv_weight: u32,
}

impl LoadWeight {
    /// The weight of a task at `nice` (clamped to -20..=19), with the precomputed inverse
    /// from `sched_prio_to_wmult[]`, as `set_load_weight()` does.
    pub fn from_nice(nice: i32) -> LoadWeight {
        let idx = nice.clamp(-20, 19).wrapping_add(20) as usize;
        let w = SCHED_PRIO_TO_WEIGHT.get(idx).copied().unwrap_or(1024);
        let inv = SCHED_PRIO_TO_WMULT.get(idx).copied().unwrap_or(4194304);
        LoadWeight {
            weight: scale_load(w as u64),
            inv_weight: inv,
        }
    }

    /// `update_load_set()` followed by `__update_inv_weight()`: a high-resolution weight
    /// (a group entity's share) with the inverse the kernel computes lazily.
    pub const fn from_weight(weight: u64) -> LoadWeight {
        LoadWeight {
            weight,
            inv_weight: inv_weight_of(weight),
        }
    }

    /// `scale_load_down(weight)`: the weight as avg_vruntime uses it.
    #[inline]
    pub const fn weight_down(self) -> u64 {
        scale_load_down(self.weight)
    }

    /// The inverse weight, computing it as `__update_inv_weight()` would if it is 0.
    #[inline]
    pub const fn effective_inv_weight(self) -> u32 {
        if self.inv_weight != 0 {
            self.inv_weight
        } else {
            inv_weight_of(self.weight)
        }
    }
}

/// `__update_inv_weight()` for a high-resolution weight.
const fn inv_weight_of(weight: u64) -> u32 {
    let w = scale_load_down(weight);
    if w >= WMULT_CONST as u64 {
        1
    } else {
        // w < 2^32 here, so the quotient fits; w == 0 gives WMULT_CONST.
        match (WMULT_CONST as u64).checked_div(w) {
            Some(q) => q as u32,
            None => WMULT_CONST,
        }
    }
}

/// `fls()`: index (1-based) of the highest set bit, 0 for 0.
#[inline]
const fn fls(x: u32) -> u32 {
    // leading_zeros() <= 32.
    32u32.wrapping_sub(x.leading_zeros())
}

/// `mul_u32_u32()`: the exact 64-bit product of two 32-bit values.
#[inline]
pub const fn mul_u32_u32(a: u32, b: u32) -> u64 {
    // (2^32 - 1)^2 < 2^64: cannot overflow.
    (a as u64).wrapping_mul(b as u64)
}

/// `mul_u64_u32_shr()`: `(u64)(((u128)a * mul) >> shift)` without 128-bit types.
///
/// This is math64.h's generic version, which splits `a` into 32-bit halves:
///
/// ```text
///   a * mul = ah*mul * 2^32 + al*mul      (each partial product < 2^64)
/// ```
///
/// The generic C version is exact for `shift <= 32` only (its `<< (32 - shift)` drops
/// carries above bit 63, like the `(u64)` cast). Here the two partial products are summed
/// into a 128-bit value held as two `u64` limbs, so the result equals the `__int128`
/// version for every `shift` (a shift of 128 or more gives 0).
#[inline]
pub const fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    let al = a as u32;
    let ah = (a >> 32) as u32;
    let lo = mul_u32_u32(al, mul);
    let hi = mul_u32_u32(ah, mul);
    // p = hi * 2^32 + lo, as (p_hi, p_lo).
    let (p_lo, carry) = lo.overflowing_add(hi << 32);
    let p_hi = (hi >> 32).wrapping_add(carry as u64); // hi >> 32 < 2^32: cannot overflow.
    if shift == 0 {
        p_lo
    } else if shift < 64 {
        (p_lo >> shift) | (p_hi << 64u32.wrapping_sub(shift))
    } else if shift < 128 {
        p_hi >> shift.wrapping_sub(64)
    } else {
        0
    }
}

/// `__calc_delta()`: `delta_exec * weight / lw.weight`, as
/// `(delta_exec * (weight * lw.inv_weight)) >> WMULT_SHIFT`.
///
/// ```text
///   delta * weight / w  =  (delta * (scale_load_down(weight) * inv_w)) >> 32
///   inv_w = 2^32 / w           sched_prio_to_wmult[] (a task, rounded)
///   inv_w = 0xffffffff / w     __update_inv_weight() (a group entity, computed lazily)
/// ```
///
/// with `w` the scaled-down weight. Bit-identical to the kernel's: `fact =
/// scale_load_down(weight)` is reduced to 32 bits, multiplied by the 32-bit inverse,
/// reduced to 32 bits again, each reduction lowering the shift; for `weight = NICE_0_LOAD`
/// the shift stays >= 22. The final product is done by [`mul_u64_u32_shr`], from 32-bit
/// halves into two `u64` limbs (no 128-bit type). tests/calc.rs checks it bit for bit
/// against the kernel's algorithm written with `u128`: all 40 nice weights and every
/// cgroup weight `MIN_SHARES..=MAX_SHARES` (scaled up, and off a multiple of 1024, as
/// `calc_group_shares()` gives), 27 deltas each.
#[doc(alias = "__calc_delta")]
pub const fn calc_delta(delta_exec: u64, weight: u64, lw: LoadWeight) -> u64 {
    let mut fact = scale_load_down(weight);
    let mut fact_hi = (fact >> 32) as u32;
    let mut shift = WMULT_SHIFT;

    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift = shift.saturating_sub(fs);
        fact >>= fs;
    }

    fact = mul_u32_u32(fact as u32, lw.effective_inv_weight());

    fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift = shift.saturating_sub(fs);
        fact >>= fs;
    }

    mul_u64_u32_shr(delta_exec, fact as u32, shift)
}

/// `calc_delta_fair()`: real time to virtual time for an entity, `delta * NICE_0_LOAD / w`.
/// Exact (no rounding) for nice-0 entities.
///
/// An entity that runs `delta` ns advances its vruntime by `delta * 1024 / w_i`
/// (`update_curr()`; `w_i` scaled down, 1024 = [`NICE_0_WEIGHT`]): `w_i * v_i` grows by
/// 1024 per ns of service, so the lag `w_i (V - v_i) / 1024` is in ns of service.
/// Computed by [`calc_delta`] (there: the inverse weight, the shifts, the test).
#[inline]
pub const fn calc_delta_fair(delta: u64, lw: LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD {
        calc_delta(delta, NICE_0_LOAD, lw)
    } else {
        delta
    }
}

/// `div_s64()`: signed division truncating toward zero; 0 for a zero divisor (the kernel
/// would trap; the core's callers never divide by zero, this keeps the path panic-free).
///
/// The core divides by weights and weight sums, which are positive: that case is tested
/// first, and a positive divisor can neither be zero nor make `i64::MIN / -1` overflow,
/// so the division needs no other check (two instructions a call where `checked_div`
/// tests for both). Any other divisor takes `checked_div`, with the same result.
#[inline]
pub const fn div_s64(dividend: i64, divisor: i64) -> i64 {
    if divisor > 0 {
        #[expect(
            clippy::arithmetic_side_effects,
            reason = "a positive divisor is neither 0 nor -1: the division cannot fail"
        )]
        return dividend / divisor;
    }
    match dividend.checked_div(divisor) {
        Some(q) => q,
        None => 0,
    }
}
