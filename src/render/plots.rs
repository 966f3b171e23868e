//! `pie-chart`, `scatter-chart` and `heatmap` as inline SVG.

use std::f64::consts::PI;

use super::esc;
use super::numbers::{fit, readable};
use super::svg::{self, c, pct, polar, Room, Scale};
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
            "{}: {} ({}%)",
            slice.label,
            readable(slice.value),
            readable((share * 1000.0).round() / 10.0)
        ));
        let class = svg::series(i);
        if share >= 0.9999 {
            out.push_str(&format!(
                "<circle class=\"s {class}\" cx=\"{cx}\" cy=\"{cy}\" r=\"{r}\">{tip}</circle>"
            ));
        } else if share > 0.0 {
            let end = start + share * 2.0 * PI;
            let (x0, y0) = polar(cx, cy, r, start);
            let (x1, y1) = polar(cx, cy, r, end);
            let large = u8::from(share > 0.5);
            out.push_str(&format!(
                "<path class=\"s cut {class}\" d=\"M{cx},{cy} L{},{} A{r},{r} 0 {large} 1 {},{} Z\">{tip}</path>",
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
            "<circle class=\"hole\" cx=\"{cx}\" cy=\"{cy}\" r=\"{}\"/>",
            r * 0.55
        ));
    }
    out.push_str("</svg>");
    let names: Vec<String> = config
        .slices
        .iter()
        .map(|s| {
            let share = (s.value.max(0.0) / total * 1000.0).round() / 10.0;
            format!("{} ({}%)", s.label, readable(share))
        })
        .collect();
    out.push_str(&svg::legend(names.iter().map(String::as_str)));
    out
}

/// Points of each series on two numeric axes.
pub fn scatter(config: &ScatterChartConfig, room: Room) -> String {
    let points = || config.series.iter().flat_map(|s| s.points.iter());
    let ys = svg::ticks_of(points().map(|p| p.y), false, 6);
    let y_labels = ys.labels(7);
    let left = svg::widest(&y_labels);
    let rough = svg::ticks_of(points().map(|p| p.x), false, 8).labels(6);
    let fit = svg::tick_room(room.plot_px(left), svg::widest(&rough));
    let xs = svg::ticks_of(points().map(|p| p.x), false, fit);
    let (x_scale, y_scale) = (Scale::of(&xs), Scale::of(&ys));
    let mut out = svg::open("Scatter chart", room, left, false, false);
    out.push_str(&svg::value_axis_y(&ys, &y_labels));
    out.push_str(&svg::value_axis_x(&xs, &xs.labels(6)));
    for (i, series) in config.series.iter().enumerate() {
        let class = svg::series(i);
        for p in &series.points {
            out.push_str(&format!(
                "<circle class=\"pt {class}\" cx=\"{}\" cy=\"{}\" r=\"4\">{}</circle>",
                pct(x_scale.at(p.x, 0.0, 1.0)),
                pct(1.0 - y_scale.at(p.y, 0.0, 1.0)),
                svg::tip(&format!(
                    "{}: ({}, {})",
                    series.name,
                    readable(p.x),
                    readable(p.y)
                ))
            ));
        }
    }
    out.push_str(&svg::close(None, None));
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

/// Most rows whose cells show their value: a plot 11rem high gives each about 22 px.
const LABELLED_ROWS: usize = 8;

/// Rows of cells coloured by value; each cell's value is its tooltip and, when it fits,
/// its text.
pub fn heatmap(config: &HeatmapConfig, room: Room) -> String {
    let rows = config.y_labels.len().max(1);
    let cols = config.x_labels.len().max(1);
    let (lo, hi) =
        svg::extent(config.values.iter().flatten().flatten().copied()).unwrap_or((0.0, 1.0));
    let scale = Scale {
        min: lo,
        max: if hi > lo { hi } else { lo + 1.0 },
    };
    let left = svg::left_category_chars(&config.y_labels);
    let (cw, ch) = (1.0 / cols as f64, 1.0 / rows as f64);
    let cell_chars = ((room.plot_px(left) * cw - 6.0) / 7.2).max(0.0) as usize;
    // One style for every cell: all compacted when any full value would not fit.
    let full = config
        .values
        .iter()
        .flatten()
        .flatten()
        .all(|v| readable(*v).chars().count() <= cell_chars);
    let cell_label = |v: f64| if full { readable(v) } else { fit(v, 0) };
    let mut out = svg::open("Heatmap", room, left, false, false);
    for (r, row) in config.values.iter().enumerate() {
        for (k, value) in row.iter().enumerate() {
            let (x, y) = (k as f64 * cw, r as f64 * ch);
            let (fill, label) = match value.filter(|v| v.is_finite()) {
                Some(v) => (shade(scale.at(v, 0.0, 1.0)), cell_label(v)),
                None => ("#f3f4f6".to_owned(), String::new()),
            };
            let name = format!(
                "{} / {}: {}",
                config.y_labels.get(r).map_or("", String::as_str),
                config.x_labels.get(k).map_or("", String::as_str),
                if label.is_empty() { "no value" } else { &label }
            );
            let class = if label.is_empty() {
                "cell none"
            } else {
                "cell"
            };
            out.push_str(&format!(
                "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\">{}</rect>",
                pct(x),
                pct(y),
                pct(cw),
                pct(ch),
                svg::tip(&name)
            ));
            let fits = label.chars().count() <= cell_chars && rows <= LABELLED_ROWS;
            if fits && !label.is_empty() {
                let dark = scale.at(value.unwrap_or(0.0), 0.0, 1.0) > 0.55;
                out.push_str(&format!(
                    "<text class=\"{}\" x=\"{}\" y=\"{}\" dy=\"0.32em\" text-anchor=\"middle\">{}</text>",
                    if dark { "on-dark" } else { "on-light" },
                    pct(x + cw / 2.0),
                    pct(y + ch / 2.0),
                    esc(&label)
                ));
            }
        }
    }
    out.push_str(&svg::category_axis_left(&config.y_labels, |r| {
        (r as f64 + 0.5) * ch
    }));
    out.push_str(&svg::category_axis(&config.x_labels, room, left, |k| {
        (k as f64 + 0.5) * cw
    }));
    out.push_str(&svg::close(None, None));
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
