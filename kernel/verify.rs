// SPDX-License-Identifier: GPL-2.0

//! `CONFIG_SCHED_EEVDF_RUST_VERIFY`: the live oracle, on the real runqueues under their
//! lock.
//!
//! - After every change of a timeline that fair.c completes (enqueue, dequeue, a switch
//!   of current, reweight, the requeue of a delayed entity, a group's slice change),
//!   fair.c calls [`sched_eevdf_verify`], which runs the core's invariant checker
//!   ([`check_invariants`]: order, red-black shape, augmented `min_deadline`, `min_slice`
//!   and `max_slice`, leftmost, Σw·key, Σw, Σr, the queued count, the next buddy) on that
//!   `cfs_rq`.
//! - Every pick and every wakeup-preemption decision the core takes (NEXT_BUDDY_EEVDF's
//!   included: preempt, and whether the wakee becomes the buddy) is taken again by the
//!   core's O(n) [`reference`], which trusts no cached value, and the two are compared; at
//!   each pick, `cfs_rq_max_slice()` (LAG_CLAMP_MAX_SLICE's lag limit) is compared with the
//!   reference's scan of the queued slices too.
//!
//! A divergence prints the invariant or decision, the call site and the runqueue
//! (bounded: [`DUMP_MAX`] entities), with `printk_deferred` since the runqueue lock is
//! held; counts in `struct rq::eevdf_verify`; and, the first time in a boot, ends in a
//! `WARN` naming it (`sched_eevdf_verify_warn()` in fair.c, patch 0006, issued from an
//! irq_work once the lock is dropped), which fails a guest run.
//!
//! The checks cost O(n log n) per timeline change and O(n) per decision: a debug option
//! (Documentation/kernel-integration.md#verify says what it makes too slow under TCG).
//!
//! Without the option, the hooks in this file compile to nothing.

use crate::fair::CfsRq;
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
use crate::rq::with_locked;
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
use crate::sched_eevdf::{cfs_rq_max_slice, check_invariants, oracle, Entity, Runqueue, Timeline};
use crate::{
    fair::Se,
    sched_eevdf::{Features, Wake},
};

/// The counters in `struct rq::eevdf_verify`, indexed by this enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Count {
    /// Invariant checks of a timeline.
    Checks,
    /// Picks compared with the reference.
    Picks,
    /// Wakeup-preemption decisions compared with the reference.
    Wakeups,
    /// Checks or comparisons that failed.
    Divergences,
    /// Picks (that agreed with the reference) of a tree entity sharing its deadline with
    /// another eligible one of another vruntime, where 6.12's tie rule may choose another
    /// ([`oracle::pick_is_tie`]).
    Ties,
}

/// The counters' names in `/sys/kernel/debug/sched/eevdf/verify`, in index order.
pub const NAMES: [&str; 5] = ["checks", "picks", "wakeups", "divergences", "ties"];

#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
const _: () = assert!(NAMES.len() == kernel::bindings::SCHED_EEVDF_NR_VERIFY as usize);

/// A planted corruption, for the test that the oracle catches one
/// (`echo corrupt min_deadline > /sys/kernel/debug/sched/eevdf/verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Plant {
    /// The next checked non-empty timeline's root gets a wrong `min_deadline`.
    MinDeadline = 1,
    /// The same with `min_slice`.
    MinSlice = 2,
    /// The same with `max_slice`.
    MaxSlice = 3,
}

/// Most entities a divergence prints (with the runqueue lock held).
pub const DUMP_MAX: u32 = 16;

#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
mod on {
    use super::*;
    use core::{
        ffi::{c_void, CStr},
        fmt,
        sync::atomic::{AtomicBool, AtomicU8, Ordering},
    };
    use kernel::{bindings, ffi::c_char};

    /// Whether the checks run (`echo off|on > /sys/kernel/debug/sched/eevdf/verify`; on at
    /// boot): off, every hook returns at once, which measures what the checks cost in one
    /// boot. A toggle is seen by each hook at its next call.
    static ENABLED: AtomicBool = AtomicBool::new(true);

    /// Turns the checks off or on (the debugfs file's switch: with SCHED_DEBUG).
    #[cfg(CONFIG_SCHED_DEBUG)]
    pub(crate) fn set_enabled(on: bool) {
        ENABLED.store(on, Ordering::Relaxed);
    }

    pub(crate) fn enabled() -> bool {
        ENABLED.load(Ordering::Relaxed)
    }

    /// The pending [`Plant`] (0: none). An atomic of `core`: 6.12's kernel crate has no
    /// atomics of its own, and this is one flag written by debugfs and taken once by
    /// whichever CPU checks a timeline next (`swap`: exactly one taker).
    static PLANT: AtomicU8 = AtomicU8::new(0);

    /// Plants `p` (the debugfs file's test switch: with SCHED_DEBUG).
    #[cfg(CONFIG_SCHED_DEBUG)]
    pub(crate) fn plant(p: Plant) {
        PLANT.store(p as u8, Ordering::Relaxed);
    }

    /// One line to the kernel log with `printk_deferred` (the caller holds a runqueue
    /// lock: a direct console write could need that lock again to wake a waiter).
    fn log(args: fmt::Arguments<'_>) {
        // SAFETY: the format is a NUL-terminated string with one `%pA`, which vsprintf
        // (CONFIG_RUST) formats by calling back into Rust with a `*const fmt::Arguments`;
        // `args` lives across the call.
        unsafe {
            bindings::_printk_deferred(
                c"\x014sched_eevdf: VERIFY: %pA\n".as_ptr().cast::<c_char>(),
                (&raw const args).cast::<c_void>(),
            );
        }
    }

    /// Counts one `c` on the runqueue of `rq` (shown by the debugfs file with SCHED_DEBUG;
    /// in `struct rq` for a crash dump either way).
    fn count(rq: &CfsRq<'_>, c: Count) {
        // SAFETY: by `CfsRq`'s invariant the cfs_rq is valid and the lock of its runqueue,
        // `rq_of(cfs_rq)`, is held: the counters are written only under that lock.
        let counts = unsafe { &mut (*rq.rq()).eevdf_verify };
        if let Some(n) = counts.get_mut(c as usize) {
            *n = n.wrapping_add(1);
        }
    }

    /// The CPU of `rq` (`cpu_of()`).
    fn cpu(rq: &CfsRq<'_>) -> i32 {
        #[cfg(CONFIG_SMP)]
        // SAFETY: as in `count`.
        let cpu = unsafe { (*rq.rq()).cpu };
        // One CPU, and `struct rq` has no `cpu`.
        #[cfg(not(CONFIG_SMP))]
        let cpu = {
            let _ = rq;
            0
        };
        cpu
    }

    /// Prints the runqueue: its sums and up to [`DUMP_MAX`] entities in timeline order,
    /// then current. The walk is bounded, so a corrupted tree cannot make it loop.
    fn dump<'rq>(rq: &CfsRq<'rq>) {
        let curr = rq.curr();
        log(format_args!(
            "cfs_rq: nr_queued={} zero_vruntime={} sum_wkey={} sum_w={} sum_slice={}{} curr={}",
            rq.nr_queued(),
            rq.zero_vruntime(),
            rq.avg_vruntime(),
            rq.avg_load(),
            rq.sum_slice(),
            if rq.slice_sums_stale() {
                " (stale)"
            } else {
                ""
            },
            match curr {
                Some(c) if c.on_rq() => "runnable",
                Some(_) => "not queued",
                None => "none",
            },
        ));
        let row = |tag: &str, i: u32, se: Se<'rq>| {
            log(format_args!(
                concat!(
                    "  {}{}: v={} d={} vprot={} slice={} w={} vlag={} delayed={} ",
                    "min_deadline={} min_slice={} max_slice={} red={}"
                ),
                tag,
                i,
                se.vruntime(),
                se.deadline(),
                se.vprot(),
                se.slice(),
                se.load().weight,
                se.vlag(),
                u8::from(se.sched_delayed()),
                se.min_deadline(),
                se.min_slice(),
                se.max_slice(),
                u8::from(rq.is_red(se)),
            ))
        };
        let mut node = rq.first();
        let mut i = 0u32;
        while let Some(se) = node {
            if i == DUMP_MAX {
                log(format_args!("  ... (more entities not shown)"));
                break;
            }
            row("#", i, se);
            node = rq.rb_next(se);
            i = i.wrapping_add(1);
        }
        if let Some(c) = curr {
            row("curr", 0, c);
        }
        // The next buddy, printed whole: it may be a stranger to this runqueue.
        if let Some(b) = rq.next_buddy() {
            row("next", 0, b);
        }
    }

    /// A call site's name for the log: fair.c's `__func__`, or a literal here. Kept as the
    /// C pointer and printed by printk's `%s`: making it a `CStr` would measure it, with an
    /// overflow-checked `len + 1` (a panic path under the runqueue lock).
    ///
    /// # Invariants
    ///
    /// The pointer is a NUL-terminated string that lives as long as the kernel.
    #[derive(Clone, Copy)]
    pub(crate) struct Site(*const c_char);

    impl Site {
        /// # Safety
        ///
        /// `p` is a NUL-terminated string that lives as long as the kernel.
        pub(crate) unsafe fn from_raw(p: *const c_char) -> Site {
            // INVARIANT: guaranteed by the caller.
            Site(p)
        }

        const fn literal(s: &'static CStr) -> Site {
            // INVARIANT: a `'static` C string literal.
            Site(s.as_ptr().cast())
        }
    }

    /// Reports a divergence: the log lines, the count, one WARN naming `what`.
    fn diverged(rq: &CfsRq<'_>, what: &'static str, detail: fmt::Arguments<'_>, site: Site) {
        count(rq, Count::Divergences);
        // SAFETY: every conversion has its argument: `%d` an `int`, `%.*s` an `int` length
        // and `what`'s bytes (valid for that length), `%s` the site (NUL-terminated, by
        // `Site`'s invariant), `%pA` a `*const fmt::Arguments` that lives across the call.
        unsafe {
            bindings::_printk_deferred(
                c"\x014sched_eevdf: VERIFY: CPU %d: %.*s after %s: %pA\n"
                    .as_ptr()
                    .cast::<c_char>(),
                cpu(rq),
                what.len() as i32,
                what.as_ptr().cast::<c_char>(),
                site.0,
                (&raw const detail).cast::<c_void>(),
            );
        }
        dump(rq);
        // SAFETY: `what`'s bytes are valid for its length, and the site is NUL-terminated
        // (`Site`'s invariant); the function only formats a WARN with them.
        unsafe {
            bindings::sched_eevdf_verify_warn(
                what.as_ptr().cast::<c_char>(),
                what.len() as i32,
                site.0,
            )
        };
    }

    /// Takes a pending [`Plant`] if this timeline is non-empty: corrupts its root's
    /// augmented value and returns what restores it.
    fn take_plant<'rq>(rq: &CfsRq<'rq>) -> Option<(Se<'rq>, Plant, u64)> {
        if PLANT.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let root = rq.root()?;
        match PLANT.swap(0, Ordering::Relaxed) {
            1 => {
                let old = root.min_deadline();
                root.set_min_deadline(old.wrapping_sub(1));
                Some((root, Plant::MinDeadline, old))
            }
            2 => {
                let old = root.min_slice();
                root.set_min_slice(old.wrapping_sub(1));
                Some((root, Plant::MinSlice, old))
            }
            3 => {
                let old = root.max_slice();
                root.set_max_slice(old.wrapping_sub(1));
                Some((root, Plant::MaxSlice, old))
            }
            _ => None,
        }
    }

    pub(crate) fn timeline(rq: &CfsRq<'_>, site: Site) {
        if !enabled() {
            return;
        }
        let planted = take_plant(rq);
        count(rq, Count::Checks);
        if let Err(e) = check_invariants(rq) {
            diverged(rq, e.name(), format_args!("{e}"), site);
        }
        // The planted value lives for one check: the kernel runs on correctly after it.
        match planted {
            Some((se, Plant::MinDeadline, old)) => se.set_min_deadline(old),
            Some((se, Plant::MinSlice, old)) => se.set_min_slice(old),
            Some((se, Plant::MaxSlice, old)) => se.set_max_slice(old),
            None => {}
        }
    }

    pub(crate) fn pick<'rq>(rq: &CfsRq<'rq>, got: Option<Se<'rq>>, features: Features) {
        if !enabled() {
            return;
        }
        count(rq, Count::Picks);
        let want = oracle::pick(rq, features);
        if got != want {
            let index = |se: Option<Se<'rq>>| se.map(|se| (se.vruntime(), se.deadline()));
            diverged(
                rq,
                "pick",
                format_args!(
                    "core picked (v, d) {:?}, the reference {:?}",
                    index(got),
                    index(want)
                ),
                Site::literal(c"pick_eevdf"),
            );
        } else if oracle::pick_is_tie(rq, features, got) {
            count(rq, Count::Ties);
        }
        // LAG_CLAMP_MAX_SLICE's r_max: the augmented value (and current's slice) against a
        // scan of the queued slices, at the O(n) already paid here.
        let (got, want) = (cfs_rq_max_slice(rq), oracle::max_slice(rq));
        if got != want {
            diverged(
                rq,
                "max_slice",
                format_args!("cfs_rq_max_slice() {got}, the queued slices' maximum {want}"),
                Site::literal(c"pick_eevdf"),
            );
        }
    }

    /// `None` while the checks are off.
    pub(crate) fn wakeup_before<'rq>(
        rq: &CfsRq<'rq>,
        pse: Se<'rq>,
        features: Features,
    ) -> Option<bool> {
        enabled().then(|| oracle::wakeup_preempt(rq, pse, features))
    }

    pub(crate) fn wakeup_after(rq: &CfsRq<'_>, want: Option<bool>, got: bool) {
        let Some(want) = want else {
            return;
        };
        count(rq, Count::Wakeups);
        if got != want {
            diverged(
                rq,
                "wakeup_preempt",
                format_args!("core says preempt={got}, the reference {want}"),
                Site::literal(c"check_preempt_wakeup_fair"),
            );
        }
    }

    /// `None` while the checks are off.
    pub(crate) fn wakeup_buddy_before<'rq>(
        rq: &CfsRq<'rq>,
        pse: Se<'rq>,
        wake: Wake,
        features: Features,
    ) -> Option<(bool, bool)> {
        enabled().then(|| oracle::wakeup_preempt_buddy(rq, pse, wake, features))
    }

    pub(crate) fn wakeup_buddy_after(
        rq: &CfsRq<'_>,
        want: Option<(bool, bool)>,
        got: (bool, bool),
    ) {
        let Some(want) = want else {
            return;
        };
        count(rq, Count::Wakeups);
        if got != want {
            diverged(
                rq,
                "wakeup_preempt_buddy",
                format_args!(
                    "core says (preempt, set_buddy)={:?}, the reference {:?}",
                    got, want
                ),
                Site::literal(c"check_preempt_wakeup_fair"),
            );
        }
    }
}

/// The counters, read and reset by the debugfs file under the runqueue lock.
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
impl crate::rq::RqGuard {
    /// This CPU's counts, indexed by [`Count`].
    pub fn verify_counts(&self) -> [u64; NAMES.len()] {
        // SAFETY: the runqueue is valid and its lock held while the guard lives (type
        // invariant), and the counters are written only under that lock.
        unsafe { (*self.as_ptr()).eevdf_verify }
    }

    /// Resets this CPU's counts.
    pub fn reset_verify_counts(&mut self) {
        // SAFETY: as in `verify_counts`, and `&mut self` is the one user of the guard.
        unsafe { (*self.as_ptr()).eevdf_verify = [0; NAMES.len()] };
    }
}

// The debugfs file's switches (with SCHED_DEBUG, which makes its directory).
#[cfg(all(CONFIG_SCHED_EEVDF_RUST_VERIFY, CONFIG_SCHED_DEBUG))]
pub(crate) use on::{enabled, plant, set_enabled};

/// Called by fair.c after it completed a change of `cfs_rq`'s timeline at `site`.
///
/// # Safety
///
/// - `cfs_rq` is valid and its runqueue lock held for the call, with no other user;
/// - `site` is a NUL-terminated string that lives as long as the kernel.
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
#[no_mangle]
pub unsafe extern "C" fn sched_eevdf_verify(
    cfs_rq: *mut kernel::bindings::cfs_rq,
    site: *const kernel::ffi::c_char,
) {
    // SAFETY: `site` is a NUL-terminated string that lives as long as the kernel (caller:
    // fair.c passes its `__func__`).
    let site = unsafe { on::Site::from_raw(site) };
    // SAFETY: `cfs_rq` is valid and its runqueue lock held for the call, with no other
    // user (caller): `with_locked`'s obligations.
    unsafe { with_locked(cfs_rq, |rq| on::timeline(rq, site)) };
}

// Not in kernel/entry.rs's table (its `site` has a contract of its own), but checked the
// same way: the prototype that bindgen read from sched.h has this signature.
#[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
const _: unsafe extern "C" fn(*mut kernel::bindings::cfs_rq, *const kernel::ffi::c_char) =
    kernel::bindings::sched_eevdf_verify;

/// Compares a pick with the reference's (the same features).
#[inline(always)]
pub(crate) fn pick<'rq>(rq: &CfsRq<'rq>, got: Option<Se<'rq>>, features: Features) {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    on::pick(rq, got, features);
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_VERIFY))]
    let _ = (rq, got, features);
}

/// The reference's wakeup-preemption decision, taken before the core's (which may cancel
/// current's slice protection); `None` without the option or with the checks off.
#[inline(always)]
pub(crate) fn wakeup_before<'rq>(
    rq: &CfsRq<'rq>,
    pse: Se<'rq>,
    features: Features,
) -> Option<bool> {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    return on::wakeup_before(rq, pse, features);
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_VERIFY))]
    {
        let _ = (rq, pse, features);
        None
    }
}

/// Compares the core's wakeup decision with [`wakeup_before`]'s.
#[inline(always)]
pub(crate) fn wakeup_after(rq: &CfsRq<'_>, want: Option<bool>, got: bool) {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    on::wakeup_after(rq, want, got);
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_VERIFY))]
    let _ = (rq, want, got);
}

/// The reference's NEXT_BUDDY_EEVDF wakeup decision `(preempt, set_buddy)`, taken before
/// the core's (which sets the buddy and may cancel current's slice protection); `None`
/// without the option or with the checks off.
#[inline(always)]
pub(crate) fn wakeup_buddy_before<'rq>(
    rq: &CfsRq<'rq>,
    pse: Se<'rq>,
    wake: Wake,
    features: Features,
) -> Option<(bool, bool)> {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    return on::wakeup_buddy_before(rq, pse, wake, features);
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_VERIFY))]
    {
        let _ = (rq, pse, wake, features);
        None
    }
}

/// Compares the core's NEXT_BUDDY_EEVDF wakeup decision with [`wakeup_buddy_before`]'s.
#[inline(always)]
pub(crate) fn wakeup_buddy_after(rq: &CfsRq<'_>, want: Option<(bool, bool)>, got: (bool, bool)) {
    #[cfg(CONFIG_SCHED_EEVDF_RUST_VERIFY)]
    on::wakeup_buddy_after(rq, want, got);
    #[cfg(not(CONFIG_SCHED_EEVDF_RUST_VERIFY))]
    let _ = (rq, want, got);
}
