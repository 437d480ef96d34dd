//! Charts as SVG documents: a [`Chart`] of line [`Series`] and highlighted [`Mark`]s, drawn by
//! plotters' SVG backend into a string ([`svg`]). The reports plot with it; the CLI writes the
//! string to a file.
//!
//! ## Text without a font
//! plotters is built without `ttf` (font-kit: system fonts and freetype) and without `ab_glyph`
//! (which rasterises with a font the program registers from bytes, so this crate would have to
//! ship a font file). With neither, plotters lays text out with its built-in estimate (0.7 em
//! per byte) and the SVG backend writes every label as an SVG `<text>` element with
//! `font-family="sans-serif"`: the viewer's renderer picks the glyphs. No font is read at build
//! or run time, so the chart renders the same on a fresh machine with only Rust; the price is
//! that text boxes (the legend's width) are estimated, not measured.
//!
//! ## Layout
//! Axes are fitted to the drawable points and marks (padded). Log axes tick at powers of their
//! base ([`Scale::Log2`]: 2, 4, 8 …; [`Scale::Log10`]: 1e-3, 1e-2, 0.1, 1 …). The legend — one entry
//! per series, in order: a swatch and the name — is drawn by this module: inside the plot at
//! the first of nine places (upper left, upper right, lower right, lower left, then the
//! middles) that covers none of the lines, points and marks, or covers the fewest; if every
//! place covers something and the legend is at most a third of the width, to the right of the
//! plot, which narrows to make room.
//!
//! ## What the document holds
//! plotters writes plain elements. After drawing, every element of a series (whose colour is
//! used by nothing else in the document) is tagged `class="series" data-series="I"
//! data-role="…"`, I its index in [`Chart::series`]:
//! - `data-role="line"`: exactly one `<polyline>` per series with a drawable point (a series
//!   with one point has a one-point line), with `stroke-dasharray` when [`Series::dashed`];
//! - `data-role="point"`: one `<circle>` per drawable point (filled; hollow when dashed);
//! - `data-role="legend"`: the three `<rect>`s of its legend swatch (touching: solid; with gaps:
//!   dashed), beside a `<text>` with its name.
//!
//! A [`Mark`] is a hollow `<circle>` and a `<text>` with its label, both `class="mark"`.
//!
//! ## Guarantees
//! - [`svg`] never panics: on NaN, infinities, empty series, a single point, equal values,
//!   any text. The document is well-formed XML with an `<svg>` root: text is escaped, and
//!   control characters in names and labels become spaces (labels are cut at
//!   [`MAX_TEXT`] characters).
//! - Points that cannot be placed are not drawn, and the axes are fitted to the others: a
//!   coordinate that is NaN or infinite, beyond ±[`LIMIT`], or — on a log axis — not positive
//!   or below 1 / [`LIMIT`]. A series keeps its legend entry when none of its points is drawn.
//!   With no drawable point at all the axes span 0..1 (linear) or 1..10 (log).
//! - Every series has its own colour: ten hand-picked ones, then generated hues, none equal to
//!   another, to black, white or the marks' colour; at most [`MAX_SERIES`] series
//!   ([`ApiError::Input`] beyond).

use std::fmt::Write as _;
use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::ApiError;

/// Width of the document, pixels.
pub const WIDTH: u32 = 800;
/// Height of the document, pixels.
pub const HEIGHT: u32 = 500;
/// Most series a chart takes (the legend of more is unreadable).
pub const MAX_SERIES: usize = 64;
/// Largest magnitude a coordinate may have to be drawn, and on a log axis the reciprocal of the
/// smallest: plotters computes ticks from the axis span (on a log axis from max / min) in f64,
/// which must stay finite.
pub const LIMIT: f64 = 1e150;
/// Characters of a title, axis label, series name or mark label that are kept.
pub const MAX_TEXT: usize = 200;

/// How an axis maps values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    #[default]
    Linear,
    /// Logarithmic, ticks at powers of 10.
    Log10,
    /// Logarithmic, ticks at powers of 2.
    Log2,
}

impl Scale {
    fn is_log(self) -> bool {
        self != Scale::Linear
    }
}

/// One line of a chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// The legend's name for it.
    pub name: String,
    /// (x, y) points, joined in this order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (a model curve, say) rather than solid.
    pub dashed: bool,
}

/// A highlighted point with a label (an automatic choice, a threshold).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mark {
    /// Text beside the point.
    pub label: String,
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
}

/// A chart: title, axes, series and marks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    /// Caption above the plot.
    pub title: String,
    /// Description of the x axis.
    pub x_label: String,
    /// Description of the y axis.
    pub y_label: String,
    /// How x maps.
    pub x_scale: Scale,
    /// How y maps.
    pub y_scale: Scale,
    /// The lines, each with its colour and legend entry.
    pub series: Vec<Series>,
    /// Highlighted points.
    pub marks: Vec<Mark>,
}

type Rgb = (u8, u8, u8);

/// The marks' colour (reserved: no series has it).
const MARK_RGB: Rgb = (0x30, 0x30, 0x30);
/// Colours plotters itself draws with (axes, text, grid, backgrounds).
const RESERVED: [Rgb; 3] = [(0, 0, 0), (0xFF, 0xFF, 0xFF), MARK_RGB];
/// The first ten series' colours (Tableau 10).
const FIRST: [Rgb; 10] = [
    (0x1F, 0x77, 0xB4),
    (0xFF, 0x7F, 0x0E),
    (0x2C, 0xA0, 0x2C),
    (0xD6, 0x27, 0x28),
    (0x94, 0x67, 0xBD),
    (0x8C, 0x56, 0x4B),
    (0xE3, 0x77, 0xC2),
    (0x7F, 0x7F, 0x7F),
    (0xBC, 0xBD, 0x22),
    (0x17, 0xBE, 0xCF),
];
/// The dash pattern of a dashed line (on, off pixels).
const DASH: &str = "8 5";

/// HSV (h in turns) to RGB.
fn hsv(h: f64, s: f64, v: f64) -> Rgb {
    let h6 = h.rem_euclid(1.0) * 6.0;
    let c = v * s;
    let x = c * (1.0 - (h6 % 2.0 - 1.0).abs());
    let (r, g, b) = match h6 as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let to = |u: f64| ((u + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (to(r), to(g), to(b))
}

/// `n` distinct colours, none reserved: [`FIRST`], then golden-ratio hues at alternating
/// saturation and value (a candidate equal to an earlier colour moves on to the next hue).
pub(crate) fn palette(n: usize) -> Vec<Rgb> {
    let mut out: Vec<Rgb> = FIRST.iter().copied().take(n).collect();
    let mut k = 0u32;
    while out.len() < n {
        k += 1;
        let h = f64::from(k) * 0.618_033_988_749_895;
        let c = hsv(h, [0.85, 0.55][k as usize % 2], [0.8, 0.6, 0.95][k as usize % 3]);
        if !out.contains(&c) && !RESERVED.contains(&c) {
            out.push(c);
        }
    }
    out
}

fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// `s` as one line of at most [`MAX_TEXT`] characters that XML accepts.
pub(crate) fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' { ' ' } else { c })
        .take(MAX_TEXT)
        .collect()
}

/// Whether `v` can be placed on an axis of `scale`.
fn placeable(v: f64, scale: Scale) -> bool {
    v.is_finite() && v.abs() <= LIMIT && (!scale.is_log() || v >= 1.0 / LIMIT)
}

/// The axis range for the placeable values `vs`: their span, padded (5 % of it linearly, at
/// least a factor 1.15 on a log axis), never empty, always finite and, on a log axis, positive.
fn axis(vs: impl Iterator<Item = f64>, scale: Scale) -> Range<f64> {
    let (lo, hi) = vs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return if scale.is_log() { 1.0..10.0 } else { 0.0..1.0 };
    }
    if scale.is_log() {
        let span = hi.ln() - lo.ln();
        let f = (span * 0.05).max(1.15f64.ln()).exp();
        (lo / f).max(1.0 / LIMIT)..(hi * f).min(LIMIT * 1.15)
    } else {
        let pad = if hi > lo {
            (hi - lo) * 0.05
        } else if lo == 0.0 {
            1.0
        } else {
            lo.abs() * 0.1
        };
        lo - pad..hi + pad
    }
}

/// A tick label: `0`, up to four significant digits between 1e-3 and 1e5, else `1.5e-7`.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || !a.is_finite() {
        return if a == 0.0 { "0".into() } else { format!("{v}") };
    }
    let trim = |s: String| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    };
    if (1e-3..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        trim(format!("{v:.decimals$}"))
    } else {
        let s = format!("{v:.2e}");
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim(m.to_string())),
            None => s,
        }
    }
}

/// The legend's candidate places in the plot, in order of preference: (column, row), 0 left /
/// top, 1 middle, 2 right / bottom.
const LEGEND_PLACES: [(i32, i32); 9] = [(0, 0), (2, 0), (2, 2), (0, 2), (0, 1), (2, 1), (1, 0), (1, 2), (1, 1)];
/// The legend's font size, line height, swatch width (the text starts after it) and margin.
const LEGEND_FONT: u32 = 14;
const LEGEND_LINE: i32 = 18;
const LEGEND_SWATCH: i32 = 30;
const LEGEND_MARGIN: i32 = 10;
/// The gap between the plot (or its edge) and the legend.
const LEGEND_GAP: i32 = 6;
/// The marks' label font size.
const MARK_FONT: u32 = 14;

/// The width of `text` at `size` as plotters estimates it without a font: 0.7 em per byte,
/// em = size / 1.24².
fn text_width(text: &str, size: u32) -> i32 {
    (f64::from(size) / 1.24 / 1.24 * 0.7 * text.len() as f64) as i32
}

/// The legend's (width, height) in pixels.
fn legend_size(names: &[String]) -> (i32, i32) {
    let longest = names.iter().map(|n| text_width(n, LEGEND_FONT)).max().unwrap_or(0);
    (longest + LEGEND_SWATCH + 2 * LEGEND_MARGIN, LEGEND_LINE * names.len() as i32 + 2 * LEGEND_MARGIN)
}

/// Where the legend goes inside a plot of size `area`: of [`LEGEND_PLACES`], the first that
/// covers the fewest samples of `lines` (pixels relative to the plot; the segments between
/// their points are sampled every 2 pixels). Returns its top-left corner and that count.
fn legend_place(lines: &[Vec<(i32, i32)>], size: (i32, i32), area: (i32, i32)) -> ((i32, i32), usize) {
    let ((w, h), (aw, ah)) = (size, area);
    let mut samples: Vec<(i32, i32)> = Vec::new();
    for line in lines {
        samples.extend(line.iter().copied());
        for seg in line.windows(2) {
            let ((x0, y0), (x1, y1)) = (seg[0], seg[1]);
            let (dx, dy) = (f64::from(x1) - f64::from(x0), f64::from(y1) - f64::from(y0));
            let n = (dx.hypot(dy) / 2.0).min(2000.0) as i32;
            for k in 1..n {
                let t = f64::from(k) / f64::from(n);
                samples.push(((f64::from(x0) + t * dx) as i32, (f64::from(y0) + t * dy) as i32));
            }
        }
    }
    let corner = |(col, row): (i32, i32)| {
        let at = |k: i32, len: i32, avail: i32| match k {
            0 => LEGEND_GAP,
            1 => (avail - len) / 2,
            _ => avail - len - LEGEND_GAP,
        };
        (at(col, w, aw), at(row, h, ah))
    };
    let covered = |(x, y): (i32, i32)| {
        let pad = LEGEND_GAP;
        samples
            .iter()
            .filter(|&&(sx, sy)| sx >= x - pad && sx <= x + w + pad && sy >= y - pad && sy <= y + h + pad)
            .count()
    };
    let mut best = (corner(LEGEND_PLACES[0]), usize::MAX);
    for p in LEGEND_PLACES {
        let c = covered(corner(p));
        if c < best.1 {
            best = (corner(p), c);
        }
    }
    best
}

/// Draws the legend with its top-left corner at `at` (document pixels): a box, and per series
/// its swatch (three 7-pixel pieces: touching when solid, with gaps when dashed) and its name.
fn draw_legend(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    at: (i32, i32),
    names: &[String],
    colours: &[Rgb],
    series: &[Series],
) -> Result<(), ApiError> {
    let (w, h) = legend_size(names);
    let frame = [at, (at.0 + w, at.1 + h)];
    root.draw(&Rectangle::new(frame, WHITE.mix(0.85).filled())).map_err(plot_error)?;
    root.draw(&Rectangle::new(frame, BLACK.mix(0.4))).map_err(plot_error)?;
    let font = ("sans-serif", LEGEND_FONT).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, ((name, &c), s)) in names.iter().zip(colours).zip(series).enumerate() {
        let y = at.1 + LEGEND_MARGIN + LEGEND_LINE * k as i32 + LEGEND_LINE / 2;
        let x = at.0 + LEGEND_MARGIN;
        let (piece, step) = if s.dashed { (5, 8) } else { (7, 7) };
        for p in 0..3 {
            let x0 = x + p * step;
            root.draw(&Rectangle::new([(x0, y - 1), (x0 + piece, y + 2)], RGBColor(c.0, c.1, c.2).filled()))
                .map_err(plot_error)?;
        }
        root.draw(&Text::new(name.clone(), (x + LEGEND_SWATCH, y), font.clone())).map_err(plot_error)?;
    }
    Ok(())
}

/// A tick label of a log axis: on a log2 axis powers of 2 from 2^20 as `2^20`, smaller ones
/// from 1 as integers; on a log10 axis powers of 10 below 0.1 or from 10⁴ as `1e-3`; else
/// [`tick`].
fn log_tick(v: f64, scale: Scale) -> String {
    let (e, at) = if scale == Scale::Log2 { (v.log2(), 2f64.powi(20)) } else { (v.log10(), 1e4) };
    let power = (e - e.round()).abs() < 1e-9;
    match scale {
        Scale::Log2 if power && !(1.0 / at..at).contains(&v) => format!("2^{}", e.round() as i32),
        Scale::Log2 if power && v >= 1.0 => format!("{v:.0}"),
        Scale::Log10 if power && !(0.1..at).contains(&v) => format!("1e{}", e.round() as i32),
        _ => tick(v),
    }
}

/// The formatter of an axis of `scale`.
fn ticks(scale: Scale) -> impl Fn(&f64) -> String {
    move |v| if scale.is_log() { log_tick(*v, scale) } else { tick(*v) }
}

pub(crate) fn plot_error(e: impl std::fmt::Display) -> ApiError {
    ApiError::Failed(format!("svg plot: {e}"))
}

/// The chart as an SVG document (see the module for what it holds).
///
/// ```
/// use cce_api::plot::{Chart, Scale, Series, svg};
///
/// let rne = Series { name: "rne".into(), points: vec![(2.0, 1e-3), (8.0, 3e-3), (64.0, 2e-2)], dashed: false };
/// let chart = Chart { title: "error".into(), x_scale: Scale::Log2, y_scale: Scale::Log10, series: vec![rne], ..Chart::default() };
/// let doc = svg(&chart)?;
/// assert!(doc.starts_with("<svg"));
/// assert_eq!(doc.matches(r#"data-series="0" data-role="line""#).count(), 1);
/// # Ok::<(), cce_api::ApiError>(())
/// ```
///
/// # Errors
/// [`ApiError::Input`] for more than [`MAX_SERIES`] series; [`ApiError::Failed`] if plotters
/// reports a drawing error (its SVG backend writes into a string, which does not fail).
pub fn svg(chart: &Chart) -> Result<String, ApiError> {
    if chart.series.len() > MAX_SERIES {
        return Err(ApiError::Input(format!("a chart takes at most {MAX_SERIES} series, got {}", chart.series.len())));
    }
    let (sx, sy) = (chart.x_scale, chart.y_scale);
    let ok = |&(x, y): &(f64, f64)| placeable(x, sx) && placeable(y, sy);
    let series: Vec<Vec<(f64, f64)>> =
        chart.series.iter().map(|s| s.points.iter().copied().filter(ok).collect()).collect();
    let marks: Vec<&Mark> = chart.marks.iter().filter(|m| ok(&(m.x, m.y))).collect();
    let all: Vec<(f64, f64)> = series.iter().flatten().copied().chain(marks.iter().map(|m| (m.x, m.y))).collect();
    let xr = axis(all.iter().map(|p| p.0), sx);
    let yr = axis(all.iter().map(|p| p.1), sy);
    let colours = palette(chart.series.len());
    let drawn = Drawn { chart, series: &series, marks: &marks, colours: &colours };
    let render = |outside: bool| -> Result<(String, usize), ApiError> {
        let mut doc = String::new();
        let covered;
        {
            let root = SVGBackend::with_string(&mut doc, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_error)?;
            let log = |r: Range<f64>, s: Scale| r.log_scale().base(if s == Scale::Log2 { 2.0 } else { 10.0 });
            let (xr, yr) = (xr.clone(), yr.clone());
            covered = match (sx.is_log(), sy.is_log()) {
                (false, false) => drawn.draw(&root, xr, yr, outside)?,
                (true, false) => drawn.draw(&root, log(xr, sx), yr, outside)?,
                (false, true) => drawn.draw(&root, xr, log(yr, sy), outside)?,
                (true, true) => drawn.draw(&root, log(xr, sx), log(yr, sy), outside)?,
            };
            root.present().map_err(plot_error)?;
        }
        Ok((doc, covered))
    };
    // The legend goes inside the plot where it hides nothing; else to its right, if it is
    // narrow enough to leave the plot most of the width.
    let (mut doc, covered) = render(false)?;
    let names: Vec<String> = chart.series.iter().map(|s| clean(&s.name)).collect();
    if covered > 0 && legend_size(&names).0 <= WIDTH as i32 / 3 {
        doc = render(true)?.0;
    }
    Ok(tag(&doc, &colours, &chart.series))
}

/// What [`svg`] draws: the chart with its placeable points and colours.
struct Drawn<'a> {
    chart: &'a Chart,
    series: &'a [Vec<(f64, f64)>],
    marks: &'a [&'a Mark],
    colours: &'a [Rgb],
}

impl Drawn<'_> {
    /// Draws the chart, the legend inside the plot or, when `outside`, to its right; returns
    /// how many samples of the lines and marks the legend covers.
    fn draw<X, Y>(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        x: X,
        y: Y,
        outside: bool,
    ) -> Result<usize, ApiError>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let font = ("sans-serif", 15);
        let names: Vec<String> = self.chart.series.iter().map(|s| clean(&s.name)).collect();
        let (x_ticks, y_ticks) = (ticks(self.chart.x_scale), ticks(self.chart.y_scale));
        let mut chart = ChartBuilder::on(root)
            .caption(clean(&self.chart.title), ("sans-serif", 22))
            .margin(16)
            .margin_right(if outside { 16 + legend_size(&names).0 + 2 * LEGEND_GAP } else { 16 })
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x, y)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(clean(&self.chart.x_label))
            .y_desc(clean(&self.chart.y_label))
            .axis_desc_style(font)
            .label_style(("sans-serif", 13))
            .x_label_formatter(&x_ticks)
            .y_label_formatter(&y_ticks)
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(plot_error)?;
        for ((s, pts), &c) in self.chart.series.iter().zip(self.series).zip(self.colours) {
            let colour = RGBColor(c.0, c.1, c.2);
            let line = ShapeStyle { color: colour.to_rgba(), filled: false, stroke_width: 2 };
            chart.draw_series(LineSeries::new(pts.iter().copied(), line)).map_err(plot_error)?;
            let dot = if s.dashed { line } else { colour.filled() };
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, dot))).map_err(plot_error)?;
        }
        let mark = RGBColor(MARK_RGB.0, MARK_RGB.1, MARK_RGB.2);
        let ring = ShapeStyle { color: mark.to_rgba(), filled: false, stroke_width: 2 };
        let text = ("sans-serif", MARK_FONT).into_font().color(&mark);
        chart
            .draw_series(self.marks.iter().map(|m| {
                EmptyElement::at((m.x, m.y))
                    + Circle::new((0, 0), 7, ring)
                    + Text::new(clean(&m.label), (9, -20), text.clone())
            }))
            .map_err(plot_error)?;
        // The legend, last, over everything it covers.
        let base = chart.plotting_area().get_base_pixel();
        let rel = |p: &(f64, f64)| {
            let (x, y) = chart.backend_coord(p);
            (x - base.0, y - base.1)
        };
        let mut lines: Vec<Vec<(i32, i32)>> = self.series.iter().map(|pts| pts.iter().map(rel).collect()).collect();
        // A mark counts as its circle and, when labelled, the corners of its label's box.
        for m in self.marks {
            let (x, y) = rel(&(m.x, m.y));
            let mut pts = vec![(x, y)];
            let w = text_width(&clean(&m.label), MARK_FONT);
            if w > 0 {
                pts.extend([(x + 9, y - 20), (x + 9 + w, y - 20), (x + 9 + w, y - 6), (x + 9, y - 6)]);
            }
            lines.push(pts);
        }
        let (aw, ah) = chart.plotting_area().dim_in_pixel();
        let ((x, y), covered) = if outside {
            ((aw as i32 + LEGEND_GAP * 2, 0), 0)
        } else {
            legend_place(&lines, legend_size(&names), (aw as i32, ah as i32))
        };
        draw_legend(root, (base.0 + x, base.1 + y), &names, self.colours, &self.chart.series)?;
        Ok(covered)
    }
}

/// The colour value of attribute `attr` in one element's line (`attr="#RRGGBB"`).
fn colour_attr<'a>(line: &'a str, attr: &str) -> Option<&'a str> {
    // ` stroke="#RRGGBB"`: the value starts after the space, the name, `="`.
    let at = line.find(&format!(" {attr}=\"#"))? + 1 + attr.len() + 2;
    line.get(at..at + 7)
}

/// Tags every element of a series and of a mark (see the module). plotters writes one element
/// per line, `<name attr="…" …`; colours are `#RRGGBB`, upper case.
fn tag(doc: &str, colours: &[Rgb], series: &[Series]) -> String {
    let keys: Vec<String> = colours.iter().map(|&c| hex(c)).collect();
    let mark = hex(MARK_RGB);
    let mut out = String::with_capacity(doc.len() + doc.len() / 4);
    for line in doc.split_inclusive('\n') {
        let name = line.strip_prefix('<').and_then(|r| r.split([' ', '>', '/']).next()).unwrap_or("");
        let colour = colour_attr(line, "stroke").or_else(|| colour_attr(line, "fill"));
        let role = match name {
            "polyline" => "line",
            "circle" => "point",
            "rect" => "legend",
            _ => "",
        };
        let mut attrs = String::new();
        match (colour, name) {
            (Some(c), "circle" | "text") if c == mark => attrs.push_str(" class=\"mark\""),
            (Some(c), _) if !role.is_empty() => {
                if let Some(i) = keys.iter().position(|k| k == c) {
                    let _ = write!(attrs, " class=\"series\" data-series=\"{i}\" data-role=\"{role}\"");
                    if role == "line" && series.get(i).is_some_and(|s| s.dashed) {
                        let _ = write!(attrs, " stroke-dasharray=\"{DASH}\"");
                    }
                }
            }
            _ => {}
        }
        if attrs.is_empty() {
            out.push_str(line);
        } else {
            out.push('<');
            out.push_str(name);
            out.push_str(&attrs);
            out.push_str(&line[1 + name.len()..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_is_distinct_and_avoids_reserved_colours() {
        let p = palette(MAX_SERIES);
        for (i, c) in p.iter().enumerate() {
            assert!(!RESERVED.contains(c), "{c:?}");
            assert!(!p[..i].contains(c), "colour {i} repeats");
        }
        assert_eq!(palette(3), FIRST[..3]);
    }

    #[test]
    fn ticks_are_short() {
        // (value, label): integers plain, small and large values in exponent form.
        for (v, want) in
            [(0.0, "0"), (2.0, "2"), (64.0, "64"), (0.25, "0.25"), (1e-5, "1e-5"), (1.5e-7, "1.5e-7"), (2e6, "2e6")]
        {
            assert_eq!(tick(v), want);
        }
        // Log axes: powers of their base in power form once they get long.
        let log2 = [(64.0, "64"), (262144.0, "262144"), (1048576.0, "2^20"), (0.5, "0.5"), (2f64.powi(-21), "2^-21")];
        for (v, want) in log2 {
            assert_eq!(log_tick(v, Scale::Log2), want);
        }
        for (v, want) in [(0.1, "0.1"), (1000.0, "1000"), (1e4, "1e4"), (0.01, "1e-2"), (2e-5, "2e-5")] {
            assert_eq!(log_tick(v, Scale::Log10), want);
        }
    }

    #[test]
    fn axes_are_finite_and_positive_on_log() {
        for s in [Scale::Linear, Scale::Log10, Scale::Log2] {
            for vs in [vec![], vec![5.0], vec![LIMIT], vec![1.0 / LIMIT], vec![1.0 / LIMIT, LIMIT], vec![-LIMIT, LIMIT]]
            {
                let vs: Vec<f64> = vs.into_iter().filter(|&v| placeable(v, s)).collect();
                let r = axis(vs.iter().copied(), s);
                assert!(r.start.is_finite() && r.end.is_finite() && r.start < r.end, "{s:?} {vs:?}: {r:?}");
                assert!(!s.is_log() || r.start > 0.0, "{s:?} {vs:?}: {r:?}");
            }
        }
    }
}
