//! A writer for the `newc` cpio format, the one the kernel unpacks as an
//! initramfs (Documentation/driver-api/early-userspace/buffer-format.rst).
//!
//! Archives are written uncompressed: the kernel takes them as they are, and a
//! 10 MB archive loads faster under TCG than it decompresses.

use std::collections::BTreeSet;
use std::io::Write;

/// File type bits of `st_mode`.
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// An archive being built in memory.
///
/// # Invariants
///
/// Every entry's parent directories were written before it (`dirs` records
/// which), so the kernel never has to create a path implicitly.
pub struct Archive {
    buf: Vec<u8>,
    ino: u32,
    dirs: BTreeSet<String>,
}

impl Archive {
    /// An empty archive.
    pub fn new() -> Self {
        Archive {
            buf: Vec::new(),
            ino: 1,
            dirs: BTreeSet::new(),
        }
    }

    fn header(&mut self, name: &str, mode: u32, size: usize, rdev: (u32, u32)) {
        let name = name.trim_start_matches('/');
        let fields = [
            self.ino,
            mode,
            0,
            0,
            1,
            0,
            u32::try_from(size).expect("cpio entries are below 4 GiB"),
            0,
            0,
            rdev.0,
            rdev.1,
            u32::try_from(name.len() + 1).expect("short names"),
            0,
        ];
        self.ino += 1;
        self.buf.extend_from_slice(b"070701");
        for f in fields {
            write!(self.buf, "{f:08X}").expect("writing to a Vec");
        }
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    /// Add `path`'s missing parent directories.
    fn parents(&mut self, path: &str) {
        let path = path.trim_start_matches('/');
        let mut acc = String::new();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            if self.dirs.insert(acc.clone()) {
                let name = acc.clone();
                self.header(&name, S_IFDIR | 0o755, 0, (0, 0));
            }
        }
    }

    /// A directory (and its parents).
    pub fn dir(&mut self, path: &str) {
        self.parents(&format!("{}/x", path.trim_end_matches('/')));
    }

    /// A regular file with the given permission bits.
    pub fn file(&mut self, path: &str, perm: u32, data: &[u8]) {
        self.parents(path);
        self.header(path, S_IFREG | perm, data.len(), (0, 0));
        self.buf.extend_from_slice(data);
        self.pad();
    }

    /// A symbolic link at `path` pointing to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) {
        self.parents(path);
        self.header(path, S_IFLNK | 0o777, target.len(), (0, 0));
        self.buf.extend_from_slice(target.as_bytes());
        self.pad();
    }

    /// A character device node.
    pub fn chardev(&mut self, path: &str, major: u32, minor: u32) {
        self.parents(path);
        self.header(path, S_IFCHR | 0o600, 0, (major, minor));
    }

    /// The finished archive, trailer included.
    pub fn finish(mut self) -> Vec<u8> {
        self.header("TRAILER!!!", 0, 0, (0, 0));
        // The kernel reads archives in 512-byte blocks at the end.
        while !self.buf.len().is_multiple_of(512) {
            self.buf.push(0);
        }
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_aligned_and_parents_come_first() {
        let mut a = Archive::new();
        a.file("/a/b/c", 0o644, b"hello");
        let out = a.finish();
        let text = String::from_utf8_lossy(&out);
        let a_pos = text.find("a\0").unwrap();
        let ab_pos = text.find("a/b\0").unwrap();
        let abc_pos = text.find("a/b/c\0").unwrap();
        assert!(a_pos < ab_pos && ab_pos < abc_pos);
        assert!(text.contains("TRAILER!!!"));
        assert_eq!(out.len() % 512, 0);
        // Every header starts on a 4-byte boundary.
        for (i, _) in text.match_indices("070701") {
            assert_eq!(i % 4, 0, "header at {i}");
        }
    }
}
