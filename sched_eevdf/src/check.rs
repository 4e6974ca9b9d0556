// SPDX-License-Identifier: GPL-2.0

//! The invariant checker: walks a runqueue and recomputes everything that is cached.
//!
//! Like lib/rbtree_test.c's `check_augmented()` it recomputes every node's augmented value
//! from its children and compares it with the stored one. It also checks the tree order,
//! the parent links, the red-black properties, the cached leftmost node, and the sums
//! `Σ w·key`, `Σ w`, `Σ r` and the queued count, recomputed from scratch; that a next
//! buddy is a queued, not delayed entity of this runqueue (current or in the tree); and
//! that a remembered holder of the earliest deadline is the first tree entity with it. (Slice
//! protection needs no invariant: `ops::protect_slice` reads a window past the deadline as
//! ended.)
//!
//! It does not allocate and does not recurse (it walks with parent links), so a kernel
//! KUnit test can run it too. Cost O(n log n).

use core::fmt;

use super::math::entity_key;
use super::tree::{Entity, Runqueue};
use super::vtime::{vruntime_before, vruntime_min};

/// What [`check_invariants`] found wrong. Values are the stored and recomputed ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvariantError {
    /// A child's parent link does not point back to its parent.
    ParentLink {
        /// In-order index of the parent.
        index: usize,
    },
    /// The root has a parent.
    RootParent,
    /// A node's vruntime is before its in-order predecessor's.
    KeyOrder {
        /// In-order index of the node.
        index: usize,
    },
    /// The root is red.
    RedRoot,
    /// A red node has a red child.
    RedRed {
        /// In-order index of the red parent.
        index: usize,
    },
    /// Two paths from a node to its leaves cross different numbers of black nodes.
    BlackHeight {
        /// In-order index of the leaf-adjacent node where the mismatch was seen.
        index: usize,
        /// Black height of the first such path.
        expected: u32,
        /// Black height of this path.
        found: u32,
    },
    /// A node's `min_deadline` is not min(deadline, children's min_deadline).
    MinDeadline {
        /// In-order index.
        index: usize,
        /// Stored value.
        stored: u64,
        /// Recomputed value.
        computed: u64,
    },
    /// A node's `min_slice` is not min(slice, children's min_slice).
    MinSlice {
        /// In-order index.
        index: usize,
        /// Stored value.
        stored: u64,
        /// Recomputed value.
        computed: u64,
    },
    /// A node's `max_slice` is not max(slice, children's max_slice).
    MaxSlice {
        /// In-order index.
        index: usize,
        /// Stored value.
        stored: u64,
        /// Recomputed value.
        computed: u64,
    },
    /// The cached leftmost is not the first node.
    Leftmost,
    /// A tree node is not marked on_rq.
    NotOnRq {
        /// In-order index.
        index: usize,
    },
    /// Current is also in the tree.
    CurrInTree,
    /// More nodes than `nr_queued` allows: a cycle or a foreign node.
    TooManyNodes,
    /// `avg_vruntime` differs from `Σ (v_i - v0) w_i` over the tree.
    AvgVruntime {
        /// Stored value.
        stored: i64,
        /// Recomputed value.
        computed: i64,
    },
    /// `avg_load` differs from `Σ w_i`.
    AvgLoad {
        /// Stored value.
        stored: u64,
        /// Recomputed value.
        computed: u64,
    },
    /// `sum_slice` differs from `Σ r_i`.
    SumSlice {
        /// Stored value.
        stored: u64,
        /// Recomputed value.
        computed: u64,
    },
    /// `nr_queued` differs from the tree size plus a queued current.
    NrQueued {
        /// Stored value.
        stored: u32,
        /// Recomputed value.
        computed: u32,
    },
    /// The remembered holder of the earliest deadline (`Runqueue::earliest`) is not the
    /// first tree entity whose deadline is the root's `min_deadline`.
    Earliest {
        /// The holder is a tree node.
        in_tree: bool,
    },
    /// The next buddy is neither current nor in the tree, or is not queued, or is delayed
    /// (fair.c clears a buddy when it dequeues it and never makes a delayed one).
    Buddy {
        /// The buddy is current or a tree node.
        on_this_rq: bool,
        /// Its `on_rq`.
        on_rq: bool,
        /// Its `sched_delayed`.
        delayed: bool,
    },
}

impl fmt::Display for InvariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use InvariantError::*;
        match *self {
            ParentLink { index } => write!(f, "node {index}: a child's parent link is wrong"),
            RootParent => write!(f, "the root has a parent"),
            KeyOrder { index } => write!(f, "node {index}: vruntime before its predecessor's"),
            RedRoot => write!(f, "the root is red"),
            RedRed { index } => write!(f, "node {index}: red node with a red child"),
            BlackHeight {
                index,
                expected,
                found,
            } => {
                write!(f, "node {index}: black height {found}, expected {expected}")
            }
            MinDeadline {
                index,
                stored,
                computed,
            } => {
                write!(
                    f,
                    "node {index}: min_deadline {stored}, recomputed {computed}"
                )
            }
            MinSlice {
                index,
                stored,
                computed,
            } => {
                write!(f, "node {index}: min_slice {stored}, recomputed {computed}")
            }
            MaxSlice {
                index,
                stored,
                computed,
            } => {
                write!(f, "node {index}: max_slice {stored}, recomputed {computed}")
            }
            Leftmost => write!(f, "cached leftmost is not the first node"),
            NotOnRq { index } => write!(f, "node {index}: in the tree but not on_rq"),
            CurrInTree => write!(f, "current is in the tree"),
            TooManyNodes => write!(f, "more tree nodes than nr_queued (cycle or foreign node)"),
            AvgVruntime { stored, computed } => {
                write!(f, "avg_vruntime {stored}, recomputed {computed}")
            }
            AvgLoad { stored, computed } => write!(f, "avg_load {stored}, recomputed {computed}"),
            SumSlice { stored, computed } => write!(f, "sum_slice {stored}, recomputed {computed}"),
            NrQueued { stored, computed } => write!(f, "nr_queued {stored}, recomputed {computed}"),
            Earliest { in_tree } => write!(
                f,
                "remembered earliest deadline: not its first holder (in the tree: {in_tree})"
            ),
            Buddy {
                on_this_rq,
                on_rq,
                delayed,
            } => write!(
                f,
                "next buddy: on this runqueue {on_this_rq}, on_rq {on_rq}, delayed {delayed}"
            ),
        }
    }
}

impl InvariantError {
    /// The invariant's short name, as the kernel's VERIFY warning names it.
    pub const fn name(&self) -> &'static str {
        use InvariantError::*;
        match self {
            ParentLink { .. } => "parent_link",
            RootParent => "root_parent",
            KeyOrder { .. } => "order",
            RedRoot => "red_root",
            RedRed { .. } => "red_red",
            BlackHeight { .. } => "black_height",
            MinDeadline { .. } => "min_deadline",
            MinSlice { .. } => "min_slice",
            MaxSlice { .. } => "max_slice",
            Leftmost => "leftmost",
            NotOnRq { .. } => "on_rq",
            CurrInTree => "curr_in_tree",
            TooManyNodes => "node_count",
            AvgVruntime { .. } => "sum_wkey",
            AvgLoad { .. } => "sum_w",
            SumSlice { .. } => "sum_slice",
            NrQueued { .. } => "nr_queued",
            Earliest { .. } => "earliest",
            Buddy { .. } => "buddy",
        }
    }
}

/// Summary returned by a successful [`check_invariants`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeStats {
    /// Nodes in the tree.
    pub nodes: u32,
    /// Black height of the tree (nil leaves not counted).
    pub black_height: u32,
}

/// Checks every invariant of the runqueue and its timeline; see [`InvariantError`].
pub fn check_invariants<R: Runqueue>(rq: &R) -> Result<TreeStats, InvariantError> {
    let curr = rq.curr();
    let buddy = rq.next_buddy();
    let mut buddy_found = buddy.is_some() && buddy == curr;
    let limit = rq.nr_queued();
    let mut nodes = 0u32;
    let mut sum_wkey = 0i64;
    let mut sum_w = 0u64;
    let mut sum_r = 0u64;
    let mut black_height: Option<u32> = None;

    if let Some(root) = rq.root() {
        if rq.parent(root).is_some() {
            return Err(InvariantError::RootParent);
        }
        if rq.is_red(root) {
            return Err(InvariantError::RedRoot);
        }
    }

    let mut first = rq.root();
    while let Some(n) = first.and_then(|n| rq.left(n)) {
        first = Some(n);
        nodes = nodes.saturating_add(1);
        if nodes > limit {
            return Err(InvariantError::TooManyNodes);
        }
    }
    nodes = 0;
    if first != rq.first() {
        return Err(InvariantError::Leftmost);
    }

    let md = rq.root().map(|r| r.min_deadline());
    let earliest = rq.earliest();
    let mut earliest_found = false;
    // The first tree entity whose deadline is the root's `min_deadline`.
    let mut holder: Option<R::Se> = None;
    let mut prev: Option<R::Se> = None;
    let mut node = first;
    let mut index = 0usize;
    while let Some(n) = node {
        nodes = nodes.saturating_add(1);
        if nodes > limit {
            return Err(InvariantError::TooManyNodes);
        }
        if Some(n) == curr {
            return Err(InvariantError::CurrInTree);
        }
        if !n.on_rq() {
            return Err(InvariantError::NotOnRq { index });
        }
        buddy_found |= Some(n) == buddy;
        earliest_found |= Some(n) == earliest;
        if holder.is_none() && Some(n.deadline()) == md {
            holder = Some(n);
        }
        let (left, right) = (rq.left(n), rq.right(n));
        for c in [left, right].into_iter().flatten() {
            if rq.parent(c) != Some(n) {
                return Err(InvariantError::ParentLink { index });
            }
            if rq.is_red(n) && rq.is_red(c) {
                return Err(InvariantError::RedRed { index });
            }
        }
        if let Some(p) = prev {
            if vruntime_before(n.vruntime(), p.vruntime()) {
                return Err(InvariantError::KeyOrder { index });
            }
        }
        // check_augmented(): recompute from the children's stored values.
        let mut d = n.deadline();
        let mut s = n.slice();
        let mut m = n.slice();
        for c in [left, right].into_iter().flatten() {
            d = vruntime_min(d, c.min_deadline());
            s = s.min(c.min_slice());
            m = m.max(c.max_slice());
        }
        if d != n.min_deadline() {
            return Err(InvariantError::MinDeadline {
                index,
                stored: n.min_deadline(),
                computed: d,
            });
        }
        if s != n.min_slice() {
            return Err(InvariantError::MinSlice {
                index,
                stored: n.min_slice(),
                computed: s,
            });
        }
        // `max_slice` only where the runqueue says it is kept (LAG_CLAMP_MAX_SLICE or
        // BIAS_ELIGIBLE, or rebuilt since): otherwise it is stale by design, and
        // `cfs_rq_max_slice()` scans.
        if !rq.slice_sums_stale() && m != n.max_slice() {
            return Err(InvariantError::MaxSlice {
                index,
                stored: n.max_slice(),
                computed: m,
            });
        }
        // Black height, from every node with a nil child up to the root.
        if left.is_none() || right.is_none() {
            let mut h = 0u32;
            let mut up = Some(n);
            let mut steps = 0u32;
            while let Some(u) = up {
                if !rq.is_red(u) {
                    h = h.saturating_add(1);
                }
                steps = steps.saturating_add(1);
                if steps > limit.saturating_add(1) {
                    return Err(InvariantError::TooManyNodes);
                }
                up = rq.parent(u);
            }
            match black_height {
                None => black_height = Some(h),
                Some(e) if e != h => {
                    return Err(InvariantError::BlackHeight {
                        index,
                        expected: e,
                        found: h,
                    })
                }
                Some(_) => {}
            }
        }
        let w = n.load().weight_down();
        sum_wkey = sum_wkey.wrapping_add(entity_key(rq, n).wrapping_mul(w as i64));
        sum_w = sum_w.wrapping_add(w);
        sum_r = sum_r.wrapping_add(n.slice());

        prev = Some(n);
        node = rq.rb_next(n);
        index = index.wrapping_add(1);
    }

    if sum_wkey != rq.avg_vruntime() {
        return Err(InvariantError::AvgVruntime {
            stored: rq.avg_vruntime(),
            computed: sum_wkey,
        });
    }
    if sum_w != rq.avg_load() {
        return Err(InvariantError::AvgLoad {
            stored: rq.avg_load(),
            computed: sum_w,
        });
    }
    // `sum_slice` only where the runqueue says it is kept, as `max_slice` above.
    if !rq.slice_sums_stale() && sum_r != rq.sum_slice() {
        return Err(InvariantError::SumSlice {
            stored: rq.sum_slice(),
            computed: sum_r,
        });
    }
    let queued = nodes.saturating_add(u32::from(curr.is_some_and(|c| c.on_rq())));
    if queued != rq.nr_queued() {
        return Err(InvariantError::NrQueued {
            stored: rq.nr_queued(),
            computed: queued,
        });
    }
    if earliest.is_some() && earliest != holder {
        return Err(InvariantError::Earliest {
            in_tree: earliest_found,
        });
    }
    if let Some(b) = buddy {
        if !buddy_found || !b.on_rq() || b.sched_delayed() {
            return Err(InvariantError::Buddy {
                on_this_rq: buddy_found,
                on_rq: b.on_rq(),
                delayed: b.sched_delayed(),
            });
        }
    }
    Ok(TreeStats {
        nodes,
        black_height: black_height.unwrap_or(0),
    })
}
