//! What the SVG charts share: the plot box and its axes, series colours, legends.
//!
//! A chart is a `.plot` box that the page's CSS sizes (it fills its pin) holding an `<svg>`
//! without a `viewBox`: one user unit is one CSS pixel, so text keeps the page's type size
//! whatever the card's width (CONTRACT.md 17). Marks are placed in percentages of the plot
//! (SVG's `x`, `y`, `width`, `height`, `cx`, `cy` accept them); lines and areas, which take
//! none, go in a nested [`field`] stretched over the plot with non-scaling strokes. Labels
//! sit outside the plot (`overflow: visible`) in the box's padding, which classes reserve:
//! `yl<n>` for left labels of about n characters, `xt` and `yt` for axis titles.
//!
//! Colours are classes (`s0`..`s7`, the palette in the page's CSS, with a light and a dark
//! set), never `style`, so the pages' CSP needs no inline styles.

use maud::{html, Markup, PreEscaped};

use super::numbers::Ticks;

/// Colours in the palette; series beyond repeat them.
pub const COLORS: usize = 8;

/// Series colours on light pages: Okabe and Ito's colour-blind safe set, each darkened as
/// far as it takes to stand 3:1 against the white card (WCAG 1.4.11 for graphics).
pub const LIGHT: [&str; COLORS] = [
    "#0072b2", "#b07a00", "#009e73", "#d55e00", "#b8588f", "#3584b8", "#8f7f00", "#5f6b7a",
];

/// The same hues, in the same order, on dark pages and in kiosk mode.
pub const DARK: [&str; COLORS] = [
    "#4a8fe0", "#e69f00", "#00b382", "#f07a3a", "#d98cba", "#8fd3f7", "#f0e442", "#aab3bd",
];

/// `--p<i>` of each colour of `set`.
fn palette_vars(set: &[&str]) -> String {
    set.iter()
        .enumerate()
        .map(|(i, c)| format!("--p{i}:{c};"))
        .collect()
}

/// The palette as CSS: `--p<i>` per theme, and the `s<i>` classes that give a mark its
/// colour in `--s` (drawn as fill or stroke by the mark's own class).
pub fn palette_css() -> &'static str {
    static CSS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CSS.get_or_init(|| {
        let classes: String = (0..COLORS)
            .map(|i| format!(".s{i}{{--s:var(--p{i})}}"))
            .collect();
        format!(
            ":root{{{}}}@media (prefers-color-scheme:dark){{:root{{{}}}}}{classes}",
            palette_vars(&LIGHT),
            palette_vars(&DARK),
        )
    })
}

/// The dark palette of kiosk mode, whatever the reader's theme (in kiosk pages only).
pub fn kiosk_palette_css() -> &'static str {
    static CSS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CSS.get_or_init(|| format!("body.kiosk{{{}}}", palette_vars(&DARK)))
}

/// The class of series `i`'s colour.
pub fn series(i: usize) -> String {
    format!("s{}", i % COLORS)
}

/// The side of a [`field`]'s coordinate square.
pub const FIELD: f64 = 1000.0;

/// The size of chart text (0.8rem) in CSS px, and the width of one of its characters,
/// roughly: what the server assumes when it thins labels, having no browser to measure with.
const EM_PX: f64 = 12.8;
const CHAR_PX: f64 = 7.2;

/// How wide a chart will be drawn, in CSS px: the pin's content width on a 1400 px wide
/// page, the narrowest the pages promise to fit (kiosk screens are wider and their type
/// grows less than their cells).
#[derive(Debug, Clone, Copy)]
pub struct Room {
    pub px: f64,
}

impl Room {
    /// The content width of a pin `columns` wide on the 12-column grid (1352 px between
    /// the page's margins, 12 px gaps, 14 px padding and a border each side).
    pub fn columns(columns: i64) -> Room {
        let w = columns.clamp(1, 12) as f64;
        Room {
            px: w * (1352.0 - 11.0 * 12.0) / 12.0 + (w - 1.0) * 12.0 - 30.0,
        }
    }

    /// What is left for the plot itself once the `.plot` box's padding has taken its share:
    /// left labels of `left_chars` (the `yl<n>` classes' `0.6n + 0.8em`) and 1.2em right.
    pub fn plot_px(self, left_chars: usize) -> f64 {
        (self.px - (left_class(left_chars) as f64 * 0.6 + 2.0) * EM_PX).max(60.0)
    }
}

/// A fraction of the plot as an SVG percentage, to two decimals without trailing zeros
/// (`50%`, `26.67%`): a chart repeats these in every mark, and the page's weight is budgeted.
pub fn pct(fraction: f64) -> String {
    let mut text = short(&format!("{:.2}", fraction * 100.0));
    text.push('%');
    text
}

/// A coordinate of a [`field`], to one decimal without a trailing zero.
pub fn c(v: f64) -> String {
    short(&format!("{v:.1}"))
}

/// `fixed` (a number written with a fixed count of decimals) without its trailing zeros,
/// or its point when nothing is left after it; `-0` is `0`.
fn short(fixed: &str) -> String {
    let trimmed = if fixed.contains('.') {
        fixed.trim_end_matches('0').trim_end_matches('.')
    } else {
        fixed
    };
    match trimmed {
        "-0" => "0".to_owned(),
        other => other.to_owned(),
    }
}

/// The point at `angle` (radians, clockwise from 12 o'clock) on a circle.
pub fn polar(cx: f64, cy: f64, r: f64, angle: f64) -> (f64, f64) {
    (cx + r * angle.sin(), cy - r * angle.cos())
}

/// A linear map from values to fractions of an axis.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub min: f64,
    pub max: f64,
}

impl Scale {
    /// The axis that `ticks` span.
    pub fn of(ticks: &Ticks) -> Scale {
        let (min, max) = (ticks.low(), ticks.high());
        Scale {
            min,
            max: if max > min { max } else { min + 1.0 },
        }
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

/// The lowest and highest finite values (`None` when there are none).
pub fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |range, v| match range {
            None => Some((v, v)),
            Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
        })
}

/// Ticks for `values`, including zero when asked (bars and areas grow from it).
pub fn ticks_of(values: impl IntoIterator<Item = f64>, with_zero: bool, max: usize) -> Ticks {
    let (mut lo, mut hi) = extent(values).unwrap_or((0.0, 1.0));
    if with_zero {
        (lo, hi) = (lo.min(0.0), hi.max(0.0));
    }
    Ticks::new(lo, hi, max)
}

/// The `yl<n>` class for left labels of `chars` characters: an even n from 2 to 16.
fn left_class(chars: usize) -> usize {
    chars.clamp(1, 16).div_ceil(2) * 2
}

/// The classes of a chart's `.plot` box: room for left labels of `left_chars` characters
/// and for the axis titles it has, and `wide` when drawn for a wide cell.
fn plot_class(room: Room, left_chars: usize, x_title: bool, y_title: bool) -> String {
    format!(
        "plot yl{}{}{}{}",
        left_class(left_chars),
        if room.px > 700.0 { " wide" } else { "" },
        if x_title { " xt" } else { "" },
        if y_title { " yt" } else { "" },
    )
}

/// A chart: its `.plot` box (see [`plot_class`]) holding its `<svg>` with an accessible
/// name, `marks`, and its axis titles: the x axis's under the plot, the y axis's above it.
pub fn chart(
    name: &str,
    room: Room,
    left_chars: usize,
    titles: (Option<&str>, Option<&str>),
    marks: Markup,
) -> String {
    let (x_title, y_title) = titles;
    html! {
        div class=(plot_class(room, left_chars, x_title.is_some(), y_title.is_some())) {
            svg.chart role="img" aria-label=(name) xmlns="http://www.w3.org/2000/svg" {
                (marks)
                (axis_titles(x_title, y_title))
            }
        }
    }
    .into_string()
}

/// A chart's axis titles: the x axis's under the plot, the y axis's above it.
fn axis_titles(x_title: Option<&str>, y_title: Option<&str>) -> Markup {
    html! {
        @if let Some(x) = x_title {
            (PreEscaped(text("50%", "100%", "2.6em", "middle", x, 60)))
        }
        @if let Some(y) = y_title {
            (PreEscaped(text("0", "0", "-0.8em", "start", y, 40)))
        }
    }
}

/// A square of [`FIELD`] units stretched over the whole plot, for polylines and polygons;
/// their strokes don't stretch (`vector-effect` on `.ln`, in the page's style sheet).
pub fn field(marks: Markup) -> Markup {
    html! {
        svg.field width="100%" height="100%" viewBox={ "0 0 " (FIELD) " " (FIELD) }
            preserveAspectRatio="none" { (marks) }
    }
}

/// A text label at (x, y), moved by `dy`, cut to `max` characters.
pub fn text(x: &str, y: &str, dy: &str, anchor: &str, content: &str, max: usize) -> String {
    label(None, x, y, dy, anchor, &shorten(content, max)).into_string()
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

/// The widest of `labels`, in characters.
pub fn widest<'a>(labels: impl IntoIterator<Item = &'a String>) -> usize {
    labels
        .into_iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

/// Most value ticks on an axis along `px` pixels for labels of `chars` characters.
pub fn tick_room(px: f64, chars: usize) -> usize {
    (px / (chars.max(3) as f64 * CHAR_PX + 18.0)) as usize
}

/// The class of tick `i`'s label: every other one, the zero tick kept, is `alt` (hidden
/// by the page's CSS when the plot turns out too short or too narrow for them all).
fn alt_class(ticks: &Ticks, i: usize) -> Option<&'static str> {
    let keep = ticks.values().position(|v| v == 0.0).unwrap_or(0) % 2;
    (i % 2 != keep).then_some("alt")
}

/// A text label of `class` at (x, y), moved by `dy`.
fn label(class: Option<&str>, x: &str, y: &str, dy: &str, anchor: &str, content: &str) -> Markup {
    html! {
        text class=[class] x=(x) y=(y) dy=(dy) text-anchor=(anchor) { (content) }
    }
}

/// Value ticks up the left side: a grid line and a label at each (the zero line marked).
pub fn value_axis_y(ticks: &Ticks, labels: &[String]) -> String {
    let scale = Scale::of(ticks);
    html! {
        @for (i, (v, text)) in ticks.values().zip(labels).enumerate() {
            @let y = pct(1.0 - scale.at(v, 0.0, 1.0));
            line class=(if v == 0.0 { "zero" } else { "grid" }) x1="0" x2="100%" y1=(y) y2=(y) {}
            (label(alt_class(ticks, i), "-0.5em", &y, "0.32em", "end", text))
        }
    }
    .into_string()
}

/// Value ticks along the bottom: a grid line and a label at each.
pub fn value_axis_x(ticks: &Ticks, labels: &[String]) -> String {
    let scale = Scale::of(ticks);
    html! {
        @for (i, (v, text)) in ticks.values().zip(labels).enumerate() {
            @let x = pct(scale.at(v, 0.0, 1.0));
            line class=(if v == 0.0 { "zero" } else { "grid" }) y1="0" y2="100%" x1=(x) x2=(x) {}
            (label(alt_class(ticks, i).map(|_| "alt-x"), &x, "100%", "1.3em", "middle", text))
        }
    }
    .into_string()
}

/// Longest category label under a plot, in characters.
const CATEGORY_CHARS: usize = 16;

/// Category labels under the plot at `x_of(i)` (a fraction), thinned so that each has
/// room on a plot of `room` with left labels of `left_chars`; a label too long for its
/// slot is cut.
pub fn category_axis(
    labels: &[String],
    room: Room,
    left_chars: usize,
    x_of: impl Fn(usize) -> f64,
) -> String {
    let n = labels.len();
    if n == 0 {
        return String::new();
    }
    let plot = room.plot_px(left_chars);
    let chars = widest(labels).clamp(1, CATEGORY_CHARS);
    let slot = |step: usize| plot / n as f64 * step as f64;
    let mut step = 1;
    while step < n && slot(step) < chars as f64 * CHAR_PX + 10.0 && step < CATEGORY_CHARS * 2 {
        step += 1;
    }
    let fits = (((slot(step) - 10.0) / CHAR_PX) as usize).clamp(3, CATEGORY_CHARS);
    let shown = labels.iter().enumerate().step_by(step).enumerate();
    html! {
        @for (nth, (i, text)) in shown {
            // Every other label goes where a chart drawn for a wide cell gets a narrow
            // one (a phone): see `wide` in the page's CSS.
            (label(
                (nth % 2 == 1).then_some("alt-c"),
                &pct(x_of(i)),
                "100%",
                "1.3em",
                "middle",
                &shorten(text, fits),
            ))
        }
    }
    .into_string()
}

/// Category labels at the left of the plot at `y_of(i)` (a fraction from the top), at
/// most `CATEGORY_CHARS` characters and about 12 of them.
pub fn category_axis_left(labels: &[String], y_of: impl Fn(usize) -> f64) -> String {
    let step = labels.len().div_ceil(12).max(1);
    labels
        .iter()
        .enumerate()
        .step_by(step)
        .map(|(i, label)| {
            text(
                "-0.5em",
                &pct(y_of(i)),
                "0.32em",
                "end",
                label,
                CATEGORY_CHARS,
            )
        })
        .collect()
}

/// The widest a left category label is drawn, for [`open`].
pub fn left_category_chars(labels: &[String]) -> usize {
    widest(labels).min(CATEGORY_CHARS)
}

/// A legend under a chart: a colour swatch and a name per entry.
pub fn legend<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    html! {
        ul.legend {
            @for (i, name) in names.into_iter().enumerate() {
                li { span class={ "sw " (series(i)) } aria-hidden="true" {} (name) }
            }
        }
    }
    .into_string()
}

/// A `<title>` child: the tooltip browsers show on hover, without script.
pub fn tip(content: &str) -> String {
    html! { title { (content) } }.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_without_trailing_zeros() {
        assert_eq!(pct(1.0), "100%");
        assert_eq!(pct(0.0), "0%");
        assert_eq!(pct(0.2667), "26.67%");
        assert_eq!(pct(0.296), "29.6%");
        assert_eq!(pct(-0.00001), "0%");
        assert_eq!(c(920.0), "920");
        assert_eq!(c(10.64), "10.6");
        assert_eq!(c(-0.01), "0");
        assert_eq!(c(100.0), "100");
    }

    #[test]
    fn rooms_follow_the_grid() {
        assert!((Room::columns(12).px - 1322.0).abs() < 1.0);
        assert!((Room::columns(4).px - 413.0).abs() < 2.0);
        assert_eq!(Room::columns(40).px, Room::columns(12).px);
    }

    #[test]
    fn category_labels_are_thinned_to_their_room() {
        let labels: Vec<String> = (0..30).map(|i| format!("2024-06-{i:02}")).collect();
        let wide = category_axis(&labels, Room::columns(12), 5, |i| i as f64 / 30.0);
        let narrow = category_axis(&labels, Room::columns(3), 5, |i| i as f64 / 30.0);
        let (w, n) = (
            wide.matches("<text").count(),
            narrow.matches("<text").count(),
        );
        assert!(w > n && n >= 2 && w <= 15, "{w} wide, {n} narrow");
        assert!(
            narrow.contains(">2024-06-00<"),
            "the first label stays whole: {narrow}"
        );
    }

    /// WCAG's contrast ratio of two `#rrggbb` colours.
    fn contrast(a: &str, b: &str) -> f64 {
        let luminance = |hex: &str| {
            let channel = |i: usize| {
                let v = f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
                if v <= 0.03928 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
        };
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn every_series_colour_stands_out_from_its_card() {
        for c in LIGHT {
            assert!(contrast(c, "#ffffff") >= 3.0, "{c} on white");
        }
        for c in DARK {
            assert!(contrast(c, "#181b21") >= 3.0, "{c} on the dark card");
            assert!(contrast(c, "#12161c") >= 3.0, "{c} on the kiosk card");
        }
        assert!(palette_css().contains(".s7{--s:var(--p7)}"));
        assert!(kiosk_palette_css().contains(&format!("--p0:{};", DARK[0])));
    }

    #[test]
    fn labels_are_escaped() {
        let labels = vec!["<b>\"x\"</b>".to_owned()];
        let html = category_axis(&labels, Room::columns(12), 3, |_| 0.5);
        assert!(html.contains("&lt;b&gt;&quot;x&quot;&lt;/b&gt;"), "{html}");
        assert!(legend(["<i>"]).contains("&lt;i&gt;"));
    }
}
