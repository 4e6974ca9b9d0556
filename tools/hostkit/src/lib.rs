//! What the host tools (`eevdf-vm`, `eevdf-lab`, `eevdf-sim`) share, so that each exists once:
//!
//! - [`paths`]: the repository and the cache directory, found the way `tools/lib.sh` finds
//!   them, so that the Rust tools and the shell scripts agree on where builds live;
//! - [`raster`] (feature `raster`): an RGB canvas with the 8×8 bitmap font of `font8x8` and a
//!   PNG writer. No system fonts and nothing fetched at build or run time, so a plot is the
//!   same bytes on every machine.
//!
//! The guest programs (`eevdf-guest`) do not use it: they run inside the VM.

#![deny(missing_docs)]

pub mod paths;
#[cfg(feature = "raster")]
pub mod raster;
