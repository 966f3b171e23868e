//! `gauge` as an inline SVG half dial.

use std::f64::consts::PI;

use super::esc;
use super::numbers::readable;
use super::svg::{c, polar, Scale};
use crate::pin_types::gauge::GaugeConfig;

/// An arc of the dial between two values, as a thick stroke of `color` (a threshold's,
/// checked by the pin type) or, for the bare dial (`None`), the `track` class's.
fn arc(scale: Scale, from: f64, to: f64, color: Option<&str>) -> String {
    let (cx, cy, r) = (150.0, 140.0, 110.0);
    let angle = |v: f64| -PI / 2.0 + scale.at(scale.clamp(v), 0.0, PI);
    let (a, b) = (angle(from), angle(to));
    if b - a <= 0.0 {
        return String::new();
    }
    let (x0, y0) = polar(cx, cy, r, a);
    let (x1, y1) = polar(cx, cy, r, b);
    let paint = match color {
        Some(color) => format!("stroke=\"{}\"", esc(color)),
        None => "class=\"track\"".to_owned(),
    };
    format!(
        "<path d=\"M{},{} A{r},{r} 0 0 1 {},{}\" fill=\"none\" {paint} stroke-width=\"22\"/>",
        c(x0),
        c(y0),
        c(x1),
        c(y1)
    )
}

/// A half dial from `min` to `max` with coloured bands and the value's needle.
pub fn gauge(config: &GaugeConfig) -> String {
    let scale = Scale {
        min: config.min,
        max: config.max.max(config.min + f64::EPSILON),
    };
    let mut out = format!(
        "<div class=\"dial\"><svg class=\"chart gauge\" viewBox=\"0 0 300 152\" role=\"img\" aria-label=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\">",
        esc(config.label.as_deref().unwrap_or("Gauge"))
    );
    out.push_str(&arc(scale, config.min, config.max, None));
    let mut thresholds = config.thresholds.clone().unwrap_or_default();
    thresholds.sort_by(|a, b| a.value.total_cmp(&b.value));
    for (i, t) in thresholds.iter().enumerate() {
        let end = thresholds.get(i + 1).map_or(config.max, |next| next.value);
        out.push_str(&arc(scale, t.value, end, Some(&t.color)));
    }
    let angle = -PI / 2.0 + scale.at(scale.clamp(config.value), 0.0, PI);
    let (x, y) = polar(150.0, 140.0, 95.0, angle);
    out.push_str(&format!(
        "<line class=\"needle\" x1=\"150\" y1=\"140\" x2=\"{}\" y2=\"{}\" stroke-width=\"3\"/>\
         <circle class=\"hub\" cx=\"150\" cy=\"140\" r=\"6\"/>",
        c(x),
        c(y)
    ));
    out.push_str("</svg>");
    // The ends of the dial in HTML under it: text in the scaled SVG would shrink with the
    // card.
    out.push_str(&format!(
        "<p class=\"ends\"><span>{}</span><span>{}</span></p></div>",
        esc(&readable(config.min)),
        esc(&readable(config.max))
    ));
    let unit = config.unit.as_deref().map(esc).unwrap_or_default();
    out.push_str(&format!(
        "<p class=\"figure\">{}<span class=\"unit\">{unit}</span></p>",
        esc(&readable(config.value))
    ));
    if let Some(label) = &config.label {
        out.push_str(&format!("<p class=\"label\">{}</p>", esc(label)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gauge_clamps_its_needle_and_colours_bands() {
        let config: GaugeConfig = serde_json::from_value(json!({
            "value": 250, "min": 0, "max": 100,
            "thresholds": [{"value": 80, "color": "red"}, {"value": 50, "color": "#fa0"}]
        }))
        .unwrap();
        let html = gauge(&config);
        assert!(html.contains("stroke=\"red\"") && html.contains("stroke=\"#fa0\""));
        assert!(
            html.contains("x2=\"245.0\" y2=\"140.0\""),
            "needle at the end: {html}"
        );
        assert!(html.contains(">250<"), "the value itself is shown");
    }
}
