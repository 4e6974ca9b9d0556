//! The repository and the cache directory, as `tools/lib.sh` defines them:
//!
//! ```sh
//! EEVDF_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
//! EEVDF_CACHE=${EEVDF_CACHE:-$HOME/.cache/sched_eevdf}
//! ```
//!
//! The shell scripts build the kernels under `$EEVDF_CACHE/build/<name>`, and `eevdf-vm` and
//! `eevdf-lab` boot them from there, so both sides must compute the same directory.

use std::path::{Path, PathBuf};

/// An environment variable as a path; unset and empty are the same, as in `${VAR:-default}`.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The repository: `$EEVDF_REPO` when set and not empty, else the checkout this program was
/// built from, with `..` resolved (lib.sh's `cd .. && pwd`; the shell scripts always use
/// their own checkout, the variable is the Rust tools' override).
pub fn repo_root() -> PathBuf {
    env_path("EEVDF_REPO").unwrap_or_else(|| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        p.canonicalize().unwrap_or(p)
    })
}

/// Where the pipeline keeps everything it writes outside the repository (sources, kernel
/// builds, probes, logs): `$EEVDF_CACHE` when set and not empty, else
/// `$HOME/.cache/sched_eevdf`.
pub fn cache_dir() -> PathBuf {
    env_path("EEVDF_CACHE").unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sched_eevdf")
    })
}

/// A variable that tools/lib.sh sets to a literal (`NAME=value`, no expansion), read from
/// the repository's lib.sh: the version pins (`KERNEL_VERSION`, `DEBIAN_CONFIG`) live
/// there alone, and the Rust tools read them instead of repeating them.
pub fn lib_sh_value(root: &Path, name: &str) -> Result<String, String> {
    let path = root.join("tools/lib.sh");
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    lib_sh_value_in(&text, name).ok_or_else(|| {
        format!(
            "{} sets no literal {name}= (the version pins live there)",
            path.display()
        )
    })
}

fn lib_sh_value_in(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.strip_prefix(name)?.strip_prefix('=')?;
        (!v.is_empty() && !v.contains('$') && !v.contains(' ')).then(|| v.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lib_sh_pins_are_read() {
        let text = "# a comment\nKERNEL_VERSION=6.12.117\nKSRC=$EEVDF_CACHE/src\n";
        assert_eq!(
            lib_sh_value_in(text, "KERNEL_VERSION").as_deref(),
            Some("6.12.117")
        );
        assert_eq!(
            lib_sh_value_in(text, "KSRC"),
            None,
            "an expansion is not a literal"
        );
        assert_eq!(
            lib_sh_value_in(text, "KERNEL"),
            None,
            "a prefix is not the name"
        );
        if std::env::var_os("EEVDF_REPO").is_none() {
            let v = lib_sh_value(&repo_root(), "KERNEL_VERSION").unwrap();
            assert!(v.starts_with("6.12."), "{v}");
            assert!(lib_sh_value(&repo_root(), "DEBIAN_CONFIG")
                .unwrap()
                .starts_with("/usr/src/linux-config-"));
        }
    }

    #[test]
    fn repo_root_is_this_checkout() {
        if std::env::var_os("EEVDF_REPO").is_none() {
            let root = repo_root();
            assert!(root.join("tools/lib.sh").is_file(), "{}", root.display());
            assert!(!root.components().any(|c| c.as_os_str() == ".."));
        }
    }
}
