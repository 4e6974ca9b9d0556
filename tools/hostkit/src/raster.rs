//! A small RGB canvas: pixels, filled rectangles, straight lines and text in the 8×8 bitmap
//! font of `font8x8`, written out as an 8-bit RGB PNG.
//!
//! Coordinates are pixels from the top left corner, as `i64` so that callers can draw
//! partly outside the canvas: whatever falls outside is clipped, never a panic.

use anyhow::{Context, Result};
use std::path::Path;

/// An sRGB colour: red, green, blue.
pub type Rgb = [u8; 3];

/// An RGB image in memory.
///
/// # Invariants
///
/// `px` holds `w * h` pixels of three bytes each, row-major.
pub struct Canvas {
    /// Width in pixels.
    pub w: u32,
    /// Height in pixels.
    pub h: u32,
    px: Vec<u8>,
}

impl Canvas {
    /// A `w` × `h` canvas filled with `background`.
    pub fn new(w: u32, h: u32, background: Rgb) -> Canvas {
        // INVARIANT: w * h pixels of three bytes.
        Canvas {
            w,
            h,
            px: background.repeat(w as usize * h as usize),
        }
    }

    /// Paints one pixel; a pixel outside the canvas is dropped.
    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as u32) < self.w && (y as u32) < self.h {
            let i = ((y as u32 * self.w + x as u32) * 3) as usize;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    /// The colour of the pixel at (`x`, `y`), which must be inside the canvas.
    pub fn get(&self, x: u32, y: u32) -> Rgb {
        let i = ((y * self.w + x) * 3) as usize;
        [self.px[i], self.px[i + 1], self.px[i + 2]]
    }

    /// Fills the rectangle with corners (`x0`, `y0`) and (`x1`, `y1`), both included, in
    /// either order.
    pub fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        for y in y0.min(y1)..=y0.max(y1) {
            for x in x0.min(x1)..=x0.max(x1) {
                self.set(x, y, c);
            }
        }
    }

    /// A line `width` pixels thick; `dash` > 0 draws dashes of that many pixels.
    ///
    /// It steps once per pixel along the longer axis (both ends included) and paints the
    /// rounded position, a `width`-pixel square centred on it.
    pub fn line(&mut self, p0: (f64, f64), p1: (f64, f64), c: Rgb, width: i64, dash: u32) {
        let steps = ((p1.0 - p0.0).abs().max((p1.1 - p0.1).abs()))
            .ceil()
            .max(1.0) as u32;
        for i in 0..=steps {
            if dash > 0 && (i / dash) % 2 == 1 {
                continue;
            }
            let t = i as f64 / steps as f64;
            let x = (p0.0 + (p1.0 - p0.0) * t).round() as i64;
            let y = (p0.1 + (p1.1 - p0.1) * t).round() as i64;
            let r = width / 2;
            self.rect(x - r, y - r, x - r + width - 1, y - r + width - 1, c);
        }
    }

    /// Text with its top-left corner at (x, y), each glyph pixel `scale` pixels wide. A
    /// character outside ASCII draws as `?`.
    pub fn text(&mut self, x: i64, y: i64, s: &str, c: Rgb, scale: i64) {
        for (n, ch) in s.chars().enumerate() {
            let code = if ch.is_ascii() {
                ch as usize
            } else {
                b'?' as usize
            };
            let glyph = font8x8::legacy::BASIC_LEGACY[code];
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) != 0 {
                        let gx = x + (n as i64 * 8 + col) * scale;
                        let gy = y + row as i64 * scale;
                        self.rect(gx, gy, gx + scale - 1, gy + scale - 1, c);
                    }
                }
            }
        }
    }

    /// The width in pixels of `s` drawn by [`Canvas::text`] at `scale`.
    pub fn text_width(s: &str, scale: i64) -> i64 {
        s.chars().count() as i64 * 8 * scale
    }

    /// The pixels, three bytes each, row-major.
    pub fn into_rgb(self) -> Vec<u8> {
        self.px
    }

    /// The canvas as PNG bytes (8-bit RGB, no metadata).
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.w, self.h);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut wr = enc.write_header().context("PNG header")?;
            wr.write_image_data(&self.px).context("PNG data")?;
        }
        Ok(out)
    }

    /// Writes the canvas to `path` as a PNG file.
    pub fn write_png(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_png()?).with_context(|| format!("writing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLACK: Rgb = [0, 0, 0];
    const RED: Rgb = [200, 30, 30];

    #[test]
    fn draws_clips_and_encodes() {
        let mut c = Canvas::new(64, 32, [255; 3]);
        c.text(0, 0, "A", BLACK, 1);
        assert!((0..8).any(|x| (0..8).any(|y| c.get(x, y) == BLACK)));
        let (mut a, mut b) = (Canvas::new(8, 8, [255; 3]), Canvas::new(8, 8, [255; 3]));
        a.text(0, 0, "é", BLACK, 1);
        b.text(0, 0, "?", BLACK, 1);
        assert_eq!(a.into_rgb(), b.into_rgb());
        let mut c = Canvas::new(64, 32, [255; 3]);
        c.line((0.0, 20.0), (63.0, 20.0), RED, 1, 0);
        assert_eq!(c.get(40, 20), RED);
        c.set(-1, 100, RED); // clipped, no panic
        let png = c.to_png().unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(Canvas::text_width("abc", 2), 48);
    }
}
