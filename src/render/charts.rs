//! `line-chart`, `area-chart` and `bar-chart` as inline SVG.

use super::svg::{self, c, Scale, BOTTOM, LEFT, RIGHT, TOP};
use super::{esc, num};
use crate::pin_types::charts::{BarChartConfig, ChartConfig, Series};

fn values(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| s.data.iter().flatten().copied())
}

fn series_names(series: &[Series]) -> impl Iterator<Item = &str> {
    series.iter().map(|s| s.name.as_str())
}

/// A line chart, or an area chart when `filled`. `null` values leave gaps.
pub fn line(config: &ChartConfig, filled: bool) -> String {
    let n = config.labels.len();
    let scale = Scale::of(values(&config.series), filled);
    let x_of = |i: usize| {
        if n <= 1 {
            (LEFT + RIGHT) / 2.0
        } else {
            LEFT + i as f64 * (RIGHT - LEFT) / (n - 1) as f64
        }
    };
    let base = scale.at(scale.clamp(0.0), BOTTOM, TOP);
    let mut out = svg::open(if filled { "Area chart" } else { "Line chart" });
    out.push_str(&svg::value_axis(scale));
    for (s, series) in config.series.iter().enumerate() {
        let color = svg::color(s);
        // Runs of consecutive values; a null ends a run.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (i, value) in series.data.iter().enumerate() {
            match value {
                Some(v) if v.is_finite() => {
                    let point = (x_of(i), scale.at(*v, BOTTOM, TOP));
                    if let Some(run) = runs.last_mut() {
                        run.push(point);
                    }
                }
                _ => runs.push(Vec::new()),
            }
        }
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let points: Vec<String> = run
                .iter()
                .map(|(x, y)| format!("{},{}", c(*x), c(*y)))
                .collect();
            if filled && run.len() > 1 {
                let (first, last) = (run[0].0, run[run.len() - 1].0);
                out.push_str(&format!(
                    "<polygon points=\"{},{} {} {},{}\" fill=\"{color}\" fill-opacity=\"0.2\"/>",
                    c(first),
                    c(base),
                    points.join(" "),
                    c(last),
                    c(base)
                ));
            }
            if run.len() > 1 {
                out.push_str(&format!(
                    "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>",
                    points.join(" ")
                ));
            }
            for (x, y) in run {
                out.push_str(&format!(
                    "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{color}\"/>",
                    c(*x),
                    c(*y)
                ));
            }
        }
    }
    out.push_str(&svg::category_axis(&config.labels, x_of));
    out.push_str(&svg::axis_titles(
        config.x_label.as_deref(),
        config.y_label.as_deref(),
    ));
    out.push_str("</svg>");
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
pub fn bar(config: &BarChartConfig) -> String {
    let stacked = config.stacked.unwrap_or(false);
    let horizontal = config.horizontal.unwrap_or(false);
    let bars = bars(config);
    let scale = Scale::of(bars.iter().flat_map(|b| [b.from, b.to]), true);
    let n = config.labels.len().max(1);
    let groups = if stacked {
        1
    } else {
        config.series.len().max(1)
    };
    // Along the category axis: each label gets a band, each series a slot in it.
    let (band_from, band_to) = if horizontal {
        (TOP, svg::BOTTOM)
    } else {
        (LEFT, RIGHT)
    };
    let band = (band_to - band_from) / n as f64;
    let slot = band * 0.8 / groups as f64;
    let mut out = svg::open("Bar chart");
    if !horizontal {
        out.push_str(&svg::value_axis(scale));
    }
    for b in &bars {
        let offset = if stacked { 0 } else { b.series };
        let start = band_from + b.label as f64 * band + band * 0.1 + offset as f64 * slot;
        let tip = svg::tip(&format!(
            "{} – {}: {}",
            config.labels.get(b.label).map_or("", String::as_str),
            config.series.get(b.series).map_or("", |s| s.name.as_str()),
            num(b.to - b.from)
        ));
        let (x, y, w, h) = if horizontal {
            let (a, z) = (scale.at(b.from, LEFT, RIGHT), scale.at(b.to, LEFT, RIGHT));
            (a.min(z), start, (z - a).abs(), slot)
        } else {
            let (a, z) = (scale.at(b.from, BOTTOM, TOP), scale.at(b.to, BOTTOM, TOP));
            (start, a.min(z), slot, (z - a).abs())
        };
        out.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{tip}</rect>",
            c(x),
            c(y),
            c(w.max(0.5)),
            c(h.max(0.5)),
            svg::color(b.series)
        ));
    }
    let center = |i: usize| band_from + (i as f64 + 0.5) * band;
    if horizontal {
        for (i, label) in config.labels.iter().enumerate() {
            out.push_str(&svg::text(LEFT - 6.0, center(i) + 4.0, "end", label));
        }
        for v in [scale.min, scale.max] {
            out.push_str(&svg::text(
                scale.at(v, LEFT, RIGHT),
                BOTTOM + 16.0,
                "middle",
                &num(v),
            ));
        }
    } else {
        out.push_str(&svg::category_axis(&config.labels, center));
    }
    out.push_str(&svg::axis_titles(
        config.x_label.as_deref(),
        config.y_label.as_deref(),
    ));
    out.push_str("</svg>");
    out.push_str(&svg::legend(series_names(&config.series)));
    out
}

/// A series' values as a tiny line (KPI sparklines).
pub fn sparkline(values: &[f64]) -> String {
    if values.len() < 2 {
        return String::new();
    }
    let scale = Scale::of(values.iter().copied(), false);
    let step = 100.0 / (values.len() - 1) as f64;
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{},{}", c(i as f64 * step), c(scale.at(*v, 28.0, 2.0))))
        .collect();
    format!(
        "<svg class=\"spark\" viewBox=\"0 0 100 30\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\"><polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/></svg>",
        esc("Trend"),
        points.join(" "),
        svg::color(0)
    )
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
            let html = bar(&bar_config(stacked, horizontal));
            assert_eq!(
                html.matches("<rect x=").count(),
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
        assert_eq!(line(&config, false).matches("<polyline").count(), 2);
        assert_eq!(line(&config, true).matches("<polygon").count(), 2);
    }
}
