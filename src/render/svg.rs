//! What the SVG charts share: the palette, value scales, axes and legends. Colours are
//! presentation attributes (`fill`, `stroke`), never `style`, so the pages' CSP needs no
//! inline styles.

use super::{esc, num};

/// Series colours, in order (repeats after eight).
const PALETTE: [&str; 8] = [
    "#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#06b6d4", "#ec4899", "#84cc16",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Width and height of every chart's viewBox; the plot area inside it.
pub const WIDTH: f64 = 600.0;
pub const HEIGHT: f64 = 260.0;
pub const LEFT: f64 = 56.0;
pub const RIGHT: f64 = 580.0;
pub const TOP: f64 = 26.0;
pub const BOTTOM: f64 = 222.0;

/// A coordinate with one decimal, as SVG attributes want it.
pub fn c(v: f64) -> String {
    format!("{v:.1}")
}

/// The point at `angle` (radians, clockwise from 12 o'clock) on a circle.
pub fn polar(cx: f64, cy: f64, r: f64, angle: f64) -> (f64, f64) {
    (cx + r * angle.sin(), cy - r * angle.cos())
}

/// A linear map from values to pixels.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub min: f64,
    pub max: f64,
}

impl Scale {
    /// The range of `values` (finite ones), widened to include 0 when asked, never empty.
    pub fn of(values: impl IntoIterator<Item = f64>, with_zero: bool) -> Scale {
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            min = min.min(v);
            max = max.max(v);
        }
        if !min.is_finite() {
            (min, max) = (0.0, 1.0);
        }
        if with_zero {
            min = min.min(0.0);
            max = max.max(0.0);
        }
        if max <= min {
            (min, max) = (min - 1.0, max + 1.0);
        }
        Scale { min, max }
    }

    /// Where `v` falls between `from` (at `min`) and `to` (at `max`).
    pub fn at(&self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.min) / (self.max - self.min) * (to - from)
    }

    /// `v` clamped into the scale.
    pub fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.min, self.max)
    }
}

/// Opens a chart's `<svg>` with an accessible name.
pub fn open(label: &str) -> String {
    format!(
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\">",
        esc(label)
    )
}

/// A text label at (x, y).
pub fn text(x: f64, y: f64, anchor: &str, content: &str) -> String {
    format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" font-size=\"11\" fill=\"#555\">{}</text>",
        c(x),
        c(y),
        esc(&shorten(content, 18))
    )
}

/// `text` cut to `max` characters with an ellipsis.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// The value axis on the left: a grid line and label at min, middle and max.
pub fn value_axis(scale: Scale) -> String {
    let mut out = String::new();
    for v in [scale.min, (scale.min + scale.max) / 2.0, scale.max] {
        let y = scale.at(v, BOTTOM, TOP);
        out.push_str(&format!(
            "<line x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{0}\" y2=\"{0}\" stroke=\"#e5e7eb\"/>",
            c(y)
        ));
        out.push_str(&text(LEFT - 6.0, y + 4.0, "end", &num(v)));
    }
    out
}

/// Category labels under the plot, thinned to at most about ten.
pub fn category_axis(labels: &[String], x_of: impl Fn(usize) -> f64) -> String {
    let step = labels.len().div_ceil(10).max(1);
    labels
        .iter()
        .enumerate()
        .step_by(step)
        .map(|(i, label)| text(x_of(i), BOTTOM + 16.0, "middle", label))
        .collect()
}

/// Axis titles, when given.
pub fn axis_titles(x: Option<&str>, y: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(x) = x {
        out.push_str(&text((LEFT + RIGHT) / 2.0, HEIGHT - 4.0, "middle", x));
    }
    if let Some(y) = y {
        out.push_str(&text(4.0, 14.0, "start", y));
    }
    out
}

/// A legend under a chart: a colour swatch and a name per entry.
pub fn legend<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let items: String = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            format!(
                "<li><svg width=\"10\" height=\"10\" aria-hidden=\"true\"><rect width=\"10\" height=\"10\" fill=\"{}\"/></svg> {}</li>",
                color(i),
                esc(name)
            )
        })
        .collect();
    format!("<ul class=\"legend\">{items}</ul>")
}

/// A `<title>` child: the tooltip browsers show on hover, without script.
pub fn tip(content: &str) -> String {
    format!("<title>{}</title>", esc(content))
}
