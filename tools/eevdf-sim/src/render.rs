//! Timeline pictures: one display list, two views (SVG text and a PNG raster).
//!
//! [`timeline`] turns a recorded window of a run into a [`Picture`], a list of rectangles,
//! lines and text in pixel coordinates. [`Picture::to_svg`] writes it as SVG;
//! [`Picture::to_png`] rasterises the same list on [`hostkit::raster::Canvas`] with its 8×8
//! bitmap font (`font8x8`), so the PNG needs no font files and looks the same on every
//! machine.

use std::fmt::Write as _;

use anyhow::Result;
use hostkit::raster::Canvas;

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    fn rgb(self) -> [u8; 3] {
        [self.0, self.1, self.2]
    }
}

/// One drawing primitive, in pixels; the origin is the top left corner.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A filled rectangle.
    Rect {
        /// Left edge.
        x: f64,
        /// Top edge.
        y: f64,
        /// Width.
        w: f64,
        /// Height.
        h: f64,
        /// Fill.
        fill: Rgb,
    },
    /// A one-pixel line.
    Line {
        /// Start x.
        x1: f64,
        /// Start y.
        y1: f64,
        /// End x.
        x2: f64,
        /// End y.
        y2: f64,
        /// Colour.
        stroke: Rgb,
    },
    /// Text, left-aligned, `x`/`y` the top left corner of the first character cell.
    Text {
        /// Left edge.
        x: f64,
        /// Top edge.
        y: f64,
        /// Pixel scale of the 8×8 font (1 = 8 px cells).
        scale: u32,
        /// The text (ASCII; other characters draw as `?`).
        text: String,
        /// Colour.
        fill: Rgb,
    },
}

/// A picture: a size and a display list, painted in order.
#[derive(Clone, Debug)]
pub struct Picture {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Background colour.
    pub background: Rgb,
    /// The shapes, painted in order.
    pub shapes: Vec<Shape>,
}

/// One run of one task on the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Task index.
    pub task: usize,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// A wakeup: the task became runnable at `at_ns` and got the CPU at `ran_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wakeup {
    /// Task index.
    pub task: usize,
    /// Wakeup (timer expiry), ns.
    pub at_ns: u64,
    /// First run after it, ns.
    pub ran_ns: u64,
}

/// What [`timeline`] draws.
#[derive(Clone, Debug, Default)]
pub struct TimelineData {
    /// Title line.
    pub title: String,
    /// Lines of text printed under the title (feature set, stats).
    pub notes: Vec<String>,
    /// Task names, one lane each.
    pub lanes: Vec<String>,
    /// Window start, ns.
    pub from_ns: u64,
    /// Window end, ns.
    pub to_ns: u64,
    /// CPU segments inside the window.
    pub segments: Vec<Segment>,
    /// Wakeups inside the window.
    pub wakeups: Vec<Wakeup>,
}

const PALETTE: [Rgb; 10] = [
    Rgb(0x1f, 0x77, 0xb4),
    Rgb(0xff, 0x7f, 0x0e),
    Rgb(0x2c, 0xa0, 0x2c),
    Rgb(0xd6, 0x27, 0x28),
    Rgb(0x94, 0x67, 0xbd),
    Rgb(0x8c, 0x56, 0x4b),
    Rgb(0xe3, 0x77, 0xc2),
    Rgb(0x7f, 0x7f, 0x7f),
    Rgb(0xbc, 0xbd, 0x22),
    Rgb(0x17, 0xbe, 0xcf),
];

const BLACK: Rgb = Rgb(0, 0, 0);
const GREY: Rgb = Rgb(0xcc, 0xcc, 0xcc);
const WAIT: Rgb = Rgb(0xf4, 0xb4, 0xb4);

/// Draws a Gantt-style timeline: one lane per task; a coloured bar while the task runs; a
/// pale red bar from each wakeup to the moment the task got the CPU (its wakeup latency),
/// with a black tick at the wakeup; a time axis in milliseconds.
pub fn timeline(d: &TimelineData) -> Picture {
    let left = 150.0;
    let right = 20.0;
    let plot_w = 1000.0;
    let lane_h = 18.0;
    let top = 24.0 + 14.0 * d.notes.len() as f64 + 10.0;
    let width = (left + plot_w + right) as u32;
    let height = (top + lane_h * d.lanes.len() as f64 + 40.0) as u32;
    let span = (d.to_ns - d.from_ns).max(1) as f64;
    let x_of = |t: u64| left + (t.saturating_sub(d.from_ns)) as f64 / span * plot_w;

    let mut shapes = Vec::new();
    shapes.push(Shape::Text {
        x: 8.0,
        y: 6.0,
        scale: 2,
        text: d.title.clone(),
        fill: BLACK,
    });
    for (i, n) in d.notes.iter().enumerate() {
        shapes.push(Shape::Text {
            x: 8.0,
            y: 28.0 + 14.0 * i as f64,
            scale: 1,
            text: n.clone(),
            fill: BLACK,
        });
    }
    for (i, name) in d.lanes.iter().enumerate() {
        let y = top + lane_h * i as f64;
        if i % 2 == 0 {
            shapes.push(Shape::Rect {
                x: left,
                y,
                w: plot_w,
                h: lane_h,
                fill: Rgb(0xf6, 0xf6, 0xf6),
            });
        }
        let label: String = name.chars().take(17).collect();
        shapes.push(Shape::Text {
            x: 8.0,
            y: y + 5.0,
            scale: 1,
            text: label,
            fill: BLACK,
        });
    }
    for w in &d.wakeups {
        let y = top + lane_h * w.task as f64;
        let (x1, x2) = (x_of(w.at_ns), x_of(w.ran_ns.min(d.to_ns)));
        shapes.push(Shape::Rect {
            x: x1,
            y: y + 5.0,
            w: (x2 - x1).max(0.0),
            h: lane_h - 10.0,
            fill: WAIT,
        });
    }
    for s in &d.segments {
        let y = top + lane_h * s.task as f64;
        let (x1, x2) = (x_of(s.start_ns), x_of(s.end_ns));
        shapes.push(Shape::Rect {
            x: x1,
            y: y + 2.0,
            w: (x2 - x1).max(0.6),
            h: lane_h - 4.0,
            fill: PALETTE[s.task % PALETTE.len()],
        });
    }
    for w in &d.wakeups {
        let y = top + lane_h * w.task as f64;
        let x = x_of(w.at_ns);
        shapes.push(Shape::Line {
            x1: x,
            y1: y + 1.0,
            x2: x,
            y2: y + lane_h - 1.0,
            stroke: BLACK,
        });
    }
    // Axis with about ten labelled ticks on a 1-2-5 grid.
    let axis_y = top + lane_h * d.lanes.len() as f64 + 4.0;
    shapes.push(Shape::Line {
        x1: left,
        y1: axis_y,
        x2: left + plot_w,
        y2: axis_y,
        stroke: BLACK,
    });
    let step = nice_step(span / 10.0);
    let mut t = (d.from_ns as f64 / step).ceil() * step;
    while t <= d.to_ns as f64 + 0.5 {
        let x = x_of(t as u64);
        shapes.push(Shape::Line {
            x1: x,
            y1: top,
            x2: x,
            y2: axis_y + 4.0,
            stroke: GREY,
        });
        shapes.push(Shape::Text {
            x: x - 12.0,
            y: axis_y + 8.0,
            scale: 1,
            text: fmt_ms(t),
            fill: BLACK,
        });
        t += step;
    }
    shapes.push(Shape::Text {
        x: left + plot_w - 70.0,
        y: axis_y + 22.0,
        scale: 1,
        text: "time (ms)".into(),
        fill: BLACK,
    });
    Picture {
        width,
        height,
        background: Rgb(255, 255, 255),
        shapes,
    }
}

fn nice_step(raw_ns: f64) -> f64 {
    let mag = 10f64.powf(raw_ns.max(1.0).log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw_ns {
            return m * mag;
        }
    }
    10.0 * mag
}

fn fmt_ms(t_ns: f64) -> String {
    let ms = t_ns / 1e6;
    if (ms - ms.round()).abs() < 1e-9 {
        format!("{}", ms.round() as i64)
    } else {
        let s = format!("{ms:.3}");
        s.trim_end_matches('0').to_string()
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Picture {
    /// The picture as an SVG document.
    pub fn to_svg(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">"#,
            w = self.width,
            h = self.height
        );
        let _ = writeln!(
            s,
            r#"<rect width="100%" height="100%" fill="{}"/>"#,
            self.background.hex()
        );
        for sh in &self.shapes {
            match sh {
                Shape::Rect { x, y, w, h, fill } => {
                    let _ = writeln!(
                        s,
                        r#"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{}"/>"#,
                        fill.hex()
                    );
                }
                Shape::Line {
                    x1,
                    y1,
                    x2,
                    y2,
                    stroke,
                } => {
                    let _ = writeln!(
                        s,
                        r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="{}" stroke-width="1"/>"#,
                        stroke.hex()
                    );
                }
                Shape::Text {
                    x,
                    y,
                    scale,
                    text,
                    fill,
                } => {
                    let size = 10 * scale;
                    let _ = writeln!(
                        s,
                        r#"<text x="{x:.2}" y="{:.2}" font-family="monospace" font-size="{size}" fill="{}">{}</text>"#,
                        y + f64::from(8 * scale),
                        fill.hex(),
                        esc(text)
                    );
                }
            }
        }
        s.push_str("</svg>\n");
        s
    }

    /// Rasterises the picture on a [`Canvas`]: rectangles cover every pixel they touch, lines
    /// are one pixel wide, text is the 8×8 font at its scale from the rounded position.
    fn raster(&self) -> Canvas {
        let mut c = Canvas::new(self.width, self.height, self.background.rgb());
        for sh in &self.shapes {
            match sh {
                Shape::Rect {
                    x,
                    y,
                    w: rw,
                    h: rh,
                    fill,
                } => {
                    let (x0, y0) = (x.floor() as i64, y.floor() as i64);
                    let x1 = ((x + rw).ceil() as i64).max(x0 + 1);
                    let y1 = ((y + rh).ceil() as i64).max(y0 + 1);
                    c.rect(x0, y0, x1 - 1, y1 - 1, fill.rgb());
                }
                Shape::Line {
                    x1,
                    y1,
                    x2,
                    y2,
                    stroke,
                } => c.line((*x1, *y1), (*x2, *y2), stroke.rgb(), 1, 0),
                Shape::Text {
                    x,
                    y,
                    scale,
                    text,
                    fill,
                } => c.text(
                    x.round() as i64,
                    y.round() as i64,
                    text,
                    fill.rgb(),
                    i64::from(*scale),
                ),
            }
        }
        c
    }

    /// Rasterises the picture to RGB pixels, row-major.
    pub fn to_rgb(&self) -> Vec<u8> {
        self.raster().into_rgb()
    }

    /// The picture as PNG bytes.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        self.raster().to_png()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TimelineData {
        TimelineData {
            title: "t".into(),
            notes: vec!["a note".into()],
            lanes: vec!["A".into(), "B".into()],
            from_ns: 0,
            to_ns: 10_000_000,
            segments: vec![
                Segment {
                    task: 0,
                    start_ns: 0,
                    end_ns: 4_000_000,
                },
                Segment {
                    task: 1,
                    start_ns: 4_000_000,
                    end_ns: 10_000_000,
                },
            ],
            wakeups: vec![Wakeup {
                task: 1,
                at_ns: 1_000_000,
                ran_ns: 4_000_000,
            }],
        }
    }

    #[test]
    fn svg_and_png_come_from_one_display_list() {
        let p = timeline(&sample());
        let svg = p.to_svg();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        let rects = p
            .shapes
            .iter()
            .filter(|s| matches!(s, Shape::Rect { .. }))
            .count();
        // One <rect> per Rect shape plus the background.
        assert_eq!(svg.matches("<rect").count(), rects + 1);
        let png = p.to_png().unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let rgb = p.to_rgb();
        // The first task's bar colour appears in the raster.
        let c = PALETTE[0];
        assert!(rgb.chunks_exact(3).any(|q| q == [c.0, c.1, c.2]));
        // The wait bar of B's wakeup too.
        assert!(rgb.chunks_exact(3).any(|q| q == [WAIT.0, WAIT.1, WAIT.2]));
    }

    #[test]
    fn steps_are_1_2_5() {
        assert_eq!(nice_step(0.9e6), 1e6);
        assert_eq!(nice_step(1.5e6), 2e6);
        assert_eq!(nice_step(3e6), 5e6);
        assert_eq!(fmt_ms(2e6), "2");
        assert_eq!(fmt_ms(2.5e6), "2.5");
    }
}
