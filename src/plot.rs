//! SVG plots of results (grouped bars relative to a baseline at 1.0, lines, Tukey boxes),
//! written with the `svg` crate. Every plot sizes its canvas so that its text (title, legend,
//! axis labels, tick and group names) lies inside it whatever the number of groups and series
//! and the lengths of the names: the canvas widens for a title (up to a limit past which the
//! title wraps), a legend entry or an axis label, the legend wraps into rows, the plot area
//! grows taller for a long y label, and group names turn 45° when they do not fit their group.

use anyhow::{anyhow, Result};
use std::f64::consts::FRAC_1_SQRT_2;
use std::path::Path;
use svg::node::element::{Line, Rectangle, Text};
use svg::Document;

const COLORS: [&str; 8] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];

/// Font sizes (px): the title, the axis labels, and the rest (ticks, group names, legend).
const TITLE_SIZE: f64 = 14.0;
const LABEL_SIZE: f64 = 12.0;
const SMALL_SIZE: f64 = 11.0;
/// The space kept between text and the canvas' edge.
const EDGE: f64 = 10.0;
/// The widest a canvas grows to keep its title on one line (a longer title wraps).
const TITLE_MAX_W: f64 = 720.0;
/// The rotated y label's baseline x.
const YLABEL_X: f64 = 16.0;
/// Legend: the swatch's side, the name's offset from the swatch, an entry's least width
/// (swatch, name and gap), the gap after a name and the height of a row.
const SWATCH: f64 = 12.0;
const SWATCH_GAP: f64 = 16.0;
const ENTRY_MIN_W: f64 = 110.0;
const ENTRY_GAP: f64 = 14.0;
const LEGEND_ROW: f64 = 18.0;

/// The estimated width of `s` set in sans-serif at `size` px: 0.6 em a character, on the
/// wide side of common sans-serif faces (every layout decision and the tests use this one
/// estimate).
fn text_width(s: &str, size: f64) -> f64 {
    0.6 * size * s.chars().count() as f64
}

/// A text element (`s` escaped for XML).
fn text(x: f64, y: f64, s: &str, size: f64, anchor: &str) -> Text {
    let s = s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    Text::new().add(svg::node::Text::new(s)).set("x", x).set("y", y).set("font-size", size).set("font-family", "sans-serif").set("text-anchor", anchor)
}

/// `s` broken at spaces into lines no wider than `max` px at `size` (a word wider than that
/// is broken within).
fn wrap(s: &str, size: f64, max: f64) -> Vec<String> {
    let per_line = ((max / text_width("m", size)).floor() as usize).max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let room = if cur.is_empty() { per_line } else { per_line.saturating_sub(cur.chars().count() + 1) };
            if word.len() <= room {
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur.extend(&word);
                break;
            }
            if cur.is_empty() {
                let rest = word.split_off(per_line);
                lines.push(word.into_iter().collect());
                word = rest;
            } else {
                lines.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The step of a y axis from 0 in 5 steps to a round top (1, 2, 2.5 or 5 times a power of
/// ten per step) just above `ytop`.
fn round_step(ytop: f64) -> f64 {
    let raw = (ytop * 1.05).max(1e-9) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw).unwrap_or(10.0 * mag)
}

/// The y ticks 0, `step`, ... up to `top`, labelled (as given by `label`).
fn ticks(step: f64, top: f64, label: impl Fn(f64) -> String) -> Vec<(f64, String)> {
    let n = (top / step + 1e-6).floor() as usize;
    (0..=n).map(|k| (step * k as f64, label(step * k as f64))).collect()
}

/// What a plot's frame is laid out from.
struct FrameSpec<'a> {
    title: &'a str,
    ylabel: &'a str,
    /// The y tick labels.
    ticks: &'a [(f64, String)],
    /// The least left and right margins of the plot area.
    left: f64,
    right: f64,
    /// The least width of the plot area and of the canvas, and the usual plot area height.
    plot_w: f64,
    min_w: f64,
    ph: f64,
    /// The x axis label, if any (centred under the plot area).
    xlabel: Option<&'a str>,
    legend: &'a [&'a str],
}

/// A plot's layout: the canvas (`w` x `h`), the plot area (`left` to `w - right`, `up` to
/// `up + ph`), the title's lines and each legend entry's swatch corner.
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    up: f64,
    ph: f64,
    title: Vec<String>,
    ylabel: String,
    legend: Vec<(f64, f64)>,
}

impl Frame {
    /// The frame's width and heights (the canvas' height and the legend come with `finish`).
    fn new(f: &FrameSpec) -> Frame {
        // (the y label's glyphs reach 0.25 em right of its baseline; the ticks end 6 px left of the axis)
        let tick_w = f.ticks.iter().map(|(_, l)| text_width(l, SMALL_SIZE)).fold(0.0, f64::max);
        let left = f.left.max(YLABEL_X + 0.25 * LABEL_SIZE + 6.0 + tick_w + 6.0).ceil();
        let mut w = f.min_w.max(left + f.plot_w + f.right);
        if let Some(xl) = f.xlabel {
            w = w.max(left + text_width(xl, LABEL_SIZE) + f.right);
        }
        let name_w = f.legend.iter().map(|n| text_width(n, SMALL_SIZE)).fold(0.0, f64::max);
        w = w.max(left + SWATCH_GAP + name_w + EDGE);
        w = w.max((text_width(f.title, TITLE_SIZE) + 2.0 * EDGE).min(TITLE_MAX_W)).ceil();
        let title = wrap(f.title, TITLE_SIZE, w - 2.0 * EDGE);
        let up = 40.0 + 18.0 * (title.len() - 1) as f64;
        let ph = f.ph.max(text_width(f.ylabel, LABEL_SIZE) + 4.0);
        Frame { w, h: 0.0, left, right: f.right, up, ph, title, ylabel: f.ylabel.to_string(), legend: Vec::new() }
    }

    /// The plot area's bottom (the x axis).
    fn y0(&self) -> f64 {
        self.up + self.ph
    }

    /// The plot area's width.
    fn pw(&self) -> f64 {
        self.w - self.left - self.right
    }

    /// Moves the plot area `by` px right (widening the canvas as much).
    fn shift(&mut self, by: f64) {
        let by = by.max(0.0).ceil();
        self.left += by;
        self.w += by;
    }

    /// Lays out the legend (rows of `names`, below `band`: the lowest text under the x
    /// axis) and so the canvas' height.
    fn finish(&mut self, band: f64, names: &[&str]) {
        let top = band + 28.0;
        let (x0, x1) = (self.left, self.w - EDGE);
        let (mut x, mut row) = (x0, 0usize);
        for n in names {
            let ew = SWATCH_GAP + text_width(n, SMALL_SIZE);
            if x > x0 && x + ew > x1 {
                row += 1;
                x = x0;
            }
            self.legend.push((x, top + LEGEND_ROW * row as f64));
            x += (ew + ENTRY_GAP).max(ENTRY_MIN_W);
        }
        self.h = (top + LEGEND_ROW * row as f64 + 40.0).ceil();
    }

    /// The white canvas with the title, the y label, the y grid from the axis to the right
    /// edge of the plot area (`y`: a value's height) and the legend (of `names`).
    fn canvas(&self, grid: &[(f64, String)], y: &dyn Fn(f64) -> f64, names: &[&str]) -> Document {
        let (w, h) = (self.w, self.h);
        let mut doc = Document::new().set("viewBox", (0, 0, w as i64, h as i64)).set("width", w as i64).set("height", h as i64);
        doc = doc.add(Rectangle::new().set("x", 0).set("y", 0).set("width", w).set("height", h).set("fill", "white"));
        for (i, l) in self.title.iter().enumerate() {
            doc = doc.add(text(w / 2.0, 20.0 + 18.0 * i as f64, l, TITLE_SIZE, "middle"));
        }
        let mid = self.up + self.ph / 2.0;
        doc = doc.add(text(YLABEL_X, mid, &self.ylabel, LABEL_SIZE, "middle").set("transform", format!("rotate(-90 {YLABEL_X} {mid})")));
        for (v, label) in grid {
            doc = doc.add(Line::new().set("x1", self.left).set("x2", w - self.right).set("y1", y(*v)).set("y2", y(*v)).set("stroke", "#ddd"));
            doc = doc.add(text(self.left - 6.0, y(*v) + 4.0, label, SMALL_SIZE, "end"));
        }
        for (si, (&(x, y), name)) in self.legend.iter().zip(names).enumerate() {
            doc = doc.add(Rectangle::new().set("x", x).set("y", y).set("width", SWATCH).set("height", SWATCH).set("fill", COLORS[si % COLORS.len()]));
            doc = doc.add(text(x + SWATCH_GAP, y + 10.0, name, SMALL_SIZE, "start"));
        }
        doc
    }
}

/// Group names under the x axis, one per group of width `gw`, the first group's centre
/// `c0 - left` right of the plot area's left edge: level, or turned 45° (ending at the
/// group's centre) when one is wider than its group. Moves the plot area right for turned
/// names that would reach past the canvas' left edge; returns whether they are turned and
/// the lowest point of the names below the x axis.
fn group_band(frame: &mut Frame, names: &[String], gw: f64, c0: f64) -> (bool, f64) {
    let widths: Vec<f64> = names.iter().map(|n| text_width(n, SMALL_SIZE)).collect();
    let widest = widths.iter().copied().fold(0.0, f64::max);
    if widest <= gw - 6.0 {
        return (false, 22.0);
    }
    let reach = widths.iter().enumerate().map(|(i, lw)| FRAC_1_SQRT_2 * (lw + 0.8 * SMALL_SIZE) + EDGE / 2.0 - (frame.left + c0 + gw * i as f64)).fold(0.0, f64::max);
    frame.shift(reach);
    (true, 12.0 + FRAC_1_SQRT_2 * (widest + 0.25 * SMALL_SIZE) + 4.0)
}

/// A group's name centred at `x` under the x axis at `y0`, level or turned 45°.
fn group_label(x: f64, y0: f64, name: &str, turned: bool) -> Text {
    if turned {
        let by = y0 + 12.0;
        text(x, by, name, SMALL_SIZE, "end").set("transform", format!("rotate(-45 {x} {by})"))
    } else {
        text(x, y0 + 16.0, name, SMALL_SIZE, "middle")
    }
}

fn save(path: &Path, doc: &Document) -> Result<()> {
    svg::save(path, doc).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// Writes a grouped bar chart: `groups` along x (a geometric-mean group is added), one bar per
/// series in each, heights as given (1.0 = the baseline, drawn as a dashed line; the y axis
/// in percent, labelled `ylabel`).
pub fn bars(path: &Path, title: &str, ylabel: &str, groups: &[String], series: &[(String, Vec<f64>)]) -> Result<()> {
    let mut groups: Vec<String> = groups.to_vec();
    let mut series: Vec<(String, Vec<f64>)> = series.to_vec();
    for (_, v) in &mut series {
        if v.len() != groups.len() || v.iter().any(|x| !x.is_finite() || *x <= 0.0) {
            return Err(anyhow!("plot {}: every series needs one positive value per group", path.display()));
        }
        let g = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
        v.push(g);
    }
    groups.push("geomean".into());
    let most = series.iter().flat_map(|(_, v)| v.iter().copied()).fold(1.1f64, f64::max);
    // (20% steps up to 200%, else 5 round steps)
    let (step, top) = if most <= 2.0 { (0.2, (most * 5.0).ceil() / 5.0) } else { (round_step(most), 5.0 * round_step(most)) };
    let grid = ticks(step, top, |t| format!("{:.0}%", 100.0 * t));
    let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
    let ns = series.len() as f64;
    let spec = FrameSpec { title, ylabel, ticks: &grid, left: 60.0, right: 20.0, plot_w: (16.0 * ns + 20.0) * groups.len() as f64, min_w: 0.0, ph: 230.0, xlabel: None, legend: &names };
    let mut frame = Frame::new(&spec);
    let mut gw = frame.pw() / groups.len() as f64;
    let (turned, band) = group_band(&mut frame, &groups, gw, gw / 2.0);
    gw = frame.pw() / groups.len() as f64;
    let y0 = frame.y0();
    frame.finish(y0 + band, &names);
    let (up, ph) = (frame.up, frame.ph);
    let y = move |v: f64| up + ph * (1.0 - v / top);
    let mut doc = frame.canvas(&grid, &y, &names);
    let left = frame.left;
    for (gi, g) in groups.iter().enumerate() {
        let x0 = left + gw * gi as f64 + (gw - 16.0 * ns) / 2.0;
        for (si, (_, v)) in series.iter().enumerate() {
            let x = x0 + 16.0 * si as f64;
            doc = doc.add(Rectangle::new().set("x", x).set("y", y(v[gi])).set("width", 14).set("height", y(0.0) - y(v[gi])).set("fill", COLORS[si % COLORS.len()]));
        }
        doc = doc.add(group_label(x0 + 8.0 * ns, y0, g, turned));
    }
    let x1 = frame.w - frame.right;
    doc = doc.add(Line::new().set("x1", left).set("x2", x1).set("y1", y(1.0)).set("y2", y(1.0)).set("stroke", "black").set("stroke-dasharray", "4 3"));
    doc = doc.add(Line::new().set("x1", left).set("x2", left).set("y1", up).set("y2", y(0.0)).set("stroke", "black"));
    save(path, &doc)
}

/// Writes a line chart: x values along the bottom, one polyline (with point markers) per
/// series; a series' `None` points are gaps. The y axis starts at 0.
pub fn lines(path: &Path, title: &str, xlabel: &str, ylabel: &str, xs: &[f64], series: &[(String, Vec<Option<f64>>)]) -> Result<()> {
    use svg::node::element::{Circle, Polyline};
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) || series.iter().any(|(_, v)| v.len() != xs.len() || v.iter().flatten().any(|y| !y.is_finite() || *y < 0.0)) {
        return Err(anyhow!("plot {}: at least two finite x values, and every series one finite value (or none) per x", path.display()));
    }
    let (xmin, xmax) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let ytop = series.iter().flat_map(|(_, v)| v.iter().flatten().copied()).fold(0.0f64, f64::max);
    let step = round_step(ytop);
    let grid = ticks(step, step * 5.0, |v| if step >= 1.0 { format!("{v:.0}") } else { format!("{v:.2}") });
    let top = step * 5.0;
    let label = |v: f64| format!("{v}");
    // (the extreme x values' labels centred on the plot area's edges)
    let half = |v: f64| text_width(&label(v), SMALL_SIZE) / 2.0 + EDGE / 2.0;
    let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
    let spec = FrameSpec { title, ylabel, ticks: &grid, left: 70f64.max(half(xmin)), right: 20f64.max(half(xmax)), plot_w: 0.0, min_w: 640.0, ph: 250.0, xlabel: Some(xlabel), legend: &names };
    let mut frame = Frame::new(&spec);
    let y0 = frame.y0();
    frame.finish(y0 + 22.0, &names);
    let (left, up, ph, pw) = (frame.left, frame.up, frame.ph, frame.pw());
    let x = |v: f64| left + pw * if xmax > xmin { (v - xmin) / (xmax - xmin) } else { 0.5 };
    let y = move |v: f64| up + ph * (1.0 - v / top);
    let mut doc = frame.canvas(&grid, &y, &names);
    // (at most about 12 x labels, and none within 8 px of another; the last x always labelled)
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let every = xs.len().div_ceil(12);
    let span = |i: usize| (x(xs[i]) - half(xs[i]) + EDGE / 2.0, x(xs[i]) + half(xs[i]) - EDGE / 2.0);
    let mut shown: Vec<usize> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let last = k + 1 == order.len();
        if k % every != 0 && !last {
            continue;
        }
        while let Some(&j) = shown.last() {
            if span(j).1 + 8.0 <= span(i).0 {
                break;
            }
            if !last {
                break;
            }
            shown.pop();
        }
        if shown.last().is_none_or(|&j| span(j).1 + 8.0 <= span(i).0) {
            shown.push(i);
        }
    }
    for i in shown {
        doc = doc.add(text(x(xs[i]), y0 + 16.0, &label(xs[i]), SMALL_SIZE, "middle"));
    }
    doc = doc.add(text(left + pw / 2.0, y0 + 34.0, xlabel, LABEL_SIZE, "middle"));
    doc = doc.add(Line::new().set("x1", left).set("x2", left).set("y1", up).set("y2", y(0.0)).set("stroke", "black"));
    doc = doc.add(Line::new().set("x1", left).set("x2", left + pw).set("y1", y(0.0)).set("y2", y(0.0)).set("stroke", "black"));
    for (si, (_, v)) in series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        // (one polyline per run of points without a gap)
        let mut run: Vec<String> = Vec::new();
        let flush = |run: &mut Vec<String>, doc: Document| {
            let d = if run.len() > 1 { doc.add(Polyline::new().set("points", run.join(" ")).set("fill", "none").set("stroke", color).set("stroke-width", 2)) } else { doc };
            run.clear();
            d
        };
        for (i, p) in v.iter().enumerate() {
            match p {
                Some(yv) => {
                    run.push(format!("{:.1},{:.1}", x(xs[i]), y(*yv)));
                    doc = doc.add(Circle::new().set("cx", x(xs[i])).set("cy", y(*yv)).set("r", 3).set("fill", color));
                }
                None => doc = flush(&mut run, doc),
            }
        }
        doc = flush(&mut run, doc);
    }
    save(path, &doc)
}

/// The Tukey summary of a sample: the quartiles (linear interpolation), the whiskers (the
/// furthest points within 1.5 box lengths of the box) and the points beyond them.
#[derive(Clone, Debug, PartialEq)]
pub struct Tukey {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub lo: f64,
    pub hi: f64,
    pub outliers: Vec<f64>,
}

/// The Tukey summary of `v` (`None` if empty).
pub fn tukey(v: &[f64]) -> Option<Tukey> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let at = p * (s.len() - 1) as f64;
        let (i, f) = (at.floor() as usize, at.fract());
        if i + 1 < s.len() { s[i] + f * (s[i + 1] - s[i]) } else { s[i] }
    };
    let (q1, median, q3) = (q(0.25), q(0.5), q(0.75));
    let reach = 1.5 * (q3 - q1);
    let inside = |x: &f64| *x >= q1 - reach - 1e-12 && *x <= q3 + reach + 1e-12;
    let lo = s.iter().copied().filter(inside).fold(f64::MAX, f64::min);
    let hi = s.iter().copied().filter(inside).fold(f64::MIN, f64::max);
    let outliers = s.iter().copied().filter(|x| !inside(x)).collect();
    Some(Tukey { q1, median, q3, lo, hi, outliers })
}

/// Writes Tukey box plots: one group per name along x, one box per series in each (a series'
/// sample for a group may be empty: no box). Values are plotted as given on a y axis from 0.
pub fn boxes(path: &Path, title: &str, ylabel: &str, groups: &[String], series: &[(String, Vec<Vec<f64>>)]) -> Result<()> {
    use svg::node::element::Circle;
    if series.iter().any(|(_, v)| v.len() != groups.len() || v.iter().flatten().any(|y| !y.is_finite() || *y < 0.0)) {
        return Err(anyhow!("plot {}: every series needs one sample (of finite values, 0 or more) per group", path.display()));
    }
    let ytop = series.iter().flat_map(|(_, v)| v.iter().flatten().copied()).fold(0.0f64, f64::max);
    let step = round_step(ytop);
    let grid = ticks(step, step * 5.0, |v| if step >= 1.0 { format!("{v:.0}") } else { format!("{v:.2}") });
    let top = step * 5.0;
    let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
    let bw = 14.0;
    let inner = (bw + 4.0) * series.len() as f64;
    let spec = FrameSpec { title, ylabel, ticks: &grid, left: 70.0, right: 20.0, plot_w: (inner + 24.0) * groups.len() as f64, min_w: 420.0, ph: 250.0, xlabel: None, legend: &names };
    let mut frame = Frame::new(&spec);
    // (the groups spread over the plot area when the canvas is wider than they need)
    let n = groups.len().max(1) as f64;
    let mut gw = frame.pw() / n;
    let (turned, band) = group_band(&mut frame, groups, gw, gw / 2.0);
    gw = frame.pw() / n;
    let y0 = frame.y0();
    frame.finish(y0 + band, &names);
    let (left, up, ph) = (frame.left, frame.up, frame.ph);
    let y = move |v: f64| up + ph * (1.0 - v / top);
    let mut doc = frame.canvas(&grid, &y, &names);
    doc = doc.add(Line::new().set("x1", left).set("x2", left).set("y1", up).set("y2", y(0.0)).set("stroke", "black"));
    for (gi, g) in groups.iter().enumerate() {
        let x0 = left + gw * gi as f64 + (gw - inner) / 2.0;
        for (si, (_, v)) in series.iter().enumerate() {
            let Some(t) = tukey(&v[gi]) else { continue };
            let color = COLORS[si % COLORS.len()];
            let x = x0 + (bw + 4.0) * si as f64;
            let mid = x + bw / 2.0;
            doc = doc.add(Line::new().set("x1", mid).set("x2", mid).set("y1", y(t.hi)).set("y2", y(t.lo)).set("stroke", color));
            for e in [t.lo, t.hi] {
                doc = doc.add(Line::new().set("x1", x + 3.0).set("x2", x + bw - 3.0).set("y1", y(e)).set("y2", y(e)).set("stroke", color));
            }
            let top_y = y(t.q3);
            doc = doc.add(Rectangle::new().set("x", x).set("y", top_y).set("width", bw).set("height", (y(t.q1) - top_y).max(1.0)).set("fill", color).set("fill-opacity", 0.35).set("stroke", color));
            doc = doc.add(Line::new().set("x1", x).set("x2", x + bw).set("y1", y(t.median)).set("y2", y(t.median)).set("stroke", "black").set("stroke-width", 2));
            for o in &t.outliers {
                doc = doc.add(Circle::new().set("cx", mid).set("cy", y(*o)).set("r", 2.5).set("fill", "none").set("stroke", color));
            }
        }
        doc = doc.add(group_label(x0 + inner / 2.0, y0, g, turned));
    }
    save(path, &doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use svg::node::element::tag::Type;
    use svg::parser::Event;

    /// One `<text>` element of a written plot.
    #[derive(Debug)]
    struct Placed {
        s: String,
        size: f64,
        /// The corners of its estimated box (ascent 0.8 em above the baseline, descent
        /// 0.25 em below), rotated as the element is.
        corners: [(f64, f64); 4],
    }

    /// A unique path in the temporary folder for a test's plot (`check` removes it unless
    /// it finds problems).
    fn temp_svg(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("mpgpu-plot-test-{}-{name}.svg", std::process::id()))
    }

    /// The canvas (viewBox width and height, which must match the width and height
    /// attributes) and the text elements of the SVG file at `path`.
    fn read_texts(path: &Path) -> ((f64, f64), Vec<Placed>) {
        let mut content = String::new();
        let num = |a: &svg::node::Attributes, k: &str| -> f64 { a.get(k).unwrap_or_else(|| panic!("no {k}")).trim().parse().unwrap() };
        let mut canvas = None;
        let mut texts = Vec::new();
        let mut open: Option<svg::node::Attributes> = None;
        for ev in svg::open(path, &mut content).unwrap() {
            match ev {
                Event::Error(e) => panic!("{}: {e:?}", path.display()),
                Event::Tag("svg", Type::Start, a) => {
                    let vb: Vec<f64> = a["viewBox"].split_whitespace().map(|v| v.parse().unwrap()).collect();
                    assert_eq!(vb[..2], [0.0, 0.0], "viewBox origin");
                    assert_eq!((vb[2], vb[3]), (num(&a, "width"), num(&a, "height")), "viewBox against width and height");
                    canvas = Some((vb[2], vb[3]));
                }
                Event::Tag("text", Type::Start, a) => open = Some(a),
                Event::Text(t) if open.is_some() => {
                    let a = open.take().unwrap();
                    let s = t.trim().replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
                    let (x, y, size) = (num(&a, "x"), num(&a, "y"), num(&a, "font-size"));
                    let w = text_width(&s, size);
                    let x0 = match a.get("text-anchor").map(|v| &**v) {
                        Some("middle") => x - w / 2.0,
                        Some("end") => x - w,
                        _ => x,
                    };
                    let (top, bottom) = (y - 0.8 * size, y + 0.25 * size);
                    let mut corners = [(x0, top), (x0 + w, top), (x0 + w, bottom), (x0, bottom)];
                    if let Some(tr) = a.get("transform") {
                        let args: Vec<f64> = tr.trim().strip_prefix("rotate(").and_then(|r| r.strip_suffix(')')).unwrap_or_else(|| panic!("transform {tr}")).split([' ', ',']).filter(|v| !v.is_empty()).map(|v| v.parse().unwrap()).collect();
                        let (deg, cx, cy) = (args[0], args.get(1).copied().unwrap_or(0.0), args.get(2).copied().unwrap_or(0.0));
                        let (sin, cos) = deg.to_radians().sin_cos();
                        for c in &mut corners {
                            let (dx, dy) = (c.0 - cx, c.1 - cy);
                            *c = (cx + dx * cos - dy * sin, cy + dx * sin + dy * cos);
                        }
                    }
                    texts.push(Placed { s, size, corners });
                }
                _ => {}
            }
        }
        (canvas.expect("no svg element"), texts)
    }

    /// Whether two convex quadrilaterals overlap by more than `slack` px (separating axes).
    fn overlap(a: &[(f64, f64); 4], b: &[(f64, f64); 4], slack: f64) -> bool {
        for poly in [a, b] {
            for i in 0..4 {
                let (p, q) = (poly[i], poly[(i + 1) % 4]);
                let (nx, ny) = (q.1 - p.1, p.0 - q.0);
                let len = nx.hypot(ny);
                if len == 0.0 {
                    continue;
                }
                let proj = |r: &[(f64, f64); 4]| r.iter().map(|c| (c.0 * nx + c.1 * ny) / len).fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
                let ((alo, ahi), (blo, bhi)) = (proj(a), proj(b));
                if ahi <= blo + slack || bhi <= alo + slack {
                    return false;
                }
            }
        }
        true
    }

    /// Checks the plot at `path`: every text element inside the canvas and clear of every
    /// other, the title (possibly over several lines) and every name in `must` shown.
    /// Returns the problems, one a line.
    fn check(path: &Path, title: &str, must: &[&str]) -> Vec<String> {
        let ((w, h), texts) = read_texts(path);
        let mut bad = Vec::new();
        let name = path.file_name().unwrap().to_string_lossy().splitn(5, '-').last().unwrap().to_string();
        for t in &texts {
            let (x0, x1) = t.corners.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| (lo.min(c.0), hi.max(c.0)));
            let (y0, y1) = t.corners.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| (lo.min(c.1), hi.max(c.1)));
            if x0 < -0.01 || y0 < -0.01 || x1 > w + 0.01 || y1 > h + 0.01 {
                bad.push(format!("{name} ({w} x {h}): {:?} spans x {x0:.1}..{x1:.1}, y {y0:.1}..{y1:.1}", t.s));
            }
        }
        for (i, a) in texts.iter().enumerate() {
            for b in &texts[i + 1..] {
                if overlap(&a.corners, &b.corners, 0.5) {
                    bad.push(format!("{name}: {:?} overlaps {:?}", a.s, b.s));
                }
            }
        }
        let shown: Vec<&str> = texts.iter().filter(|t| t.size == 14.0).map(|t| t.s.as_str()).collect();
        if shown.join(" ") != title {
            bad.push(format!("{name}: title shown as {shown:?}"));
        }
        for m in must {
            if !texts.iter().any(|t| t.s == *m) {
                bad.push(format!("{name}: {m:?} not shown"));
            }
        }
        if bad.is_empty() {
            let _ = std::fs::remove_file(path);
        } else {
            bad.push(format!("(kept {})", path.display()));
        }
        bad
    }

    /// `n` names of about `len` characters (distinct, with spaces to wrap at).
    fn names(n: usize, len: usize, stem: &str) -> Vec<String> {
        (0..n).map(|i| format!("{stem} {i} {}", "wide name ".repeat(len / 10)).chars().take(len).collect::<String>().trim().to_string()).collect()
    }

    fn long_title() -> String {
        "A long title that goes on: performance of every scheme relative to the baseline, over every kernel and configuration, with the geometric mean, in percent".into()
    }

    /// Asserts `bad` is empty, printing every problem first.
    fn assert_clean(bad: Vec<String>) {
        for b in &bad {
            eprintln!("{b}");
        }
        assert!(bad.is_empty(), "{} text placement problems (listed above)", bad.len());
    }

    #[test]
    fn plot_bars_text_inside_canvas_smallest_and_largest() {
        let mut bad = Vec::new();
        let path = temp_svg("bars-small");
        let (groups, series) = (vec!["a".to_string()], vec![("s".to_string(), vec![1.0])]);
        let title = "Preemptible faults without faults: performance relative to stall-on-fault";
        bars(&path, title, "y", &groups, &series).unwrap();
        bad.extend(check(&path, title, &["a", "s", "geomean", "y"]));
        // (the report's case: faults --kernels vecadd,sgemm)
        let path = temp_svg("bars-faults");
        let groups = vec!["vecadd".to_string(), "sgemm".to_string()];
        let series: Vec<(String, Vec<f64>)> = ["WD-commit", "WD-lastchk", "RQ", "OL-4KB", "OL-8KB", "OL-4KB-h", "OL-8KB-h"].iter().map(|n| (n.to_string(), vec![0.93, 1.02])).collect();
        let yl = "performance relative to stall-on-fault (%)";
        bars(&path, title, yl, &groups, &series).unwrap();
        let must: Vec<&str> = groups.iter().chain(series.iter().map(|s| &s.0)).map(|s| s.as_str()).chain([yl]).collect();
        bad.extend(check(&path, title, &must));
        let path = temp_svg("bars-large");
        let groups = names(40, 40, "group");
        let series: Vec<(String, Vec<f64>)> = names(8, 40, "series").into_iter().enumerate().map(|(s, n)| (n, (0..40).map(|g| 0.05 + ((g * 7 + s * 3) % 23) as f64 * 0.4).collect())).collect();
        let title = long_title();
        let yl = "performance of every scheme relative to the baseline, over every kernel (%)";
        bars(&path, &title, yl, &groups, &series).unwrap();
        let must: Vec<&str> = groups.iter().chain(series.iter().map(|s| &s.0)).map(|s| s.as_str()).chain([yl]).collect();
        bad.extend(check(&path, &title, &must));
        assert_clean(bad);
    }

    #[test]
    fn plot_lines_text_inside_canvas_smallest_and_largest() {
        let mut bad = Vec::new();
        let path = temp_svg("lines-small");
        let title = "vecadd on fermi15: execution time relative to the best point";
        lines(&path, title, "x", "y", &[1.0, 2.0], &[("s".to_string(), vec![Some(1.0), Some(2.0)])]).unwrap();
        bad.extend(check(&path, title, &["s", "x", "y"]));
        let path = temp_svg("lines-large");
        let xs: Vec<f64> = (0..40).map(|i| 1000.0 * (1.0 + i as f64).powi(3) + 0.5).collect();
        let series: Vec<(String, Vec<Option<f64>>)> = names(8, 40, "series").into_iter().enumerate().map(|(s, n)| (n, (0..40).map(|i| if (i + s) % 9 == 0 { None } else { Some(((i * 5 + s) % 17) as f64 * 1.3) }).collect())).collect();
        let title = long_title();
        let (xl, yl) = ("scratchpad bytes per block of the kernel (B)", "execution time relative to the best point of the sweep (best = 1)");
        lines(&path, &title, xl, yl, &xs, &series).unwrap();
        let must: Vec<&str> = series.iter().map(|s| s.0.as_str()).chain([xl, yl]).collect();
        bad.extend(check(&path, &title, &must));
        assert_clean(bad);
    }

    #[test]
    fn plot_boxes_text_inside_canvas_smallest_and_largest() {
        let mut bad = Vec::new();
        let path = temp_svg("boxes-small");
        let title = "Execution time per specification on fermi15, relative to the slowest block-allocation point";
        boxes(&path, title, "y", &["a".to_string()], &[("s".to_string(), vec![vec![1.0, 2.0, 3.0]])]).unwrap();
        bad.extend(check(&path, title, &["a", "s", "y"]));
        let path = temp_svg("boxes-large");
        let groups = names(40, 40, "group");
        let series: Vec<(String, Vec<Vec<f64>>)> = names(8, 40, "series").into_iter().enumerate().map(|(s, n)| (n, (0..40).map(|g| (0..7).map(|k| ((g + s * 3 + k * 5) % 13) as f64 * 0.7).collect()).collect())).collect();
        let title = long_title();
        let yl = "execution time relative to the slowest block-allocation point (slowest block = 1)";
        boxes(&path, &title, yl, &groups, &series).unwrap();
        let must: Vec<&str> = groups.iter().chain(series.iter().map(|s| &s.0)).map(|s| s.as_str()).chain([yl]).collect();
        bad.extend(check(&path, &title, &must));
        assert_clean(bad);
    }

    #[test]
    fn tukey_quartiles_whiskers_and_outliers() {
        let t = tukey(&[1.0, 2.0, 3.0, 4.0, 5.0, 100.0]).unwrap();
        assert_eq!((t.q1, t.median, t.q3), (2.25, 3.5, 4.75));
        // (reach 3.75: whiskers at 1 and 5, 100 beyond)
        assert_eq!((t.lo, t.hi), (1.0, 5.0));
        assert_eq!(t.outliers, vec![100.0]);
        let one = tukey(&[7.0]).unwrap();
        assert_eq!((one.q1, one.median, one.q3, one.lo, one.hi), (7.0, 7.0, 7.0, 7.0, 7.0));
        assert!(tukey(&[]).is_none());
    }
}
