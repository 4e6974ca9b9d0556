// SPDX-License-Identifier: GPL-2.0

//! fair.c as the judge of the Rust EEVDF core.
//!
//! build.rs extracts 6.12.117's own EEVDF functions from the pristine tarball and
//! compiles them for the host ([`c`]); [`pair::Pair`] drives them and the core with the
//! same operations ([`ops::Op`]) and compares every observable after each one: the pick,
//! every entity's vruntime, deadline, saved lag, slice, weight, flags, eligibility and
//! (for current) slice protection, the runqueue's `avg_vruntime`, `avg_load`,
//! `zero_vruntime`, V, the next buddy and `cfs_rq_min_slice()`, and each wakeup's
//! preemption decision. [`run_sequence`] runs one sequence (random, or a replay);
//! [`shrink`] cuts a diverging one down to the operations that still diverge.
//!
//! Where the two may differ by design, [`pair::Class`] names the reason (documented in
//! Documentation/c-parity.md); anything else is a divergence.

pub mod c;
pub mod ops;
pub mod pair;

use ops::{Arrival, Op, Rng, Setup, TOGGLES};
use pair::{Class, Mismatch, Pair};
use sched_eevdf::user::UserEntity;
use sched_eevdf::LoadWeight;

/// What one sequence did.
#[derive(Debug, Default)]
pub struct SeqResult {
    /// The operations run (a replay's skipped ones left out).
    pub ops: Vec<Op>,
    /// The first divergence: its operation's index in `ops`, and what differed.
    pub divergence: Option<(usize, Mismatch)>,
    /// The pinned difference that ended the sequence early, if one did.
    pub ended_by: Option<Class>,
    /// Picks and wakeup decisions where a tie of deadlines was broken differently.
    pub ties: u64,
    /// Steps where stock's `min_slice` was stale.
    pub stale_min_slice: u64,
    /// What the sequence reached.
    pub cov: pair::Coverage,
}

/// Where a sequence's operations come from.
pub enum Source<'o> {
    /// Generated against the state as it goes, `n` after the initial forks.
    Random(&'o mut Rng, usize),
    /// Given; those that cannot run in the state reached are skipped.
    Replay(&'o [Op]),
}

/// The next random operation that can run in `pair`'s state.
fn generate(pair: &Pair<'_>, rng: &mut Rng, setup: &Setup, pending_schedule: bool) -> Op {
    let tasks = setup.tasks;
    if pending_schedule {
        // Current blocked and its dequeue was delayed: now and then it is woken before
        // the pick puts it away (the pick may drop the lock to balance a newly idle
        // runqueue), which requeues a delayed current.
        if let Some(c) = pair.curr() {
            if rng.chance(10) && pair.valid(&Op::WakeDelayed { i: c }) {
                return Op::WakeDelayed { i: c };
            }
        }
        return Op::Schedule;
    }
    let pick = |rng: &mut Rng, f: &dyn Fn(usize) -> bool| -> Option<usize> {
        let c: Vec<usize> = (0..tasks).filter(|&i| f(i)).collect();
        (!c.is_empty()).then(|| c[rng.below(c.len() as u64) as usize])
    };
    for _ in 0..32 {
        let op = match rng.below(100) {
            0..=29 => Op::Tick(ops::tick(rng, setup.spread)),
            30..=47 => {
                let how = if rng.chance(30) {
                    Arrival::WakeupMigrated
                } else {
                    Arrival::Wakeup
                };
                let Some(i) = pick(rng, &|i| {
                    pair.valid(&Op::Wake {
                        i,
                        how,
                        sync: false,
                    })
                }) else {
                    continue;
                };
                Op::Wake {
                    i,
                    how,
                    sync: rng.chance(30),
                }
            }
            48..=51 => {
                let Some(i) = pick(rng, &|i| {
                    pair.valid(&Op::Wake {
                        i,
                        how: Arrival::Attach,
                        sync: false,
                    })
                }) else {
                    continue;
                };
                Op::Wake {
                    i,
                    how: Arrival::Attach,
                    sync: false,
                }
            }
            52..=53 => {
                let Some(i) = pick(rng, &|i| pair.alive(i) && pair.entity(i).on_rq == 0) else {
                    continue;
                };
                new_task(rng, i)
            }
            54..=59 => {
                let Some(i) = pick(rng, &|i| pair.valid(&Op::WakeDelayed { i })) else {
                    continue;
                };
                Op::WakeDelayed { i }
            }
            60..=71 => Op::Sleep {
                special: rng.chance(10),
            },
            72..=74 => {
                let Some(i) = pick(rng, &|i| pair.valid(&Op::MigrateOut { i })) else {
                    continue;
                };
                Op::MigrateOut { i }
            }
            75..=78 => Op::Reweight {
                i: rng.below(tasks as u64) as usize,
                weight: match ops::weight(rng) {
                    ops::Weight::Shares(s) => s,
                    ops::Weight::Nice(n) => LoadWeight::from_nice(i32::from(n)).weight,
                },
            },
            79..=82 => Op::Renice {
                i: rng.below(tasks as u64) as usize,
                nice: rng.range(0, 39) as i8 - 20,
            },
            83..=87 => Op::Setattr {
                i: rng.below(tasks as u64) as usize,
                runtime: ops::sched_runtime(rng),
            },
            88..=90 => Op::Yield,
            // Spread sequences schedule rarely, so that current runs far from V.
            91..=97 if !setup.spread || rng.chance(10) => Op::Schedule,
            91..=97 => Op::Tick(ops::tick(rng, true)),
            _ => {
                let k = rng.below(TOGGLES.len() as u64) as usize;
                // Switching PLACE_REL_DEADLINE off while a task away holds a relative
                // deadline ends the sequence at its arrival (a pinned difference); do it
                // rarely, so that long sequences go deep.
                let held = (0..tasks).any(|i| pair.alive(i) && pair.entity(i).rel_deadline != 0);
                if k == ops::PLACE_REL_DEADLINE && held && !rng.chance(10) {
                    continue;
                }
                Op::Flip(k)
            }
        };
        if pair.valid(&op) {
            return op;
        }
    }
    Op::Tick(ops::tick(rng, setup.spread))
}

fn new_task(rng: &mut Rng, i: usize) -> Op {
    let (slice, custom) = if rng.chance(30) {
        let r = ops::sched_runtime(rng);
        let (s, c) = sched_eevdf::sched_attr_slice(r, 700_000);
        (s, c)
    } else {
        (0, false)
    };
    Op::New {
        i,
        weight: ops::weight(rng),
        slice,
        custom,
    }
}

/// A set-up and an operation list from arbitrary bytes (the fuzz target's input): the
/// first 14 bytes choose the set-up (2 to 16 tasks), then each 9 bytes an operation, its
/// kind from the first and its parameters drawn from the other eight. Every input decodes;
/// a replay skips the operations that cannot run.
pub fn decode(data: &[u8]) -> (Setup, Vec<Op>) {
    let byte = |k: usize| data.get(k).copied().unwrap_or(0);
    let word = |k: usize| {
        let mut b = [0u8; 8];
        for (j, v) in b.iter_mut().enumerate() {
            *v = byte(k + j);
        }
        u64::from_le_bytes(b)
    };
    let setup = Setup {
        tasks: 2 + usize::from(byte(0) % 15),
        toggles: u16::from_le_bytes([byte(1), byte(2)]) & ((1 << TOGGLES.len()) - 1),
        base_slice_ns: [700_000, 2_100_000, 3_000_000][usize::from(byte(3) % 3)],
        tick_nsec: [1_000_000, 4_000_000, 10_000_000][usize::from(byte(4) % 3)],
        zero_vruntime: word(5),
        spread: byte(13) & 1 != 0,
    };
    let mut ops = Vec::new();
    let mut k = 14;
    while k < data.len() {
        let mut r = Rng::new(word(k + 1));
        let i = r.below(setup.tasks as u64) as usize;
        ops.push(match byte(k) % 14 {
            0 | 1 => Op::Tick(ops::tick(&mut r, setup.spread)),
            2 => new_task(&mut r, i),
            3 | 4 => Op::Wake {
                i,
                how: [Arrival::Wakeup, Arrival::WakeupMigrated, Arrival::Attach]
                    [r.below(3) as usize],
                sync: r.chance(30),
            },
            5 => Op::WakeDelayed { i },
            6 => Op::Sleep {
                special: r.chance(10),
            },
            7 => Op::MigrateOut { i },
            8 => Op::Reweight {
                i,
                weight: match ops::weight(&mut r) {
                    ops::Weight::Shares(s) => s,
                    ops::Weight::Nice(n) => LoadWeight::from_nice(i32::from(n)).weight,
                },
            },
            9 => Op::Renice {
                i,
                nice: r.range(0, 39) as i8 - 20,
            },
            10 => Op::Setattr {
                i,
                runtime: ops::sched_runtime(&mut r),
            },
            11 => Op::Yield,
            12 => Op::Schedule,
            _ => Op::Flip(r.below(TOGGLES.len() as u64) as usize),
        });
        k += 9;
    }
    (setup, ops)
}

/// Runs one sequence from `setup`.
pub fn run_sequence(setup: &Setup, source: Source<'_>) -> anyhow::Result<SeqResult> {
    let ents: Vec<UserEntity> = (0..setup.tasks)
        .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
        .collect();
    let mut pair = Pair::new(&ents, setup)?;
    let mut res = SeqResult::default();
    let (mut rng, budget, replay) = match source {
        Source::Random(rng, n) => (Some(rng), n, &[][..]),
        Source::Replay(ops) => (None, ops.len(), ops),
    };
    // A random sequence forks its tasks first (some of them, if many).
    let mut initial = Vec::new();
    if let Some(rng) = rng.as_deref_mut() {
        let forks = if setup.tasks <= 40 || rng.chance(50) {
            setup.tasks
        } else {
            rng.range(40, setup.tasks as u64) as usize
        };
        for i in 0..forks {
            initial.push(new_task(rng, i));
            // Forks with schedules between them: a fork's wakeup decision is taken only
            // when no reschedule is pending.
            if rng.chance(50) {
                initial.push(Op::Schedule);
            }
            if rng.chance(20) {
                initial.push(Op::Tick(ops::tick(rng, setup.spread)));
            }
        }
    }
    let total = if rng.is_some() {
        initial.len() + budget
    } else {
        budget
    };
    let mut pending_schedule = false;
    for k in 0..total {
        let op = if let Some(rng) = rng.as_deref_mut() {
            match initial.get(k) {
                Some(op) => *op,
                None => {
                    let need = pair.need_resched() && rng.chance(80);
                    generate(&pair, rng, setup, pending_schedule || need)
                }
            }
        } else {
            match replay.get(k) {
                Some(op) => *op,
                None => break,
            }
        };
        if !pair.valid(&op) {
            continue;
        }
        pending_schedule = matches!(op, Op::Sleep { .. } | Op::Yield);
        res.ops.push(op);
        let step = res.ops.len() - 1;
        let mut found = pair.apply(&op);
        if found.as_ref().is_none_or(|m| m.class == Class::Tie) {
            found = pair.compare().or(found);
        }
        res.ties = pair.ties;
        res.cov = pair.cov;
        let Some(m) = found else { continue };
        match m.class {
            Class::Tie => {}
            Class::StockMinSlice => res.stale_min_slice += 1,
            Class::Overflow | Class::StaleRelDeadline => {
                res.ended_by = Some(m.class);
                break;
            }
            Class::Real => {
                res.divergence = Some((step, m));
                break;
            }
        }
    }
    Ok(res)
}

/// The shortest operation list found (by removing chunks, then single operations) whose
/// replay from `setup` still diverges on the same observable. At most `budget` replays.
pub fn shrink(setup: &Setup, ops: &[Op], what: &str, budget: usize) -> anyhow::Result<Vec<Op>> {
    let still = |cand: &[Op]| -> anyhow::Result<bool> {
        let r = run_sequence(setup, Source::Replay(cand))?;
        Ok(r.divergence.is_some_and(|(_, m)| m.what == what))
    };
    let mut runs = 0;
    let mut cur = ops.to_vec();
    let mut chunk = cur.len().div_ceil(2).max(1);
    loop {
        let mut i = 0;
        let mut changed = false;
        while i < cur.len() && runs < budget {
            let end = (i + chunk).min(cur.len());
            let cand: Vec<Op> = cur[..i].iter().chain(&cur[end..]).copied().collect();
            runs += 1;
            if still(&cand)? {
                cur = cand;
                changed = true;
            } else {
                i += chunk;
            }
        }
        if runs >= budget || (chunk == 1 && !changed) {
            break;
        }
        if !changed {
            chunk = chunk.div_ceil(2);
        }
    }
    // The replay's own list: what actually ran.
    Ok(run_sequence(setup, Source::Replay(&cur))?.ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_run_agrees_with_fair_c() {
        let mut rng = Rng::new(7);
        for k in 0..64 {
            let mut seq = Rng::new(rng.next_u64());
            let setup = ops::setup(k, &mut seq, 80);
            let r = run_sequence(&setup, Source::Random(&mut seq, 200)).unwrap();
            assert!(r.divergence.is_none(), "{setup}: {:?}", r.divergence);
            assert!(!r.ops.is_empty());
        }
    }

    /// The comparison sees a difference planted in the core's state, and names it.
    #[test]
    fn a_planted_difference_is_a_divergence() {
        let setup = Setup {
            tasks: 3,
            toggles: (1 << TOGGLES.len()) - 1,
            base_slice_ns: 700_000,
            tick_nsec: 4_000_000,
            zero_vruntime: 0,
            spread: false,
        };
        let ents: Vec<UserEntity> = (0..3)
            .map(|_| UserEntity::new(LoadWeight::from_nice(0)))
            .collect();
        let mut pair = Pair::new(&ents, &setup).unwrap();
        for i in 0..3 {
            let op = Op::New {
                i,
                weight: ops::Weight::Nice(0),
                slice: 0,
                custom: false,
            };
            assert!(pair.valid(&op));
            pair.apply(&op);
            assert!(pair.compare().is_none());
        }
        pair.apply(&Op::Schedule);
        pair.apply(&Op::Tick(300_000));
        assert!(pair.compare().is_none());
        let se = ents[1].se();
        use sched_eevdf::Entity;
        se.set_deadline(se.deadline() + 1);
        let m = pair.compare().expect("the planted deadline is seen");
        assert_eq!(m.what, "#1.deadline");
        assert_eq!(m.class, Class::Real);
    }

    /// Every input decodes; a decoded sequence runs.
    #[test]
    fn any_bytes_decode_and_run() {
        for data in [
            &[][..],
            &[0xff; 5][..],
            &[7u8; 100][..],
            b"fair.c as the judge, bytes",
        ] {
            let (setup, ops) = decode(data);
            assert!((2..=16).contains(&setup.tasks));
            assert_eq!(ops.len(), data.len().saturating_sub(14).div_ceil(9));
            let r = run_sequence(&setup, Source::Replay(&ops)).unwrap();
            assert!(r.divergence.is_none());
        }
    }

    /// The fuzz target's regressions (fuzz/regressions) replay without a divergence.
    #[test]
    fn fuzz_regressions_agree() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if !path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("crash-")
            {
                continue;
            }
            let (setup, ops) = decode(&std::fs::read(&path).unwrap());
            let r = run_sequence(&setup, Source::Replay(&ops)).unwrap();
            assert!(
                r.divergence.is_none(),
                "{}: {:?}",
                path.display(),
                r.divergence
            );
            n += 1;
        }
        assert!(n >= 3, "{n} regressions in {}", dir.display());
    }

    /// A replay skips what cannot run in the state it reaches, and runs the rest.
    #[test]
    fn replay_skips_invalid_operations() {
        let setup = Setup {
            tasks: 2,
            toggles: 0,
            base_slice_ns: 700_000,
            tick_nsec: 4_000_000,
            zero_vruntime: 1 << 40,
            spread: false,
        };
        let ops = [
            Op::Sleep { special: false },
            Op::New {
                i: 0,
                weight: ops::Weight::Nice(3),
                slice: 0,
                custom: false,
            },
            Op::WakeDelayed { i: 1 },
            Op::Schedule,
            Op::Yield,
        ];
        let r = run_sequence(&setup, Source::Replay(&ops)).unwrap();
        assert_eq!(r.ops, vec![ops[1], ops[3], ops[4]]);
        assert!(r.divergence.is_none());
    }
}
