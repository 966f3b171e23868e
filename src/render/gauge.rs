//! `gauge` as a half dial: an inline SVG arc with the value written in its hollow.
//!
//! The arc fills from `min` to the value in the colour of the band the value is in, the
//! threshold bands run in a thin ring around it, and a short needle marks the value. The
//! figures are HTML laid over and under the SVG, sized by the dial's own box (container
//! units, see assets/types.css): they grow with the dial on a wall and never shrink below
//! the page's small text, at any pin size.

use std::f64::consts::PI;

use maud::{html, Markup};

use super::numbers::{fit, readable};
use super::svg::{c, polar, Scale};
use crate::pin_types::gauge::{GaugeConfig, Threshold};

/// The dial's centre and radii in its 300 x 165 viewBox: the value arc (26 wide) and the
/// ring of threshold bands outside it (7 wide).
const CX: f64 = 150.0;
const CY: f64 = 150.0;
const R: f64 = 108.0;
const RING: f64 = 128.0;

/// The figures' widest form, in characters: longer values are compacted (`12.3M`).
const VALUE_CHARS: usize = 7;
const END_CHARS: usize = 6;

/// The path of the arc of radius `r` between two values of `scale` (clamped to it), or
/// `None` when it is empty.
fn arc_path(scale: Scale, r: f64, from: f64, to: f64) -> Option<String> {
    let angle = |v: f64| -PI / 2.0 + scale.at(scale.clamp(v), 0.0, PI);
    let (a, b) = (angle(from), angle(to));
    if b - a <= 1e-9 {
        return None;
    }
    let (x0, y0) = polar(CX, CY, r, a);
    let (x1, y1) = polar(CX, CY, r, b);
    Some(format!(
        "M{},{} A{r},{r} 0 0 1 {},{}",
        c(x0),
        c(y0),
        c(x1),
        c(y1)
    ))
}

/// The band `value` is in: the last threshold at or below it.
fn band(thresholds: &[Threshold], value: f64) -> Option<&Threshold> {
    thresholds.iter().rev().find(|t| t.value <= value)
}

/// The size class of the figure in the hollow, by how wide it is written: a short one is
/// drawn larger.
fn figure_size(value: &str, unit: &str) -> &'static str {
    let chars = value.chars().count() + unit.chars().count().div_ceil(2);
    match chars {
        0..=4 => "f-l",
        5..=7 => "f-m",
        _ => "f-s",
    }
}

/// A half dial from `min` to `max` with coloured bands, the value's arc and needle, the
/// value in the hollow and the dial's ends under it.
pub fn gauge(config: &GaugeConfig) -> String {
    let scale = Scale {
        min: config.min,
        max: config.max.max(config.min + f64::EPSILON),
    };
    let mut thresholds = config.thresholds.clone().unwrap_or_default();
    thresholds.sort_by(|a, b| a.value.total_cmp(&b.value));
    let bands: Vec<(String, &str)> = thresholds
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let end = thresholds.get(i + 1).map_or(config.max, |next| next.value);
            arc_path(scale, RING, t.value, end).map(|d| (d, t.color.as_str()))
        })
        .collect();
    let fill = arc_path(scale, R, config.min, config.value);
    let colour = band(&thresholds, config.value).map(|t| t.color.as_str());
    let angle = -PI / 2.0 + scale.at(scale.clamp(config.value), 0.0, PI);
    let (x0, y0) = polar(CX, CY, R - 19.0, angle);
    let (x1, y1) = polar(CX, CY, R + 19.0, angle);
    let unit = config.unit.as_deref().unwrap_or("");
    let value = fit(config.value, VALUE_CHARS);
    let full = format!("{}{unit}", readable(config.value));
    let name = format!(
        "{}: {full} ({} to {})",
        config.label.as_deref().unwrap_or("Gauge"),
        readable(config.min),
        readable(config.max)
    );
    let dial: Markup = html! {
        div.dial {
            svg.chart.gauge viewBox="0 0 300 165" preserveAspectRatio="xMidYMax meet" role="img"
                aria-label=(name) xmlns="http://www.w3.org/2000/svg" {
                @if let Some(d) = arc_path(scale, R, config.min, config.max) {
                    path.track d=(d) fill="none" stroke-width="26" {}
                }
                @for (d, color) in &bands {
                    path d=(d) fill="none" stroke=(color) stroke-width="7" {}
                }
                @if let Some(d) = &fill {
                    @match colour {
                        Some(color) => path d=(d) fill="none" stroke=(color) stroke-width="26" {},
                        None => path.fill d=(d) fill="none" stroke-width="26" {},
                    }
                }
                line.needle x1=(c(x0)) y1=(c(y0)) x2=(c(x1)) y2=(c(y1)) stroke-width="4" {}
            }
            p class={ "dial-value " (figure_size(&value, unit)) } title=(full) {
                (value) @if !unit.is_empty() { span.unit { (unit) } }
            }
            p.ends {
                span { (fit(config.min, END_CHARS)) }
                span { (fit(config.max, END_CHARS)) }
            }
        }
        @if let Some(label) = &config.label { p.label.dial-label { (label) } }
    };
    dial.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dial(config: serde_json::Value) -> String {
        gauge(&serde_json::from_value(config).unwrap())
    }

    #[test]
    fn the_arc_fills_to_the_value_in_its_bands_colour_and_stops_at_the_end() {
        let html = dial(json!({
            "value": 250, "min": 0, "max": 100, "unit": "%",
            "thresholds": [{"value": 80, "color": "red"}, {"value": 50, "color": "#fa0"}]
        }));
        // Both bands in the ring, the value arc in the top band's colour, full (clamped).
        assert!(
            html.contains("stroke=\"#fa0\" stroke-width=\"7\""),
            "{html}"
        );
        assert!(html.contains("stroke=\"red\" stroke-width=\"7\""), "{html}");
        assert!(
            html.contains(
                "A108,108 0 0 1 258,150\" fill=\"none\" stroke=\"red\" stroke-width=\"26\""
            ),
            "the value arc ends at the dial's end: {html}"
        );
        assert!(
            html.contains("x2=\"277\" y2=\"150\""),
            "needle at the end: {html}"
        );
        assert!(
            html.contains(">250<span class=\"unit\">%</span></p>"),
            "{html}"
        );
        assert!(html.contains("<span>0</span><span>100</span>"), "{html}");
    }

    #[test]
    fn below_every_band_the_arc_takes_the_palettes_colour() {
        let html = dial(json!({
            "value": 10, "min": 0, "max": 100,
            "thresholds": [{"value": 50, "color": "orange"}]
        }));
        assert!(html.contains("<path class=\"fill\""), "{html}");
        assert!(
            !html.contains("stroke=\"orange\" stroke-width=\"26\""),
            "{html}"
        );
        let empty = dial(json!({"value": -5, "min": 0, "max": 100}));
        assert!(
            !empty.contains("class=\"fill\""),
            "nothing to fill: {empty}"
        );
    }

    #[test]
    fn figures_are_readable_and_compacted_to_fit_the_hollow() {
        let html = dial(json!({"value": 12345678.9, "min": 0, "max": 20000000, "label": "Rows"}));
        assert!(
            html.contains("title=\"12,345,678.9\""),
            "the full value: {html}"
        );
        assert!(
            html.contains("class=\"dial-value f-m\" title=\"12,345,678.9\">12.3M</p>"),
            "{html}"
        );
        assert!(html.contains("<span>20M</span>"), "{html}");
        assert!(html.contains("aria-label=\"Rows: 12,345,678.9 (0 to 20,000,000)\""));
        let short = dial(json!({"value": 72.5, "min": 0, "max": 100, "unit": "%"}));
        assert!(short.contains("class=\"dial-value f-m\""), "{short}");
        let tiny = dial(json!({"value": 7, "min": 0, "max": 10}));
        assert!(tiny.contains("class=\"dial-value f-l\""), "{tiny}");
    }

    #[test]
    fn labels_and_units_are_escaped() {
        let html = dial(json!({
            "value": 1, "min": 0, "max": 2, "label": "<script>x</script>", "unit": "<b>"
        }));
        assert!(!html.contains("<script") && !html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
    }
}
