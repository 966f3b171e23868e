//! `line-chart`, `area-chart` and `bar-chart` as inline SVG.

use maud::{html, PreEscaped};

use super::numbers::{readable, Ticks};
use super::svg::{self, c, pct, Room, Scale, FIELD};
use crate::pin_types::charts::{BarChartConfig, ChartConfig, Series};

fn values(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| s.data.iter().flatten().copied())
}

fn series_names(series: &[Series]) -> impl Iterator<Item = &str> {
    series.iter().map(|s| s.name.as_str())
}

/// Most value ticks up a chart's side: its plot is at least 11rem high, about 35 px a tick.
const Y_TICKS: usize = 6;

/// Most points drawn as dots (each with its tooltip); beyond, lines alone keep pages light.
const MAX_DOTS: usize = 300;

/// Value ticks up the side and their labels (compacted beyond 7 characters).
fn y_axis(values: impl Iterator<Item = f64>, with_zero: bool) -> (Ticks, Vec<String>) {
    let ticks = svg::ticks_of(values, with_zero, Y_TICKS);
    let labels = ticks.labels(7);
    (ticks, labels)
}

/// A line chart, or an area chart when `filled`. `null` values leave gaps.
pub fn line(config: &ChartConfig, filled: bool, room: Room) -> String {
    let n = config.labels.len();
    let (ticks, tick_labels) = y_axis(values(&config.series), filled);
    let left = svg::widest(&tick_labels);
    let scale = Scale::of(&ticks);
    let x_of = |i: usize| {
        if n <= 1 {
            0.5
        } else {
            i as f64 / (n - 1) as f64
        }
    };
    let y_of = |v: f64| 1.0 - scale.at(scale.clamp(v), 0.0, 1.0);
    let base = y_of(0.0) * FIELD;
    let dots_wanted = values(&config.series).count() <= MAX_DOTS;
    let (mut marks, mut dots) = (Vec::new(), Vec::new());
    for (s, series) in config.series.iter().enumerate() {
        let class = svg::series(s);
        // Runs of consecutive values; a null ends a run.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (i, value) in series.data.iter().enumerate() {
            match value {
                Some(v) if v.is_finite() => {
                    if let Some(run) = runs.last_mut() {
                        run.push((x_of(i), y_of(*v)));
                    }
                    if dots_wanted {
                        let label = config.labels.get(i).map_or("", String::as_str);
                        let tip = format!("{label} – {}: {}", series.name, readable(*v));
                        dots.push(html! {
                            circle class={ "pt " (class) } cx=(pct(x_of(i))) cy=(pct(y_of(*v))) r="3" {
                                (PreEscaped(svg::tip(&tip)))
                            }
                        });
                    }
                }
                _ => runs.push(Vec::new()),
            }
        }
        for run in runs.iter().filter(|r| r.len() > 1) {
            let points: Vec<String> = run
                .iter()
                .map(|(x, y)| format!("{},{}", c(x * FIELD), c(y * FIELD)))
                .collect();
            let points = points.join(" ");
            let (first, last) = (run[0].0 * FIELD, run[run.len() - 1].0 * FIELD);
            marks.push(html! {
                @if filled {
                    polygon class={ "ar " (class) }
                        points={ (c(first)) "," (c(base)) " " (points) " " (c(last)) "," (c(base)) } {}
                }
                polyline class={ "ln " (class) } points=(points) {}
            });
        }
    }
    let drawn = html! {
        (PreEscaped(svg::value_axis_y(&ticks, &tick_labels)))
        (svg::field(html! { @for mark in &marks { (mark) } }))
        @for dot in &dots { (dot) }
        (PreEscaped(svg::category_axis(&config.labels, room, left, x_of)))
    };
    let name = if filled { "Area chart" } else { "Line chart" };
    let titles = (config.x_label.as_deref(), config.y_label.as_deref());
    let mut out = svg::chart(name, room, left, titles, drawn);
    out.push_str(&svg::legend(series_names(&config.series)));
    out
}

/// One bar in value space: its label, its series, and where it starts and ends.
struct Bar {
    label: usize,
    series: usize,
    from: f64,
    to: f64,
}

/// Bars side by side per label, or stacked (positives up, negatives down from 0).
fn bars(config: &BarChartConfig) -> Vec<Bar> {
    let stacked = config.stacked.unwrap_or(false);
    let mut out = Vec::new();
    for label in 0..config.labels.len() {
        let (mut up, mut down) = (0.0, 0.0);
        for (series, s) in config.series.iter().enumerate() {
            let Some(v) = s
                .data
                .get(label)
                .copied()
                .flatten()
                .filter(|v| v.is_finite())
            else {
                continue;
            };
            let (from, to) = match (stacked, v >= 0.0) {
                (false, _) => (0.0, v),
                (true, true) => (up, up + v),
                (true, false) => (down, down + v),
            };
            if stacked && v >= 0.0 {
                up += v;
            } else if stacked {
                down += v;
            }
            out.push(Bar {
                label,
                series,
                from,
                to,
            });
        }
    }
    out
}

/// A bar chart, vertical or horizontal, grouped or stacked.
pub fn bar(config: &BarChartConfig, room: Room) -> String {
    let stacked = config.stacked.unwrap_or(false);
    let horizontal = config.horizontal.unwrap_or(false);
    let bars = bars(config);
    let extents = || bars.iter().flat_map(|b| [b.from, b.to]);
    let (ticks, tick_labels, left) = if horizontal {
        let left = svg::left_category_chars(&config.labels);
        let rough = svg::ticks_of(extents(), true, 8).labels(6);
        let fit = svg::tick_room(room.plot_px(left), svg::widest(&rough));
        let ticks = svg::ticks_of(extents(), true, fit);
        (ticks, ticks.labels(6), left)
    } else {
        let (ticks, labels) = y_axis(extents(), true);
        let left = svg::widest(&labels);
        (ticks, labels, left)
    };
    let scale = Scale::of(&ticks);
    let n = config.labels.len().max(1);
    let groups = if stacked {
        1
    } else {
        config.series.len().max(1)
    };
    // Along the category axis: each label gets a band, each series a slot in it.
    let band = 1.0 / n as f64;
    let slot = band * 0.8 / groups as f64;
    // The category axis's title goes with its labels: under vertical bars, above
    // horizontal ones (where the value axis's goes under).
    let (under, above) = if horizontal {
        (config.y_label.as_deref(), config.x_label.as_deref())
    } else {
        (config.x_label.as_deref(), config.y_label.as_deref())
    };
    let rects = bars.iter().map(|b| {
        let offset = if stacked { 0 } else { b.series };
        let start = b.label as f64 * band + band * 0.1 + offset as f64 * slot;
        let tip = format!(
            "{} – {}: {}",
            config.labels.get(b.label).map_or("", String::as_str),
            config.series.get(b.series).map_or("", |s| s.name.as_str()),
            readable(b.to - b.from)
        );
        let (a, z) = (scale.at(b.from, 0.0, 1.0), scale.at(b.to, 0.0, 1.0));
        let length = (z - a).abs().max(0.002);
        let (x, y, w, h) = if horizontal {
            (a.min(z), start, length, slot)
        } else {
            (start, 1.0 - a.max(z), slot, length)
        };
        html! {
            rect class={ "s " (svg::series(b.series)) } x=(pct(x)) y=(pct(y)) width=(pct(w)) height=(pct(h)) {
                (PreEscaped(svg::tip(&tip)))
            }
        }
    });
    let center = |i: usize| (i as f64 + 0.5) * band;
    let drawn = html! {
        @if horizontal {
            (PreEscaped(svg::value_axis_x(&ticks, &tick_labels)))
        } @else {
            (PreEscaped(svg::value_axis_y(&ticks, &tick_labels)))
        }
        @for rect in rects { (rect) }
        @if horizontal {
            (PreEscaped(svg::category_axis_left(&config.labels, center)))
        } @else {
            (PreEscaped(svg::category_axis(&config.labels, room, left, center)))
        }
    };
    let mut out = svg::chart("Bar chart", room, left, (under, above), drawn);
    out.push_str(&svg::legend(series_names(&config.series)));
    out
}

/// A series' values as a tiny line (KPI sparklines).
pub fn sparkline(values: &[f64]) -> String {
    if values.len() < 2 {
        return String::new();
    }
    let Some((lo, hi)) = svg::extent(values.iter().copied()) else {
        return String::new();
    };
    let scale = Scale {
        min: lo,
        max: if hi > lo { hi } else { lo + 1.0 },
    };
    let step = 100.0 / (values.len() - 1) as f64;
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{},{}", c(i as f64 * step), c(scale.at(*v, 28.0, 2.0))))
        .collect();
    html! {
        svg.spark viewBox="0 0 100 30" preserveAspectRatio="none" role="img" aria-label="Trend"
            xmlns="http://www.w3.org/2000/svg" {
            polyline.ln.s0 points=(points.join(" ")) {}
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bar_config(stacked: bool, horizontal: bool) -> BarChartConfig {
        serde_json::from_value(json!({
            "labels": ["a", "b"],
            "series": [{"name": "s1", "data": [1, -2]}, {"name": "s2", "data": [3, null]}],
            "stacked": stacked, "horizontal": horizontal
        }))
        .unwrap()
    }

    #[test]
    fn bars_in_every_arrangement() {
        for (stacked, horizontal) in [(false, false), (true, false), (false, true), (true, true)] {
            let html = bar(&bar_config(stacked, horizontal), Room::columns(4));
            assert_eq!(
                html.matches("<rect class=").count(),
                3,
                "one bar per value: {html}"
            );
        }
        let stacked = bars(&bar_config(true, false));
        let (a1, a2) = (&stacked[0], &stacked[1]);
        assert_eq!((a1.from, a1.to, a2.from, a2.to), (0.0, 1.0, 1.0, 4.0));
    }

    #[test]
    fn a_null_breaks_the_line() {
        let config: ChartConfig = serde_json::from_value(json!({
            "labels": ["1", "2", "3", "4", "5"],
            "series": [{"name": "s", "data": [1, 2, null, 4, 5]}]
        }))
        .unwrap();
        let room = Room::columns(6);
        assert_eq!(line(&config, false, room).matches("<polyline").count(), 2);
        assert_eq!(line(&config, true, room).matches("<polygon").count(), 2);
    }

    fn texts(html: &str) -> Vec<&str> {
        html.split("<text ")
            .skip(1)
            .filter_map(|t| {
                t.split_once('>')
                    .and_then(|(_, rest)| rest.split_once("</text>"))
            })
            .map(|(label, _)| label)
            .collect()
    }

    #[test]
    fn bar_values_get_round_ticks_with_separators() {
        let config: BarChartConfig = serde_json::from_value(json!({
            "labels": ["a", "b", "c", "d"],
            "series": [{"name": "hits", "data": [4, 950, 2500, 6300]}]
        }))
        .unwrap();
        let html = bar(&config, Room::columns(4));
        assert_eq!(
            texts(&html),
            ["0", "2,000", "4,000", "6,000", "8,000", "a", "b", "c", "d"]
        );
        assert!(html.contains("<title>d – hits: 6,300</title>"), "{html}");
        assert!(!html.contains("viewBox"), "no scaled text: {html}");
        let horizontal = BarChartConfig {
            horizontal: Some(true),
            ..config
        };
        let html = bar(&horizontal, Room::columns(3));
        let labels = texts(&html);
        assert!(labels.len() <= 4 + 8 && labels.contains(&"0"), "{labels:?}");
        assert!(
            labels
                .iter()
                .any(|l| l.ends_with(",000") || l.ends_with('k')),
            "{labels:?}"
        );
    }

    #[test]
    fn chart_text_is_escaped() {
        let config: ChartConfig = serde_json::from_value(json!({
            "labels": ["<x>"],
            "series": [{"name": "<script>", "data": [1]}],
            "x_label": "a&b", "y_label": "\"q\""
        }))
        .unwrap();
        let html = line(&config, false, Room::columns(4));
        assert!(
            !html.contains("<x>") && !html.contains("<script>"),
            "{html}"
        );
        assert!(
            html.contains("&lt;x&gt;")
                && html.contains("a&amp;b")
                && html.contains("&quot;q&quot;")
        );
    }
}
