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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_root_is_this_checkout() {
        if std::env::var_os("EEVDF_REPO").is_none() {
            let root = repo_root();
            assert!(root.join("tools/lib.sh").is_file(), "{}", root.display());
            assert!(!root.components().any(|c| c.as_os_str() == ".."));
        }
    }
}
