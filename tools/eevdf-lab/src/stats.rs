//! Medians with distribution-free confidence intervals, and ratios with bootstrap intervals.
//!
//! The samples are few (a handful of boots per kernel) and not normal (latency tails, TCG
//! hiccups), so nothing here assumes a distribution:
//! - the median's interval comes from order statistics: with `n` samples the number below
//!   the true median is Binomial(n, 1/2), so `[x_(k), x_(n-k+1)]` covers it with
//!   probability `1 - 2 P(B <= k-1)`; `k` is the largest rank that keeps this >= 95%. Below
//!   6 samples no rank does, and the interval is `[min, max]` with its real (lower)
//!   coverage reported;
//! - the Rust/stock ratio's interval is a percentile bootstrap of median(rust)/median(stock),
//!   resampling each kernel's samples independently, with a fixed seed so that a report
//!   regenerates bit for bit.

use serde::{Deserialize, Serialize};

/// A point estimate with an interval and the interval's coverage (0..1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// Probability that the interval covers the true value (exact for order statistics,
    /// nominal for the bootstrap).
    pub coverage: f64,
    pub n: usize,
}

impl Estimate {
    /// A deterministic count: one value, its interval the value itself, covered for sure.
    pub fn point(v: f64) -> Estimate {
        Estimate {
            value: v,
            lo: v,
            hi: v,
            coverage: 1.0,
            n: 1,
        }
    }
}

/// `items` each once, in the order they first come (the matrix's order of experiments,
/// kernels, pairs: what the tables follow). O(n²): the lists are a run's cells at most.
pub fn first_seen<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in items {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

fn median_sorted(v: &[f64]) -> f64 {
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// P(B <= k) for B ~ Binomial(n, 1/2).
fn binom_half_cdf(n: usize, k: usize) -> f64 {
    // Sum C(n, i) / 2^n in floating point: exact enough for n up to a few hundred.
    let mut c = 1.0f64; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            c = c * (n - i + 1) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2f64.powi(n as i32)
}

/// The median of `xs` with an order-statistic interval of at least `conf` coverage where the
/// sample size allows it (see the module doc).
pub fn median_ci(xs: &[f64], conf: f64) -> Estimate {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Estimate {
            coverage: 0.0,
            n,
            ..Estimate::point(f64::NAN)
        };
    }
    let alpha_half = (1.0 - conf) / 2.0;
    // Largest k (1-based) with P(B <= k-1) <= alpha/2; at least 1.
    let mut k = 1;
    while k < n.div_ceil(2) && binom_half_cdf(n, k) <= alpha_half {
        k += 1;
    }
    let coverage = 1.0 - 2.0 * binom_half_cdf(n, k - 1);
    Estimate {
        value: median_sorted(&v),
        lo: v[k - 1],
        hi: v[n - k],
        coverage,
        n,
    }
}

/// splitmix64: a tiny, good-enough PRNG for resampling, reproducible from its seed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn resampled_median(xs: &[f64], rng: &mut SplitMix, buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend((0..xs.len()).map(|_| xs[rng.below(xs.len())]));
    buf.sort_by(f64::total_cmp);
    median_sorted(buf)
}

/// median(num) / median(den) with a percentile-bootstrap interval at `conf`.
pub fn ratio_ci(num: &[f64], den: &[f64], conf: f64, resamples: usize, seed: u64) -> Estimate {
    let num: Vec<f64> = num.iter().copied().filter(|x| x.is_finite()).collect();
    let den: Vec<f64> = den.iter().copied().filter(|x| x.is_finite()).collect();
    let value = median(&num) / median(&den);
    let n = num.len().min(den.len());
    let mut buf = Vec::new();
    bootstrapped(value, n, conf, resamples, seed, |rng| {
        resampled_median(&num, rng, &mut buf) / resampled_median(&den, rng, &mut buf)
    })
}

/// A run's wakeup latencies as eevdf-waker's histogram (`eevdf_guest::latency_histogram`).
pub type Hist = Vec<(u16, u32)>;

/// The `p`-th percentile (µs) of one bootstrap resample of `runs`, pooled.
fn resampled_pool(runs: &[Hist], p: f64, rng: &mut SplitMix) -> f64 {
    let picks: Vec<&[(u16, u32)]> = (0..runs.len())
        .map(|_| runs[rng.below(runs.len())].as_slice())
        .collect();
    eevdf_guest::hist_quantile_us(picks, p)
}

/// The percentile bootstrap interval at `conf` of `stats`, sorted here.
fn percentile_interval(mut stats: Vec<f64>, conf: f64) -> (f64, f64) {
    stats.retain(|x| x.is_finite());
    stats.sort_by(f64::total_cmp);
    let q = |p: f64| eevdf_guest::quantile(&stats, p * 100.0);
    (q((1.0 - conf) / 2.0), q(1.0 - (1.0 - conf) / 2.0))
}

/// `value` with the percentile-bootstrap interval at `conf` of `resamples` draws, or
/// none when there are no samples (`n` = 0) or no resamples.
fn bootstrapped(
    value: f64,
    n: usize,
    conf: f64,
    resamples: usize,
    seed: u64,
    mut draw: impl FnMut(&mut SplitMix) -> f64,
) -> Estimate {
    let (lo, hi) = if n == 0 || resamples == 0 {
        (f64::NAN, f64::NAN)
    } else {
        let mut rng = SplitMix(seed);
        percentile_interval((0..resamples).map(|_| draw(&mut rng)).collect(), conf)
    };
    Estimate {
        value,
        lo,
        hi,
        coverage: if lo.is_nan() { 0.0 } else { conf },
        n,
    }
}

/// The `p`-th percentile (µs) of all the wakeups of `runs` pooled.
fn pooled(runs: &[Hist], p: f64) -> f64 {
    eevdf_guest::hist_quantile_us(runs.iter().map(Vec::as_slice), p)
}

/// The `p`-th percentile of all the wakeups of `runs` pooled, with a bootstrap interval at
/// `conf` that resamples the runs (with replacement): the runs, not the wakeups, are the
/// independent samples (one boot's wakeups share its timing).
pub fn pooled_quantile_ci(
    runs: &[Hist],
    p: f64,
    conf: f64,
    resamples: usize,
    seed: u64,
) -> Estimate {
    bootstrapped(pooled(runs, p), runs.len(), conf, resamples, seed, |rng| {
        resampled_pool(runs, p, rng)
    })
}

/// The ratio of two sets of runs' pooled `p`-th percentiles, with a bootstrap interval at
/// `conf` that resamples each side's runs independently.
pub fn pooled_ratio_ci(
    num: &[Hist],
    den: &[Hist],
    p: f64,
    conf: f64,
    resamples: usize,
    seed: u64,
) -> Estimate {
    let n = num.len().min(den.len());
    let value = pooled(num, p) / pooled(den, p);
    bootstrapped(value, n, conf, resamples, seed, |rng| {
        resampled_pool(num, p, rng) / resampled_pool(den, p, rng)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pooled percentiles: two kernels whose runs are the same histogram have ratio 1 with a
    /// degenerate interval; one 10% later has 1.1 up to a bucket.
    #[test]
    fn pooled_percentiles_and_their_ratio() {
        let lat = |scale: f64| -> Hist {
            let ns: Vec<u64> = (1..=5000u64)
                .map(|i| (i as f64 * 100.0 * scale) as u64)
                .collect();
            eevdf_guest::latency_histogram(&ns)
        };
        let a: Vec<Hist> = vec![lat(1.0); 12];
        let b: Vec<Hist> = vec![lat(1.1); 12];
        let e = pooled_quantile_ci(&a, 99.0, 0.95, 200, 1);
        assert!((e.value - 495.0).abs() / 495.0 < 0.025, "{e:?}");
        assert_eq!((e.lo, e.hi), (e.value, e.value));
        let same = pooled_ratio_ci(&a, &a, 99.0, 0.95, 200, 1);
        assert_eq!((same.value, same.lo, same.hi), (1.0, 1.0, 1.0));
        let later = pooled_ratio_ci(&b, &a, 99.0, 0.95, 200, 1);
        assert!((later.value - 1.1).abs() < 0.03, "{later:?}");
        assert!(pooled_quantile_ci(&[], 99.0, 0.95, 200, 1).value.is_nan());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn binomial_cdf_known_values() {
        assert!((binom_half_cdf(10, 1) - 11.0 / 1024.0).abs() < 1e-15);
        assert!((binom_half_cdf(10, 10) - 1.0).abs() < 1e-15);
        assert!((binom_half_cdf(6, 0) - 1.0 / 64.0).abs() < 1e-15);
    }

    #[test]
    fn order_statistic_interval_ranks() {
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = median_ci(&xs, 0.95);
        // n = 10: k = 2 (P(B<=1) = 11/1024 <= 0.025 < P(B<=2) = 56/1024).
        assert_eq!((e.lo, e.value, e.hi), (2.0, 5.5, 9.0));
        assert!((e.coverage - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        // n = 6: the smallest size with a 95% interval, [min, max] at 96.9%.
        let e = median_ci(&[5.0, 1.0, 3.0, 2.0, 6.0, 4.0], 0.95);
        assert_eq!((e.lo, e.hi), (1.0, 6.0));
        assert!((e.coverage - 0.96875).abs() < 1e-12);
        // n = 3: [min, max] covers only 75%, and says so.
        let e = median_ci(&[1.0, 2.0, 3.0], 0.95);
        assert_eq!((e.lo, e.hi, e.coverage), (1.0, 3.0, 0.75));
        // NaNs (failed runs) are dropped, not sorted into the ranks.
        let e = median_ci(&[1.0, f64::NAN, 3.0], 0.95);
        assert_eq!((e.n, e.value), (2, 2.0));
    }

    #[test]
    fn interval_widens_with_less_confidence_needed_never_inverts() {
        let xs: Vec<f64> = (0..50).map(|i| ((i * 37) % 50) as f64).collect();
        let e95 = median_ci(&xs, 0.95);
        let e80 = median_ci(&xs, 0.80);
        assert!(e95.lo <= e80.lo && e80.hi <= e95.hi);
        assert!(e95.lo <= e95.value && e95.value <= e95.hi);
        assert!(e95.coverage >= 0.95);
    }

    #[test]
    fn ratios() {
        let a = [10.0, 10.0, 10.0];
        let b = [5.0, 5.0, 5.0];
        let r = ratio_ci(&a, &b, 0.95, 500, 1);
        assert_eq!((r.value, r.lo, r.hi), (2.0, 2.0, 2.0));
        // Same distribution: the ratio is near 1 and its interval holds 1.
        let x: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64).collect();
        let r = ratio_ci(&x, &x, 0.95, 2000, 7);
        assert!(
            (r.value - 1.0).abs() < 1e-12 && r.lo <= 1.0 && r.hi >= 1.0,
            "{r:?}"
        );
        // Deterministic from the seed.
        assert_eq!(r, ratio_ci(&x, &x, 0.95, 2000, 7));
        // A 3% shift with 1% noise: the interval excludes 1.
        let y: Vec<f64> = x.iter().map(|v| v * 1.03).collect();
        let r = ratio_ci(&y, &x, 0.95, 2000, 7);
        assert!(r.lo > 1.0 && (r.value - 1.03).abs() < 1e-9, "{r:?}");
        assert!(ratio_ci(&[], &x, 0.95, 10, 1).lo.is_nan());
    }
}
