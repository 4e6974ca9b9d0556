//! Pipe ping-pong: two processes bounce one byte over two pipes; every bounce is a wakeup
//! and a context switch. Reports switches per second (two per round trip), the number the
//! fair class's wakeup and pick paths bound. Ends with one `@@json` result line.
use anyhow::{Context, Result};
use clap::Parser;
use eevdf_guest::{sys, PingPongResult, Record};

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// How long to bounce, ms. Longer runs average out timer ticks and other noise.
    #[arg(long, default_value_t = 1000)]
    duration_ms: u64,

    /// Pin both ends to this CPU, so that every bounce is a switch on one runqueue (the
    /// scheduler's own cost). --cpu -1 leaves them free: then wakeups cross CPUs and the
    /// rate measures IPIs and idle exits as much as the scheduler.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    cpu: i32,
}

fn pipe() -> Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe");
    }
    Ok(fds)
}

fn xfer(read_fd: libc::c_int, write_fd: libc::c_int, first_write: bool) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: `b` is a live one-byte buffer for each read and write.
    unsafe {
        if first_write && libc::write(write_fd, b.as_ptr().cast(), 1) != 1 {
            return false;
        }
        if libc::read(read_fd, b.as_mut_ptr().cast(), 1) != 1 {
            return false;
        }
        if !first_write && libc::write(write_fd, b.as_ptr().cast(), 1) != 1 {
            return false;
        }
    }
    true
}

fn main() -> Result<()> {
    let args = Args::parse();
    let policy = eevdf_guest::fair_policy("eevdf-pingpong")?;
    let cpu = u32::try_from(args.cpu).ok();
    if let Some(c) = cpu {
        sys::pin_to_cpu(0, c).with_context(|| format!("pinning to CPU {c}"))?;
    }
    let a = pipe()?; // parent -> child
    let b = pipe()?; // child -> parent
    let child = sys::fork_child(|| {
        // SAFETY: closing the parent's ends, which this process inherited and owns.
        unsafe {
            libc::close(a[1]);
            libc::close(b[0]);
        }
        while xfer(a[0], b[1], false) {}
        0
    })?;
    // SAFETY: closing the child's ends in the parent, so that EOF reaches each side.
    unsafe {
        libc::close(a[0]);
        libc::close(b[1]);
    }
    let ctx0 = sys::system_ctxsw()?;
    let t0 = sys::now_ns();
    let end = t0 + args.duration_ms * 1_000_000;
    let mut n = 0u64;
    loop {
        if !xfer(b[0], a[1], true) {
            break;
        }
        n += 1;
        if n.is_multiple_of(256) && sys::now_ns() >= end {
            break;
        }
    }
    let dt = (sys::now_ns() - t0) as f64 / 1e9;
    let ctx = sys::system_ctxsw()? - ctx0;
    // SAFETY: closing descriptors this process owns; the child then reads EOF and exits.
    unsafe {
        libc::close(a[1]);
        libc::close(b[0]);
    }
    sys::kill(child, libc::SIGKILL);
    sys::wait_pid(child, true);
    let r = PingPongResult {
        round_trips: n,
        duration_s: dt,
        switches_per_s: 2.0 * n as f64 / dt,
        system_ctxsw_per_s: ctx as f64 / dt,
        cpu,
        policy,
    };
    println!(
        "eevdf-pingpong: {n} round trips in {dt:.2} s: {:.0} switches/s ({:.0} on the machine)",
        r.switches_per_s, r.system_ctxsw_per_s
    );
    println!("{}", Record::PingPong(r).to_line());
    Ok(())
}
