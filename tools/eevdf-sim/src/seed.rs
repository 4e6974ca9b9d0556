//! Section 1: the program from the LKML EEVDF thread (seed 000), rebuilt on the core.
//!
//! # The model
//!
//! Up to eight entities `A`, `B`, … each have an integer virtual runtime `v_i`, a weight `w_i`
//! (1024 is nice 0) and a request `r_i`. The virtual length of a request is
//! `d_i = ⌊1024·r_i / w_i⌋` and the first virtual deadline is `v_i + d_i`. A step picks one
//! entity, which then runs its whole request: real time advances by
//! `⌊(deadline − v)·w / 1024⌋`, its vruntime becomes its deadline and its deadline moves on by
//! `d_i`.
//!
//! # What comes from the core
//!
//! The seed's own program computed `V` and the pick with two loops. Here every entity is
//! queued on a [`sched_eevdf`] runqueue (none of them is `curr`, as in the seed's model, where
//! nothing is running between steps) and the core answers the two questions:
//!
//! - `V = ⌊Σ w·v / Σ w⌋` is the core's `avg_vruntime`;
//! - the pick is the core's `pick_eevdf` with the feature set the flags select: `-n` clears
//!   `ELIGIBLE` (EVDF), `-b` sets `BIAS_ELIGIBLE`, and `RUN_TO_PARITY` is off because no
//!   entity is current.
//!
//! The seed breaks a tie between equal deadlines by the lowest index. The glue
//! ([`crate::coreglue::SeedRq`]) hands the core vruntimes, deadlines and weights in the
//! seed's own units, scaled so that the core's fixed-point arithmetic is exact, and makes
//! the lowest index the core's tie-break (see there). The deadline bookkeeping after a run
//! (`deadline += d_i`) is the seed model's, because `d_i` is defined as an exact floor
//! division that the kernel's `calc_delta_fair` only approximates for weights other than
//! 1024.
//!
//! # Output
//!
//! Byte for byte the seed program's output; `tests/seed_figures.rs` checks the two figures
//! and the seven-entity run from seed 000.

use std::fmt::Write as _;

use anyhow::{bail, Result};

use crate::coreglue::{EntitySpec, SeedMode, SeedRq};

/// The seed program's fixed entity table size.
pub const MAX_ENTITIES: usize = 8;

/// Inputs larger than this are refused: the picture draws one character per unit of
/// virtual time, so a bigger value cannot be drawn, and the bound keeps every product in
/// 64 bits (`8 · 10^6 · 2·10^6` fits easily).
pub const MAX_INPUT: u64 = 1_000_000;

/// The ruler drawn under every step; position `V` is replaced by `*`.
const RULER: &str = "|---------|---------|---------|---------|----";

/// The largest `V` the ruler can mark. The seed's program has a 44-character ruler and
/// stops with `Whoopsie! out of time` when `V > 43`, as the issue specifies.
const RULER_LAST: u64 = 43;

/// The command line's `-e v,w,r`, within the bounds the picture can draw ([`MAX_INPUT`]).
impl std::str::FromStr for EntitySpec {
    type Err = anyhow::Error;

    /// Parses `v,w,r`: three decimal integers separated by commas, nothing else.
    fn from_str(s: &str) -> Result<Self> {
        let parts: Vec<&str> = s.split(',').collect();
        if parts.len() != 3 {
            bail!("entity {s:?}: expected v,w,r (three integers separated by commas)");
        }
        let mut vals = [0u64; 3];
        for (slot, (name, text)) in vals
            .iter_mut()
            .zip(["vruntime", "weight", "request"].iter().zip(parts.iter()))
        {
            let text = text.trim();
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                bail!("entity {s:?}: {name} {text:?} is not a non-negative integer");
            }
            let v: u64 = text
                .parse()
                .map_err(|_| anyhow::anyhow!("entity {s:?}: {name} {text:?} is too large"))?;
            if v > MAX_INPUT {
                bail!("entity {s:?}: {name} {v} is larger than {MAX_INPUT}");
            }
            *slot = v;
        }
        let [vruntime, weight, request] = vals;
        if weight == 0 {
            bail!("entity {s:?}: weight must be at least 1");
        }
        let e = EntitySpec {
            vruntime,
            weight,
            request,
        };
        let d = e.vslice();
        if d == 0 {
            bail!(
                "entity {s:?}: its virtual request ⌊1024·{request}/{weight}⌋ is 0, \
                 so it would never advance; use a larger request or a smaller weight"
            );
        }
        if d > MAX_INPUT {
            bail!("entity {s:?}: its virtual request ⌊1024·{request}/{weight}⌋ = {d} is larger than {MAX_INPUT}");
        }
        Ok(e)
    }
}

/// What ended a run of the seed model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedEnd {
    /// `V` reached the limit; lags and the schedule string were printed.
    Done,
    /// `V > 43`: the ruler ran out and the program stopped like the seed's does.
    OutOfTime,
    /// More than eight entities were given.
    TooMany,
    /// No entity was given.
    NoEntities,
    /// The core picked nothing (cannot happen: the entity with the smallest vruntime is
    /// always eligible); printed as the seed's program does.
    NoPick,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Runs the seed model and returns its output, byte-identical to the seed program's.
///
/// `v_lim` is the seed's `-v`: steps repeat while the `V` a step printed is below it.
pub fn run(entities: &[EntitySpec], v_lim: u64, mode: SeedMode) -> Result<(String, SeedEnd)> {
    let mut out = String::new();
    if entities.len() > MAX_ENTITIES {
        out.push_str("Whoopsie! too many entities\n");
        return Ok((out, SeedEnd::TooMany));
    }
    if entities.is_empty() {
        out.push_str("Whoopsie!, no entities\n");
        return Ok((out, SeedEnd::NoEntities));
    }

    let mut q = 0;
    for e in entities {
        let d = e.vslice();
        writeln!(out, "d = {d}")?;
        q = if q == 0 { d } else { gcd(q, d) };
    }
    write!(out, "q = {q}\n\n")?;

    let arena = SeedRq::arena(entities);
    let mut rq = SeedRq::new(&arena, entities, mode)?;
    let (mut min_lag, mut max_lag) = (0i64, 0i64);
    let mut t: u64 = 0;
    let mut sched = String::new();

    loop {
        let v_avg = rq.avg_vruntime();
        writeln!(out, "t={t} V={v_avg}")?;

        for i in 0..entities.len() {
            // The seed computes `long lag = V - v_i` on unsigned longs.
            let lag = v_avg.wrapping_sub(rq.vruntime(i)) as i64;
            min_lag = min_lag.min(lag);
            max_lag = max_lag.max(lag);
        }

        let Some(pick) = rq.pick() else {
            out.push_str("Whoopsie, no pick\n");
            return Ok((out, SeedEnd::NoPick));
        };

        for i in 0..entities.len() {
            out.push(if i == pick { '>' } else { ' ' });
            out.push(letter(i, true));
            out.push(' ');
            let v = rq.vruntime(i);
            let span = rq.deadline(i) - v;
            push_n(&mut out, ' ', v);
            out.push('|');
            push_n(&mut out, '-', span.saturating_sub(2));
            out.push_str("<\n");
        }

        if v_avg > RULER_LAST {
            out.push_str("Whoopsie! out of time\n");
            return Ok((out, SeedEnd::OutOfTime));
        }
        out.push_str("   ");
        let pos = v_avg as usize;
        out.push_str(&RULER[..pos]);
        out.push('*');
        out.push_str(&RULER[pos + 1..]);
        out.push_str("\n\n");

        let ran = rq.run_request(pick);
        t += ran;
        let mut i = 0;
        while i < ran {
            sched.push(letter(pick, i == 0));
            i += q;
        }
        out.push('\n');

        if v_avg >= v_lim {
            break;
        }
    }

    write!(out, "lags: {min_lag}, {max_lag}\n\n")?;
    out.push_str(&sched);
    out.push_str("\n\n");
    Ok((out, SeedEnd::Done))
}

fn letter(i: usize, capital: bool) -> char {
    let base = if capital { b'A' } else { b'a' };
    char::from(base + i as u8)
}

fn push_n(out: &mut String, c: char, n: u64) {
    out.extend(std::iter::repeat_n(c, n as usize));
}
