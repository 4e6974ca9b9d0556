//! Verdicts computed from intervals: every conclusion a generated page draws is one of these,
//! rendered with the interval it rests on, so that no sentence of a page can say more than
//! its rows.
//!
//! An estimate stands against a reference (a ratio against 1, a share against its fair
//! share, a slowdown against a seed's figure) or against another estimate (a kernel against
//! the other, a feature off against on):
//! - the whole interval on one side: that side, decided;
//! - the intervals overlap (or the interval holds the reference): **undecided**, with the
//!   runs a side that would decide a difference of the size seen. An order-statistic or
//!   bootstrap interval of the median narrows about as `1/sqrt(n)` (the median's standard
//!   error is `1 / (2 f(m) sqrt(n))`), so an interval of half-width `h` at `n` runs excludes
//!   a gap `d` at about `n (h/d)^2` runs. A guide for planning the next run, not a promise:
//!   the gap itself may be noise;
//! - fewer runs than give the interval its 95% coverage: **undecided**, too few runs.

use crate::stats::Estimate;
use std::fmt;

/// The fewest runs whose median interval reaches 95% coverage by order statistics
/// (`[min, max]` of 6 runs covers the median with probability 1 - 2/2^6 = 96.9%; of 5,
/// 93.8%).
pub const MIN_RUNS: usize = 6;

/// Beyond this many runs a side the estimate is reported as not decidable by more runs of
/// this kind (the gap is too small against the spread).
pub const MAX_RUNS_SUGGESTED: usize = 10_000;

/// Where an estimate stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval is below the reference (or the other estimate's interval).
    Below,
    /// The whole interval is above.
    Above,
    /// The intervals overlap. `runs`: about how many runs a side would decide a difference
    /// of the size seen; `None` where no number of runs would (no gap at all, or one too
    /// small against the spread: more than [`MAX_RUNS_SUGGESTED`]).
    Undecided { runs: Option<usize> },
    /// Fewer runs than [`MIN_RUNS`] on a side: the interval does not have its coverage.
    TooFew { have: usize },
    /// Nothing to judge (no runs, or a value that is not a number).
    Missing,
}

impl Verdict {
    /// The verdict in words: `below` or `above` where decided, otherwise why not.
    pub fn say(self, below: &str, above: &str) -> String {
        match self {
            Verdict::Below => below.to_string(),
            Verdict::Above => above.to_string(),
            u => u.to_string(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Below => write!(f, "below"),
            Verdict::Above => write!(f, "above"),
            Verdict::Undecided { runs: Some(r) } => write!(
                f,
                "undecided: the intervals overlap (about {r} runs a side would decide a \
                 difference this size)"
            ),
            Verdict::Undecided { runs: None } => write!(
                f,
                "undecided: the intervals overlap, and the difference is too small against \
                 the spread for more runs to decide it"
            ),
            Verdict::TooFew { have } => write!(
                f,
                "undecided: {have} runs a side, fewer than the {MIN_RUNS} a 95% interval needs"
            ),
            Verdict::Missing => write!(f, "undecided: not measured"),
        }
    }
}

fn finite(e: &Estimate) -> bool {
    e.value.is_finite() && e.lo.is_finite() && e.hi.is_finite()
}

/// The runs a side that would shrink a half-width `h` measured at `n` runs below the gap
/// `d` (the module doc's `n (h/d)^2`), at least one more than `n`.
fn runs_to_decide(n: usize, h: f64, d: f64) -> Option<usize> {
    if d.is_nan() || d <= 0.0 || !h.is_finite() {
        return None;
    }
    let r = (n as f64 * (h / d).powi(2)).ceil();
    (r <= MAX_RUNS_SUGGESTED as f64).then(|| (r as usize).max(n + 1))
}

/// `e` against a fixed `reference`: below or above where its whole interval is.
pub fn against(e: &Estimate, reference: f64) -> Verdict {
    if !finite(e) || e.n == 0 {
        return Verdict::Missing;
    }
    // The reference as an estimate without spread: the half of `e`'s interval that faces it.
    compare(e, &Estimate::point(reference), e.n)
}

/// `a` against `b`, two independent estimates (two kernels, a feature off and on): `Below`
/// where `a`'s interval lies wholly below `b`'s.
pub fn between(a: &Estimate, b: &Estimate) -> Verdict {
    if !finite(a) || !finite(b) || a.n == 0 || b.n == 0 {
        return Verdict::Missing;
    }
    compare(a, b, a.n.min(b.n))
}

/// [`between`] of `a` and `b` once they are known, with `n` runs a side.
fn compare(a: &Estimate, b: &Estimate, n: usize) -> Verdict {
    if n < MIN_RUNS {
        return Verdict::TooFew { have: n };
    }
    if a.hi < b.lo {
        Verdict::Below
    } else if a.lo > b.hi {
        Verdict::Above
    } else {
        // The two halves that face each other.
        let h = if a.value <= b.value {
            (a.hi - a.value) + (b.value - b.lo)
        } else {
            (a.value - a.lo) + (b.hi - b.value)
        };
        Verdict::Undecided {
            runs: runs_to_decide(n, h, (a.value - b.value).abs()),
        }
    }
}

/// An estimate as the pages print it: `value [lo, hi]`, with `digits` decimals.
pub fn show(e: &Estimate, digits: usize) -> String {
    if !finite(e) {
        return "-".into();
    }
    format!("{:.d$} [{:.d$}, {:.d$}]", e.value, e.lo, e.hi, d = digits)
}

/// Comparisons against a claim's direction, counted by where they went: with it, against
/// it, or undecided (which counts toward neither).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub with: usize,
    pub against: usize,
    pub undecided: usize,
}

impl Tally {
    /// Counts `v`, a comparison the claim expects `Above` (`claim_above`) or `Below`, and
    /// words it: `with` or `against` where decided, otherwise why not.
    pub fn count(&mut self, v: Verdict, claim_above: bool, with: &str, against: &str) -> String {
        match v {
            Verdict::Above | Verdict::Below if (v == Verdict::Above) == claim_above => {
                self.with += 1;
                with.to_string()
            }
            Verdict::Above | Verdict::Below => {
                self.against += 1;
                against.to_string()
            }
            u => {
                self.undecided += 1;
                u.to_string()
            }
        }
    }

    /// Every comparison counted.
    pub fn total(self) -> usize {
        self.with + self.against + self.undecided
    }
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.with += o.with;
        self.against += o.against;
        self.undecided += o.undecided;
    }
}

/// Every run held to a bound, not the median: a bound that a kernel must keep in each run
/// (a lag clamp) is judged by its worst run, and any run over it is named.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Held {
    /// Every one of `runs` runs stayed within the bound; `worst` is the largest value.
    Every { runs: usize, worst: f64 },
    /// `over` of `runs` runs exceeded it; `worst` is the largest value.
    Over {
        over: usize,
        runs: usize,
        worst: f64,
    },
    /// No run to judge (or a value or bound that is not a number).
    Missing,
}

/// Holds each of `values` (one a run) to `bound`: a value above it is over.
pub fn held(values: &[f64], bound: f64) -> Held {
    if values.is_empty() || !bound.is_finite() || values.iter().any(|v| !v.is_finite()) {
        return Held::Missing;
    }
    let worst = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let over = values.iter().filter(|&&v| v > bound).count();
    let runs = values.len();
    if over == 0 {
        Held::Every { runs, worst }
    } else {
        Held::Over { over, runs, worst }
    }
}

impl fmt::Display for Held {
    /// The verdict in words; the caller prints the worst value in its unit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Held::Every { runs, .. } => write!(f, "every one of {runs} runs within it"),
            Held::Over { over, runs, .. } => write!(f, "**{over} of {runs} runs over it**"),
            Held::Missing => write!(f, "not measured"),
        }
    }
}

/// Asserts that `text` (a report's sentence, table or page) contains `part`, and shows the
/// whole text when it does not.
#[cfg(test)]
#[track_caller]
pub(crate) fn has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

#[cfg(test)]
pub(crate) fn est(value: f64, lo: f64, hi: f64, n: usize) -> Estimate {
    Estimate {
        value,
        lo,
        hi,
        coverage: 0.95,
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn against_follows_the_interval() {
        assert_eq!(against(&est(0.9, 0.85, 0.95, 12), 1.0), Verdict::Below);
        assert_eq!(against(&est(1.1, 1.05, 1.15, 12), 1.0), Verdict::Above);
        // The same numbers flipped about the reference flip the verdict.
        assert_eq!(against(&est(1.1, 1.05, 1.15, 12), 1.2), Verdict::Below);
        let u = against(&est(0.98, 0.95, 1.01, 12), 1.0);
        // Half-width 0.03 against a gap of 0.02: 12 * 2.25 = 27 runs.
        assert_eq!(u, Verdict::Undecided { runs: Some(27) });
        assert_eq!(
            against(&est(1.0, 0.9, 1.1, 12), 1.0),
            Verdict::Undecided { runs: None }
        );
        assert_eq!(
            against(&est(0.9, 0.85, 0.95, 5), 1.0),
            Verdict::TooFew { have: 5 }
        );
        assert_eq!(against(&est(f64::NAN, 0.0, 1.0, 12), 1.0), Verdict::Missing);
    }

    #[test]
    fn between_follows_the_overlap() {
        let a = est(10.0, 9.0, 11.0, 6);
        let b = est(13.0, 12.0, 14.0, 6);
        assert_eq!(between(&a, &b), Verdict::Below);
        assert_eq!(between(&b, &a), Verdict::Above);
        let c = est(11.5, 10.5, 12.5, 6);
        // Facing halves 1 + 1 against a gap of 1.5: 6 * (2/1.5)^2 = 10.67, so 11.
        assert_eq!(between(&a, &c), Verdict::Undecided { runs: Some(11) });
        assert_eq!(between(&c, &a), Verdict::Undecided { runs: Some(11) });
        // A gap far inside the spread: no number of runs.
        let d = est(10.0001, 0.0, 20.0, 6);
        assert_eq!(between(&a, &d), Verdict::Undecided { runs: None });
        assert_eq!(
            between(&a, &est(13.0, 12.0, 14.0, 3)),
            Verdict::TooFew { have: 3 }
        );
    }

    #[test]
    fn held_judges_every_run() {
        let said = |values: &[f64]| {
            let h = held(values, 2800.0);
            format!("{h:?}: {h}")
        };
        assert_eq!(
            said(&[2500.0, 2700.0, 2600.0]),
            "Every { runs: 3, worst: 2700.0 }: every one of 3 runs within it"
        );
        // One run over the bound flips it, whatever the median.
        assert_eq!(
            said(&[2500.0, 3318.0, 2600.0]),
            "Over { over: 1, runs: 3, worst: 3318.0 }: **1 of 3 runs over it**"
        );
        // At the bound is within it.
        assert!(matches!(held(&[2800.0], 2800.0), Held::Every { .. }));
        assert_eq!(held(&[], 2800.0), Held::Missing);
        assert_eq!(held(&[1.0], f64::NAN), Held::Missing);
    }

    #[test]
    fn words() {
        assert_eq!(Verdict::Below.say("faster", "slower"), "faster");
        assert_eq!(Verdict::Above.say("faster", "slower"), "slower");
        assert!(Verdict::Undecided { runs: Some(40) }
            .say("faster", "slower")
            .contains("about 40 runs a side"));
        assert!(Verdict::TooFew { have: 2 }
            .say("a", "b")
            .starts_with("undecided: 2 runs"));
        assert_eq!(
            show(&est(1.0634, 1.0561, 1.0931, 12), 3),
            "1.063 [1.056, 1.093]"
        );
    }

    #[test]
    fn a_tally_counts_each_side() {
        let mut t = Tally::default();
        assert_eq!(t.count(Verdict::Above, true, "with", "against"), "with");
        assert_eq!(t.count(Verdict::Below, true, "with", "against"), "against");
        assert_eq!(t.count(Verdict::Below, false, "with", "against"), "with");
        assert_eq!(
            t.count(Verdict::Missing, true, "with", "against"),
            "undecided: not measured"
        );
        let mut all = Tally::default();
        all += t;
        all += t;
        assert_eq!((all.with, all.against, all.undecided), (4, 2, 2));
        assert_eq!(all.total(), 8);
    }
}
