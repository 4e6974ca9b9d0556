// SPDX-License-Identifier: GPL-2.0

//! The pick: `pick_eevdf()`, its O(1) cases, the descent of the min-deadline tree, and
//! why it picked what it did (`pick_reason`).

use super::super::features::{Config, Features};
use super::super::math::Eligibility;
use super::super::tree::{Entity, Runqueue};
use super::super::vtime::vruntime_before;
use super::protect::protect_slice;
use super::{PickPath, PickReason};

/// `pick_eevdf()`: Earliest Eligible Virtual Deadline First.
///
/// In order to provide latency guarantees for different request sizes EEVDF selects the
/// best runnable entity from two criteria:
///
///  1. the entity must be eligible (must be owed service, [`Eligibility`]);
///  2. from those that meet 1), the one with the earliest virtual deadline.
///
/// Rule, deterministic: with one queued entity, it (current if runnable). Otherwise, with
/// NEXT_BUDDY_EEVDF and PICK_BUDDY, an eligible next buddy (`cfs_rq->next`) is the pick
/// (6.19 tests the buddy here, before slice protection; 6.12 and this core without the
/// flag leave it to fair.c's `pick_next_entity()`). Then current competes only if
/// runnable and eligible; with RUN_TO_PARITY (or RUN_TO_PARITY_MIN_SLICE) an eligible
/// current whose slice is protected ([`protect_slice`]) is kept. Else the earliest
/// deadline wins among the eligible tree entities (ties: tree order, i.e. smaller
/// vruntime, then FIFO) and current, which wins only with a strictly earlier deadline.
/// O(log n).
///
/// O(1) shortcuts before the descent (6.12's pick has the first for its layout: its
/// leftmost is its earliest deadline). The holder of the tree's earliest deadline (the
/// root's `min_deadline`), the first entity in tree order with it, is the tree's answer
/// when it is eligible: no tree deadline is earlier, and it comes first among the equal
/// ones. The runqueue remembers the holder while it stays queued
/// ([`Runqueue::earliest`], kept by the enqueue and the erase); where it does not know
/// it, the leftmost entity is tested: when the leftmost holds the earliest deadline, it
/// is the holder. A holder that is not eligible says nothing of the others unless it is
/// the leftmost: then no tree entity is eligible (the leftmost has the smallest
/// vruntime, and eligibility is monotone in vruntime), and the tree has no answer.
/// Equal slices and weights make the leftmost case the common one, a short-slice entity
/// that waits among longer ones the remembered holder's, and
/// everything up to here is straight-line code; the descent is a separate function
/// (`pick_eevdf_general`, out of line in the kernel), so that the common picks do not
/// pay for the registers it needs.
///
/// It reads the feature bits alone: a [`Config`] converts.
#[inline(always)]
pub fn pick_eevdf<R: Runqueue>(rq: &R, features: impl Into<Features>) -> Option<R::Se> {
    pick_features(rq, features.into())
}

/// [`pick_eevdf`] from the feature bits.
#[inline(always)]
pub(super) fn pick_features<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    match pick_eevdf_fast(rq, features) {
        Fast::Pick(pick) => pick,
        Fast::Tree { curr, avg, load } => pick_eevdf_tree(rq, curr, avg, load),
        Fast::General => pick_eevdf_general(rq, features),
    }
}

/// What [`pick_eevdf_fast`] decided, or left to the descent.
pub(super) enum Fast<S> {
    /// The pick.
    Pick(Option<S>),
    /// The tree decides, against `curr` (current if it competes: runnable, eligible and
    /// not kept by its slice protection): [`pick_eevdf_tree`], with the eligibility sums
    /// already computed (current folded in, [`Eligibility::sums`]). Only with the
    /// common features ([`PICK_COMMON`]).
    Tree {
        curr: Option<S>,
        avg: i64,
        load: u64,
    },
    /// Current's eligibility needs 128 bits: [`pick_eevdf_general`].
    General,
}

/// The feature bits [`pick_eevdf_fast`] is specialized on: the project's ELIGIBLE,
/// BIAS_ELIGIBLE and NEXT_BUDDY_EEVDF (6.12 has none of them).
const PICK_SPECIALIZED: Features = Features::ELIGIBLE
    .with(Features::BIAS_ELIGIBLE, true)
    .with(Features::NEXT_BUDDY_EEVDF, true);

/// Their values in the common configuration, 6.12's behaviour: eligibility tested, no
/// bias, no buddy in the pick.
const PICK_COMMON: Features = Features::ELIGIBLE;

/// The O(1) cases of [`pick_eevdf`], with 64-bit eligibility tests only; what they leave
/// undecided goes to the descent ([`Fast::Tree`]) or, when current's eligibility test
/// needs 128 bits, to [`pick_eevdf_general`].
///
/// Specialized on the common values of [`PICK_SPECIALIZED`]: with them, the body below
/// runs with those bits as constants (the same values as `features`), so that the common
/// pick tests none of them (one test of the three, instead of a test each where they are
/// read: about ten instructions); any other combination takes [`pick_eevdf_uncommon`],
/// the same body reading every bit.
#[inline(always)]
pub(super) fn pick_eevdf_fast<R: Runqueue>(rq: &R, features: Features) -> Fast<R::Se> {
    if features.bits() & PICK_SPECIALIZED.bits() != PICK_COMMON.bits() {
        return Fast::Pick(pick_eevdf_uncommon(rq, features));
    }
    let features = features
        .with(PICK_SPECIALIZED, false)
        .with(PICK_COMMON, true);
    pick_eevdf_fast_body(rq, features)
}

/// [`pick_eevdf`] for feature sets that [`pick_eevdf_fast`] is not specialized on (the
/// project's ELIGIBLE off, BIAS_ELIGIBLE or NEXT_BUDDY_EEVDF on): out of line.
#[inline(never)]
fn pick_eevdf_uncommon<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    match pick_eevdf_fast_body(rq, features) {
        Fast::Pick(pick) => pick,
        Fast::Tree { .. } | Fast::General => pick_eevdf_general(rq, features),
    }
}

/// The body of [`pick_eevdf_fast`], for any features.
#[inline(always)]
fn pick_eevdf_fast_body<R: Runqueue>(rq: &R, features: Features) -> Fast<R::Se> {
    let runnable = rq.curr().filter(|c| c.on_rq());
    // We can safely skip the eligibility test with one queued entity.
    if rq.nr_queued() == 1 {
        return Fast::Pick(runnable.or_else(|| rq.first()));
    }
    let el = Eligibility::with_features(rq, features);
    if let Some(b) = pick_buddy(rq, features) {
        match el.vruntime_narrow(b.vruntime()) {
            Some(true) => return Fast::Pick(Some(b)),
            Some(false) => {}
            None => return Fast::Pick(pick_buddy_wide(rq, features, b)),
        }
    }
    let curr = match runnable.map(|c| (c, el.vruntime_narrow(c.vruntime()))) {
        None | Some((_, Some(false))) => None,
        Some((c, Some(true))) => Some(c),
        Some((_, None)) => return Fast::General,
    };
    if let Some(c) = curr {
        if keeps_slice(c, features) {
            return Fast::Pick(Some(c));
        }
    }
    let Some(root) = rq.root() else {
        return Fast::Pick(curr);
    };
    if let Some(first) = rq.first() {
        if first.deadline() == root.min_deadline() {
            match el.vruntime_narrow(first.vruntime()) {
                Some(true) => return Fast::Pick(earlier(curr, Some(first))),
                // The leftmost has the smallest vruntime: if it is not eligible, no tree
                // entity is (the tree has no answer: the descent would find none).
                Some(false) => return Fast::Pick(curr),
                None => {}
            }
        }
    }
    // The leftmost does not hold the earliest deadline: the remembered holder, when there
    // is one and it is eligible, is the tree's answer, without the descent. Not eligible,
    // it says nothing of the others (they may come before it): on to the descent.
    if let Some(m) = rq.earliest() {
        if el.vruntime_narrow(m.vruntime()) == Some(true) {
            return Fast::Pick(earlier(curr, Some(m)));
        }
    }
    let (avg, load) = el.sums();
    Fast::Tree { curr, avg, load }
}

/// [`pick_eevdf`]'s descent when [`pick_eevdf_fast`], with the common features
/// ([`PICK_COMMON`]: no bias, so `avg` is the whole left side of the test), has settled
/// current (`curr`, if it competes) and computed the eligibility sums (`avg`, `load`): it
/// takes them as arguments, in registers, instead of computing them again as
/// [`pick_eevdf_general`] does, and is reached by a tail call. Out of line on the host
/// too, so that the host's measurements (Documentation/pick-cost.md) have the kernel's
/// structure.
#[inline(never)]
fn pick_eevdf_tree<R: Runqueue>(rq: &R, curr: Option<R::Se>, avg: i64, load: u64) -> Option<R::Se> {
    let el = Eligibility::from_sums(rq, PICK_COMMON, avg, load);
    earlier(curr, rq.root().and_then(|root| pick_tree(rq, &el, root)))
}

/// Whether [`pick_eevdf_tree`] picks `pse`: out of line, so that [`wakeup_preempt`]
/// reaches it by a tail call.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
pub(super) fn pick_eevdf_tree_is<R: Runqueue>(
    rq: &R,
    pse: R::Se,
    curr: Option<R::Se>,
    avg: i64,
    load: u64,
) -> bool {
    pick_eevdf_tree(rq, curr, avg, load) == Some(pse)
}

/// The next buddy the pick tests first: `cfs_rq->next` with NEXT_BUDDY_EEVDF and
/// PICK_BUDDY ("picking the ->next buddy will affect latency but not fairness", fair.c),
/// else none. The pick returns it if it is eligible. fair.c never makes a delayed entity
/// the buddy and clears the buddy when it dequeues it ([`check_invariants`] checks both).
/// Picking an eligible buddy moves latency, not the lag bound: the buddy is owed service
/// (`lag >= 0`), as the earliest eligible deadline is.
///
/// [`check_invariants`]: super::check::check_invariants
#[inline(always)]
fn pick_buddy<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    if features.contains(BUDDY_PICKS) {
        rq.next_buddy()
    } else {
        None
    }
}

/// The flags under which the core's pick tests the next buddy.
const BUDDY_PICKS: Features = Features::NEXT_BUDDY_EEVDF.with(Features::PICK_BUDDY, true);

/// RUN_TO_PARITY: once selected, an eligible current runs until it either becomes
/// non-eligible or its protected window ends (see [`set_protect_slice`]). 6.17 reads
/// the window without RUN_TO_PARITY too: NO_RUN_TO_PARITY only makes it shorter.
#[inline(always)]
fn keeps_slice<S: Entity>(curr: S, features: Features) -> bool {
    (features.contains(Features::RUN_TO_PARITY)
        || features.contains(Features::RUN_TO_PARITY_MIN_SLICE))
        && protect_slice(curr, features)
}

/// [`pick_eevdf`] for more than one queued entity, in general: eligibility in 128 bits
/// where needed, and the descent of the tree. It prepares its own [`Eligibility`] (a few
/// instructions, on the rare path) so that [`pick_eevdf`] reaches it by a tail call and
/// its own common path needs few registers.
///
/// The next buddy ([`pick_buddy`]) is settled before: [`pick_eevdf_fast`] returns an
/// eligible one, and hands one whose eligibility needs 128 bits to [`pick_buddy_wide`].
/// So this is reached only without an eligible buddy, and its common path (the default
/// features' too) tests none.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
pub(super) fn pick_eevdf_general<R: Runqueue>(rq: &R, features: Features) -> Option<R::Se> {
    let el = Eligibility::with_features(rq, features);
    let curr = rq.curr().filter(|c| c.on_rq() && el.vruntime(c.vruntime()));
    if let Some(c) = curr {
        if keeps_slice(c, features) {
            return Some(c);
        }
    }
    earlier(curr, rq.root().and_then(|root| pick_tree(rq, &el, root)))
}

/// [`pick_eevdf`] with a next buddy whose eligibility the 64-bit test could not decide:
/// the buddy if it is eligible (in 128 bits), else [`pick_eevdf_general`]. Rare: out of
/// line.
#[cfg_attr(sched_eevdf_in_kernel, inline(never))]
fn pick_buddy_wide<R: Runqueue>(rq: &R, features: Features, buddy: R::Se) -> Option<R::Se> {
    if Eligibility::with_features(rq, features).vruntime(buddy.vruntime()) {
        Some(buddy)
    } else {
        pick_eevdf_general(rq, features)
    }
}

/// The tree part of `pick_eevdf()`: the eligible tree entity with the earliest virtual
/// deadline, ties broken by tree order (smaller vruntime, then earlier insertion).
///
/// Cost O(log n), one descent, with an eligibility test only where the descent needs one.
/// The timeline is sorted by vruntime and eligibility is monotone in vruntime, so the
/// eligible nodes are a prefix of the in-order sequence. Write `A(T)` for the answer
/// restricted to a subtree `T` (the leftmost eligible node of `T` with the earliest
/// deadline among its eligible nodes), `md` for `T`'s augmented `min_deadline`, `L` and
/// `R` for the subtrees left and right of its root `n`, and `m` for the leftmost node of
/// `T` whose deadline is `md`. Each step replaces `A(T)` by something smaller:
///
/// ```text
///   (A) L.min_deadline == md:  A(T) = A(L)
///       m is in L. If m is eligible, it is A(T) (no deadline in T is earlier, and m
///       comes first among the equal ones), and A(L) = m. If not, n and R, which follow
///       m, are not eligible either, and A(T) = A(L). No eligibility test.
///   (B) otherwise, n not eligible:  A(T) = A(L)          (n and R follow n)
///   (C) otherwise, n.deadline == md:  A(T) = n
///       L's earliest deadline is later than md, and n, eligible, precedes R.
///   (D) otherwise (md is in R, n eligible): A(T) = first minimum of (L, n, A(R))
///       L is wholly eligible (it precedes n), so its piece's earliest deadline is
///       L.min_deadline.
/// ```
///
/// The descent keeps the best piece met so far in in-order sequence (a node, or a
/// wholly eligible subtree with its `min_deadline`), replacing it only on a strictly
/// earlier deadline, and stops at a subtree whose `md` is not strictly earlier (nothing
/// in it can win). (A) follows the earliest deadline down without testing eligibility,
/// so when the earliest deadline of the tree is eligible the descent tests only the nodes
/// where the path turns right and the one that holds it, and returns it by (C) without a
/// second descent. A second descent, inside a winning subtree piece, finds its leftmost
/// node with deadline == its `min_deadline`.
///
/// Before the descent, one test decides whether to try the tree's earliest deadline
/// first (E): eligibility is monotone in vruntime, and an entity's vruntime is at most
/// its deadline (a queued entity's request is not used up: `update_deadline()` gives a
/// new one once `v >= d`), so
///
/// ```text
///   (E) md eligible as a vruntime  =>  v_m <= md is eligible  =>  A(tree) = m
/// ```
///
/// found by following `min_deadline` down with no eligibility test. The shortcut tests
/// m itself before returning it, so the decision never rests on `v_m <= d_m`; that only
/// makes the shortcut likely to succeed. It costs one test where the earliest deadline
/// is not eligible (hackbench's common case: about 5 instructions a pick on the host)
/// and saves the tests and the bookkeeping of every right turn where it is (mixed
/// weights: Documentation/pick-cost.md).
///
/// [`pick_eevdf`] tries an O(1) shortcut before this (see there).
#[inline(always)]
fn pick_tree<R: Runqueue>(rq: &R, el: &Eligibility, root: R::Se) -> Option<R::Se> {
    // The best piece so far, its earliest deadline, and whether it is a whole subtree.
    let mut best: Option<R::Se> = None;
    let mut best_d = 0;
    let mut subtree = false;
    let mut n = root;
    // Invariant at the top of the loop: md == n.min_deadline(), and md is strictly
    // earlier than best_d if there is a best piece. (A) and (D) keep md (the subtree
    // they move into holds it); only (B) moves to a subtree with a later one.
    let mut md = n.min_deadline();

    if let Some(m) = tree_shortcut(rq, el, n) {
        return Some(m);
    }

    loop {
        let left = rq.left(n);
        let ld = left.map(|l| l.min_deadline());
        // (A): the earliest deadline is on the left.
        if ld == Some(md) {
            if let Some(l) = left {
                n = l;
                continue;
            }
        }
        // (B): n and its right subtree are not eligible.
        if !el.vruntime(n.vruntime()) {
            let Some(l) = left else { break };
            n = l;
            md = l.min_deadline();
            // Nothing in the left subtree can beat the best piece (later pieces lose ties).
            if best.is_some() && !vruntime_before(md, best_d) {
                break;
            }
            continue;
        }
        // (C): n holds its subtree's earliest deadline, and md < best_d.
        let d = n.deadline();
        if d == md {
            return Some(n);
        }
        // (D): the left subtree and n are eligible; md is on the right. Their first
        // minimum (the left subtree on a tie: it comes first) against the best so far.
        let (c, cd, c_subtree) = match (left, ld) {
            (Some(l), Some(ld)) if !vruntime_before(d, ld) => (l, ld, true),
            _ => (n, d, false),
        };
        if best.is_none() || vruntime_before(cd, best_d) {
            best = Some(c);
            best_d = cd;
            subtree = c_subtree;
        }
        match rq.right(n) {
            Some(r) => n = r,
            // Only with a corrupted augmentation (the checker reports it).
            None => break,
        }
    }

    let n = best?;
    if !subtree {
        return Some(n);
    }
    Some(leftmost_with(rq, n, best_d))
}

/// (E) of [`pick_tree`]: the tree's earliest deadline `md`, as a vruntime, is eligible.
/// Its holder m has `v_m <= d_m = md` (a queued entity's request is not used up), so m is
/// eligible too, and is the answer: find it without testing anything on the way, and test
/// it (exactly: the bound only decides whether to try). `None` when (E) does not apply.
#[inline(always)]
fn tree_shortcut<R: Runqueue>(rq: &R, el: &Eligibility, root: R::Se) -> Option<R::Se> {
    let md = root.min_deadline();
    if el.vruntime(md) {
        let m = leftmost_with(rq, root, md);
        if el.vruntime(m.vruntime()) {
            return Some(m);
        }
    }
    None
}

/// Which way [`pick_eevdf`] reaches its answer in this state ([`PickPath`]), for the
/// counters: [`pick_eevdf`]'s O(1) cases ([`pick_eevdf_fast`]'s body, whatever the
/// features), then (E) ([`pick_tree`]'s shortcut), else the descent. Call it on the state
/// the pick was made in. A pick whose current needs 128-bit eligibility
/// ([`pick_eevdf_general`], rare) is classified by its tree part, even where its slice
/// protection kept current.
pub fn pick_path<R: Runqueue>(rq: &R, cfg: Config) -> PickPath {
    match pick_eevdf_fast_body(rq, cfg.features) {
        Fast::Pick(_) => PickPath::Fast,
        Fast::Tree { .. } | Fast::General => {
            let el = Eligibility::with_features(rq, cfg.features);
            match rq.root() {
                None => PickPath::Fast,
                Some(root) if tree_shortcut(rq, &el, root).is_some() => PickPath::Shortcut,
                Some(_) => PickPath::Descent,
            }
        }
    }
}

/// The leftmost node of the subtree at `n` whose deadline is `d`, the subtree's
/// `min_deadline`.
#[inline(always)]
fn leftmost_with<R: Runqueue>(rq: &R, mut n: R::Se, d: u64) -> R::Se {
    loop {
        if let Some(l) = rq.left(n) {
            if l.min_deadline() == d {
                n = l;
                continue;
            }
        }
        if n.deadline() == d {
            return n;
        }
        match rq.right(n) {
            Some(r) => n = r,
            // Only with a corrupted augmentation (the checker reports it).
            None => return n,
        }
    }
}

/// The final step of [`pick_eevdf`]: an eligible current (`curr`) against the tree's
/// best; current wins only with a strictly earlier deadline.
#[inline(always)]
fn earlier<S: Entity>(curr: Option<S>, best: Option<S>) -> Option<S> {
    match (best, curr) {
        (Some(b), Some(c)) if vruntime_before(c.deadline(), b.deadline()) => Some(c),
        (None, c) => c,
        (b, _) => b,
    }
}

/// Why [`pick_eevdf`] returned `se` (in the state it picked from).
///
/// [`PickReason::Buddy`]: the pick tests the next buddy first (NEXT_BUDDY_EEVDF with
/// PICK_BUDDY), and it is eligible: the pick is the buddy, whatever `se` is (asked of
/// another entity, as [`wakeup_reason`](super::wakeup_reason) asks of current, the answer
/// is that the buddy test decided). [`PickReason::Parity`]: `se` is current, eligible and
/// slice-protected under RUN_TO_PARITY, which is exactly when the pick keeps current
/// without comparing deadlines. [`PickReason::EarliestIneligible`] costs one comparison:
/// the earliest deadline of all runnable entities is `min(root.min_deadline,
/// curr.deadline)`, and the pick is the earliest among the eligible ones, so some runnable
/// entity has a strictly earlier deadline than the pick iff that entity is not eligible.
pub fn pick_reason<R: Runqueue>(rq: &R, se: Option<R::Se>, cfg: Config) -> PickReason {
    let Some(se) = se else {
        return PickReason::Idle;
    };
    if rq.nr_queued() == 1 {
        return PickReason::Only;
    }
    if let Some(b) = pick_buddy(rq, cfg.features) {
        if Eligibility::new(rq, cfg).vruntime(b.vruntime()) {
            return PickReason::Buddy;
        }
    }
    let runnable = rq.curr().filter(|c| c.on_rq());
    if runnable == Some(se)
        && keeps_slice(se, cfg.features)
        && Eligibility::new(rq, cfg).vruntime(se.vruntime())
    {
        return PickReason::Parity;
    }
    let earliest = match (rq.root().map(|r| r.min_deadline()), runnable) {
        (Some(d), Some(c)) if vruntime_before(c.deadline(), d) => c.deadline(),
        (Some(d), _) => d,
        (None, Some(c)) => c.deadline(),
        (None, None) => se.deadline(),
    };
    if vruntime_before(earliest, se.deadline()) {
        PickReason::EarliestIneligible
    } else {
        PickReason::Earliest
    }
}
