// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_eevdf_debugfs`: the Rust debugfs bindings (debugfs/api.rs) and the
//! runqueue access of the debugfs files (kernel/rq.rs).
//!
//! - `parse_u64` takes exactly what it documents and rejects the rest;
//! - a directory and its file exist after creation, a second directory of the same name
//!   is an error that leaves the first alone, and dropping the directory removes both;
//! - `/sys/kernel/debug/sched/eevdf/timeline` exists (made by `sched_init_debug()`);
//! - a [`Text`] grows as it is printed to and keeps every byte;
//! - a CPU id beyond `nr_cpu_ids` is EINVAL, and a CPU's counters reset to zero;
//! - the `place` file takes `on`, `off` and `0` and refuses the rest with EINVAL, changing
//!   nothing; a cleared ring reads empty.
//!
//! The guest tests (tests/guest/16-eevdf-debugfs.sh) read and write the real files.

use crate::debugfs::api::{parse_u64, text, DebugFile, Dir, Text};
use crate::kunit::Test;
use crate::rq::{cpu_ids, possible_cpus, RqGuard};
use kernel::{bindings, c_str, error::code::EINVAL, str::CStr};

fn parse(t: &mut Test) {
    let ok: &[(&[u8], u64)] = &[
        (b"0", 0),
        (b"0\n", 0),
        (b"42\n", 42),
        (b"007", 7),
        (b"18446744073709551615", u64::MAX),
        (b"18446744073709551615\n", u64::MAX),
    ];
    let bad: &[&[u8]] = &[
        b"",
        b"\n",
        b"-1",
        b"+1",
        b" 0",
        b"0 ",
        b"0\n\n",
        b"\n0",
        b"0x10",
        b"1e3",
        b"18446744073709551616",
        b"99999999999999999999999",
        b"1\0",
        b"\0",
        b"\xff",
        b"0\r\n",
    ];
    for &(input, want) in ok {
        match parse_u64(input) {
            Ok(v) if v == want => {}
            r => t.fail(format_args!(
                "parse_u64({input:?}) = {r:?}, want Ok({want})"
            )),
        }
    }
    for &input in bad {
        if let Ok(v) = parse_u64(input) {
            t.fail(format_args!("parse_u64({input:?}) = Ok({v}), want EINVAL"));
        }
    }
}

/// A file whose contents never change.
struct Fixed;

impl DebugFile for Fixed {
    fn show(&self, m: &mut Text) -> kernel::error::Result {
        text!(m, "fixed\n")
    }
}

static FIXED: Fixed = Fixed;

/// Whether `name` exists under `parent` (the debugfs root when null).
fn exists(parent: *mut bindings::dentry, name: &CStr) -> bool {
    // SAFETY: `name` is NUL-terminated; `parent` is null or a live directory.
    let d = unsafe { bindings::debugfs_lookup(name.as_char_ptr(), parent) };
    if d.is_null() {
        return false;
    }
    // SAFETY: debugfs_lookup() returned a referenced dentry, which this drops.
    unsafe { bindings::dput(d) };
    true
}

/// Looks up `name` under `parent`, referenced; the caller `dput()`s it.
fn lookup(parent: *mut bindings::dentry, name: &CStr) -> *mut bindings::dentry {
    // SAFETY: as in `exists`.
    unsafe { bindings::debugfs_lookup(name.as_char_ptr(), parent) }
}

fn dir_lifecycle(t: &mut Test) {
    let name = c_str!("sched_eevdf_kunit");
    let dir = match Dir::new(name, None) {
        Ok(d) => d,
        Err(e) => return t.fail(format_args!("Dir::new: {e:?}")),
    };
    if let Err(e) = dir.create_file(c_str!("fixed"), &FIXED) {
        t.fail(format_args!("create_file: {e:?}"));
    }
    if !exists(core::ptr::null_mut(), name) {
        t.fail(format_args!("the directory does not exist after Dir::new"));
    }
    let d = lookup(core::ptr::null_mut(), name);
    if d.is_null() || !exists(d, c_str!("fixed")) {
        t.fail(format_args!("the file does not exist after create_file"));
    }
    if !d.is_null() {
        // SAFETY: referenced by `lookup`.
        unsafe { bindings::dput(d) };
    }
    if Dir::new(name, None).is_ok() {
        t.fail(format_args!(
            "a second directory of the same name was created"
        ));
    }
    if !exists(core::ptr::null_mut(), name) {
        t.fail(format_args!("the failed second Dir::new removed the first"));
    }
    drop(dir);
    if exists(core::ptr::null_mut(), name) {
        t.fail(format_args!("the directory is still there after drop"));
    }
}

fn eevdf_dir(t: &mut Test) {
    let sched = lookup(core::ptr::null_mut(), c_str!("sched"));
    if sched.is_null() {
        return t.fail(format_args!("no /sys/kernel/debug/sched"));
    }
    let eevdf = lookup(sched, c_str!("eevdf"));
    if eevdf.is_null() {
        t.fail(format_args!("no /sys/kernel/debug/sched/eevdf"));
    } else {
        if !exists(eevdf, c_str!("timeline")) {
            t.fail(format_args!("no /sys/kernel/debug/sched/eevdf/timeline"));
        }
        #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
        if !exists(eevdf, c_str!("stats")) {
            t.fail(format_args!("no /sys/kernel/debug/sched/eevdf/stats"));
        }
        #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
        if !exists(eevdf, c_str!("place")) {
            t.fail(format_args!("no /sys/kernel/debug/sched/eevdf/place"));
        }
        // SAFETY: referenced by `lookup`.
        unsafe { bindings::dput(eevdf) };
    }
    // SAFETY: referenced by `lookup`.
    unsafe { bindings::dput(sched) };
}

/// A [`Text`] grows past any first allocation and keeps every byte printed, in order.
fn text_grows(t: &mut Test) {
    let mut m = Text::new();
    let mut want_len: usize = 0;
    for i in 0..20_000u32 {
        if let Err(e) = text!(m, "{i}\n") {
            return t.fail(format_args!("print {i}: {e:?}"));
        }
        let mut digits = 1;
        let mut n = i;
        while n >= 10 {
            n /= 10;
            digits += 1;
        }
        want_len += digits + 1;
    }
    let b = m.as_bytes();
    if b.len() != want_len {
        t.fail(format_args!("{} bytes, want {want_len}", b.len()));
    }
    if !b.starts_with(b"0\n1\n2\n") || !b.ends_with(b"\n19998\n19999\n") {
        t.fail(format_args!(
            "the text does not start 0 1 2 and end 19998 19999"
        ));
    }
}

fn runqueues(t: &mut Test) {
    let end = cpu_ids().end;
    match RqGuard::lock(end) {
        Err(e) if e == EINVAL => {}
        Err(e) => t.fail(format_args!("lock(nr_cpu_ids) = {e:?}, want EINVAL")),
        Ok(_) => t.fail(format_args!("lock(nr_cpu_ids) succeeded")),
    }
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    for cpu in possible_cpus() {
        match RqGuard::lock(cpu) {
            Ok(mut g) => {
                g.reset_counts();
                let c = g.counts();
                if c.iter().any(|&n| n != 0) {
                    t.fail(format_args!("cpu {cpu}: counts {c:?} after reset"));
                }
            }
            Err(e) => t.fail(format_args!("lock({cpu}) = {e:?}")),
        }
    }
}

/// The `place` file's writes: `on` and `off` switch the record, `0` clears every ring,
/// anything else is EINVAL and leaves the switch as it was. The switch is restored. Without
/// `CONFIG_SCHED_EEVDF_RUST_STATS` there is no file, and nothing to test.
fn place_file(t: &mut Test) {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
    place_file_writes(t);
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_STATS))]
    let _ = t;
}

#[cfg(CONFIG_SCHED_EEVDF_RUST_STATS)]
fn place_file_writes(t: &mut Test) {
    use crate::debugfs::place::PlaceFile;
    use crate::place::{recording, set_recording, Placement, NR};
    let was = recording();
    let f = PlaceFile;
    for (input, want) in [
        (&b"on\n"[..], true),
        (&b"off"[..], false),
        (&b"on"[..], true),
    ] {
        if let Err(e) = f.write(input) {
            t.fail(format_args!("write({input:?}) = {e:?}"));
        }
        if recording() != want {
            t.fail(format_args!("after {input:?}: recording {}", recording()));
        }
    }
    for bad in [
        &b"garbage"[..],
        b"1",
        b"ON",
        b" on",
        b"on\n\n",
        b"-0",
        b"\0",
        b"offf",
    ] {
        match f.write(bad) {
            Err(e) if e == EINVAL => {}
            r => t.fail(format_args!("write({bad:?}) = {r:?}, want EINVAL")),
        }
        if !recording() {
            t.fail(format_args!("write({bad:?}) changed the switch"));
        }
    }
    set_recording(false);
    if let Err(e) = f.write(b"0\n") {
        t.fail(format_args!("write(\"0\\n\") = {e:?}"));
    }
    // SAFETY: all-zero is a valid `struct sched_eevdf_place` (integers).
    let empty: Placement = unsafe { core::mem::zeroed() };
    let mut ring = [empty; NR];
    for cpu in possible_cpus() {
        match RqGuard::lock(cpu) {
            Ok(g) => {
                let seq = g.placements(&mut ring);
                if seq != 0 || ring.iter().any(|p| p.seq != 0) {
                    t.fail(format_args!("cpu {cpu}: {seq} placements after a clear"));
                }
            }
            Err(e) => t.fail(format_args!("lock({cpu}) = {e:?}")),
        }
    }
    set_recording(was);
}

crate::kunit_suite!(sched_eevdf_debugfs_suite, c"sched_eevdf_debugfs", [
    c"parse_u64" => super::parse,
    c"dir_lifecycle" => super::dir_lifecycle,
    c"eevdf_dir" => super::eevdf_dir,
    c"text_grows" => super::text_grows,
    c"runqueues" => super::runqueues,
    c"place_file" => super::place_file,
]);
