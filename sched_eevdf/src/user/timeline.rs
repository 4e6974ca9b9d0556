// SPDX-License-Identifier: GPL-2.0

//! [`UserTimeline`]: the host's intrusive augmented red-black tree with a cached leftmost
//! node, a port of lib/rbtree.c and include/linux/rbtree_augmented.h over [`UserEntity`]'s
//! links.

use super::*;

/// An intrusive augmented red-black tree of [`UserEntity`], cached leftmost.
///
/// # Invariants
///
/// - `id` is non-zero and unique among live trees.
/// - Every node reachable from `root` or `leftmost`, and every non-null link of such a
///   node, points to a [`UserEntity`] that was inserted through a `UserSe<'a>` (so it is
///   alive and unmoved for `'a`) and whose `links.owner == id`; conversely every entity
///   with `owner == id` is in this tree.
/// - Only this tree writes the links of nodes it owns.
pub struct UserTimeline<'a> {
    root: Option<UserSe<'a>>,
    leftmost: Option<UserSe<'a>>,
    id: usize,
    /// Whether the update under way keeps `max_slice` (the `keep_max_slice` of
    /// [`Timeline::insert`] and [`Timeline::erase`]).
    keep_max: bool,
}

impl Default for UserTimeline<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> UserTimeline<'a> {
    /// An empty tree.
    pub fn new() -> Self {
        let mut id = NEXT_TREE_ID.fetch_add(1, Ordering::Relaxed);
        if id == 0 {
            // Wrapped after 2^64 trees; skip the "unlinked" value.
            id = NEXT_TREE_ID.fetch_add(1, Ordering::Relaxed);
        }
        // INVARIANT: a fresh non-zero id; no node is linked yet.
        UserTimeline {
            root: None,
            leftmost: None,
            id,
            keep_max: true,
        }
    }

    /// Converts a link of a node owned by this tree back into a handle.
    fn link(&self, p: Option<NonNull<UserEntity>>) -> Option<UserSe<'a>> {
        // SAFETY: by the type invariant, links of nodes owned by this tree (the only ones
        // this tree reads) point to entities that are alive and unmoved for 'a. They are
        // only ever accessed through shared references (all fields are `Cell`s).
        p.map(|p| UserSe(unsafe { p.as_ref() }))
    }

    fn parent_of(&self, n: UserSe<'a>) -> Option<UserSe<'a>> {
        self.link(n.0.links.parent.get())
    }
    fn left_of(&self, n: UserSe<'a>) -> Option<UserSe<'a>> {
        self.link(n.0.links.left.get())
    }
    fn right_of(&self, n: UserSe<'a>) -> Option<UserSe<'a>> {
        self.link(n.0.links.right.get())
    }
    fn set_parent(n: UserSe<'a>, p: Option<UserSe<'a>>) {
        n.0.links.parent.set(p.map(UserSe::ptr));
    }
    fn set_left(n: UserSe<'a>, c: Option<UserSe<'a>>) {
        n.0.links.left.set(c.map(UserSe::ptr));
    }
    fn set_right(n: UserSe<'a>, c: Option<UserSe<'a>>) {
        n.0.links.right.set(c.map(UserSe::ptr));
    }
    fn red(n: UserSe<'a>) -> bool {
        n.0.links.red.get()
    }
    fn set_parent_color(n: UserSe<'a>, p: Option<UserSe<'a>>, red: bool) {
        Self::set_parent(n, p);
        n.0.links.red.set(red);
    }

    /// `__rb_change_child()`.
    fn change_child(
        &mut self,
        old: UserSe<'a>,
        new: Option<UserSe<'a>>,
        parent: Option<UserSe<'a>>,
    ) {
        match parent {
            Some(p) => {
                if self.left_of(p) == Some(old) {
                    Self::set_left(p, new);
                } else {
                    Self::set_right(p, new);
                }
            }
            None => self.root = new,
        }
    }

    /// `__rb_rotate_set_parents()`: old's parent and color go to new; old gets new as its
    /// parent and `red` as its color.
    fn rotate_set_parents(&mut self, old: UserSe<'a>, new: UserSe<'a>, red: bool) {
        let parent = self.parent_of(old);
        Self::set_parent_color(new, parent, Self::red(old));
        Self::set_parent_color(old, Some(new), red);
        self.change_child(old, Some(new), parent);
    }

    /// The augmented `compute` of the core, on this node's children.
    fn compute(&self, n: UserSe<'a>) -> bool {
        if self.keep_max {
            min_deadline_update::<_, true>(n, self.left_of(n), self.right_of(n))
        } else {
            min_deadline_update::<_, false>(n, self.left_of(n), self.right_of(n))
        }
    }

    /// `RBNAME_propagate`: recompute from `n` upward until unchanged or `stop`.
    fn propagate(&self, mut n: Option<UserSe<'a>>, stop: Option<UserSe<'a>>) {
        while let Some(node) = n {
            if Some(node) == stop || self.compute(node) {
                break;
            }
            n = self.parent_of(node);
        }
    }

    /// `RBNAME_copy`: all three augmented values (`RB_DECLARE_CALLBACKS` copies one
    /// field, upstream's bug 51b0e68cfa0a; the tests' mutants put it back to prove that
    /// the checker sees it).
    fn copy(old: UserSe<'a>, new: UserSe<'a>) {
        new.set_min_deadline(old.min_deadline());
        #[cfg(all(test, not(sched_eevdf_in_kernel)))]
        let mutant = mutant::COPY.with(Cell::get);
        #[cfg(all(test, not(sched_eevdf_in_kernel)))]
        if mutant == mutant::CopyMutant::MinDeadlineOnly {
            return;
        }
        new.set_min_slice(old.min_slice());
        #[cfg(all(test, not(sched_eevdf_in_kernel)))]
        if mutant == mutant::CopyMutant::NoMaxSlice {
            return;
        }
        new.set_max_slice(old.max_slice());
    }

    /// `RBNAME_rotate`: new takes old's subtree value, old is recomputed.
    fn rotate(&self, old: UserSe<'a>, new: UserSe<'a>) {
        Self::copy(old, new);
        self.compute(old);
    }

    /// Whether `se` is linked into a tree, this one or another: an insertion refuses it.
    pub(crate) fn is_linked(&self, se: UserSe<'a>) -> bool {
        se.0.links.owner.get() != 0
    }

    /// `rb_add_augmented_cached()` with [`entity_less`]: equal keys go right (FIFO).
    /// False when it refused (the node already linked).
    fn add(&mut self, node: UserSe<'a>) -> bool {
        if node.0.links.owner.get() != 0 {
            // Already linked (here or elsewhere): refuse, keeping every tree intact.
            return false;
        }
        let mut parent = None;
        let mut cur = self.root;
        let mut go_left = false;
        let mut leftmost = true;
        while let Some(p) = cur {
            parent = Some(p);
            go_left = entity_less(node, p);
            if go_left {
                cur = self.left_of(p);
            } else {
                cur = self.right_of(p);
                leftmost = false;
            }
        }
        // rb_link_node(): a red leaf.
        // INVARIANT: `node` is alive for 'a (it is a `UserSe<'a>`) and becomes owned.
        node.0.links.owner.set(self.id);
        Self::set_parent_color(node, parent, true);
        Self::set_left(node, None);
        Self::set_right(node, None);
        match parent {
            Some(p) if go_left => Self::set_left(p, Some(node)),
            Some(p) => Self::set_right(p, Some(node)),
            None => self.root = Some(node),
        }
        min_deadline_update::<_, true>(node, None, None);
        // The leaf's values reach its ancestors before the rebalancing rotations, as in
        // rb_add_augmented_cached(), each ancestor widened by the leaf (augment_absorb()).
        let (deadline, slice) = (node.deadline(), node.slice());
        let mut anc = parent;
        while let Some(a) = anc {
            #[cfg(all(test, not(sched_eevdf_in_kernel)))]
            let before = a.min_deadline();
            let unchanged = if self.keep_max {
                augment_absorb::<_, true>(a, deadline, slice)
            } else {
                augment_absorb::<_, false>(a, deadline, slice)
            };
            if unchanged {
                break;
            }
            #[cfg(all(test, not(sched_eevdf_in_kernel)))]
            if mutant::ABSORB_DEADLINE_ONLY.with(Cell::get) && a.min_deadline() == before {
                break;
            }
            anc = self.parent_of(a);
        }
        if leftmost {
            self.leftmost = Some(node);
        }
        self.insert_fixup(node);
        true
    }

    /// `__rb_insert()` with the augment rotate callback.
    fn insert_fixup(&mut self, mut node: UserSe<'a>) {
        let mut parent = self.parent_of(node);
        loop {
            // Loop invariant: node is red.
            let Some(p) = parent else {
                Self::set_parent_color(node, None, false);
                break;
            };
            if !Self::red(p) {
                break;
            }
            // A red parent is not the root, so it has a parent.
            let Some(gparent) = self.parent_of(p) else {
                break;
            };
            let mut p = p;
            let tmp = self.right_of(gparent);
            if tmp != Some(p) {
                // p == gparent->left
                if let Some(u) = tmp.filter(|&u| Self::red(u)) {
                    // Case 1: uncle red, color flips, recurse at g.
                    Self::set_parent_color(u, Some(gparent), false);
                    Self::set_parent_color(p, Some(gparent), false);
                    node = gparent;
                    parent = self.parent_of(node);
                    Self::set_parent_color(node, parent, true);
                    continue;
                }
                let mut tmp = self.right_of(p);
                if tmp == Some(node) {
                    // Case 2: left rotate at parent.
                    tmp = self.left_of(node);
                    Self::set_right(p, tmp);
                    Self::set_left(node, Some(p));
                    if let Some(t) = tmp {
                        Self::set_parent_color(t, Some(p), false);
                    }
                    Self::set_parent_color(p, Some(node), true);
                    self.rotate(p, node);
                    p = node;
                    tmp = self.right_of(node);
                }
                // Case 3: right rotate at gparent.
                Self::set_left(gparent, tmp);
                Self::set_right(p, Some(gparent));
                if let Some(t) = tmp {
                    Self::set_parent_color(t, Some(gparent), false);
                }
                self.rotate_set_parents(gparent, p, true);
                self.rotate(gparent, p);
                break;
            } else {
                let tmp = self.left_of(gparent);
                if let Some(u) = tmp.filter(|&u| Self::red(u)) {
                    // Case 1: color flips.
                    Self::set_parent_color(u, Some(gparent), false);
                    Self::set_parent_color(p, Some(gparent), false);
                    node = gparent;
                    parent = self.parent_of(node);
                    Self::set_parent_color(node, parent, true);
                    continue;
                }
                let mut tmp = self.left_of(p);
                if tmp == Some(node) {
                    // Case 2: right rotate at parent.
                    tmp = self.right_of(node);
                    Self::set_left(p, tmp);
                    Self::set_right(node, Some(p));
                    if let Some(t) = tmp {
                        Self::set_parent_color(t, Some(p), false);
                    }
                    Self::set_parent_color(p, Some(node), true);
                    self.rotate(p, node);
                    p = node;
                    tmp = self.left_of(node);
                }
                // Case 3: left rotate at gparent.
                Self::set_right(gparent, tmp);
                Self::set_left(p, Some(gparent));
                if let Some(t) = tmp {
                    Self::set_parent_color(t, Some(gparent), false);
                }
                self.rotate_set_parents(gparent, p, true);
                self.rotate(gparent, p);
                break;
            }
        }
    }

    /// `rb_erase_augmented_cached()`.
    fn remove(&mut self, node: UserSe<'a>) {
        if node.0.links.owner.get() != self.id {
            return;
        }
        if self.leftmost == Some(node) {
            // The node is ours (checked above): Timeline::rb_next walks our links.
            self.leftmost = self.rb_next(node);
        }
        let rebalance = self.erase_augmented(node);
        if let Some(p) = rebalance {
            self.erase_color(p);
        }
        // INVARIANT: the node is no longer reachable; unlink and disown it.
        Self::set_parent_color(node, None, false);
        Self::set_left(node, None);
        Self::set_right(node, None);
        node.0.links.owner.set(0);
    }

    /// `__rb_erase_augmented()`: unlink `node`, return where to rebalance.
    fn erase_augmented(&mut self, node: UserSe<'a>) -> Option<UserSe<'a>> {
        let child = self.right_of(node);
        let tmp = self.left_of(node);
        let rebalance;
        let propagate_from;

        match (tmp, child) {
            (None, _) => {
                // Case 1: node has at most one child (right).
                let parent = self.parent_of(node);
                let black = !Self::red(node);
                self.change_child(node, child, parent);
                if let Some(c) = child {
                    Self::set_parent_color(c, parent, Self::red(node));
                    rebalance = None;
                } else {
                    rebalance = if black { parent } else { None };
                }
                propagate_from = parent;
            }
            (Some(t), None) => {
                // Still case 1, the child is node->left.
                let parent = self.parent_of(node);
                Self::set_parent_color(t, parent, Self::red(node));
                self.change_child(node, Some(t), parent);
                rebalance = None;
                propagate_from = parent;
            }
            (Some(left), Some(child)) => {
                let mut successor = child;
                let parent;
                let child2;
                match self.left_of(child) {
                    None => {
                        // Case 2: node's successor is its right child.
                        parent = successor;
                        child2 = self.right_of(successor);
                        Self::copy(node, successor);
                    }
                    Some(mut t) => {
                        // Case 3: node's successor is leftmost under node's right child.
                        let mut p;
                        loop {
                            p = successor;
                            successor = t;
                            match self.left_of(t) {
                                Some(l) => t = l,
                                None => break,
                            }
                        }
                        parent = p;
                        child2 = self.right_of(successor);
                        Self::set_left(parent, child2);
                        Self::set_right(successor, Some(child));
                        Self::set_parent(child, Some(successor));
                        Self::copy(node, successor);
                        self.propagate(Some(parent), Some(successor));
                    }
                }
                Self::set_left(successor, Some(left));
                Self::set_parent(left, Some(successor));

                let node_parent = self.parent_of(node);
                let node_red = Self::red(node);
                self.change_child(node, Some(successor), node_parent);

                if let Some(c2) = child2 {
                    Self::set_parent_color(c2, Some(parent), false);
                    rebalance = None;
                } else {
                    rebalance = if Self::red(successor) {
                        None
                    } else {
                        Some(parent)
                    };
                }
                Self::set_parent_color(successor, node_parent, node_red);
                propagate_from = Some(successor);
            }
        }
        self.propagate(propagate_from, None);
        rebalance
    }

    /// `____rb_erase_color()` with the augment rotate callback.
    fn erase_color(&mut self, mut parent: UserSe<'a>) {
        let mut node: Option<UserSe<'a>> = None;
        loop {
            // Loop invariants: node is black (or None on the first iteration); node is not
            // the root (parent is not None); all leaf paths through parent and node have a
            // black node count one lower than the other leaf paths.
            let sibling = self.right_of(parent);
            if node != sibling {
                // node == parent->left
                let Some(mut sibling) = sibling else { return };
                if Self::red(sibling) {
                    // Case 1: left rotate at parent.
                    let tmp1 = self.left_of(sibling);
                    Self::set_right(parent, tmp1);
                    Self::set_left(sibling, Some(parent));
                    let Some(t1) = tmp1 else { return };
                    Self::set_parent_color(t1, Some(parent), false);
                    self.rotate_set_parents(parent, sibling, true);
                    self.rotate(parent, sibling);
                    sibling = t1;
                }
                let mut tmp1 = self.right_of(sibling);
                if tmp1.is_none_or(|t| !Self::red(t)) {
                    let tmp2 = self.left_of(sibling);
                    match tmp2.filter(|&t| Self::red(t)) {
                        None => {
                            // Case 2: sibling color flip.
                            Self::set_parent_color(sibling, Some(parent), true);
                            if Self::red(parent) {
                                parent.0.links.red.set(false);
                            } else {
                                node = Some(parent);
                                if let Some(p) = self.parent_of(parent) {
                                    parent = p;
                                    continue;
                                }
                            }
                            break;
                        }
                        Some(t2) => {
                            // Case 3: right rotate at sibling.
                            tmp1 = self.right_of(t2);
                            Self::set_left(sibling, tmp1);
                            Self::set_right(t2, Some(sibling));
                            Self::set_right(parent, Some(t2));
                            if let Some(t) = tmp1 {
                                Self::set_parent_color(t, Some(sibling), false);
                            }
                            self.rotate(sibling, t2);
                            tmp1 = Some(sibling);
                            sibling = t2;
                        }
                    }
                }
                // Case 4: left rotate at parent + color flips.
                let tmp2 = self.left_of(sibling);
                Self::set_right(parent, tmp2);
                Self::set_left(sibling, Some(parent));
                if let Some(t1) = tmp1 {
                    Self::set_parent_color(t1, Some(sibling), false);
                }
                if let Some(t2) = tmp2 {
                    Self::set_parent(t2, Some(parent));
                }
                self.rotate_set_parents(parent, sibling, false);
                self.rotate(parent, sibling);
                break;
            } else {
                let Some(mut sibling) = self.left_of(parent) else {
                    return;
                };
                if Self::red(sibling) {
                    // Case 1: right rotate at parent.
                    let tmp1 = self.right_of(sibling);
                    Self::set_left(parent, tmp1);
                    Self::set_right(sibling, Some(parent));
                    let Some(t1) = tmp1 else { return };
                    Self::set_parent_color(t1, Some(parent), false);
                    self.rotate_set_parents(parent, sibling, true);
                    self.rotate(parent, sibling);
                    sibling = t1;
                }
                let mut tmp1 = self.left_of(sibling);
                if tmp1.is_none_or(|t| !Self::red(t)) {
                    let tmp2 = self.right_of(sibling);
                    match tmp2.filter(|&t| Self::red(t)) {
                        None => {
                            // Case 2: sibling color flip.
                            Self::set_parent_color(sibling, Some(parent), true);
                            if Self::red(parent) {
                                parent.0.links.red.set(false);
                            } else {
                                node = Some(parent);
                                if let Some(p) = self.parent_of(parent) {
                                    parent = p;
                                    continue;
                                }
                            }
                            break;
                        }
                        Some(t2) => {
                            // Case 3: left rotate at sibling.
                            tmp1 = self.left_of(t2);
                            Self::set_right(sibling, tmp1);
                            Self::set_left(t2, Some(sibling));
                            Self::set_left(parent, Some(t2));
                            if let Some(t) = tmp1 {
                                Self::set_parent_color(t, Some(sibling), false);
                            }
                            self.rotate(sibling, t2);
                            tmp1 = Some(sibling);
                            sibling = t2;
                        }
                    }
                }
                // Case 4: right rotate at parent + color flips.
                let tmp2 = self.right_of(sibling);
                Self::set_left(parent, tmp2);
                Self::set_right(sibling, Some(parent));
                if let Some(t1) = tmp1 {
                    Self::set_parent_color(t1, Some(sibling), false);
                }
                if let Some(t2) = tmp2 {
                    Self::set_parent(t2, Some(parent));
                }
                self.rotate_set_parents(parent, sibling, false);
                self.rotate(parent, sibling);
                break;
            }
        }
    }
}

impl Drop for UserTimeline<'_> {
    /// Unlinks every node (iteratively), so the entities can be queued again elsewhere.
    fn drop(&mut self) {
        let mut n = self.root;
        while let Some(node) = n {
            if let Some(l) = self.left_of(node) {
                Self::set_left(node, None);
                n = Some(l);
            } else if let Some(r) = self.right_of(node) {
                Self::set_right(node, None);
                n = Some(r);
            } else {
                n = self.parent_of(node);
                Self::set_parent_color(node, None, false);
                // INVARIANT: the node is unreachable from now on.
                node.0.links.owner.set(0);
            }
        }
        self.root = None;
        self.leftmost = None;
    }
}

impl<'a> Timeline for UserTimeline<'a> {
    type Se = UserSe<'a>;
    fn root(&self) -> Option<UserSe<'a>> {
        self.root
    }
    fn first(&self) -> Option<UserSe<'a>> {
        self.leftmost
    }
    fn left(&self, se: UserSe<'a>) -> Option<UserSe<'a>> {
        if se.0.links.owner.get() == self.id {
            self.left_of(se)
        } else {
            None
        }
    }
    fn right(&self, se: UserSe<'a>) -> Option<UserSe<'a>> {
        if se.0.links.owner.get() == self.id {
            self.right_of(se)
        } else {
            None
        }
    }
    fn parent(&self, se: UserSe<'a>) -> Option<UserSe<'a>> {
        if se.0.links.owner.get() == self.id {
            self.parent_of(se)
        } else {
            None
        }
    }
    fn is_red(&self, se: UserSe<'a>) -> bool {
        Self::red(se)
    }
    /// A timeline alone keeps no holder and does not ask `earliest`
    /// ([`super::UserRunqueue`] does).
    fn insert(
        &mut self,
        se: UserSe<'a>,
        keep_max_slice: bool,
        _earliest: impl FnOnce(&Self) -> bool,
    ) -> bool {
        self.keep_max = keep_max_slice;
        self.add(se)
    }
    fn erase(&mut self, se: UserSe<'a>, keep_max_slice: bool) {
        self.keep_max = keep_max_slice;
        self.remove(se)
    }
}
