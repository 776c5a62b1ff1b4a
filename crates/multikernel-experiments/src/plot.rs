//! A small SVG line-plot writer for the reproduction figures.
//!
//! Hand-written rather than `plotters`: plotters' text layout needs either the system's
//! fontconfig or a bundled font, and our figures only need axes, ticks, polylines and a legend,
//! which SVG renders with the viewer's own fonts.

use std::fmt::Write;

/// One curve.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line plot with optional logarithmic axes.
#[derive(Debug, Clone, Default)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// "Nice" tick positions covering [lo, hi] (about `n` of them).
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-300);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + 1e-9 * span && out.len() < 50 {
        out.push(if t.abs() < 1e-12 * span { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-3 {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

impl LinePlot {
    /// Renders the plot as a standalone SVG document. Points that are not finite (or not
    /// positive on a log axis) are skipped.
    pub fn to_svg(&self) -> String {
        let tx = |v: f64| if self.log_x { v.log10() } else { v };
        let ty = |v: f64| if self.log_y { v.log10() } else { v };
        let ok = |x: f64, y: f64| {
            x.is_finite() && y.is_finite() && (!self.log_x || x > 0.0) && (!self.log_y || y > 0.0)
        };
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&(x, y)| ok(x, y))
            .map(|(x, y)| (tx(x), ty(y)))
            .collect();
        let (mut x0, mut x1, mut y0, mut y1) = pts.iter().fold(
            (
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ),
            |(a, b, c, d), &(x, y)| (a.min(x), b.max(x), c.min(y), d.max(y)),
        );
        if pts.is_empty() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if x1 - x0 < 1e-12 {
            x0 -= 0.5;
            x1 += 0.5;
        }
        if y1 - y0 < 1e-12 {
            y0 -= 0.5;
            y1 += 0.5;
        }
        let pad = 0.04 * (y1 - y0);
        y0 -= pad;
        y1 += pad;
        let pw = W - LEFT - RIGHT;
        let ph = H - TOP - BOTTOM;
        let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
        let py = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;

        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let axis_ticks = |lo: f64, hi: f64, log: bool| -> Vec<(f64, String)> {
            if log {
                let t = ticks(lo, hi, 6);
                t.into_iter()
                    .map(|v| (v, fmt_tick(10f64.powf(v))))
                    .collect()
            } else {
                ticks(lo, hi, 6)
                    .into_iter()
                    .map(|v| (v, fmt_tick(v)))
                    .collect()
            }
        };
        for (v, label) in axis_ticks(x0, x1, self.log_x) {
            let x = px(v);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{TOP}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 16.0,
                escape(&label)
            );
        }
        for (v, label) in axis_ticks(y0, y1, self.log_y) {
            let y = py(v);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                escape(&label)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 15.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        for (k, series) in self.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let path: Vec<String> = series
                .points
                .iter()
                .filter(|&&(x, y)| ok(x, y))
                .map(|&(x, y)| format!("{:.1},{:.1}", px(tx(x)), py(ty(y))))
                .collect();
            if path.len() == 1 {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{}" r="3" fill="{color}"/>"#,
                    path[0].replace(',', "\" cy=\"")
                );
            } else if !path.is_empty() {
                let _ = writeln!(
                    s,
                    r#"<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{}"/>"#,
                    path.join(" ")
                );
            }
            let ly = TOP + 10.0 + 18.0 * k as f64;
            let lx = LEFT + pw + 12.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
                lx + 20.0,
                lx + 26.0,
                ly + 4.0,
                escape(&series.name)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_has_one_polyline_per_series_and_escapes_names() {
        let p = LinePlot {
            title: "a < b".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: true,
            series: vec![
                Series {
                    name: "one".into(),
                    points: vec![(0.0, 1.0), (1.0, 10.0), (2.0, 100.0)],
                },
                Series {
                    name: "two & more".into(),
                    points: vec![(0.0, 2.0), (2.0, -1.0), (3.0, 5.0)],
                },
            ],
        };
        let svg = p.to_svg();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a &lt; b"));
        assert!(svg.contains("two &amp; more"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn ticks_cover_range() {
        let t = ticks(0.0, 1.0, 5);
        assert!(t.first().copied().unwrap() <= 0.2 && t.last().copied().unwrap() >= 0.8);
    }
}
