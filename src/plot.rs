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
    let mut doc = Document::new().set("viewBox", (0, 0, w as i64, h as i64)).set("width", w as i64).set("height", h as i64);
    doc = doc.add(Rectangle::new().set("x", 0).set("y", 0).set("width", w).set("height", h).set("fill", "white"));
    doc = doc.add(text(w / 2.0, 20.0, title, 14, "middle"));
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
