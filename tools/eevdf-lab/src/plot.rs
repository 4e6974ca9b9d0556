//! The report's PNG plots (latency distributions, Rust/stock ratios), drawn on
//! [`hostkit::raster::Canvas`], the canvas and 8×8 font eevdf-sim draws with too.

use anyhow::Result;
use hostkit::raster::{Canvas, Rgb};
use std::path::Path;

pub const WHITE: Rgb = [255, 255, 255];
pub const BLACK: Rgb = [0, 0, 0];
pub const GREY: Rgb = [200, 200, 200];
pub const RED: Rgb = [200, 30, 30];
/// One colour per series (feature set), in order.
pub const PALETTE: [Rgb; 6] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [148, 103, 189],
    [255, 127, 14],
    [23, 190, 207],
];

/// A plot area inside a canvas with linear axes (callers transform to log themselves).
pub struct Frame {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
    pub xmin: f64,
    pub xmax: f64,
    pub ymin: f64,
    pub ymax: f64,
}

impl Frame {
    /// The frame from pixel `(x0, y0)` to `(x1, y1)`, showing x in `xs` and y in `ys`.
    fn new((x0, y0): (f64, f64), (x1, y1): (f64, f64), xs: (f64, f64), ys: (f64, f64)) -> Frame {
        let ((xmin, xmax), (ymin, ymax)) = (xs, ys);
        Frame {
            x0,
            y0,
            x1,
            y1,
            xmin,
            xmax,
            ymin,
            ymax,
        }
    }

    pub fn px(&self, x: f64, y: f64) -> (f64, f64) {
        let fx = (x - self.xmin) / (self.xmax - self.xmin);
        let fy = (y - self.ymin) / (self.ymax - self.ymin);
        (
            self.x0 + fx * (self.x1 - self.x0),
            self.y1 - fy * (self.y1 - self.y0),
        )
    }

    pub fn border(&self, c: &mut Canvas) {
        let (a, b) = ((self.x0, self.y0), (self.x1, self.y1));
        let corners = [a, (b.0, a.1), b, (a.0, b.1), a];
        for w in corners.windows(2) {
            c.line(w[0], w[1], BLACK, 1, 0);
        }
    }
}

/// `s` in black at the font's own size, from (`x`, `y`).
fn text(c: &mut Canvas, x: i64, y: i64, s: &str) {
    c.text(x, y, s, BLACK, 1);
}

/// A square of `colour` `r` pixels either side of `p`.
fn square(c: &mut Canvas, p: (f64, f64), r: i64, colour: Rgb) {
    let (x, y) = (p.0 as i64, p.1 as i64);
    c.rect(x - r, y - r, x + r, y + r, colour);
}

/// The decades (log10, whole) that span the positive, finite `values`, at least one wide.
/// With no such value (every run of a panel failed) the minimum would be infinite and a
/// loop over the decades would never end: the axis is then 1-10.
fn log_decades(values: &[f64]) -> (f64, f64) {
    let usable = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0);
    let lo = usable
        .clone()
        .reduce(f64::min)
        .map_or(0.0, |min| min.max(0.1).log10().floor());
    let hi = usable.fold(1.0, f64::max).log10().ceil().max(lo + 1.0);
    (lo, hi)
}

/// The page's title at (`x`, 10), at double size when it fits the canvas of width `w` less
/// `x` on either side.
fn title(c: &mut Canvas, w: u32, x: i64, title: &str) {
    let fits = Canvas::text_width(title, 2) <= w as i64 - 2 * x;
    c.text(x, 10, title, BLACK, if fits { 2 } else { 1 });
}

/// A legend in one line from `x` at pixel row `y`: each curve's name behind a square of its
/// colour.
fn legend<'a>(c: &mut Canvas, mut x: i64, y: i64, curves: impl IntoIterator<Item = &'a Curve>) {
    for cv in curves {
        c.rect(x, y, x + 14, y + 10, cv.colour);
        text(c, x + 20, y + 1, &cv.name);
        x += 40 + Canvas::text_width(&cv.name, 1);
    }
}

/// A grid line across frame `f` at its y value `v`, labelled `lbl` left of the frame.
fn y_grid(c: &mut Canvas, f: &Frame, v: f64, lbl: &str) {
    let (_, y) = f.px(f.xmin, v);
    c.line((f.x0, y), (f.x1, y), GREY, 1, 0);
    let x = f.x0 as i64 - 8 - Canvas::text_width(lbl, 1);
    text(c, x, y as i64 - 4, lbl);
}

/// The grid line and label of decade `e` (10^e) on frame `f`'s log y axis.
fn y_decade(c: &mut Canvas, f: &Frame, e: f64) {
    y_grid(c, f, e, &format!("{}", 10f64.powf(e)));
}

/// `lbl` centred under frame `f` at pixel column `x`.
fn label_under(c: &mut Canvas, f: &Frame, x: f64, lbl: &str) {
    let x = x as i64 - Canvas::text_width(lbl, 1) / 2;
    text(c, x, f.y1 as i64 + 6, lbl);
}

/// A grid line down frame `f` at pixel column `x`, labelled `lbl` under the frame.
fn x_grid(c: &mut Canvas, f: &Frame, x: f64, lbl: &str) {
    c.line((x, f.y0), (x, f.y1), GREY, 1, 0);
    label_under(c, f, x, lbl);
}

/// A series: `pts` (pixels) joined by a line, each marked with a small square.
fn polyline(c: &mut Canvas, pts: &[(f64, f64)], colour: Rgb) {
    for w2 in pts.windows(2) {
        c.line(w2[0], w2[1], colour, 2, 0);
    }
    for &p in pts {
        square(c, p, 2, colour);
    }
}

/// One series of a latency-distribution panel: percentile → µs.
pub struct Curve {
    pub name: String,
    pub colour: Rgb,
    pub points: Vec<(f64, f64)>,
}

impl Curve {
    /// The `i`th series of a plot, in the palette's `i`th colour (round again past its end).
    pub fn nth(i: usize, name: String, points: Vec<(f64, f64)>) -> Curve {
        Curve {
            name,
            colour: PALETTE[i % PALETTE.len()],
            points,
        }
    }
}

/// Position of a percentile on the "nines" axis: 0 at p0, 1 at p90, 2 at p99, 3 at p99.9;
/// the maximum goes at 3.5.
pub fn nines(p: f64) -> f64 {
    if p >= 100.0 {
        3.5
    } else {
        -(1.0 - p / 100.0).log10()
    }
}

/// Latency distributions: one panel per title, curves per feature set, log-scale latency
/// against percentile on a "nines" axis, so that the tail the seed cares about is visible.
pub fn latency_panels(title: &str, panels: &[(String, Vec<Curve>)], path: &Path) -> Result<()> {
    let (pw, ph) = (420.0, 360.0);
    // At least two panels wide: the legend and the axes' note share the bottom line.
    let w = (pw * panels.len().max(2) as f64 + 40.0) as u32;
    let mut c = Canvas::new(w, 470, WHITE);
    self::title(&mut c, w, 20, title);
    let all: Vec<f64> = panels
        .iter()
        .flat_map(|(_, cs)| cs.iter().flat_map(|cv| cv.points.iter().map(|p| p.1)))
        .collect();
    let (lo, hi) = log_decades(&all);
    let mut legend: Vec<&Curve> = Vec::new();
    for (i, (ptitle, curves)) in panels.iter().enumerate() {
        let (x0, y1) = (70.0 + i as f64 * pw, 60.0 + ph - 40.0);
        let f = Frame::new((x0, 60.0), (x0 + pw - 80.0, y1), (0.0, 3.5), (lo, hi));
        text(&mut c, f.x0 as i64, 40, ptitle);
        for e in (lo as i64..=hi as i64).map(|e| e as f64) {
            y_decade(&mut c, &f, e);
        }
        for (p, lbl) in [
            (0.0, "p0"),
            (90.0, "p90"),
            (99.0, "p99"),
            (99.9, "p99.9"),
            (100.0, "max"),
        ] {
            x_grid(&mut c, &f, f.px(nines(p), lo).0, lbl);
        }
        f.border(&mut c);
        for cv in curves {
            let pts: Vec<(f64, f64)> = cv
                .points
                .iter()
                .filter(|p| p.1.is_finite() && p.1 > 0.0)
                .map(|&(p, v)| f.px(nines(p), v.log10()))
                .collect();
            polyline(&mut c, &pts, cv.colour);
            if !legend.iter().any(|l| l.name == cv.name) {
                legend.push(cv);
            }
        }
    }
    let axes = "y: wakeup latency (us, log)   x: percentile";
    let x = w as i64 - Canvas::text_width(axes, 1) - 20;
    text(&mut c, x, 441, axes);
    self::legend(&mut c, 70, 440, legend);
    c.write_png(path)
}

/// Curves of (x, y) on linear axes from 0, x ticks at the points' x values, y ticks at
/// "nice" steps; a legend under the frame.
pub fn xy_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    path: &Path,
) -> Result<()> {
    // Wide enough for the legend's one line and the title.
    let legend_w: i64 = curves
        .iter()
        .map(|cv| 40 + Canvas::text_width(&cv.name, 1))
        .sum();
    let w = (legend_w + 100)
        .max(Canvas::text_width(title, 1) + 40)
        .max(640) as u32;
    let h = 420u32;
    let mut c = Canvas::new(w, h, WHITE);
    self::title(&mut c, w, 10, title);
    let pts = || {
        curves
            .iter()
            .flat_map(|cv| cv.points.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite())
    };
    let xmax = pts().map(|p| p.0).fold(1.0, f64::max) * 1.1;
    let ymax_raw = pts().map(|p| p.1).fold(0.0, f64::max).max(1e-9);
    let step = [0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        .into_iter()
        .find(|st| ymax_raw / st <= 8.0)
        .unwrap_or(ymax_raw / 8.0);
    let ymax = (ymax_raw / step).ceil() * step;
    let (x1, y1) = (w as f64 - 30.0, h as f64 - 80.0);
    let f = Frame::new((70.0, 50.0), (x1, y1), (0.0, xmax), (0.0, ymax));
    let mut t = 0.0;
    while t <= ymax + 1e-9 {
        y_grid(&mut c, &f, t, &format!("{t}"));
        t += step;
    }
    let mut xs: Vec<f64> = pts().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in xs {
        let (px, _) = f.px(x, 0.0);
        label_under(&mut c, &f, px, &format!("{x}"));
    }
    f.border(&mut c);
    for cv in curves {
        let mut p: Vec<(f64, f64)> = cv.points.clone();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let px: Vec<(f64, f64)> = p.iter().map(|&(x, y)| f.px(x, y)).collect();
        polyline(&mut c, &px, cv.colour);
    }
    let axes = format!("x: {x_label}   y: {y_label}");
    text(&mut c, 70, h as i64 - 56, &axes);
    legend(&mut c, 70, h as i64 - 30, curves);
    c.write_png(path)
}

/// One quantile-quantile panel: its title and its (percentile, stock µs, rust µs) points.
pub type QqPanel = (String, Vec<(f64, f64, f64)>);

/// Quantile-quantile panels, one a latency cell ([`QqPanel`]): each point is one quantile of
/// the wakeup latency, stock's on x against rust's on y (µs, both log), with the diagonal
/// where the two distributions agree. A point above it: rust is later at that quantile.
pub fn qq_panels(title: &str, panels: &[QqPanel], path: &Path) -> Result<()> {
    let side = 300.0;
    let pw = side + 110.0;
    let w = (pw * panels.len().max(2) as f64 + 40.0) as u32;
    let h = 60 + side as u32 + 70;
    let mut c = Canvas::new(w, h, WHITE);
    self::title(&mut c, w, 20, title);
    let usable = |v: f64| v.is_finite() && v > 0.0;
    for (i, (ptitle, pts)) in panels.iter().enumerate() {
        let vals: Vec<f64> = pts.iter().flat_map(|&(_, s, r)| [s, r]).collect();
        let (lo, hi) = log_decades(&vals);
        let x0 = 70.0 + i as f64 * pw;
        let f = Frame::new((x0, 60.0), (x0 + side, 60.0 + side), (lo, hi), (lo, hi));
        text(&mut c, f.x0 as i64, 40, ptitle);
        for e in (lo as i64..=hi as i64).map(|e| e as f64) {
            y_decade(&mut c, &f, e);
            x_grid(&mut c, &f, f.px(e, e).0, &format!("{}", 10f64.powf(e)));
        }
        c.line(f.px(lo, lo), f.px(hi, hi), RED, 1, 0);
        f.border(&mut c);
        let xy: Vec<(f64, f64)> = pts
            .iter()
            .filter(|&&(_, s, r)| usable(s) && usable(r))
            .map(|&(_, s, r)| f.px(s.log10(), r.log10()))
            .collect();
        polyline(&mut c, &xy, PALETTE[0]);
    }
    let axes = "x: stock's latency quantile (us, log)   y: rust's   red: equal";
    text(&mut c, 70, h as i64 - 20, axes);
    c.write_png(path)
}

/// One row of a ratio plot: label, estimate and interval.
pub struct RatioRow {
    pub label: String,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Rust/stock ratios with their intervals, one row each, with the 1.00 line and the bar's
/// 1.02 line (0.98 for higher-is-better metrics is the same tolerance mirrored).
pub fn ratio_plot(title: &str, rows: &[RatioRow], path: &Path) -> Result<()> {
    let label_w = rows
        .iter()
        .map(|r| Canvas::text_width(&r.label, 1))
        .max()
        .unwrap_or(100)
        + 20;
    let h = 90 + 18 * rows.len().max(1) as u32;
    let w = (label_w + 520) as u32;
    let mut c = Canvas::new(w, h, WHITE);
    self::title(&mut c, w, 10, title);
    let vals: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.value, r.lo, r.hi])
        .filter(|v| v.is_finite())
        .collect();
    // At most 0.5..2: beyond that an interval says "noise", and its end is clipped.
    let xmin = vals.iter().copied().fold(0.95, f64::min).max(0.5);
    let xmax = vals.iter().copied().fold(1.05, f64::max).min(2.0);
    let (x1, y1, ymax) = (w as f64 - 20.0, h as f64 - 30.0, rows.len().max(1) as f64);
    let f = Frame::new((label_w as f64, 40.0), (x1, y1), (xmin, xmax), (0.0, ymax));
    let step = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5]
        .into_iter()
        .find(|st| (xmax - xmin) / st <= 10.0)
        .unwrap_or(0.5);
    let mut t = (xmin / step).ceil() * step;
    while t <= xmax + 1e-9 {
        x_grid(&mut c, &f, f.px(t, 0.0).0, &format!("{t:.2}"));
        t += step;
    }
    for (v, colour, dash) in [(1.0, BLACK, 0), (0.98, RED, 4), (1.02, RED, 4)] {
        let (x, _) = f.px(v, 0.0);
        c.line((x, f.y0), (x, f.y1), colour, 1, dash);
    }
    // The pixel column of `v`, clipped to the axis.
    let at = |v: f64| f.px(v.clamp(xmin, xmax), 0.0).0;
    for (i, r) in rows.iter().enumerate() {
        let y = f.y0 + (i as f64 + 0.5) * (f.y1 - f.y0) / f.ymax;
        text(&mut c, 10, y as i64 - 4, &r.label);
        if r.lo.is_finite() && r.hi.is_finite() {
            let (a, b) = (at(r.lo), at(r.hi));
            c.line((a, y), (b, y), PALETTE[0], 2, 0);
            c.line((a, y - 4.0), (a, y + 4.0), PALETTE[0], 1, 0);
            c.line((b, y - 4.0), (b, y + 4.0), PALETTE[0], 1, 0);
        }
        if r.value.is_finite() {
            square(&mut c, (at(r.value), y), 3, BLACK);
        }
    }
    f.border(&mut c);
    c.write_png(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_write_pngs() {
        let dir = std::env::temp_dir().join(format!("eevdf-lab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rows = [RatioRow {
            label: "x".into(),
            value: 1.0,
            lo: 0.99,
            hi: 1.01,
        }];
        ratio_plot("r", &rows, &dir.join("r.png")).unwrap();
        let points = vec![(0.0, 10.0), (50.0, 100.0), (100.0, 5000.0)];
        let curve = Curve::nth(0, "EEVDF".into(), points);
        latency_panels("l", &[("1x".into(), vec![curve])], &dir.join("l.png")).unwrap();
        let no_points = Curve::nth(0, "EEVDF".into(), vec![(50.0, f64::NAN)]);
        latency_panels("e", &[("1x".into(), vec![no_points])], &dir.join("e.png")).unwrap();
        let qq = vec![
            (50.0, 100.0, 110.0),
            (99.0, 1000.0, 900.0),
            (100.0, f64::NAN, 5.0),
        ];
        let panels: [QqPanel; 2] = [("1x".into(), qq), ("0.1x".into(), vec![])];
        qq_panels("q", &panels, &dir.join("q.png")).unwrap();
        assert!(dir.join("q.png").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nines_axis() {
        assert_eq!(nines(0.0), 0.0);
        assert!((nines(99.0) - 2.0).abs() < 1e-12);
        assert_eq!(nines(100.0), 3.5);
    }
}
