// SPDX-License-Identifier: GPL-2.0

//! debugfs for Rust. Linux 6.12 has no Rust debugfs API; this is the part the project
//! needs: directories, and files whose reads are a `seq_file` show callback and whose
//! writes go to a handler that parses strictly.
//!
//! Three layers:
//!
//! - raw: `bindings::debugfs_create_dir()`, `debugfs_create_file()`, `debugfs_remove()`,
//!   `single_open()`, `seq_read()`, `seq_write()`...;
//! - thin unsafe adapters: the `extern "C"` callbacks of [`Vtable`], which turn the C
//!   pointers back into the `&'static T` a file was created with;
//! - the safe API: [`Dir`], [`DebugFile`], [`SeqBuf`] and the parser [`parse_u64`].
//!
//! Writes are all-or-nothing: one `write(2)` of at most [`WRITE_MAX`] bytes at offset 0,
//! handed whole to [`DebugFile::write`], which must change nothing when it fails.

use core::{ffi::c_void, fmt, marker::PhantomData, ptr::NonNull};
use kernel::{
    bindings,
    error::{code::EINVAL, from_err_ptr, from_result, Result},
    str::CStr,
    uaccess::UserSlice,
};

/// The longest write a file accepts, in bytes; longer writes fail with EINVAL.
pub const WRITE_MAX: usize = 64;

/// What a debugfs file does when read or written.
pub trait DebugFile: Sync + Sized + 'static {
    /// Whether the file takes writes: mode 0644 if so, 0444 if not.
    const WRITABLE: bool = false;

    /// Prints the file's contents. Called for each read from offset 0 (`single_open()`);
    /// called again, from the start, when the output did not fit the buffer.
    fn show(&self, m: &mut SeqBuf<'_>) -> Result;

    /// Handles one write of the whole value: at most [`WRITE_MAX`] bytes, from offset 0.
    /// Must change nothing when it returns an error.
    fn write(&self, _input: &[u8]) -> Result {
        Err(EINVAL)
    }
}

/// The output of [`DebugFile::show`]: a `seq_file` being filled.
///
/// # Invariants
///
/// `m` is the valid `seq_file` of the read in progress, used only by this thread.
pub struct SeqBuf<'a> {
    m: NonNull<bindings::seq_file>,
    overflowed: bool,
    _read: PhantomData<&'a mut bindings::seq_file>,
}

impl SeqBuf<'_> {
    /// Appends formatted text. Fails once the buffer is full: `show` should then return
    /// the error, and `seq_read()` calls it again with a larger buffer.
    pub fn print(&mut self, args: fmt::Arguments<'_>) -> Result {
        fmt::write(self, args).map_err(|_| EINVAL)
    }
}

impl fmt::Write for SeqBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: by the type invariant `m` is valid; `s` is valid for `s.len()` bytes.
        let rc = unsafe { bindings::seq_write(self.m.as_ptr(), s.as_ptr().cast(), s.len()) };
        if rc != 0 {
            self.overflowed = true;
            return Err(fmt::Error);
        }
        Ok(())
    }
}

/// `seq_printf()`: `seq_print!(m, "fmt", args...)` appends to a [`SeqBuf`] and returns its
/// `Result`.
macro_rules! seq_print {
    ($m:expr, $($arg:tt)*) => {
        $m.print(core::format_args!($($arg)*))
    };
}
pub(crate) use seq_print;

/// Parses a decimal `u64` written to a debugfs file: ASCII digits, optionally one
/// trailing newline (what `echo` adds). Nothing else: no sign, no spaces, no base prefix,
/// no empty value, no value above `u64::MAX`, no NUL or other binary byte.
pub fn parse_u64(input: &[u8]) -> Result<u64> {
    let digits = input.strip_suffix(b"\n").unwrap_or(input);
    if digits.is_empty() {
        return Err(EINVAL);
    }
    let mut v: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err(EINVAL);
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or(EINVAL)?;
    }
    Ok(v)
}

/// A debugfs dentry that this code does not own (a parent made by C).
///
/// # Invariants
///
/// The dentry is a valid debugfs directory for as long as the handle is used.
#[derive(Clone, Copy)]
pub struct DirRef(NonNull<bindings::dentry>);

impl DirRef {
    /// Wraps a directory that C made.
    ///
    /// # Safety
    ///
    /// `dentry` must be a debugfs directory that stays until every [`Dir`] made under it
    /// through this handle is dropped (C's directories for built-in code never go away).
    pub unsafe fn from_raw(dentry: *mut bindings::dentry) -> Option<DirRef> {
        // INVARIANT: guaranteed by the caller.
        NonNull::new(dentry).map(DirRef)
    }
}

/// A debugfs directory, removed with everything in it when dropped.
///
/// # Invariants
///
/// `dentry` is a valid debugfs directory created by [`Dir::new`] and owned by this value.
pub struct Dir {
    dentry: NonNull<bindings::dentry>,
}

// SAFETY: a dentry may be used and removed from any thread; debugfs serialises.
unsafe impl Send for Dir {}
// SAFETY: `&Dir` only creates files in it, which debugfs serialises.
unsafe impl Sync for Dir {}

impl Dir {
    /// `debugfs_create_dir()`: `name` under `parent` (the debugfs root when `None`).
    pub fn new(name: &CStr, parent: Option<DirRef>) -> Result<Dir> {
        let parent = parent.map_or(core::ptr::null_mut(), |p| p.0.as_ptr());
        // SAFETY: `name` is NUL-terminated; `parent` is null or a valid directory (the
        // `DirRef` invariant).
        let d = from_err_ptr(unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), parent) })?;
        // INVARIANT: created just now; a successful call returns a valid dentry.
        NonNull::new(d).map(|dentry| Dir { dentry }).ok_or(EINVAL)
    }

    /// This directory as a parent for others.
    pub fn as_ref(&self) -> DirRef {
        // INVARIANT: valid for as long as `self` is, by the type invariant.
        DirRef(self.dentry)
    }

    /// `debugfs_create_file()`: a file named `name` in this directory whose reads and
    /// writes go to `data`. It is removed with the directory.
    pub fn create_file<T: DebugFile>(&self, name: &CStr, data: &'static T) -> Result {
        let mode: bindings::umode_t = if T::WRITABLE { 0o644 } else { 0o444 };
        // SAFETY: `name` is NUL-terminated, the directory is valid (type invariant), and
        // `data` and the vtable are `'static`, so the file's `i_private` and fops outlive
        // it. debugfs copies neither.
        from_err_ptr(unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                mode,
                self.dentry.as_ptr(),
                (data as *const T).cast_mut().cast(),
                &Vtable::<T>::FOPS,
            )
        })?;
        Ok(())
    }

    /// Keeps the directory for the kernel's lifetime (built-in code never removes its
    /// files).
    pub fn keep(self) {
        core::mem::forget(self);
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we own the directory; debugfs_remove() waits for
        // readers in the files' callbacks (debugfs_file_get) before they go away.
        unsafe { bindings::debugfs_remove(self.dentry.as_ptr()) };
    }
}

/// The `file_operations` of a [`DebugFile`] type.
struct Vtable<T>(PhantomData<T>);

impl<T: DebugFile> Vtable<T> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(Self::open),
        read: Some(bindings::seq_read),
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        write: if T::WRITABLE { Some(Self::write) } else { None },
        // SAFETY: all-zero is a valid `file_operations`: null pointers and `None`s (no
        // owner: built-in code).
        ..unsafe { core::mem::zeroed() }
    };

    /// `open`: `single_open()` with `i_private`, the `&'static T` of `create_file`.
    ///
    /// # Safety
    ///
    /// Called by the VFS with a valid inode and file of a file made by `create_file::<T>`.
    unsafe extern "C" fn open(inode: *mut bindings::inode, file: *mut bindings::file) -> i32 {
        // SAFETY: guaranteed by the caller; `i_private` is the `&'static T`.
        unsafe { bindings::single_open(file, Some(Self::show), (*inode).i_private) }
    }

    /// `show` of `single_open()`.
    ///
    /// # Safety
    ///
    /// Called by seq_file with the valid `seq_file` that `open` made, whose `private` is
    /// the `&'static T`.
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> i32 {
        // SAFETY: guaranteed by the caller.
        let data = unsafe { &*(*m).private.cast::<T>() };
        let mut buf = SeqBuf {
            // SAFETY: seq_file passes a valid, non-null `m`.
            m: unsafe { NonNull::new_unchecked(m) },
            overflowed: false,
            _read: PhantomData,
        };
        match data.show(&mut buf) {
            Ok(()) => 0,
            // seq_read() sees the full buffer and retries with a larger one.
            Err(_) if buf.overflowed => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `write`: one whole value of at most [`WRITE_MAX`] bytes at offset 0, or EINVAL.
    ///
    /// # Safety
    ///
    /// Called by the VFS with the valid file that `open` made (its `private_data` is the
    /// `seq_file`), a user pointer valid or not, and a valid `ppos`.
    unsafe extern "C" fn write(
        file: *mut bindings::file,
        ubuf: *const kernel::ffi::c_char,
        len: usize,
        ppos: *mut bindings::loff_t,
    ) -> isize {
        from_result(|| {
            // SAFETY: `ppos` is valid (caller).
            if unsafe { *ppos } != 0 || len == 0 || len > WRITE_MAX {
                return Err(EINVAL);
            }
            let mut buf = [0u8; WRITE_MAX];
            let input = buf.get_mut(..len).ok_or(EINVAL)?;
            // A bad user pointer gives EFAULT; the copy checks it.
            UserSlice::new(ubuf as usize, len)
                .reader()
                .read_slice(input)?;
            // SAFETY: `private_data` is the seq_file of `single_open()` and its `private` the
            // `&'static T` (see `open`).
            let data = unsafe {
                &*(*(*file).private_data.cast::<bindings::seq_file>())
                    .private
                    .cast::<T>()
            };
            data.write(input)?;
            // SAFETY: as above.
            unsafe { *ppos = len as bindings::loff_t };
            Ok(len as isize)
        })
    }
}
