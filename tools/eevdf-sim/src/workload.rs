//! Workload generators: what each task does between scheduling decisions.
//!
//! A task alternates between wanting the CPU for a *burst* of CPU time and sleeping. The
//! behaviour decides the length of each burst and when the next wakeup happens:
//!
//! | behaviour | burst | next wakeup after the burst ends at `t` |
//! | --- | --- | --- |
//! | hog | endless | — |
//! | periodic | `run` | the next timer expiry `k·period` after the previous one; at once if it has passed |
//! | bursty | drawn from `run` | `t` + a sleep drawn from `sleep` |
//! | messenger | `run` per queued request (the simulator keeps the queue and does the wakeups) | when a worker posts a request |
//! | worker | drawn from `run` | when its messenger wakes it |
//!
//! Fork-at-time and exit-at-time are the scenario's `start_ms` and `stop_ms`.
//!
//! Every bursty task owns a [`Prng`], seeded from the scenario, so a run is a pure function
//! of the scenario file: same file, same numbers, bit for bit.

use crate::scenario::{Behaviour, Dist, NSEC_PER_USEC};

/// xoshiro256** seeded through SplitMix64: small, fast and fully specified, so results do
/// not depend on a crate's version.
#[derive(Clone, Debug)]
pub struct Prng {
    s: [u64; 4],
}

impl Prng {
    /// A generator whose whole state is derived from `seed` by SplitMix64.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Prng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1), 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi], without modulo bias worth mentioning (hi − lo ≪ 2^64).
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + ((u128::from(self.next_u64()) * u128::from(span + 1)) >> 64) as u64
    }
}

impl Dist {
    /// Draws one duration, in nanoseconds.
    pub fn sample_ns(&self, rng: &mut Prng) -> u64 {
        match *self {
            Dist::Fixed { us } => us * NSEC_PER_USEC,
            Dist::Uniform { min_us, max_us } => {
                rng.range_inclusive(min_us * NSEC_PER_USEC, max_us * NSEC_PER_USEC)
            }
            Dist::Exp { mean_us } => {
                // Inverse transform: −mean·ln(1 − u), u ∈ [0, 1). Capped at 50 means so that
                // one draw cannot stall a scenario (probability e^−50).
                let u = rng.next_f64();
                let x = -(1.0 - u).ln() * (mean_us * NSEC_PER_USEC) as f64;
                (x.round() as u64).min(50 * mean_us * NSEC_PER_USEC)
            }
        }
    }

    /// The mean, in nanoseconds (for reports and tests).
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Dist::Fixed { us } => (us * NSEC_PER_USEC) as f64,
            Dist::Uniform { min_us, max_us } => ((min_us + max_us) * NSEC_PER_USEC) as f64 / 2.0,
            Dist::Exp { mean_us } => (mean_us * NSEC_PER_USEC) as f64,
        }
    }
}

/// Per-task generator state.
#[derive(Clone, Debug)]
pub struct Workload {
    behaviour: Behaviour,
    rng: Prng,
    /// Periodic: the expiry that the current activation belongs to, ns.
    next_expiry_ns: u64,
}

/// What a task does after a burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterBurst {
    /// Sleeps until the given absolute time, ns; that time is the wakeup's reference for
    /// latency (the timer expiry for periodic tasks).
    SleepUntil(u64),
    /// Runs another burst at once (a periodic task whose next expiry has passed); the
    /// `u64` is that expiry, the latency reference of the new activation.
    Continue(u64),
    /// Runs the next burst of the same activation at once (a messenger's next queued
    /// request): no new latency reference.
    Next,
}

impl Workload {
    /// The generator for one task, forked at `start_ns`.
    pub fn new(behaviour: &Behaviour, seed: u64, start_ns: u64) -> Self {
        let first = match behaviour {
            Behaviour::Periodic {
                period_us,
                offset_us,
                ..
            } => start_ns + offset_us.unwrap_or(*period_us) * NSEC_PER_USEC,
            _ => start_ns,
        };
        Workload {
            behaviour: behaviour.clone(),
            rng: Prng::new(seed),
            next_expiry_ns: first,
        }
    }

    /// When the task first wants the CPU after its fork at `start_ns`: at once for hogs,
    /// bursty tasks and messengers, at the first timer expiry for periodic ones, never by
    /// itself for a worker (`u64::MAX`: when its messenger wakes it).
    pub fn first_wakeup_ns(&self, start_ns: u64) -> u64 {
        match self.behaviour {
            Behaviour::Periodic { .. } => self.next_expiry_ns,
            Behaviour::Worker { .. } => u64::MAX,
            _ => start_ns,
        }
    }

    /// Length of the next burst of CPU time, ns; `u64::MAX` for a hog.
    pub fn next_burst_ns(&mut self) -> u64 {
        match &self.behaviour {
            Behaviour::Hog {} => u64::MAX,
            Behaviour::Periodic { run_us, .. } | Behaviour::Messenger { run_us, .. } => {
                run_us * NSEC_PER_USEC
            }
            Behaviour::Bursty { run, .. } | Behaviour::Worker { run, .. } => {
                run.sample_ns(&mut self.rng).max(1)
            }
        }
    }

    /// Called when a burst ends at `now_ns`.
    pub fn after_burst(&mut self, now_ns: u64) -> AfterBurst {
        match &self.behaviour {
            Behaviour::Hog {} => AfterBurst::Continue(now_ns),
            Behaviour::Periodic { period_us, .. } => {
                self.next_expiry_ns += period_us * NSEC_PER_USEC;
                if self.next_expiry_ns <= now_ns {
                    AfterBurst::Continue(self.next_expiry_ns)
                } else {
                    AfterBurst::SleepUntil(self.next_expiry_ns)
                }
            }
            Behaviour::Bursty { sleep, .. } => {
                let s = sleep.sample_ns(&mut self.rng);
                AfterBurst::SleepUntil(now_ns + s.max(1))
            }
            // The next queued request; the simulator, which keeps the queue, sleeps the
            // messenger when it is empty.
            Behaviour::Messenger { .. } => AfterBurst::Next,
            Behaviour::Worker { .. } => AfterBurst::SleepUntil(u64::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prng_is_deterministic_and_seed_sensitive() {
        let a: Vec<u64> = {
            let mut r = Prng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Prng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Prng::new(43);
            (0..8).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn distributions_have_their_means() {
        let mut r = Prng::new(7);
        let n = 200_000;
        for d in [
            Dist::Fixed { us: 30 },
            Dist::Uniform {
                min_us: 10,
                max_us: 90,
            },
            Dist::Exp { mean_us: 250 },
        ] {
            let sum: f64 = (0..n).map(|_| d.sample_ns(&mut r) as f64).sum();
            let mean = sum / n as f64;
            let want = d.mean_ns();
            assert!(
                (mean - want).abs() < 0.01 * want,
                "{d:?}: mean {mean} want {want}"
            );
        }
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut r = Prng::new(1);
        for _ in 0..10_000 {
            let x = r.range_inclusive(5, 9);
            assert!((5..=9).contains(&x));
        }
    }

    #[test]
    fn periodic_overrun_wakes_at_once() {
        let b = Behaviour::Periodic {
            period_us: 1000,
            run_us: 10,
            offset_us: None,
        };
        let mut w = Workload::new(&b, 0, 0);
        assert_eq!(w.first_wakeup_ns(0), 1_000_000);
        assert_eq!(w.after_burst(1_100_000), AfterBurst::SleepUntil(2_000_000));
        // Burst finished 1.5 periods late: the next expiry is already past.
        assert_eq!(w.after_burst(3_500_000), AfterBurst::Continue(3_000_000));
        assert_eq!(w.after_burst(3_600_000), AfterBurst::SleepUntil(4_000_000));
    }
}
