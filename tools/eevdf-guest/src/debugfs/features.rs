//! `/sys/kernel/debug/sched/features` (stock 6.12): the scheduler's feature flags, one line
//! of names with `NO_X` for a flag that is off. `eevdfctl features` reads and renders it and
//! checks the names it is asked to set or clear against it.

use super::{err, serialize_pairs, ParseError};
use serde::{Serialize, Serializer};

/// One scheduler feature flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feature {
    pub name: String,
    pub enabled: bool,
}

/// `/sys/kernel/debug/sched/features`, in the kernel's order (features.h).
///
/// Serialises as a JSON object `{NAME: bool, ...}` in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features(pub Vec<Feature>);

impl Features {
    /// Parse the file: exactly one line of space-separated names, `NO_X` meaning X is off
    /// (debug.c's `sched_feat_show()` ends it with a space, which is fine).
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut lines = s.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((i, line)) = lines.next() else {
            return err(1, "no features (empty file)");
        };
        if let Some((j, _)) = lines.next() {
            return err(j + 1, "more than one line (the features file is one line)");
        }
        let mut out: Vec<Feature> = Vec::new();
        for word in line.split_ascii_whitespace() {
            let (name, enabled) = match word.strip_prefix("NO_") {
                Some(n) => (n, false),
                None => (word, true),
            };
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            {
                return err(i + 1, format!("'{word}' is not a feature name"));
            }
            if out.iter().any(|f| f.name == name) {
                return err(i + 1, format!("{name} is listed twice"));
            }
            out.push(Feature {
                name: name.to_string(),
                enabled,
            });
        }
        Ok(Features(out))
    }

    /// Whether `name` is on; `None` when there is no such feature.
    pub fn get(&self, name: &str) -> Option<bool> {
        self.0.iter().find(|f| f.name == name).map(|f| f.enabled)
    }

    /// The names in `names` that are not features, in order.
    pub fn unknown<'a>(&self, names: &'a [String]) -> Vec<&'a str> {
        names
            .iter()
            .filter(|n| self.get(n).is_none())
            .map(String::as_str)
            .collect()
    }

    /// One line per feature: `NAME on` or `NAME off`.
    pub fn render(&self) -> String {
        self.0
            .iter()
            .map(|f| format!("{} {}\n", f.name, on_off(f.enabled)))
            .collect()
    }
}

/// `on` or `off`.
pub fn on_off(enabled: bool) -> &'static str {
    if enabled {
        "on"
    } else {
        "off"
    }
}

impl Serialize for Features {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_pairs(self.0.iter().map(|f| (&f.name, f.enabled)), s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_parse_render_and_reject() {
        let f = Features::parse("PLACE_LAG NO_RUN_TO_PARITY ELIGIBLE NO_BIAS_ELIGIBLE \n").unwrap();
        assert_eq!(f.get("PLACE_LAG"), Some(true));
        assert_eq!(f.get("RUN_TO_PARITY"), Some(false));
        assert_eq!(f.get("NO_RUN_TO_PARITY"), None);
        assert_eq!(
            f.render(),
            "PLACE_LAG on\nRUN_TO_PARITY off\nELIGIBLE on\nBIAS_ELIGIBLE off\n"
        );
        let names = ["ELIGIBLE".to_string(), "NOPE".into(), "NO_ELIGIBLE".into()];
        assert_eq!(f.unknown(&names), ["NOPE", "NO_ELIGIBLE"]);
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"PLACE_LAG":true,"RUN_TO_PARITY":false,"ELIGIBLE":true,"BIAS_ELIGIBLE":false}"#
        );

        assert_eq!(Features::parse("").unwrap_err().line, 1);
        let e = Features::parse("A B\nC\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(Features::parse("A NO_ B")
            .unwrap_err()
            .msg
            .contains("'NO_'"));
        assert!(Features::parse("A lower").is_err());
        assert!(Features::parse("A NO_A").unwrap_err().msg.contains("twice"));
    }
}
