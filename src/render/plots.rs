//! `pie-chart`, `scatter-chart` and `heatmap` as inline SVG.

use std::f64::consts::PI;

use maud::{html, PreEscaped};

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
    let marks = html! {
        (PreEscaped(svg::value_axis_y(&ys, &y_labels)))
        (PreEscaped(svg::value_axis_x(&xs, &xs.labels(6))))
        @for (i, series) in config.series.iter().enumerate() {
            @for p in &series.points {
                circle class={ "pt " (svg::series(i)) } cx=(pct(x_scale.at(p.x, 0.0, 1.0)))
                    cy=(pct(1.0 - y_scale.at(p.y, 0.0, 1.0))) r="4" {
                    title { (series.name) ": (" (readable(p.x)) ", " (readable(p.y)) ")" }
                }
            }
        }
    };
    let mut out = svg::chart("Scatter chart", room, left, (None, None), marks);
    out.push_str(&svg::legend(config.series.iter().map(|s| s.name.as_str())));
    out
}

/// Viridis at nine even steps, low to high: a sequential palette that reads in order for
/// every common colour blindness and in grey, on light pages and dark walls alike. The
/// legend's bar is the same stops as a CSS gradient (assets/types.css, `.hm-bar`).
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x47, 0x2d, 0x7b),
    (0x3b, 0x52, 0x8b),
    (0x2c, 0x72, 0x8e),
    (0x21, 0x91, 0x8c),
    (0x28, 0xae, 0x80),
    (0x5e, 0xc9, 0x62),
    (0xad, 0xdc, 0x30),
    (0xfd, 0xe7, 0x25),
];

/// The palette's colour at `t` (0 low to 1 high), between its two nearest stops.
fn shade(t: f64) -> (u8, u8, u8) {
    let at = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (at.floor() as usize).min(VIRIDIS.len() - 2);
    let f = at - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Whether text on `colour` is better dark than white (WCAG's relative luminance: dark
/// text wins above about 0.18).
fn wants_dark_text((r, g, b): (u8, u8, u8)) -> bool {
    let linear = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b) > 0.179
}

/// Most rows whose cells show their value: a plot 11rem high gives each about 22 px.
const LABELLED_ROWS: usize = 8;
/// The legend's ends at most this wide: longer values are compacted (`12.3M`).
const LEGEND_CHARS: usize = 9;

/// Rows of cells coloured by value (viridis, low to high) under a legend of the scale;
/// each cell's value is its tooltip and, when it fits, its text.
pub fn heatmap(config: &HeatmapConfig, room: Room) -> String {
    let rows = config.y_labels.len().max(1);
    let cols = config.x_labels.len().max(1);
    let values = || config.values.iter().flatten().flatten().copied();
    let extent = svg::extent(values());
    let (lo, hi) = extent.unwrap_or((0.0, 1.0));
    let scale = Scale {
        min: lo,
        max: if hi > lo { hi } else { lo + 1.0 },
    };
    let left = svg::left_category_chars(&config.y_labels);
    let (cw, ch) = (1.0 / cols as f64, 1.0 / rows as f64);
    let cell_chars = ((room.plot_px(left) * cw - 6.0) / 7.2).max(0.0) as usize;
    // One style for every cell: all compacted when any full value would not fit.
    let full = values().all(|v| readable(v).chars().count() <= cell_chars);
    let cell_label = |v: f64| if full { readable(v) } else { fit(v, 0) };
    let missing = config.values.iter().flatten().any(|v| v.is_none());
    // Values that would not fit the cells of a plot a phone wide (about 300 px) are hidden
    // there (`cv`, by the plot's width in the page's CSS).
    let phone_chars = ((300.0 - left as f64 * 7.2) * cw / 7.2) as usize;
    let narrow = if values().all(|v| cell_label(v).chars().count() < phone_chars) {
        ""
    } else {
        " cv"
    };
    let cells = html! {
        @for (r, row) in config.values.iter().enumerate() {
            @for (k, value) in row.iter().enumerate() {
                @let (x, y) = (k as f64 * cw, r as f64 * ch);
                @let name = |shown: &str| format!(
                    "{} / {}: {shown}",
                    config.y_labels.get(r).map_or("", String::as_str),
                    config.x_labels.get(k).map_or("", String::as_str),
                );
                @match value.filter(|v| v.is_finite()) {
                    Some(v) => {
                        @let colour = shade(scale.at(v, 0.0, 1.0));
                        @let label = cell_label(v);
                        rect.cell x=(pct(x)) y=(pct(y)) width=(pct(cw)) height=(pct(ch)) fill=(hex(colour)) {
                            title { (name(&label)) }
                        }
                        @if label.chars().count() <= cell_chars && rows <= LABELLED_ROWS {
                            text class={ (if wants_dark_text(colour) { "on-light" } else { "on-dark" }) (narrow) }
                                x=(pct(x + cw / 2.0)) y=(pct(y + ch / 2.0)) dy="0.32em" text-anchor="middle" {
                                (label)
                            }
                        }
                    }
                    None => rect.cell.none x=(pct(x)) y=(pct(y)) width=(pct(cw)) height=(pct(ch)) {
                        title { (name("no value")) }
                    },
                }
            }
        }
    };
    let marks = html! {
        (cells)
        (PreEscaped(svg::category_axis_left(&config.y_labels, |r| (r as f64 + 0.5) * ch)))
        (PreEscaped(svg::category_axis(&config.x_labels, room, left, |k| (k as f64 + 0.5) * cw)))
    };
    let mut out = svg::chart("Heatmap", room, left, (None, None), marks);
    let legend = html! {
        div.hm-scale {
            @if let Some((lo, hi)) = extent {
                span.hm-end { (fit(lo, LEGEND_CHARS)) }
                span.hm-bar role="img" aria-label=(format!("Colour scale from {} (dark purple) to {} (yellow)", readable(lo), readable(hi))) {}
                span.hm-end { (fit(hi, LEGEND_CHARS)) }
            }
            @if missing {
                span.hm-none { span.hm-sw aria-hidden="true" {} "no value" }
            }
        }
    };
    out.push_str(&legend.into_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn heat(config: serde_json::Value, columns: i64) -> String {
        heatmap(
            &serde_json::from_value(config).unwrap(),
            Room::columns(columns),
        )
    }

    #[test]
    fn a_heatmap_has_a_scale_from_its_lowest_to_its_highest_value() {
        let html = heat(
            json!({"x_labels": ["a", "b", "c"], "y_labels": ["r"], "values": [[1250.5, null, 98765432]]}),
            6,
        );
        assert!(
            html.contains("<span class=\"hm-end\">1,250.5</span><span class=\"hm-bar\" role=\"img\" \
                           aria-label=\"Colour scale from 1,250.5 (dark purple) to 98,765,432 (yellow)\"></span>\
                           <span class=\"hm-end\">98.8M</span>"),
            "{html}"
        );
        assert!(
            html.contains("no value</span>"),
            "the empty cell's swatch: {html}"
        );
        // The lowest cell is the palette's first colour under white text, the highest its
        // last under dark text.
        assert!(
            html.contains("fill=\"#440154\"><title>r / a: 1,250.5</title>"),
            "{html}"
        );
        assert!(
            html.contains("fill=\"#fde725\"><title>r / c: 98,765,432</title>"),
            "{html}"
        );
        assert!(html.contains("class=\"on-dark\""), "{html}");
        assert!(html.contains("class=\"on-light\""), "{html}");
        assert!(html.contains("<rect class=\"cell none\""), "{html}");
        assert_eq!(
            html.matches("<svg class=\"chart").count(),
            1,
            "one chart: {html}"
        );
    }

    #[test]
    fn the_palette_runs_from_dark_to_light() {
        assert_eq!(hex(shade(0.0)), "#440154");
        assert_eq!(hex(shade(0.5)), "#21918c");
        assert_eq!(hex(shade(1.0)), "#fde725");
        assert_eq!(hex(shade(7.0)), "#fde725", "clamped");
        assert!(!wants_dark_text(shade(0.3)) && wants_dark_text(shade(0.8)));
    }

    #[test]
    fn heatmap_labels_are_escaped() {
        let html = heat(
            json!({"x_labels": ["<script>x</script>"], "y_labels": ["<b>"], "values": [[1]]}),
            6,
        );
        assert!(!html.contains("<script") && !html.contains("<b>"), "{html}");
        assert!(
            html.contains("&lt;b&gt; / &lt;script&gt;x&lt;/script&gt;: 1"),
            "{html}"
        );
    }

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
