// SPDX-License-Identifier: GPL-2.0

//! The no-panic check's canary (tools/no-panic.sh --canary): every function named
//! `canary_panics_*` below has a panic path of a kind the check must find, and
//! `canary_clean` has none. It is compiled as the kernel compiles our crate where it
//! matters (optimised, overflow checks on, panic=abort, no_std), and the check must
//! report each `canary_panics_*` function and not `canary_clean`.

#![no_std]

/// `Option::unwrap()`: `core::option::unwrap_failed`.
#[no_mangle]
pub fn canary_panics_unwrap(x: Option<u32>) -> u32 {
    x.unwrap()
}

/// `Result::expect()`: `core::result::unwrap_failed`.
#[no_mangle]
pub fn canary_panics_expect(x: Result<u32, u8>) -> u32 {
    x.expect("canary")
}

/// Indexing: `core::panicking::panic_bounds_check`.
#[no_mangle]
pub fn canary_panics_index(a: &[u32], i: usize) -> u32 {
    a[i]
}

/// Slicing: `core::slice::index::slice_end_index_len_fail`.
#[no_mangle]
pub fn canary_panics_slice(a: &[u32], n: usize) -> &[u32] {
    &a[..n]
}

/// `copy_from_slice`: `core::slice::copy_from_slice::len_mismatch_fail`.
#[no_mangle]
pub fn canary_panics_copy(a: &mut [u32], b: &[u32]) {
    a.copy_from_slice(b)
}

/// An overflow-checked addition: `core::panicking::panic_const::panic_const_add_overflow`.
#[no_mangle]
pub fn canary_panics_add(a: u64, b: u64) -> u64 {
    a + b
}

/// A division: `core::panicking::panic_const::panic_const_div_by_zero`.
#[no_mangle]
pub fn canary_panics_div(a: u64, b: u64) -> u64 {
    a / b
}

/// `panic!()`: `core::panicking::panic_fmt`.
#[no_mangle]
pub fn canary_panics_explicit(a: u64) -> u64 {
    if a == 7 {
        panic!("canary {a}");
    }
    a
}

/// No panic path: wrapping arithmetic and checked access.
#[no_mangle]
pub fn canary_clean(a: &[u64], i: usize) -> u64 {
    a.get(i).copied().unwrap_or(0).wrapping_add(1)
}
