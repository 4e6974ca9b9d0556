// SPDX-License-Identifier: GPL-2.0

//! An intrusive, augmented red-black tree with a cached leftmost node, over the
//! kernel's own `lib/rbtree.c` (`struct rb_root_cached`, `struct rb_node`) and
//! `include/linux/rbtree_augmented.h`.
//!
//! `kernel::rbtree` (6.12) owns boxed nodes and has neither augmentation nor a
//! cached leftmost node; the EEVDF timeline needs both, and must not allocate
//! under the runqueue lock. Here the `rb_node` is embedded in the element
//! (`sched_entity::run_node`), so insertion cannot fail and allocates nothing.
//!
//! The augment callbacks are derived, as `RB_DECLARE_CALLBACKS()` does, from one
//! [`Augment::compute`] function that returns `true` when the node's augmented
//! values did not change, which stops propagation early. The static inline
//! `rb_link_node()`, `rb_insert_augmented_cached()` and
//! `rb_erase_augmented_cached()` are written out here, so that the callbacks
//! are direct calls; the rebalancing is lib/rbtree.c's exported
//! `__rb_insert_augmented()` and `__rb_erase_color()`, given `A`'s rotate.

use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::bindings;

/// Colour bit of `__rb_parent_color` (`RB_BLACK`); red is 0.
const RB_BLACK: usize = 1;

/// The augmentation of a tree whose nodes are embedded in some element type.
///
/// # Safety
///
/// Implementers guarantee that, for every node of a tree that uses them,
/// [`Augment::compute`] and [`Augment::copy`] only access the element that
/// embeds the node(s) they are given and, read-only, the elements of that node's
/// children; that `compute` sets the node's augmented values to what they must
/// be given its children's; and that `copy` copies all augmented values.
pub unsafe trait Augment {
    /// `RBCOMPUTE(node, exit)`: recompute `node`'s augmented values from its
    /// element and its children's augmented values. Returns `true` when nothing
    /// changed (propagation may stop).
    ///
    /// # Safety
    ///
    /// `node` is linked in a tree using this augmentation that the caller has
    /// exclusive access to, and its children are valid nodes of that tree.
    unsafe fn compute(node: NonNull<bindings::rb_node>) -> bool;

    /// Copies the augmented values of `old` to `new`.
    ///
    /// # Safety
    ///
    /// As for [`Augment::compute`], for both nodes.
    unsafe fn copy(old: NonNull<bindings::rb_node>, new: NonNull<bindings::rb_node>);
}

/// The parent of `node` (`rb_parent()`).
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn parent(node: NonNull<bindings::rb_node>) -> Option<NonNull<bindings::rb_node>> {
    // SAFETY: the caller guarantees `node` is valid; the low two bits of
    // `__rb_parent_color` are the colour, the rest the parent pointer.
    let pc = unsafe { (*node.as_ptr()).__rb_parent_color };
    NonNull::new((pc & !3) as *mut bindings::rb_node)
}

/// The left child of `node`.
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn left(node: NonNull<bindings::rb_node>) -> Option<NonNull<bindings::rb_node>> {
    // SAFETY: the caller guarantees `node` is valid.
    NonNull::new(unsafe { (*node.as_ptr()).rb_left })
}

/// The right child of `node`.
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn right(node: NonNull<bindings::rb_node>) -> Option<NonNull<bindings::rb_node>> {
    // SAFETY: the caller guarantees `node` is valid.
    NonNull::new(unsafe { (*node.as_ptr()).rb_right })
}

/// Whether `node` is red (`rb_is_red()`).
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn is_red(node: NonNull<bindings::rb_node>) -> bool {
    // SAFETY: the caller guarantees `node` is valid.
    unsafe { (*node.as_ptr()).__rb_parent_color & RB_BLACK == 0 }
}

/// `RBNAME_propagate()`: recompute from `rb` up to (excluding) `stop`, stopping
/// early at the first node whose values did not change.
///
/// # Safety
///
/// Called by lib/rbtree.c (or by this module) with `rb` null or a node of a tree
/// using augmentation `A` that the caller has exclusive access to, and `stop`
/// null or an ancestor of `rb`.
pub unsafe extern "C" fn propagate<A: Augment>(
    mut rb: *mut bindings::rb_node,
    stop: *mut bindings::rb_node,
) {
    while rb != stop {
        let Some(node) = NonNull::new(rb) else { return };
        // SAFETY: by this function's contract `node` is a node of the tree.
        if unsafe { A::compute(node) } {
            break;
        }
        // SAFETY: as above.
        rb = unsafe { parent(node) }.map_or(ptr::null_mut(), NonNull::as_ptr);
    }
}

/// `RBNAME_copy()`.
///
/// # Safety
///
/// Called by lib/rbtree.c with two valid nodes of a tree using `A`.
unsafe extern "C" fn copy<A: Augment>(old: *mut bindings::rb_node, new: *mut bindings::rb_node) {
    if let (Some(o), Some(n)) = (NonNull::new(old), NonNull::new(new)) {
        // SAFETY: lib/rbtree.c passes nodes of the tree being modified.
        unsafe { A::copy(o, n) };
    }
}

/// `RBNAME_rotate()`: `new` takes `old`'s place at the top of the rotated
/// subtree, so it inherits `old`'s values; `old` is recomputed.
///
/// # Safety
///
/// Called by lib/rbtree.c with two valid nodes of a tree using `A`.
unsafe extern "C" fn rotate<A: Augment>(old: *mut bindings::rb_node, new: *mut bindings::rb_node) {
    if let (Some(o), Some(n)) = (NonNull::new(old), NonNull::new(new)) {
        // SAFETY: lib/rbtree.c passes nodes of the tree being modified, the
        // children of `old` already in place.
        unsafe {
            A::copy(o, n);
            A::compute(o);
        }
    }
}

/// A borrowed `struct rb_root_cached` whose nodes use augmentation `A`.
///
/// # Invariants
///
/// `root` points to a valid `rb_root_cached` that this handle may modify for its
/// lifetime (the caller of [`RbRootCached::from_raw`] holds the lock that
/// protects it), every node in it is embedded in a live element, and every
/// node's augmented values are what `A::compute` gives (the tree is only ever
/// modified through this handle or through C code using the same callbacks).
pub struct RbRootCached<A: Augment> {
    root: NonNull<bindings::rb_root_cached>,
    _a: PhantomData<A>,
}

impl<A: Augment> RbRootCached<A> {
    /// Borrows the tree at `root`.
    ///
    /// # Safety
    ///
    /// `root` must be valid, its nodes augmented by `A`, and the caller must have
    /// exclusive access to the tree and its nodes while the handle lives.
    #[inline]
    pub unsafe fn from_raw(root: NonNull<bindings::rb_root_cached>) -> Self {
        // INVARIANT: the caller guarantees validity and exclusive access.
        RbRootCached {
            root,
            _a: PhantomData,
        }
    }

    /// The root node.
    #[inline]
    pub fn root_node(&self) -> Option<NonNull<bindings::rb_node>> {
        // SAFETY: by the type invariant `root` is valid.
        NonNull::new(unsafe { (*self.root.as_ptr()).rb_root.rb_node })
    }

    /// The cached leftmost node (`rb_first_cached()`).
    #[inline]
    pub fn first(&self) -> Option<NonNull<bindings::rb_node>> {
        // SAFETY: by the type invariant `root` is valid.
        NonNull::new(unsafe { (*self.root.as_ptr()).rb_leftmost })
    }

    /// `rb_add_augmented_cached()`: links `node` in order of `less` (equal keys go
    /// to the right: FIFO), then rebalances, keeping the augmented values and the
    /// cached leftmost node. Allocates nothing. Always inlined, as the C static
    /// inline it replaces: a call would cost its callers a frame of their own.
    ///
    /// # Safety
    ///
    /// `node` must be embedded in a live element, not be in any tree, and have
    /// its own augmented values initialised as a leaf's; `less` must be a strict
    /// weak order consistent with the tree's.
    #[inline(always)]
    pub unsafe fn insert(
        &mut self,
        node: NonNull<bindings::rb_node>,
        mut less: impl FnMut(NonNull<bindings::rb_node>, NonNull<bindings::rb_node>) -> bool,
    ) {
        let tree = self.root.as_ptr();
        let mut leftmost = true;
        let mut parent: *mut bindings::rb_node = ptr::null_mut();
        // SAFETY: by the type invariant the tree is valid and ours; every link
        // followed is a child pointer of a valid node.
        unsafe {
            let mut link: *mut *mut bindings::rb_node = &raw mut (*tree).rb_root.rb_node;
            while let Some(p) = NonNull::new(*link) {
                parent = p.as_ptr();
                if less(node, p) {
                    link = &raw mut (*parent).rb_left;
                } else {
                    link = &raw mut (*parent).rb_right;
                    leftmost = false;
                }
            }
            // rb_link_node(), a static inline: written out rather than called
            // through its Rust helper.
            let n = node.as_ptr();
            (*n).__rb_parent_color = parent as usize as _;
            (*n).rb_left = ptr::null_mut();
            (*n).rb_right = ptr::null_mut();
            *link = n;
            // As rb_add_augmented_cached(): the new leaf's values reach its
            // ancestors before the rebalancing rotations ("suboptimal", as C).
            propagate::<A>(parent, ptr::null_mut());
            // rb_insert_augmented_cached(), also a static inline: the leftmost
            // cache, then lib/rbtree.c's exported rebalancing with our rotate.
            if leftmost {
                (*tree).rb_leftmost = n;
            }
            bindings::__rb_insert_augmented(n, &raw mut (*tree).rb_root, Some(rotate::<A>));
        }
    }

    /// `rb_erase_augmented_cached()`, a static inline in C, written out here so
    /// that propagate and copy are direct calls of `A`'s functions instead of
    /// indirect calls through a callbacks structure; the rebalancing is
    /// lib/rbtree.c's exported `__rb_erase_color()` with `A`'s rotate. Same
    /// steps as include/linux/rbtree_augmented.h's `__rb_erase_augmented()`.
    ///
    /// # Safety
    ///
    /// `node` must be in this tree.
    #[inline(always)]
    pub unsafe fn erase(&mut self, node: NonNull<bindings::rb_node>) {
        let tree = self.root.as_ptr();
        let node = node.as_ptr();
        // SAFETY: by the type invariant the tree is valid and ours; the caller
        // guarantees `node` is in it, so every link followed below is a valid
        // node of this tree (or null where the C tests for null).
        unsafe {
            if (*tree).rb_leftmost == node {
                (*tree).rb_leftmost = leftmost_next(node);
            }
            let root = &raw mut (*tree).rb_root;
            let child = (*node).rb_right;
            let mut tmp = (*node).rb_left;
            let rebalance: *mut bindings::rb_node;
            let pc;

            if tmp.is_null() {
                // Case 1: at most one child (the right one). If there is one it
                // is red and node black: recolour locally, no rebalancing.
                pc = (*node).__rb_parent_color;
                let parent = pc_parent(pc);
                change_child(node, child, parent, root);
                if !child.is_null() {
                    (*child).__rb_parent_color = pc;
                    rebalance = ptr::null_mut();
                } else {
                    rebalance = if pc_is_black(pc) {
                        parent
                    } else {
                        ptr::null_mut()
                    };
                }
                tmp = parent;
            } else if child.is_null() {
                // Still case 1, the child is the left one.
                pc = (*node).__rb_parent_color;
                (*tmp).__rb_parent_color = pc;
                let parent = pc_parent(pc);
                change_child(node, tmp, parent, root);
                rebalance = ptr::null_mut();
                tmp = parent;
            } else {
                let mut successor = child;
                let parent;
                let child2;
                tmp = (*child).rb_left;
                if tmp.is_null() {
                    // Case 2: node's successor is its right child.
                    parent = successor;
                    child2 = (*successor).rb_right;
                    copy::<A>(node, successor);
                } else {
                    // Case 3: the successor is the leftmost node under node's
                    // right child.
                    let mut p;
                    loop {
                        p = successor;
                        successor = tmp;
                        tmp = (*tmp).rb_left;
                        if tmp.is_null() {
                            break;
                        }
                    }
                    parent = p;
                    child2 = (*successor).rb_right;
                    ptr::write_volatile(&raw mut (*parent).rb_left, child2);
                    ptr::write_volatile(&raw mut (*successor).rb_right, child);
                    set_parent(child, successor);
                    copy::<A>(node, successor);
                    propagate::<A>(parent, successor);
                }

                tmp = (*node).rb_left;
                ptr::write_volatile(&raw mut (*successor).rb_left, tmp);
                set_parent(tmp, successor);

                pc = (*node).__rb_parent_color;
                tmp = pc_parent(pc);
                change_child(node, successor, tmp, root);

                if !child2.is_null() {
                    // rb_set_parent_color(child2, parent, RB_BLACK)
                    (*child2).__rb_parent_color = parent as usize | RB_BLACK;
                    rebalance = ptr::null_mut();
                } else {
                    rebalance = if pc_is_black((*successor).__rb_parent_color) {
                        parent
                    } else {
                        ptr::null_mut()
                    };
                }
                (*successor).__rb_parent_color = pc;
                tmp = successor;
            }

            propagate::<A>(tmp, ptr::null_mut());
            if !rebalance.is_null() {
                bindings::__rb_erase_color(rebalance, root, Some(rotate::<A>));
            }
        }
    }
}

/// `rb_next()` of the leftmost node, inline (the erase of the leftmost, the common one,
/// needs it; `rb_next()` is an out-of-line call). The leftmost node has no left child, so
/// its successor is the leftmost node of its right subtree if it has one, else its
/// parent (of which it is the left child), else none.
///
/// # Safety
///
/// `node` must be the leftmost node of a valid tree.
#[inline(always)]
unsafe fn leftmost_next(node: *mut bindings::rb_node) -> *mut bindings::rb_node {
    // SAFETY: guaranteed by the caller; every link followed is a child pointer of a
    // valid node of the tree.
    unsafe {
        let mut next = (*node).rb_right;
        if next.is_null() {
            return pc_parent((*node).__rb_parent_color);
        }
        while !(*next).rb_left.is_null() {
            next = (*next).rb_left;
        }
        next
    }
}

/// `__rb_parent(pc)`.
#[inline(always)]
fn pc_parent(pc: usize) -> *mut bindings::rb_node {
    (pc & !3) as *mut bindings::rb_node
}

/// `__rb_is_black(pc)`.
#[inline(always)]
fn pc_is_black(pc: usize) -> bool {
    pc & RB_BLACK != 0
}

/// `rb_set_parent()`: keep the colour, set the parent.
///
/// # Safety
///
/// `rb` must be a valid node the caller may write.
#[inline(always)]
unsafe fn set_parent(rb: *mut bindings::rb_node, p: *mut bindings::rb_node) {
    // SAFETY: guaranteed by the caller.
    // `p` is aligned, so this is `rb_color(rb) + p` of the C without a carry.
    unsafe {
        (*rb).__rb_parent_color = ((*rb).__rb_parent_color & RB_BLACK).wrapping_add(p as usize)
    };
}

/// `__rb_change_child()`: `old`'s place under `parent` (or at the root) goes to
/// `new`.
///
/// # Safety
///
/// `parent` must be null or a valid node whose child `old` is; `root` valid.
#[inline(always)]
unsafe fn change_child(
    old: *mut bindings::rb_node,
    new: *mut bindings::rb_node,
    parent: *mut bindings::rb_node,
    root: *mut bindings::rb_root,
) {
    // SAFETY: guaranteed by the caller; WRITE_ONCE as in C (lockless readers
    // of the tree's shape, e.g. rb_first() under RCU elsewhere, may look).
    unsafe {
        if !parent.is_null() {
            if (*parent).rb_left == old {
                ptr::write_volatile(&raw mut (*parent).rb_left, new);
            } else {
                ptr::write_volatile(&raw mut (*parent).rb_right, new);
            }
        } else {
            ptr::write_volatile(&raw mut (*root).rb_node, new);
        }
    }
}
