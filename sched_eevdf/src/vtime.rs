// SPDX-License-Identifier: GPL-2.0

//! The one place where virtual times are compared.
//!
//! vruntimes and deadlines are `u64` that wrap. Two of them are compared through their
//! signed difference `(s64)(a - b)`, which is right as long as they are less than 2^63
//! apart (fair.c's `entity_before()`, `max_vruntime()`, `vruntime_gt()`). Nothing else in
//! the crate compares virtual times with `<`.

/// The signed distance `a - b` between two virtual times: `(s64)(a - b)`.
#[inline]
pub const fn vdelta(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// `a` is strictly earlier than `b` (`(s64)(a - b) < 0`).
#[inline]
pub const fn vruntime_before(a: u64, b: u64) -> bool {
    vdelta(a, b) < 0
}

/// `a` is strictly later than `b` (`(s64)(a - b) > 0`, fair.c's `vruntime_gt`).
#[inline]
pub const fn vruntime_after(a: u64, b: u64) -> bool {
    vdelta(a, b) > 0
}

/// The earlier of two virtual times (fair.c's `min_vruntime()`; `a` on a tie).
#[inline]
pub const fn vruntime_min(a: u64, b: u64) -> u64 {
    if vruntime_before(b, a) {
        b
    } else {
        a
    }
}

/// The later of two virtual times (fair.c's `max_vruntime()`; `a` on a tie).
#[inline]
pub const fn vruntime_max(a: u64, b: u64) -> u64 {
    if vruntime_after(b, a) {
        b
    } else {
        a
    }
}

/// `v + d` for a signed virtual-time offset, wrapping like the C `u64 + s64`.
#[inline]
pub const fn vadd(v: u64, d: i64) -> u64 {
    v.wrapping_add_signed(d)
}
