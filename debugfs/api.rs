// SPDX-License-Identifier: GPL-2.0

//! debugfs for Rust. Linux 6.12 has no Rust debugfs API; this is the part the project
//! needs: directories, and files whose contents are rendered once per open and whose
//! writes go to a handler that parses strictly.
//!
//! Three layers:
//!
//! - raw: `bindings::debugfs_create_dir()`, `debugfs_create_file()`, `debugfs_remove()`,
//!   `simple_read_from_buffer()`, `default_llseek()`...;
//! - thin unsafe adapters: the `extern "C"` callbacks of [`Vtable`], which turn the C
//!   pointers back into the `&'static T` a file was created with and the [`Open`] state
//!   of one open file;
//! - the safe API: [`Dir`], [`DebugFile`], [`Text`] and the parser [`parse_u64`].
//!
//! Reads: `open()` calls [`DebugFile::show`] once, into a [`Text`] that grows as needed,
//! and every `read()` and `lseek()` of that open file serves that text. A file whose
//! show walks the runqueues (the timeline: every queued entity of every CPU, under each
//! runqueue's lock) therefore walks them once per open, whatever the reader's buffer
//! size; a `seq_file` would call it again from the start each time its buffer doubled.
//! The text is allocated in process context with no lock held: show takes its locks
//! only to copy values, and formats after dropping them.
//!
//! Writes are all-or-nothing: one `write(2)` of at most [`WRITE_MAX`] bytes at offset 0,
//! handed whole to [`DebugFile::write`], which must change nothing when it fails.

use core::{fmt, marker::PhantomData, ptr::NonNull};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVec, VVec},
    bindings,
    error::{
        code::{EFBIG, EINVAL, ENOMEM},
        from_err_ptr, from_result, Error, Result,
    },
    str::CStr,
    uaccess::UserSlice,
};

/// The longest write a file accepts, in bytes; longer writes fail with EINVAL.
pub const WRITE_MAX: usize = 64;

/// The most text one open file renders, in bytes: a show that would print more fails
/// the `open()` with EFBIG rather than use the memory (the timeline of 32768 rows per CPU
/// is about 3 MiB per CPU).
pub const TEXT_MAX: usize = 256 << 20;

/// What a debugfs file does when read or written.
pub trait DebugFile: Sync + Sized + 'static {
    /// Whether the file takes writes: mode 0644 if so, 0444 if not.
    const WRITABLE: bool = false;

    /// Prints the file's contents: called once per `open()`, in process context with no
    /// lock held. It may take locks to copy values, but must print after dropping them:
    /// printing may allocate.
    fn show(&self, m: &mut Text) -> Result;

    /// Handles one write of the whole value: at most [`WRITE_MAX`] bytes, from offset 0.
    /// Must change nothing when it returns an error.
    fn write(&self, _input: &[u8]) -> Result {
        Err(EINVAL)
    }
}

/// Bytes printed to a [`Text`] between two voluntary preemption points.
///
/// Printing is the slow part of a large file: `tools/timeline-latency.sh` measured
/// 113-142 ms (guest time under icount) to render a timeline of 2,000 rows, 154 KB, about
/// 0.9 µs a byte. Under `preempt=voluntary` or `none` a task that wakes on the reader's CPU
/// waits until the reader's kernel path reschedules. With no such point but the buffer's
/// reallocations, cyclictest at SCHED_FIFO 90 saw 34.9 ms there; with one every 4 KiB,
/// 5.7 ms. 512 bytes is about 6 rows, under half a millisecond of that guest.
const RESCHED_BYTES: usize = 512;

/// Bytes a [`Text`] copies between two voluntary preemption points when it grows, and the
/// most one `read()` returns.
const COPY_CHUNK: usize = 64 << 10;

/// A voluntary preemption point: C's `cond_resched()`.
///
/// Under `CONFIG_PREEMPT_DYNAMIC`, `cond_resched()` is a static call that
/// `preempt=full` turns into a no-op; `__cond_resched()`, called here, checks for a
/// pending reschedule in every mode, which full preemption would have taken at its next
/// `preempt_enable()` anyway. A kernel built with full preemption only has neither.
fn cond_resched() {
    #[cfg(any(not(CONFIG_PREEMPTION), CONFIG_PREEMPT_DYNAMIC))]
    // SAFETY: `__cond_resched()` may sleep. It is only called from `Text::write_str`,
    // and a `Text` is only printed to in process context with no spinlock or RCU read
    // lock held (its documented contract, which its `GFP_KERNEL` growth needs as well).
    unsafe {
        bindings::__cond_resched()
    };
}

/// Up to this capacity a [`Text`] is kmalloc'ed, beyond it vmalloc'ed.
const SMALL_MAX: usize = 64 << 10;

/// A [`Text`]'s bytes: kmalloc'ed while small, vmalloc'ed when large.
///
/// vmalloc allocates and frees page by page with a preemption point after each page;
/// a large kmalloc is one high-order page allocation, which Debian's `init_on_alloc=1`
/// zeroes in one go. With `KVVec` (kmalloc first) a 20,000-row timeline read under
/// `preempt=voluntary` held off a SCHED_FIFO 90 cyclictest for 22.5 ms (guest time under
/// icount), against 14.2 ms with vmalloc. But vmalloc for every size made the 266-byte
/// `stats` file's reads 0.24 -> 0.33 ms, and their vfree()s' lazy purge held the same
/// cyclictest off for 42.5 ms (at 45,000 reads). So: kmalloc up to [`SMALL_MAX`].
enum Buf {
    Small(KVec<u8>),
    Large(VVec<u8>),
}

impl Buf {
    fn with_capacity(cap: usize) -> Result<Buf> {
        Ok(if cap <= SMALL_MAX {
            Buf::Small(KVec::with_capacity(cap, GFP_KERNEL)?)
        } else {
            Buf::Large(VVec::with_capacity(cap, GFP_KERNEL)?)
        })
    }

    fn len(&self) -> usize {
        match self {
            Buf::Small(v) => v.len(),
            Buf::Large(v) => v.len(),
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Buf::Small(v) => v.capacity(),
            Buf::Large(v) => v.capacity(),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Buf::Small(v) => v.as_slice(),
            Buf::Large(v) => v.as_slice(),
        }
    }

    fn as_ptr(&self) -> *const u8 {
        match self {
            Buf::Small(v) => v.as_ptr(),
            Buf::Large(v) => v.as_ptr(),
        }
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Buf::Small(v) => v.as_mut_ptr(),
            Buf::Large(v) => v.as_mut_ptr(),
        }
    }

    /// # Safety
    ///
    /// As `Vec::set_len`: `len <= capacity`, and the first `len` bytes are initialised.
    unsafe fn set_len(&mut self, len: usize) {
        match self {
            // SAFETY: `v` is this buffer's vector: `len <= v.capacity()` and its first `len`
            // bytes are initialised (this function's `# Safety`).
            Buf::Small(v) => unsafe { v.set_len(len) },
            // SAFETY: `v` is this buffer's vector: `len <= v.capacity()` and its first `len`
            // bytes are initialised (this function's `# Safety`).
            Buf::Large(v) => unsafe { v.set_len(len) },
        }
    }
}

/// The text of one open file, filled by [`DebugFile::show`]; it grows as it is printed to
/// (with `GFP_KERNEL`: never print to it under a spinlock), and every [`RESCHED_BYTES`]
/// bytes it offers to reschedule (never print to it under an RCU read lock either).
pub struct Text {
    buf: Buf,
    /// Why the last `write_str` failed, for [`Text::print`] to return.
    err: Option<Error>,
    /// Bytes printed since the last voluntary preemption point.
    since_resched: usize,
}

impl Text {
    /// An empty text.
    pub fn new() -> Text {
        Text {
            buf: Buf::Small(KVec::new()),
            err: None,
            since_resched: 0,
        }
    }

    /// Appends formatted text: ENOMEM when it cannot grow, EFBIG past [`TEXT_MAX`].
    pub fn print(&mut self, args: fmt::Arguments<'_>) -> Result {
        fmt::write(self, args).map_err(|_| self.err.take().unwrap_or(ENOMEM))
    }

    /// What has been printed so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.as_slice()
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::new()
    }
}

impl fmt::Write for Text {
    /// Appends `s`, growing the buffer to twice its size (at least a page, at most
    /// [`TEXT_MAX`]) when it does not fit: amortised linear. The growth is written out
    /// with checked arithmetic rather than `Vec::extend_from_slice()`, whose inlined
    /// `reserve()` has overflow-checked arithmetic: this crate has no panic path
    /// (tools/no-panic.sh).
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let len = self.buf.len();
        let Some(need) = len.checked_add(s.len()).filter(|&n| n <= TEXT_MAX) else {
            self.err = Some(EFBIG);
            return Err(fmt::Error);
        };
        if need > self.buf.capacity() {
            let cap = self
                .buf
                .capacity()
                .saturating_mul(2)
                .clamp(4096, TEXT_MAX)
                .max(need);
            let Ok(mut bigger) = Buf::with_capacity(cap) else {
                self.err = Some(ENOMEM);
                return Err(fmt::Error);
            };
            // The old text moves in chunks of [`COPY_CHUNK`] bytes with a voluntary
            // preemption point between them, so that the copy's length, which grows with
            // the file, does not become a stretch without one.
            let mut done = 0;
            while done < len {
                let n = len.wrapping_sub(done).min(COPY_CHUNK);
                // SAFETY: `done + n <= len <= cap`: the source bytes are initialised bytes
                // of `self.buf`, the destination is allocated in `bigger`, and the two
                // buffers are distinct allocations.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        self.buf.as_ptr().add(done),
                        bigger.as_mut_ptr().add(done),
                        n,
                    );
                }
                done = done.wrapping_add(n);
                cond_resched();
            }
            // SAFETY: the loop copied the first `len` bytes; `len <= cap`.
            unsafe { bigger.set_len(len) };
            self.buf = bigger;
        }
        // SAFETY: `need <= capacity`, so the `s.len()` bytes after the first `len` are
        // allocated; `s` cannot overlap the buffer, which only this value owns. After the
        // copy the first `need` bytes are initialised.
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), self.buf.as_mut_ptr().add(len), s.len());
            self.buf.set_len(need);
        }
        self.since_resched = self.since_resched.saturating_add(s.len());
        if self.since_resched >= RESCHED_BYTES {
            self.since_resched = 0;
            cond_resched();
        }
        Ok(())
    }
}

/// `seq_printf()`-like: `text!(m, "fmt", args...)` appends to a [`Text`] and returns its
/// `Result`.
macro_rules! text {
    ($m:expr, $($arg:tt)*) => {
        $m.print(core::format_args!($($arg)*))
    };
}
pub(crate) use text;

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
            .and_then(|v| v.checked_add(u64::from(b.wrapping_sub(b'0'))))
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
        // INVARIANT: a non-null `dentry` is a debugfs directory that stays until every `Dir`
        // made under it through the handle is dropped (this function's `# Safety`), and the
        // handle is only used to make them; a null one gives `None`.
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

/// `FMODE_READ` (include/linux/fs.h: `(__force fmode_t)(1 << 0)`, a macro bindgen does
/// not see).
const FMODE_READ: bindings::fmode_t = 1;

/// One open file: its `&'static T` and the text its `open()` rendered.
struct Open<T: 'static> {
    data: &'static T,
    text: Text,
}

/// The `file_operations` of a [`DebugFile`] type.
struct Vtable<T>(PhantomData<T>);

impl<T: DebugFile> Vtable<T> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(Self::open),
        read: Some(Self::read),
        llseek: Some(bindings::default_llseek),
        release: Some(Self::release),
        write: if T::WRITABLE { Some(Self::write) } else { None },
        // SAFETY: all-zero is a valid `file_operations`: null pointers and `None`s (no
        // owner: built-in code).
        ..unsafe { core::mem::zeroed() }
    };

    /// `open`: renders the text (`T::show`; not for a write-only open) and keeps it, with
    /// the `&'static T` that `i_private` is, as the file's `private_data`.
    ///
    /// # Safety
    ///
    /// Called by the VFS with a valid inode and file of a file made by `create_file::<T>`.
    unsafe extern "C" fn open(inode: *mut bindings::inode, file: *mut bindings::file) -> i32 {
        from_result(|| {
            // SAFETY:
            // - `inode` is the valid inode of a file made by `create_file::<T>` (this
            //   function's `# Safety`);
            // - so its `i_private` is the `&'static T` that `create_file` stored.
            let data = unsafe { &*(*inode).i_private.cast::<T>() };
            let mut text = Text::new();
            // SAFETY: `file` is a valid file being opened (this function's `# Safety`).
            if unsafe { (*file).f_mode } & FMODE_READ != 0 {
                data.show(&mut text)?;
            }
            let open = KBox::new(Open { data, text }, GFP_KERNEL)?;
            // SAFETY: `file` is a valid file being opened, whose `private_data` this open
            // may set (this function's `# Safety`).
            // `private_data` is the leaked `Open<T>` box until `release` takes it back.
            unsafe { (*file).private_data = KBox::into_raw(open).cast() };
            Ok(0)
        })
    }

    /// The open file's state.
    ///
    /// # Safety
    ///
    /// `file` is a valid file opened by [`Self::open`], not released for `'a`.
    unsafe fn state<'a>(file: *mut bindings::file) -> &'a Open<T> {
        // SAFETY:
        // - `file` is a valid file opened by `Self::open` (this function's `# Safety`), so
        //   its `private_data` is the `Open<T>` box that `open` leaked;
        // - `release` frees the box, and the file is not released for `'a` (this
        //   function's `# Safety`); nothing writes the box after `open`.
        unsafe { &*(*file).private_data.cast::<Open<T>>() }
    }

    /// `read`: from the text `open` rendered, at `*ppos`.
    ///
    /// # Safety
    ///
    /// Called by the VFS with a file opened by [`Self::open`], a user pointer valid or
    /// not (the copy checks it), and a valid `ppos`.
    unsafe extern "C" fn read(
        file: *mut bindings::file,
        ubuf: *mut kernel::ffi::c_char,
        len: usize,
        ppos: *mut bindings::loff_t,
    ) -> isize {
        // SAFETY: `file` is a valid file opened by `Self::open` (this function's `# Safety`),
        // not released while this read runs: the read holds a reference to it.
        let text = unsafe { Self::state(file) }.text.as_bytes();
        // At most [`COPY_CHUNK`] bytes a call, as a `seq_file` returns at most its buffer:
        // readers loop on short reads, and under `preempt=voluntary` the return to user
        // space is where a woken task gets the CPU.
        let len = len.min(COPY_CHUNK);
        // SAFETY: `text` is valid for its length while the file is open (this read holds
        // a reference to the file); `ppos` is valid; the user copy is checked.
        unsafe {
            bindings::simple_read_from_buffer(
                ubuf.cast(),
                len,
                ppos,
                text.as_ptr().cast(),
                text.len(),
            )
        }
    }

    /// `release`: frees what `open` made.
    ///
    /// # Safety
    ///
    /// Called by the VFS once, with the file opened by [`Self::open`], when its last
    /// reference goes.
    unsafe extern "C" fn release(_inode: *mut bindings::inode, file: *mut bindings::file) -> i32 {
        // SAFETY:
        // - `file` was opened by `Self::open` (this function's `# Safety`), so its
        //   `private_data` is the box that `open` leaked with `KBox::into_raw`;
        // - `release` is called once per file, when its last reference goes (this
        //   function's `# Safety`): the box is taken back once, and nothing uses it after.
        drop(unsafe { KBox::from_raw((*file).private_data.cast::<Open<T>>()) });
        0
    }

    /// `write`: one whole value of at most [`WRITE_MAX`] bytes at offset 0, or EINVAL.
    ///
    /// # Safety
    ///
    /// Called by the VFS with a file opened by [`Self::open`], a user pointer valid or
    /// not, and a valid `ppos`.
    unsafe extern "C" fn write(
        file: *mut bindings::file,
        ubuf: *const kernel::ffi::c_char,
        len: usize,
        ppos: *mut bindings::loff_t,
    ) -> isize {
        from_result(|| {
            // SAFETY: `ppos` is a valid `loff_t` pointer (this function's `# Safety`).
            if unsafe { *ppos } != 0 || len == 0 || len > WRITE_MAX {
                return Err(EINVAL);
            }
            let mut buf = [0u8; WRITE_MAX];
            let input = buf.get_mut(..len).ok_or(EINVAL)?;
            // A bad user pointer gives EFAULT; the copy checks it.
            UserSlice::new(ubuf as usize, len)
                .reader()
                .read_slice(input)?;
            // SAFETY: `file` is a valid file opened by `Self::open` (this function's
            // `# Safety`), not released while this write runs: the write holds a reference
            // to it.
            unsafe { Self::state(file) }.data.write(input)?;
            // SAFETY: `ppos` is a valid `loff_t` pointer that this write may update (this
            // function's `# Safety`).
            unsafe { *ppos = len as bindings::loff_t };
            Ok(len as isize)
        })
    }
}
