// SPDX-License-Identifier: GPL-2.0

//! Scheduler features as a value.
//!
//! The core never reads global state: every operation takes a [`Config`]
//! whose [`Features`] field says which flags are on, so a test can flip any flag between
//! two operations. The flags, their defaults and their docs come from the one table in
//! `features/table.rs` (macro `eevdf_feature_table`).

use core::fmt;

macro_rules! gen_features {
    ($( $(#[doc = $doc:expr])* ($name:ident, $bit:literal, $default:literal) ),* $(,)?) => {
        impl Features {
            $(
                $(#[doc = $doc])*
                pub const $name: Features = Features(1 << $bit);
            )*

            /// Every flag of the table.
            pub const ALL: Features = Features(0 $( | 1 << $bit )*);

            /// The Linux 6.12 defaults (plus `ELIGIBLE` on, `BIAS_ELIGIBLE` off).
            pub const DEFAULT: Features = Features(0 $( | if $default { 1 << $bit } else { 0 } )*);

            /// Every flag of the table, in table order, with its name, default and doc.
            pub const TABLE: &'static [FeatureInfo] = &[
                $( FeatureInfo {
                    name: stringify!($name),
                    flag: Features(1 << $bit),
                    default: $default,
                    doc: concat!($($doc),*),
                }, )*
            ];
        }
    };
}

/// Static description of one feature flag (a row of the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureInfo {
    /// The name as written in debugfs (`PLACE_LAG`); `NO_PLACE_LAG` clears it.
    pub name: &'static str,
    /// The flag's bit.
    pub flag: Features,
    /// The default state.
    pub default: bool,
    /// The one-line reason from the table.
    pub doc: &'static str,
}

/// A set of scheduler feature flags (a bitset, `Copy`).
///
/// # Examples
///
/// ```
/// use sched_eevdf::Features;
/// let f = Features::DEFAULT;
/// assert!(f.contains(Features::ELIGIBLE) && !f.contains(Features::BIAS_ELIGIBLE));
/// let f = f.parse("NO_ELIGIBLE").unwrap();
/// assert!(!f.contains(Features::ELIGIBLE));
/// // Unknown names are an error and change nothing.
/// assert!(f.parse("NO_SUCH_THING").is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features(u64);

eevdf_feature_table!(gen_features);

/// Error of [`Features::parse`]: the name is not in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownFeature;

impl fmt::Display for UnknownFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown scheduler feature")
    }
}

impl Features {
    /// No flag set.
    pub const EMPTY: Features = Features(0);

    /// The raw bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The flags of the table among `bits`, laid out as the table's bits (the kernel's
    /// `__SCHED_FEAT_*` numbers); other bits are dropped.
    ///
    /// ```
    /// use sched_eevdf::Features;
    /// assert!(Features::from_bits_truncate(u64::MAX) == Features::ALL);
    /// // Bit 13 is the kernel's CACHE_HOT_BUDDY, which the core does not read.
    /// assert!(Features::from_bits_truncate(1 << 13) == Features::EMPTY);
    /// assert!(Features::from_bits_truncate(1 << 5) == Features::ELIGIBLE);
    /// ```
    #[inline]
    pub const fn from_bits_truncate(bits: u64) -> Features {
        Features(bits & Features::ALL.0)
    }

    /// Whether every flag of `other` is set in `self`.
    pub const fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is set in `self`.
    pub const fn intersects(self, other: Features) -> bool {
        self.0 & other.0 != 0
    }

    /// `self` with the flags of `other` set (`on`) or cleared (`!on`).
    #[must_use]
    pub const fn with(self, other: Features, on: bool) -> Features {
        if on {
            Features(self.0 | other.0)
        } else {
            Features(self.0 & !other.0)
        }
    }

    /// Looks a flag up by its table name (`"PLACE_LAG"`).
    pub fn by_name(name: &str) -> Option<Features> {
        Self::TABLE
            .iter()
            .find(|info| info.name == name)
            .map(|info| info.flag)
    }

    /// Applies one debugfs-style write: `"NAME"` sets a flag, `"NO_NAME"` clears it.
    /// Surrounding ASCII whitespace (the newline of `echo`) is ignored.
    ///
    /// Strict: an unknown name is an error and the returned value is not produced, so
    /// nothing changes.
    pub fn parse(self, word: &str) -> Result<Features, UnknownFeature> {
        let word = word.trim_ascii();
        if let Some(flag) = Self::by_name(word) {
            return Ok(self.with(flag, true));
        }
        match word.strip_prefix("NO_").and_then(Self::by_name) {
            Some(flag) => Ok(self.with(flag, false)),
            None => Err(UnknownFeature),
        }
    }
}

impl Default for Features {
    fn default() -> Self {
        Features::DEFAULT
    }
}

/// Prints the debugfs view: every name, prefixed with `NO_` when cleared.
impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for info in Features::TABLE {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            if !self.contains(info.flag) {
                f.write_str("NO_")?;
            }
            f.write_str(info.name)?;
        }
        Ok(())
    }
}

/// Per-call configuration: features and the tunables the EEVDF core reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Feature flags.
    pub features: Features,
    /// `sysctl_sched_base_slice` in ns: the request of entities without a custom slice.
    pub base_slice_ns: u64,
    /// `TICK_NSEC`: the floor of the lag clamp.
    pub tick_nsec: u64,
    /// fair.c's `normalized_sysctl_sched_base_slice` in ns: the base slice before the
    /// kernel scales it by the number of CPUs. RUN_TO_PARITY_MIN_SLICE with
    /// NO_RUN_TO_PARITY protects current for at most this long, and the `lag_error`
    /// bound without RUN_TO_PARITY reads it. Nothing reads it while RUN_TO_PARITY is on.
    pub normalized_base_slice_ns: u64,
}

impl Config {
    /// 6.12 defaults on one CPU: base slice 0.7 ms (`normalized_sysctl_sched_base_slice`;
    /// the kernel multiplies it by `1 + ilog2(min(ncpus, 8))`), HZ=250 tick (4 ms).
    pub const DEFAULT: Config = Config {
        features: Features::DEFAULT,
        base_slice_ns: 700_000,
        tick_nsec: 4_000_000,
        normalized_base_slice_ns: 700_000,
    };

    /// Whether `f` is on.
    #[inline]
    pub const fn feat(&self, f: Features) -> bool {
        self.features.contains(f)
    }
}

/// The part of a [`Config`] that the decisions read: the pick, the eligibility test, the
/// wakeup and the dequeue's delay take `impl Into<Features>`, so that a caller passes a
/// whole `Config` or, as the kernel's hot entry points do, the feature word alone without
/// reading the tunables (a volatile load each, which the compiler must keep).
impl From<Config> for Features {
    #[inline(always)]
    fn from(cfg: Config) -> Features {
        cfg.features
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}
