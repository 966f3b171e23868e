//! `pie-chart`, `scatter-chart` and `heatmap` as inline SVG.

use std::f64::consts::PI;

use super::svg::{self, c, polar, Scale, BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH};
use super::{esc, num};
use crate::pin_types::{
    heatmap::HeatmapConfig, pie_chart::PieChartConfig, scatter_chart::ScatterChartConfig,
};

/// Slices of a whole, as a pie or a donut, with a legend of shares.
pub fn pie(config: &PieChartConfig) -> String {
    let total: f64 = config.slices.iter().map(|s| s.value.max(0.0)).sum();
    if total <= 0.0 {
        return "<p class=\"muted\">No data</p>".to_owned();
    }
    let (cx, cy, r) = (130.0, 130.0, 120.0);
    let mut out = String::from(
        "<svg class=\"chart pie\" viewBox=\"0 0 260 260\" role=\"img\" aria-label=\"Pie chart\" \
         xmlns=\"http://www.w3.org/2000/svg\">",
    );
    let mut start = 0.0;
    for (i, slice) in config.slices.iter().enumerate() {
        let share = slice.value.max(0.0) / total;
        let tip = svg::tip(&format!(
            "{}: {} ({:.1}%)",
            slice.label,
            num(slice.value),
            share * 100.0
        ));
        let color = svg::color(i);
        if share >= 0.9999 {
            out.push_str(&format!(
                "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"{r}\" fill=\"{color}\">{tip}</circle>"
            ));
        } else if share > 0.0 {
            let end = start + share * 2.0 * PI;
            let (x0, y0) = polar(cx, cy, r, start);
            let (x1, y1) = polar(cx, cy, r, end);
            let large = u8::from(share > 0.5);
            out.push_str(&format!(
                "<path d=\"M{cx},{cy} L{},{} A{r},{r} 0 {large} 1 {},{} Z\" fill=\"{color}\" stroke=\"#fff\">{tip}</path>",
                c(x0),
                c(y0),
                c(x1),
                c(y1)
            ));
            start = end;
        }
    }
    if config.donut.unwrap_or(false) {
        out.push_str(&format!(
            "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"{}\" fill=\"#fff\"/>",
            r * 0.55
        ));
    }
    out.push_str("</svg>");
    let names: Vec<String> = config
        .slices
        .iter()
        .map(|s| format!("{} ({:.1}%)", s.label, s.value.max(0.0) / total * 100.0))
        .collect();
    out.push_str(&svg::legend(names.iter().map(String::as_str)));
    out
}

/// Points of each series on two numeric axes.
pub fn scatter(config: &ScatterChartConfig) -> String {
    let points = || config.series.iter().flat_map(|s| s.points.iter());
    let xs = Scale::of(points().map(|p| p.x), false);
    let ys = Scale::of(points().map(|p| p.y), false);
    let mut out = svg::open("Scatter chart");
    out.push_str(&svg::value_axis(ys));
    for (i, series) in config.series.iter().enumerate() {
        for p in &series.points {
            out.push_str(&format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" fill-opacity=\"0.8\">{}</circle>",
                c(xs.at(p.x, LEFT, RIGHT)),
                c(ys.at(p.y, BOTTOM, TOP)),
                svg::color(i),
                svg::tip(&format!("{}: ({}, {})", series.name, num(p.x), num(p.y)))
            ));
        }
    }
    for v in [xs.min, (xs.min + xs.max) / 2.0, xs.max] {
        out.push_str(&svg::text(
            xs.at(v, LEFT, RIGHT),
            BOTTOM + 16.0,
            "middle",
            &num(v),
        ));
    }
    out.push_str("</svg>");
    out.push_str(&svg::legend(config.series.iter().map(|s| s.name.as_str())));
    out
}

/// A blue of the given intensity (0 light to 1 dark).
fn shade(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let mix = |light: f64, dark: f64| (light + (dark - light) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(239.0, 8.0),
        mix(246.0, 81.0),
        mix(255.0, 156.0)
    )
}

/// Rows of cells coloured by value; each cell's value is its tooltip and, when it fits,
/// its text.
pub fn heatmap(config: &HeatmapConfig) -> String {
    let rows = config.y_labels.len().max(1);
    let cols = config.x_labels.len().max(1);
    let scale = Scale::of(config.values.iter().flatten().flatten().copied(), false);
    let (left, top) = (LEFT + 40.0, TOP);
    let cw = (WIDTH - 10.0 - left) / cols as f64;
    let ch = (HEIGHT - 40.0 - top) / rows as f64;
    let mut out = svg::open("Heatmap");
    for (r, row) in config.values.iter().enumerate() {
        for (k, value) in row.iter().enumerate() {
            let (x, y) = (left + k as f64 * cw, top + r as f64 * ch);
            let (fill, label) = match value.filter(|v| v.is_finite()) {
                Some(v) => (shade(scale.at(v, 0.0, 1.0)), num(v)),
                None => ("#f3f4f6".to_owned(), String::new()),
            };
            let name = format!(
                "{} / {}: {}",
                config.y_labels.get(r).map_or("", String::as_str),
                config.x_labels.get(k).map_or("", String::as_str),
                if label.is_empty() { "no value" } else { &label }
            );
            out.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#fff\">{}</rect>",
                c(x),
                c(y),
                c(cw),
                c(ch),
                svg::tip(&name)
            ));
            if cw >= 28.0 && ch >= 14.0 && !label.is_empty() {
                let ink = if scale.at(value.unwrap_or(0.0), 0.0, 1.0) > 0.55 {
                    "#fff"
                } else {
                    "#111"
                };
                out.push_str(&format!(
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\" fill=\"{ink}\">{}</text>",
                    c(x + cw / 2.0),
                    c(y + ch / 2.0 + 3.5),
                    esc(&svg::shorten(&label, 6))
                ));
            }
        }
    }
    for (r, label) in config.y_labels.iter().enumerate() {
        out.push_str(&svg::text(
            left - 6.0,
            top + (r as f64 + 0.5) * ch + 4.0,
            "end",
            label,
        ));
    }
    let step = cols.div_ceil(12).max(1);
    for (k, label) in config.x_labels.iter().enumerate().step_by(step) {
        out.push_str(&svg::text(
            left + (k as f64 + 0.5) * cw,
            top + rows as f64 * ch + 16.0,
            "middle",
            label,
        ));
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_whole_pie_is_a_circle_and_an_empty_one_says_so() {
        let whole: PieChartConfig =
            serde_json::from_value(json!({"slices": [{"label": "all", "value": 3}]})).unwrap();
        assert!(pie(&whole).contains("<circle"));
        let empty: PieChartConfig =
            serde_json::from_value(json!({"slices": [{"label": "none", "value": 0}]})).unwrap();
        assert!(pie(&empty).contains("No data"));
    }
}
