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
//! values did not change, which stops propagation early. An insertion widens the
//! new leaf's ancestors by its values ([`Augment::absorb`]) instead. The static inline
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
/// [`Augment::compute`], [`Augment::copy`], [`Augment::leaf`] and
/// [`Augment::absorb`] only access the element that embeds the node(s) they are
/// given and, read-only, the elements of that node's children; that `compute`
/// sets the node's augmented values to what they must be given its children's;
/// that `copy` copies all augmented values; and that `absorb` sets them to what
/// `compute` would once a new leaf is linked below the node, and returns `true`
/// only when none changed.
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
    /// `old` and `new` are nodes of a tree using this augmentation that the caller
    /// has exclusive access to (their links may be half-way through a rotation or an
    /// erase: only the augmented values are read and written).
    unsafe fn copy(old: NonNull<bindings::rb_node>, new: NonNull<bindings::rb_node>);

    /// What a new leaf brings to the augmented values of its ancestors.
    type Leaf: Copy;

    /// The [`Augment::Leaf`] of `node`, whose own augmented values are a leaf's.
    ///
    /// # Safety
    ///
    /// `node` is embedded in a live element that the caller has exclusive access to.
    unsafe fn leaf(node: NonNull<bindings::rb_node>) -> Self::Leaf;

    /// `node` gains a descendant, a new leaf: widens `node`'s augmented values by the
    /// leaf's, to what [`Augment::compute`] gives once the leaf is linked below it.
    /// Returns `true` when nothing changed; then nothing changes above `node` either
    /// (the insertion's propagation stops).
    ///
    /// # Safety
    ///
    /// `node` is linked in a tree using this augmentation that the caller has exclusive
    /// access to, and its augmented values were right for its subtree without the leaf.
    unsafe fn absorb(node: NonNull<bindings::rb_node>, leaf: Self::Leaf) -> bool;
}

/// The parent of `node` (`rb_parent()`).
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn parent(node: NonNull<bindings::rb_node>) -> Option<NonNull<bindings::rb_node>> {
    // SAFETY: `node` points to a valid `rb_node` (this function's `# Safety`).
    let pc = unsafe { (*node.as_ptr()).__rb_parent_color };
    // The low two bits of `__rb_parent_color` are the colour, the rest the parent pointer.
    NonNull::new((pc & !3) as *mut bindings::rb_node)
}

/// The left child of `node`.
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn left(node: NonNull<bindings::rb_node>) -> Option<NonNull<bindings::rb_node>> {
    // SAFETY: `node` points to a valid `rb_node` (this function's `# Safety`).
    NonNull::new(unsafe { (*node.as_ptr()).rb_left })
}

/// The right child of `node`.
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn right(node: NonNull<bindings::rb_node>) -> Option<NonNull<bindings::rb_node>> {
    // SAFETY: `node` points to a valid `rb_node` (this function's `# Safety`).
    NonNull::new(unsafe { (*node.as_ptr()).rb_right })
}

/// Whether `node` is red (`rb_is_red()`).
///
/// # Safety
///
/// `node` must point to a valid, linked `rb_node`.
#[inline]
pub unsafe fn is_red(node: NonNull<bindings::rb_node>) -> bool {
    // SAFETY: `node` points to a valid `rb_node` (this function's `# Safety`).
    unsafe { (*node.as_ptr()).__rb_parent_color & RB_BLACK == 0 }
}

/// Whether `node` is in no tree (`RB_EMPTY_NODE()`): its parent word points to the node
/// itself, as [`clear_node`] leaves it. A node that was never cleared is not empty, even
/// if it is in no tree.
///
/// # Safety
///
/// `node` must point to a valid `rb_node` that no one writes meanwhile.
#[inline(always)]
pub unsafe fn is_empty_node(node: NonNull<bindings::rb_node>) -> bool {
    // SAFETY: `node` points to a valid `rb_node` (this function's `# Safety`).
    unsafe { (*node.as_ptr()).__rb_parent_color == node.as_ptr() as usize as _ }
}

/// `RB_CLEAR_NODE()`, and no children: marks `node` as in no tree (see [`is_empty_node`]),
/// with null child links, so that following them from a node in no tree finds nothing
/// (`RB_CLEAR_NODE()` alone leaves the children of the node's last tree).
///
/// # Safety
///
/// `node` must point to a valid `rb_node` that is in no tree (its links are no tree's),
/// and that no one reads or writes meanwhile.
#[inline(always)]
pub unsafe fn clear_node(node: NonNull<bindings::rb_node>) {
    let n = node.as_ptr();
    // SAFETY: `node` points to a valid `rb_node` of no tree, that this caller alone
    // accesses (this function's `# Safety`).
    unsafe {
        (*n).__rb_parent_color = n as usize as _;
        (*n).rb_left = ptr::null_mut();
        (*n).rb_right = ptr::null_mut();
    }
}

/// `RBNAME_propagate()`: recompute from `rb` up to (excluding) `stop`, stopping
/// early at the first node whose values did not change.
///
/// # Safety
///
/// Called by lib/rbtree.c (or by this module) with `rb` null or a node of a tree
/// using augmentation `A` that the caller has exclusive access to, and `stop`
/// null or an ancestor of `rb`: every node from `rb` up to `stop` is then a node of
/// that tree whose children are nodes of it too.
pub unsafe extern "C" fn propagate<A: Augment>(
    mut rb: *mut bindings::rb_node,
    stop: *mut bindings::rb_node,
) {
    while rb != stop {
        let Some(node) = NonNull::new(rb) else { return };
        // SAFETY:
        // - `node` is `rb`, non-null: `rb` or one of its ancestors below `stop`, so a node of a
        //   tree using `A` whose children are nodes of it (this function's `# Safety`);
        // - the caller has exclusive access to that tree (this function's `# Safety`).
        if unsafe { A::compute(node) } {
            break;
        }
        // SAFETY: `node` is a valid, linked node of the tree: `rb` or one of its ancestors
        // below `stop` (this function's `# Safety`).
        rb = unsafe { parent(node) }.map_or(ptr::null_mut(), NonNull::as_ptr);
    }
}

/// `RBNAME_copy()`.
///
/// # Safety
///
/// Called by lib/rbtree.c (or by this module) with `old` and `new` nodes of a tree
/// using `A` that the caller has exclusive access to.
unsafe extern "C" fn copy<A: Augment>(old: *mut bindings::rb_node, new: *mut bindings::rb_node) {
    if let (Some(o), Some(n)) = (NonNull::new(old), NonNull::new(new)) {
        // SAFETY:
        // - `o` and `n` are `old` and `new`, nodes of a tree using `A` (this function's
        //   `# Safety`);
        // - the caller has exclusive access to that tree (this function's `# Safety`).
        unsafe { A::copy(o, n) };
    }
}

/// `RBNAME_rotate()`: `new` takes `old`'s place at the top of the rotated
/// subtree, so it inherits `old`'s values; `old` is recomputed.
///
/// # Safety
///
/// Called by lib/rbtree.c, on a tree using `A` that the caller has exclusive access
/// to, with `old` and `new` nodes of it just rotated: `new` has taken `old`'s place
/// and `old`'s new children are already linked to it.
unsafe extern "C" fn rotate<A: Augment>(old: *mut bindings::rb_node, new: *mut bindings::rb_node) {
    if let (Some(o), Some(n)) = (NonNull::new(old), NonNull::new(new)) {
        // SAFETY:
        // - `o` and `n` are `old` and `new`, nodes of a tree using `A` (this function's
        //   `# Safety`);
        // - the caller has exclusive access to that tree (this function's `# Safety`).
        unsafe { A::copy(o, n) };
        // SAFETY:
        // - `o` is `old`, linked in a tree using `A`, and its children are nodes of that tree:
        //   lib/rbtree.c links them before it calls rotate (this function's `# Safety`);
        // - the caller has exclusive access to that tree (this function's `# Safety`).
        unsafe { A::compute(o) };
    }
}

/// A borrowed `struct rb_root_cached` whose nodes use augmentation `A`, for as long as
/// the exclusive borrow `'a` of the tree it was made from.
///
/// # Invariants
///
/// - `root` points to a valid `rb_root_cached` that this handle may modify for `'a`:
///   for `'a`, nothing modifies the tree's shape (its root, its nodes' links, its
///   leftmost cache) or its nodes' augmented values but this handle (the caller of
///   [`RbRootCached::from_raw`] holds the lock that protects them).
/// - Every node in the tree is embedded in an element that lives for at least `'a`.
/// - `rb_leftmost` is the tree's leftmost node, or null when the tree is empty.
/// - Every node's augmented values are what `A::compute` gives from its element and
///   its children's values (the tree is only ever modified through such a handle or
///   through C code using the same callbacks).
pub struct RbRootCached<'a, A: Augment> {
    root: NonNull<bindings::rb_root_cached>,
    _root: PhantomData<&'a mut bindings::rb_root_cached>,
    _a: PhantomData<A>,
}

impl<'a, A: Augment> RbRootCached<'a, A> {
    /// Borrows the tree at `root` for `'a`.
    ///
    /// # Safety
    ///
    /// - `root` must point to a valid `rb_root_cached` whose leftmost cache is right and
    ///   whose nodes are augmented by `A`, each embedded in an element that lives for
    ///   at least `'a`.
    /// - For `'a`, the caller must hold the lock that protects the tree and its nodes,
    ///   and nothing may modify the tree's shape (root, links, leftmost cache) or the
    ///   nodes' augmented values but the returned handle.
    #[inline]
    pub unsafe fn from_raw(root: NonNull<bindings::rb_root_cached>) -> Self {
        // INVARIANT: the root's validity, its augmentation, its leftmost cache, its
        // elements' lifetime and the exclusive access for `'a` are this function's
        // `# Safety` requirements.
        RbRootCached {
            root,
            _root: PhantomData,
            _a: PhantomData,
        }
    }

    /// The root node.
    #[inline]
    pub fn root_node(&self) -> Option<NonNull<bindings::rb_node>> {
        // SAFETY: `root` points to a valid `rb_root_cached` (type invariant).
        NonNull::new(unsafe { (*self.root.as_ptr()).rb_root.rb_node })
    }

    /// The cached leftmost node (`rb_first_cached()`).
    #[inline]
    pub fn first(&self) -> Option<NonNull<bindings::rb_node>> {
        // SAFETY: `root` points to a valid `rb_root_cached` (type invariant).
        NonNull::new(unsafe { (*self.root.as_ptr()).rb_leftmost })
    }

    /// `rb_add_augmented_cached()`: links `node` in order of `less` (equal keys go
    /// to the right: FIFO), then rebalances, keeping the augmented values and the
    /// cached leftmost node. Allocates nothing. Always inlined, as the C static
    /// inline it replaces: a call would cost its callers a frame of their own.
    ///
    /// # Safety
    ///
    /// - `node` must be embedded in an element that lives for at least `'a`, and be in
    ///   no tree.
    /// - `node`'s element must have its own augmented values initialised as a leaf's.
    /// - `less` must be a strict weak order consistent with the tree's.
    #[inline(always)]
    pub unsafe fn insert(
        &mut self,
        node: NonNull<bindings::rb_node>,
        mut less: impl FnMut(NonNull<bindings::rb_node>, NonNull<bindings::rb_node>) -> bool,
    ) {
        let tree = self.root.as_ptr();
        let mut leftmost = true;
        let mut parent: *mut bindings::rb_node = ptr::null_mut();
        // SAFETY: `tree` points to a valid `rb_root_cached` (type invariant).
        let mut link: *mut *mut bindings::rb_node = unsafe { &raw mut (*tree).rb_root.rb_node };
        // SAFETY: `link` points to the root pointer of this valid tree or to a child pointer
        // of one of its nodes (type invariant; the loop below only follows child pointers).
        while let Some(p) = NonNull::new(unsafe { *link }) {
            parent = p.as_ptr();
            if less(node, p) {
                // SAFETY: `parent` is `p`, non-null: a node of this tree (type invariant).
                link = unsafe { &raw mut (*parent).rb_left };
            } else {
                // SAFETY: `parent` is `p`, non-null: a node of this tree (type invariant).
                link = unsafe { &raw mut (*parent).rb_right };
                leftmost = false;
            }
        }
        // rb_link_node(), a static inline: written out rather than called
        // through its Rust helper.
        let n = node.as_ptr();
        // SAFETY: `n` is `node`, embedded in a live element and in no tree (this function's
        // `# Safety`), so nothing else reads or writes its links.
        unsafe {
            (*n).__rb_parent_color = parent as usize as _;
            (*n).rb_left = ptr::null_mut();
            (*n).rb_right = ptr::null_mut();
        }
        // SAFETY:
        // - `link` points to the null child pointer of `parent`, or to the null root pointer
        //   when `parent` is null: a pointer of this valid tree (type invariant);
        // - this handle may modify the tree (type invariant).
        unsafe { *link = n };
        // As rb_add_augmented_cached(): the new leaf's values reach its ancestors
        // before the rebalancing rotations; each ancestor is widened by the leaf
        // (`A::absorb`) instead of recomputed from its children, up to the first
        // one that does not change.
        // SAFETY: `node` is embedded in a live element, in this tree that this handle has
        // exclusive access to (type invariant).
        let leaf = unsafe { A::leaf(node) };
        let mut anc = parent;
        while let Some(a) = NonNull::new(anc) {
            // SAFETY:
            // - `a` is `parent` or one of its ancestors: a node of this tree, which uses `A`
            //   (type invariant), that this handle has exclusive access to;
            // - its values were right for its subtree without `n` (the tree's invariant
            //   before this insertion), and `n`, just linked below it, has a leaf's values
            //   (this function's `# Safety`).
            if unsafe { A::absorb(a, leaf) } {
                break;
            }
            // SAFETY: `a` is a node of this valid tree.
            anc = unsafe { self::parent(a) }.map_or(ptr::null_mut(), NonNull::as_ptr);
        }
        // rb_insert_augmented_cached(), also a static inline: the leftmost
        // cache, then lib/rbtree.c's exported rebalancing with our rotate.
        if leftmost {
            // SAFETY: `tree` points to a valid `rb_root_cached` that this handle may modify
            // (type invariant).
            // INVARIANT: every step of the descent went left, so `n` is the new leftmost.
            unsafe { (*tree).rb_leftmost = n };
        }
        // SAFETY:
        // - `n` is a red leaf just linked in this tree, whose root is `(*tree).rb_root`,
        //   valid (type invariant);
        // - `rotate::<A>` is the rotate callback of the tree's augmentation `A` (type
        //   invariant), so the augmented values stay right through the rotations;
        // - this handle has exclusive access to the tree (type invariant).
        unsafe { bindings::__rb_insert_augmented(n, &raw mut (*tree).rb_root, Some(rotate::<A>)) };
    }

    /// `rb_erase_augmented_cached()`, a static inline in C, written out here so
    /// that propagate and copy are direct calls of `A`'s functions instead of
    /// indirect calls through a callbacks structure; the rebalancing is
    /// lib/rbtree.c's exported `__rb_erase_color()` with `A`'s rotate. Same
    /// steps as include/linux/rbtree_augmented.h's `__rb_erase_augmented()`, then
    /// `node` emptied ([`clear_node`]) before the rebalancing, which never reads it: the
    /// rebalancing is then the last step, a tail call, and the erase keeps nothing
    /// across a call (no saved registers on its path).
    ///
    /// # Safety
    ///
    /// `node` must be a node of this tree.
    #[inline(always)]
    pub unsafe fn erase(&mut self, node: NonNull<bindings::rb_node>) {
        // In the SAFETY comments below, "a node of this tree" is valid, embedded in a live
        // element and modifiable through this handle (type invariants); `node` stays valid
        // after it is unlinked: its element lives on.
        let tree = self.root.as_ptr();
        let erased = node;
        let node = node.as_ptr();
        // SAFETY: `tree` points to a valid `rb_root_cached` (type invariant).
        if unsafe { (*tree).rb_leftmost } == node {
            // SAFETY:
            // - `node` is the tree's leftmost node (type invariant: the cache is right) of
            //   this valid tree (type invariant);
            // - `tree` is valid and this handle may modify it (type invariant).
            // INVARIANT: the leftmost node goes; its successor becomes the leftmost.
            unsafe { (*tree).rb_leftmost = leftmost_next(node) };
        }
        // SAFETY: `tree` points to a valid `rb_root_cached` (type invariant).
        let root = unsafe { &raw mut (*tree).rb_root };
        // SAFETY: `node` is a node of this tree (this function's `# Safety`).
        let child = unsafe { (*node).rb_right };
        // SAFETY: `node` is a node of this tree (this function's `# Safety`).
        let mut tmp = unsafe { (*node).rb_left };
        let rebalance: *mut bindings::rb_node;
        let pc;

        if tmp.is_null() {
            // Case 1: at most one child (the right one). If there is one it
            // is red and node black: recolour locally, no rebalancing.
            // SAFETY: `node` is a node of this tree (this function's `# Safety`).
            pc = unsafe { (*node).__rb_parent_color };
            let parent = pc_parent(pc);
            // SAFETY:
            // - `parent` is `node`'s parent, a node of this tree, or null when `node` is the
            //   root of this tree, whose `rb_root` is `root`, valid (type invariant);
            // - `node` is `parent`'s child (or the root node);
            // - this handle may modify the tree (type invariant).
            unsafe { change_child(node, child, parent, root) };
            if !child.is_null() {
                // SAFETY: `child` is `node`'s right child, non-null: a node of this tree.
                unsafe { (*child).__rb_parent_color = pc };
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
            // SAFETY: `node` is a node of this tree (this function's `# Safety`).
            pc = unsafe { (*node).__rb_parent_color };
            // SAFETY: `tmp` is `node`'s left child, non-null: a node of this tree.
            unsafe { (*tmp).__rb_parent_color = pc };
            let parent = pc_parent(pc);
            // SAFETY:
            // - `parent` is `node`'s parent, a node of this tree, or null when `node` is the
            //   root of this tree, whose `rb_root` is `root`, valid (type invariant);
            // - `node` is `parent`'s child (or the root node);
            // - this handle may modify the tree (type invariant).
            unsafe { change_child(node, tmp, parent, root) };
            rebalance = ptr::null_mut();
            tmp = parent;
        } else {
            // SAFETY: `node` is a node of this tree with both children (`child` its right
            // one), the leftmost cache is already right, `root` is this tree's, which uses
            // `A`, and this handle has exclusive access to it (type invariants).
            return unsafe { erase_two_children::<A>(erased, child, root) };
        }

        // SAFETY: `tmp` is null or `node`'s old parent, a node of this tree, which uses `A`;
        // `erased` is unlinked; `rebalance` is null or a node of this tree from which the
        // black height is to be restored; `root` is the tree's, and this handle has
        // exclusive access to it (type invariants).
        unsafe { erase_finish::<A>(tmp, erased, rebalance, root) }
    }
}

/// The erase of a node with both children (cases 2 and 3 of `__rb_erase_augmented()`): its
/// successor takes its place. Out of line and reached by a tail call: the erase of the
/// leftmost node, the common one, never has a left child, and its path needs fewer
/// registers without this one.
///
/// # Safety
///
/// - `erased` must be a node of a valid tree whose root is `root` and whose augmentation
///   is `A`, with a left child and the right child `child`; the tree's leftmost cache must
///   be right without `erased` (it is never the leftmost: it has a left child).
/// - The caller must have exclusive access to the tree, and `erased`'s element must live
///   on after the erase.
#[inline(never)]
unsafe fn erase_two_children<A: Augment>(
    erased: NonNull<bindings::rb_node>,
    child: *mut bindings::rb_node,
    root: *mut bindings::rb_root,
) {
    // In the SAFETY comments below, "a node of this tree" is valid, embedded in a live
    // element and modifiable by this caller (this function's `# Safety`).
    let node = erased.as_ptr();
    let rebalance: *mut bindings::rb_node;
    let mut tmp;
    let mut successor = child;
    let parent;
    let child2;
    // SAFETY: `child` is `node`'s right child, non-null: a node of this tree.
    tmp = unsafe { (*child).rb_left };
    if tmp.is_null() {
        // Case 2: node's successor is its right child.
        parent = successor;
        // SAFETY: `successor` is `child`, a node of this tree.
        child2 = unsafe { (*successor).rb_right };
        // SAFETY:
        // - `node` and `successor` are nodes of this tree, which uses `A` (this
        //   function's `# Safety`);
        // - the caller has exclusive access to the tree (this function's `# Safety`).
        unsafe { copy::<A>(node, successor) };
    } else {
        // Case 3: the successor is the leftmost node under node's
        // right child.
        let mut p;
        loop {
            p = successor;
            successor = tmp;
            // SAFETY: `tmp` is a non-null left child of a node of this tree, so a
            // node of this tree.
            tmp = unsafe { (*tmp).rb_left };
            if tmp.is_null() {
                break;
            }
        }
        parent = p;
        // SAFETY: `successor` is a non-null left child of a node of this tree, so a
        // node of this tree.
        child2 = unsafe { (*successor).rb_right };
        // SAFETY: `parent` (`child` or a node below it) and `successor` (its left
        // child) are nodes of this tree. WRITE_ONCE as in C: lockless readers of the
        // tree's shape may look.
        unsafe {
            ptr::write_volatile(&raw mut (*parent).rb_left, child2);
            ptr::write_volatile(&raw mut (*successor).rb_right, child);
        }
        // SAFETY: `child` is `node`'s right child, non-null: a node of this tree.
        unsafe { set_parent(child, successor) };
        // SAFETY:
        // - `node` and `successor` are nodes of this tree, which uses `A` (this
        //   function's `# Safety`);
        // - the caller has exclusive access to the tree (this function's `# Safety`).
        unsafe { copy::<A>(node, successor) };
        // SAFETY:
        // - `parent` is a node of this tree, which uses `A` (this function's `# Safety`), and its
        //   children are nodes of it: `child2` and its left one;
        // - `successor` is now an ancestor of `parent`: `parent` is `child` or below
        //   it, and `child`'s parent is now `successor`;
        // - the caller has exclusive access to the tree (this function's `# Safety`).
        unsafe { propagate::<A>(parent, successor) };
    }

    // SAFETY: `node` is a node of this tree (this function's `# Safety`).
    tmp = unsafe { (*node).rb_left };
    // SAFETY: `successor` is `child` or a node below it: a node of this tree.
    // WRITE_ONCE as in C: lockless readers of the tree's shape may look.
    unsafe { ptr::write_volatile(&raw mut (*successor).rb_left, tmp) };
    // SAFETY: `tmp` is `node`'s left child, non-null (a null one is case 1): a node
    // of this tree.
    unsafe { set_parent(tmp, successor) };

    // SAFETY: `node` is a node of this tree (this function's `# Safety`).
    let pc = unsafe { (*node).__rb_parent_color };
    tmp = pc_parent(pc);
    // SAFETY:
    // - `tmp` is `node`'s parent, a node of this tree, or null when `node` is the
    //   root of this tree, whose `rb_root` is `root`, valid (this function's `# Safety`);
    // - `node` is `tmp`'s child (or the root node);
    // - the caller may modify the tree (this function's `# Safety`).
    unsafe { change_child(node, successor, tmp, root) };

    if !child2.is_null() {
        // rb_set_parent_color(child2, parent, RB_BLACK)
        // SAFETY: `child2` is `successor`'s right child, non-null: a node of this
        // tree.
        unsafe { (*child2).__rb_parent_color = parent as usize | RB_BLACK };
        rebalance = ptr::null_mut();
    } else {
        // SAFETY: `successor` is `child` or a node below it: a node of this tree.
        rebalance = if pc_is_black(unsafe { (*successor).__rb_parent_color }) {
            parent
        } else {
            ptr::null_mut()
        };
    }
    // SAFETY: `successor` is `child` or a node below it: a node of this tree.
    unsafe { (*successor).__rb_parent_color = pc };
    tmp = successor;

    // SAFETY: `tmp` is the successor, now in `node`'s place, a node of this tree, which
    // uses `A`; `erased` is unlinked; `rebalance` is null or a node of this tree from
    // which the black height is to be restored; `root` is the tree's, to which the caller
    // has exclusive access (this function's `# Safety`).
    unsafe { erase_finish::<A>(tmp, erased, rebalance, root) }
}

/// The end of every erase: the augmented values recomputed up from `tmp`, the erased node
/// emptied ([`clear_node`]) before the rebalancing, which never reads it, and the
/// rebalancing last (lib/rbtree.c's `__rb_erase_color()` with `A`'s rotate), so that it
/// is a tail call and the erase keeps nothing across a call.
///
/// # Safety
///
/// - `tmp` must be null or a node of a valid tree but for its black height, whose root is
///   `root` and whose augmentation is `A`: the node that took the erased one's place, or
///   the erased one's old parent;
/// - `erased` must be unlinked from it (nothing links to it) with its element alive;
/// - `rebalance` must be null or a node of it from which the black height is restored;
/// - the caller must have exclusive access to the tree and to `erased`.
#[inline(always)]
unsafe fn erase_finish<A: Augment>(
    tmp: *mut bindings::rb_node,
    erased: NonNull<bindings::rb_node>,
    rebalance: *mut bindings::rb_node,
    root: *mut bindings::rb_root,
) {
    // SAFETY:
    // - `tmp` is null or a node of the tree, which uses `A`; its children are nodes of it;
    // - `stop` is null, an ancestor of every node;
    // - the caller has exclusive access to the tree (this function's `# Safety`).
    unsafe { propagate::<A>(tmp, ptr::null_mut()) };
    // SAFETY: `erased` is in no tree (nothing links to it: its parent's or the root's link
    // and its children's parent links were moved to the node that took its place), and
    // the caller's exclusive access covers it (this function's `# Safety`).
    // INVARIANT: the node left the tree; it is empty again, without children.
    unsafe { clear_node(erased) };
    if !rebalance.is_null() {
        // The tree is valid but for the black height that `__rb_erase_color()` restores
        // from `rebalance`, one of its nodes, and the caller its only user (this
        // function's `# Safety`).
        // SAFETY: `rebalance` and `root` are as above, and `rotate::<A>` is the rotate
        // callback of `A`, so the augmented values stay right through the rotations.
        unsafe { bindings::__rb_erase_color(rebalance, root, Some(rotate::<A>)) };
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
    // SAFETY: `node` is a node of a valid tree (this function's `# Safety`).
    let mut next = unsafe { (*node).rb_right };
    if next.is_null() {
        // SAFETY: `node` is a node of a valid tree (this function's `# Safety`).
        return pc_parent(unsafe { (*node).__rb_parent_color });
    }
    // SAFETY: `next` is non-null and `node`'s right child or a left child below it, so a
    // node of the valid tree.
    while !unsafe { (*next).rb_left }.is_null() {
        // SAFETY: `next` is non-null and `node`'s right child or a left child below it, so
        // a node of the valid tree.
        next = unsafe { (*next).rb_left };
    }
    next
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
    // SAFETY: `rb` is a valid node that the caller may write (this function's `# Safety`).
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
/// `parent` must be null or a valid node whose child `old` is, which the caller may
/// write; when `parent` is null, `root` must be valid and the caller may write it.
#[inline(always)]
unsafe fn change_child(
    old: *mut bindings::rb_node,
    new: *mut bindings::rb_node,
    parent: *mut bindings::rb_node,
    root: *mut bindings::rb_root,
) {
    // WRITE_ONCE as in C: lockless readers of the tree's shape (e.g. rb_first() under RCU
    // elsewhere) may look.
    if !parent.is_null() {
        // SAFETY: `parent` is non-null, so a valid node that the caller may write (this
        // function's `# Safety`).
        unsafe {
            if (*parent).rb_left == old {
                ptr::write_volatile(&raw mut (*parent).rb_left, new);
            } else {
                ptr::write_volatile(&raw mut (*parent).rb_right, new);
            }
        }
    } else {
        // SAFETY: `parent` is null, so `root` is valid and the caller may write it (this
        // function's `# Safety`).
        unsafe { ptr::write_volatile(&raw mut (*root).rb_node, new) };
    }
}
