//! SVG bar charts of results (grouped bars: one group per kernel, one bar per series, values
//! relative to a baseline at 1.0), written with the `svg` crate.

use anyhow::{anyhow, Result};
use std::path::Path;
use svg::node::element::{Line, Rectangle, Text};
use svg::Document;

const COLORS: [&str; 8] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];

fn text(x: f64, y: f64, s: &str, size: u32, anchor: &str) -> Text {
    Text::new().add(svg::node::Text::new(s)).set("x", x).set("y", y).set("font-size", size).set("font-family", "sans-serif").set("text-anchor", anchor)
}

/// The step of a y axis from 0 in 5 steps to a round top (1, 2, 2.5 or 5 times a power of
/// ten per step) just above `ytop`.
fn round_step(ytop: f64) -> f64 {
    let raw = (ytop * 1.05).max(1e-9) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw).unwrap_or(10.0 * mag)
}

/// A white `w` x `h` canvas with its title.
fn canvas(w: f64, h: f64, title: &str) -> Document {
    let doc = Document::new().set("viewBox", (0, 0, w as i64, h as i64)).set("width", w as i64).set("height", h as i64);
    let doc = doc.add(Rectangle::new().set("x", 0).set("y", 0).set("width", w).set("height", h).set("fill", "white"));
    doc.add(text(w / 2.0, 20.0, title, 14, "middle"))
}

/// The y axis' grid lines from `x0` to `x1` and labels, at 0 to 5 steps (`y`: a value's
/// height).
fn y_grid(mut doc: Document, step: f64, x0: f64, x1: f64, y: &dyn Fn(f64) -> f64) -> Document {
    for k in 0..=5 {
        let v = step * k as f64;
        doc = doc.add(Line::new().set("x1", x0).set("x2", x1).set("y1", y(v)).set("y2", y(v)).set("stroke", "#ddd"));
        let label = if step >= 1.0 { format!("{v:.0}") } else { format!("{v:.2}") };
        doc = doc.add(text(x0 - 6.0, y(v) + 4.0, &label, 11, "end"));
    }
    doc
}

/// Writes a grouped bar chart: `groups` along x (a geometric-mean group is added), one bar per
/// series in each, heights as given (1.0 = the baseline, drawn as a dashed line).
pub fn bars(path: &Path, title: &str, groups: &[String], series: &[(String, Vec<f64>)]) -> Result<()> {
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
    let top = series.iter().flat_map(|(_, v)| v.iter().copied()).fold(1.1f64, f64::max);
    let top = (top * 5.0).ceil() / 5.0;
    let (left, right, up, down) = (60.0, 20.0, 40.0, 90.0);
    let gw = 16.0 * series.len() as f64 + 20.0;
    let w = left + right + gw * groups.len() as f64;
    let h = 360.0;
    let plot_h = h - up - down;
    let y = |v: f64| up + plot_h * (1.0 - v / top);
    let mut doc = canvas(w, h, title);
    let mut t = 0.0;
    while t <= top + 1e-9 {
        doc = doc.add(Line::new().set("x1", left).set("x2", w - right).set("y1", y(t)).set("y2", y(t)).set("stroke", "#ddd"));
        doc = doc.add(text(left - 6.0, y(t) + 4.0, &format!("{:.0}%", 100.0 * t), 11, "end"));
        t += 0.2;
    }
    for (gi, g) in groups.iter().enumerate() {
        let x0 = left + gw * gi as f64 + 10.0;
        for (si, (_, v)) in series.iter().enumerate() {
            let x = x0 + 16.0 * si as f64;
            doc = doc.add(Rectangle::new().set("x", x).set("y", y(v[gi])).set("width", 14).set("height", y(0.0) - y(v[gi])).set("fill", COLORS[si % COLORS.len()]));
        }
        doc = doc.add(text(x0 + 8.0 * series.len() as f64, h - down + 16.0, g, 11, "middle"));
    }
    doc = doc.add(Line::new().set("x1", left).set("x2", w - right).set("y1", y(1.0)).set("y2", y(1.0)).set("stroke", "black").set("stroke-dasharray", "4 3"));
    doc = doc.add(Line::new().set("x1", left).set("x2", left).set("y1", up).set("y2", y(0.0)).set("stroke", "black"));
    for (si, (name, _)) in series.iter().enumerate() {
        let x = left + 110.0 * si as f64;
        doc = doc.add(Rectangle::new().set("x", x).set("y", h - 40.0).set("width", 12).set("height", 12).set("fill", COLORS[si % COLORS.len()]));
        doc = doc.add(text(x + 16.0, h - 30.0, name, 11, "start"));
    }
    svg::save(path, &doc).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// Writes a line chart: x values along the bottom, one polyline (with point markers) per
/// series; a series' `None` points are gaps. The y axis starts at 0.
pub fn lines(path: &Path, title: &str, xlabel: &str, ylabel: &str, xs: &[f64], series: &[(String, Vec<Option<f64>>)]) -> Result<()> {
    use svg::node::element::{Circle, Polyline};
    if xs.len() < 2 || series.iter().any(|(_, v)| v.len() != xs.len() || v.iter().flatten().any(|y| !y.is_finite() || *y < 0.0)) {
        return Err(anyhow!("plot {}: at least two x values, and every series one finite value (or none) per x", path.display()));
    }
    let (xmin, xmax) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let ytop = series.iter().flat_map(|(_, v)| v.iter().flatten().copied()).fold(0.0f64, f64::max);
    let step = round_step(ytop);
    let top = step * 5.0;
    let (left, right, up, down) = (70.0, 20.0, 40.0, 90.0);
    let (w, h) = (640.0, 380.0);
    let (pw, ph) = (w - left - right, h - up - down);
    let x = |v: f64| left + pw * if xmax > xmin { (v - xmin) / (xmax - xmin) } else { 0.5 };
    let y = |v: f64| up + ph * (1.0 - v / top);
    let mut doc = y_grid(canvas(w, h, title), step, left, w - right, &y);
    let every = xs.len().div_ceil(12);
    for (i, &xv) in xs.iter().enumerate() {
        if i % every == 0 || i + 1 == xs.len() {
            doc = doc.add(text(x(xv), h - down + 16.0, &format!("{xv}"), 11, "middle"));
        }
    }
    doc = doc.add(text(left + pw / 2.0, h - down + 34.0, xlabel, 12, "middle"));
    doc = doc.add(text(16.0, up + ph / 2.0, ylabel, 12, "middle").set("transform", format!("rotate(-90 16 {})", up + ph / 2.0)));
    doc = doc.add(Line::new().set("x1", left).set("x2", left).set("y1", up).set("y2", y(0.0)).set("stroke", "black"));
    doc = doc.add(Line::new().set("x1", left).set("x2", w - right).set("y1", y(0.0)).set("y2", y(0.0)).set("stroke", "black"));
    for (si, (name, v)) in series.iter().enumerate() {
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
        let lx = left + 110.0 * si as f64;
        doc = doc.add(Rectangle::new().set("x", lx).set("y", h - 40.0).set("width", 12).set("height", 12).set("fill", color));
        doc = doc.add(text(lx + 16.0, h - 30.0, name, 11, "start"));
    }
    svg::save(path, &doc).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
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
    let top = step * 5.0;
    let (left, right, up, down) = (70.0, 20.0, 40.0, 90.0);
    let bw = 14.0;
    let gw = (bw + 4.0) * series.len() as f64 + 24.0;
    let w = (left + right + gw * groups.len() as f64).max(420.0);
    let h = 380.0;
    let ph = h - up - down;
    let y = |v: f64| up + ph * (1.0 - v / top);
    let mut doc = y_grid(canvas(w, h, title), step, left, w - right, &y);
    doc = doc.add(text(16.0, up + ph / 2.0, ylabel, 12, "middle").set("transform", format!("rotate(-90 16 {})", up + ph / 2.0)));
    doc = doc.add(Line::new().set("x1", left).set("x2", left).set("y1", up).set("y2", y(0.0)).set("stroke", "black"));
    for (gi, g) in groups.iter().enumerate() {
        let x0 = left + gw * gi as f64 + 12.0;
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
        doc = doc.add(text(x0 + (bw + 4.0) * series.len() as f64 / 2.0, h - down + 16.0, g, 11, "middle"));
    }
    for (si, (name, _)) in series.iter().enumerate() {
        let x = left + 110.0 * si as f64;
        doc = doc.add(Rectangle::new().set("x", x).set("y", h - 40.0).set("width", 12).set("height", 12).set("fill", COLORS[si % COLORS.len()]));
        doc = doc.add(text(x + 16.0, h - 30.0, name, 11, "start"));
    }
    svg::save(path, &doc).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
