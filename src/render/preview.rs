//! Link previews (CONTRACT.md 17): the Open Graph tags of a share page, and the picture they
//! name, `/share/{id}.png`, a 1200x630 PNG of the board drawn here, by the server, with no
//! browser. The picture is an SVG of the board's cards laid out on its 12-column grid
//! (each pin's title and its main value, chart or first lines), rasterised with resvg using
//! the fonts embedded in the binary (DejaVu Sans, `assets/fonts/`), never the system's: the
//! picture is the same on every machine and no file is read at run time.
//!
//! The SVG is made here from the pins' typed content, every text escaped, with no `<image>`
//! and no link: resvg is given nothing to fetch, and its resolver of images refuses all.

use std::{fmt::Write as _, sync::Arc, sync::OnceLock};

use maud::{html, Markup};
use resvg::{tiny_skia, usvg};
use serde_json::Value;

use super::{esc, numbers, svg::LIGHT};
use crate::{
    pin_types::PinType,
    pinboards::view::{Content, PageView},
    store::{Pin, Position},
};

/// The picture's size: what chat apps show for `summary_large_image`.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 630;

const MARGIN: f64 = 48.0;
const GAP: f64 = 12.0;
/// Top of the cards, under the title.
const TOP: f64 = 112.0;
const BOTTOM: f64 = 24.0;
const PAD: f64 = 16.0;

const BG: &str = "#f4f5f7";
const CARD: &str = "#ffffff";
const LINE: &str = "#e5e7eb";
const SOFT: &str = "#eef0f3";
const FG: &str = "#111111";
const MUTED: &str = "#555555";
const FONT: &str = "DejaVu Sans";

/// The fonts the picture is drawn with, embedded at build time.
const REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

/// What went wrong drawing a picture (never the visitor's doing: the content is typed).
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    #[error("preview SVG not understood: {0}")]
    Svg(#[from] usvg::Error),
    #[error("preview PNG not encoded: {0}")]
    Png(String),
}

/// The Open Graph and Twitter card tags of a share page: `title`, `description`, the page's
/// absolute `url` when the public URL is configured, and `image` (`/share/{id}.png`,
/// absolute when the public URL is known, else relative, which some unfurlers resolve).
pub struct LinkCard {
    pub title: String,
    pub description: String,
    pub url: Option<String>,
    pub image: String,
}

impl LinkCard {
    /// The card of item `id` as `view` shows it, under `public_url` (empty when not set).
    pub fn of(view: &PageView, id: &str, public_url: &str) -> LinkCard {
        let (title, description) = match &view.content {
            Content::Board(b) => (
                b.board.title.clone(),
                b.board.description.clone().unwrap_or_else(|| {
                    let n = b.placed.len();
                    format!(
                        "A live board on Corkboard: {n} pin{}",
                        if n == 1 { "" } else { "s" }
                    )
                }),
            ),
            Content::Pin(p) => (
                pin_title(&p.pin).to_owned(),
                format!("A live {} pin on Corkboard", p.pin.pin_type),
            ),
        };
        let base = public_url.trim_end_matches('/');
        let page = format!("/share/{id}");
        LinkCard {
            title,
            description,
            url: (!base.is_empty()).then(|| format!("{base}{page}")),
            image: format!("{base}{page}.png"),
        }
    }

    /// The tags (maud escapes each value). Twitter reads the Open Graph tags for the title,
    /// description and image; only its card's size is its own.
    pub fn tags(&self) -> Markup {
        html! {
            meta property="og:type" content="website";
            meta property="og:site_name" content="Corkboard";
            meta property="og:title" content=(self.title);
            meta property="og:description" content=(self.description);
            @if let Some(url) = &self.url {
                meta property="og:url" content=(url);
            }
            meta property="og:image" content=(self.image);
            meta property="og:image:type" content="image/png";
            meta property="og:image:width" content=(WIDTH);
            meta property="og:image:height" content=(HEIGHT);
            meta property="og:image:alt" content={ (self.title) " on Corkboard" };
            meta name="twitter:card" content="summary_large_image";
        }
    }
}

/// `page` with `card`'s tags at the end of its head.
pub fn with_link_card(page: super::Page, card: &LinkCard) -> super::Page {
    super::page::with_head(page, card.tags())
}

/// The PNG of a board (its cards on the grid) or a pin (one card filling the picture).
pub fn png(view: &PageView) -> Result<Vec<u8>, PreviewError> {
    rasterise(&svg_of(view))
}

/// The SVG of [`png`].
fn svg_of(view: &PageView) -> String {
    match &view.content {
        Content::Board(b) => {
            let tiles: Vec<(&Pin, Position)> =
                b.placed.iter().map(|p| (&p.pin, p.position)).collect();
            picture(&b.board.title, &tiles)
        }
        Content::Pin(p) => {
            let whole = Position {
                x: 0,
                y: 0,
                w: 12,
                h: 4,
            };
            picture(pin_title(&p.pin), &[(&p.pin, whole)])
        }
    }
}

fn pin_title(pin: &Pin) -> &str {
    pin.title
        .as_deref()
        .unwrap_or_else(|| PinType::parse(&pin.pin_type).map_or("Shared pin", PinType::description))
}

/// The database of the embedded fonts, loaded once.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        for face in [REGULAR, BOLD] {
            db.load_font_source(usvg::fontdb::Source::Binary(Arc::new(face)));
        }
        db.set_sans_serif_family(FONT);
        Arc::new(db)
    })
    .clone()
}

fn rasterise(svg: &str) -> Result<Vec<u8>, PreviewError> {
    let options = usvg::Options {
        font_family: FONT.to_owned(),
        fontdb: fonts(),
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: Box::new(|_: &str, _: Arc<Vec<u8>>, _: &usvg::Options<'_>| None),
            resolve_string: Box::new(|_: &str, _: &usvg::Options<'_>| None),
        },
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options)?;
    let mut pixmap = tiny_skia::Pixmap::new(WIDTH, HEIGHT)
        .ok_or_else(|| PreviewError::Png("no pixmap".to_owned()))?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    encode(&pixmap).map_err(|e| PreviewError::Png(e.to_string()))
}

/// The picture as a PNG: RGB, since a background fills it (every pixel is opaque, so
/// dropping tiny-skia's premultiplied alpha changes no colour), at DEFLATE level 3 with
/// adaptive filters. Measured on the 20-pin board (bench/README "Link previews"): about
/// a quarter of the time of the `png` crate's default level, and a file no larger.
fn encode(pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>, png::EncodingError> {
    let rgb: Vec<u8> = pixmap
        .data()
        .chunks_exact(4)
        .flat_map(|pixel| [pixel[0], pixel[1], pixel[2]])
        .collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_deflate_compression(png::DeflateCompression::Level(3));
    encoder.set_filter(png::Filter::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(out)
}

/// A box to draw in, in picture pixels.
#[derive(Clone, Copy)]
struct Area {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// The whole picture: `title`, then each pin at its grid position, scaled to the picture
/// (rows between 56 and 150 px high; what falls below the picture is left out).
fn picture(title: &str, tiles: &[(&Pin, Position)]) -> String {
    let w = f64::from(WIDTH);
    let h = f64::from(HEIGHT);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"{FONT}\">\
         <rect width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"{BG}\"/>"
    );
    text(
        &mut out,
        MARGIN,
        74.0,
        38.0,
        true,
        FG,
        title,
        w - 2.0 * MARGIN - 190.0,
    );
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"72\" font-size=\"22\" font-weight=\"bold\" fill=\"{MUTED}\" text-anchor=\"end\">Corkboard</text>",
        w - MARGIN
    );
    let area = Area {
        x: MARGIN,
        y: TOP,
        w: w - 2.0 * MARGIN,
        h: h - TOP - BOTTOM,
    };
    if tiles.is_empty() {
        text(
            &mut out,
            area.x,
            area.y + 40.0,
            24.0,
            false,
            MUTED,
            "This board has no pins yet.",
            area.w,
        );
    }
    let rows = tiles
        .iter()
        .map(|(_, p)| p.y + p.h)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let row = ((area.h + GAP) / rows - GAP).clamp(56.0, 150.0);
    let column = (area.w - 11.0 * GAP) / 12.0;
    let _ = write!(
        out,
        "<clipPath id=\"board\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath><g clip-path=\"url(#board)\">",
        area.x, area.y, area.w, area.h
    );
    for (i, (pin, p)) in tiles.iter().enumerate() {
        let cell = Area {
            x: area.x + p.x as f64 * (column + GAP),
            y: area.y + p.y as f64 * (row + GAP),
            w: p.w as f64 * column + (p.w - 1) as f64 * GAP,
            h: p.h as f64 * row + (p.h - 1) as f64 * GAP,
        };
        if cell.y >= area.y + area.h {
            continue;
        }
        card(&mut out, i, pin, cell);
    }
    out.push_str("</g></svg>");
    out
}

/// One pin's card: frame, status stripe, title, and its content below.
fn card(out: &mut String, i: usize, pin: &Pin, cell: Area) {
    let _ = write!(
        out,
        "<clipPath id=\"c{i}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"10\"/></clipPath>\
         <g clip-path=\"url(#c{i})\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"10\" fill=\"{CARD}\" stroke=\"{LINE}\" stroke-width=\"2\"/>",
        cell.x, cell.y, cell.w, cell.h, cell.x, cell.y, cell.w, cell.h
    );
    if let Some(colour) = pin.status.as_deref().and_then(status_colour) {
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"6\" height=\"{}\" fill=\"{colour}\"/>",
            cell.x, cell.y, cell.h
        );
    }
    let inner = Area {
        x: cell.x + PAD,
        y: cell.y + 40.0,
        w: cell.w - 2.0 * PAD,
        h: cell.h - 40.0 - 12.0,
    };
    text(
        out,
        inner.x,
        cell.y + 27.0,
        17.0,
        true,
        FG,
        pin_title(pin),
        inner.w,
    );
    let config: Value = serde_json::from_str(&pin.pin_config).unwrap_or(Value::Null);
    if inner.h > 8.0 {
        if let Some(pin_type) = PinType::parse(&pin.pin_type) {
            content(out, pin_type, &config, inner);
        }
    }
    out.push_str("</g>");
}

fn status_colour(status: &str) -> Option<&'static str> {
    match status {
        "ok" => Some("#047857"),
        "warning" => Some("#d97706"),
        "critical" => Some("#b91c1c"),
        _ => None,
    }
}

/// The pin's main content in `area`: its figure, chart or first lines.
fn content(out: &mut String, pin_type: PinType, config: &Value, area: Area) {
    use PinType as P;
    match pin_type {
        P::StatCards => stat_cards(out, config, area),
        P::Kpi => kpi(out, config, area),
        P::Gauge => gauge(out, config, area),
        P::Progress => progress(out, config, area),
        P::LineChart | P::AreaChart => lines(out, config, area, pin_type == P::AreaChart),
        P::BarChart => bars(out, config, area),
        P::PieChart => pie(out, config, area),
        P::ScatterChart => scatter(out, config, area),
        P::Heatmap => heatmap(out, config, area),
        P::FlexibleTable => table(out, config, area),
        P::List => listed(out, area, items(config, "items", |i| str_of(&i["text"]))),
        P::Timeline => listed(
            out,
            area,
            items(config, "events", |e| {
                format!("{}  {}", str_of(&e["time"]), str_of(&e["title"]))
            }),
        ),
        P::StatusGrid => status_grid(out, config, area),
        P::Markdown => listed(out, area, markdown_lines(&str_of(&config["text"]))),
        P::Code => listed(
            out,
            area,
            str_of(&config["code"]).lines().map(str::to_owned).collect(),
        ),
        P::Json => {
            let pretty = serde_json::to_string_pretty(&config["data"]).unwrap_or_default();
            listed(out, area, pretty.lines().map(str::to_owned).collect());
        }
        P::Image => {
            let label = [&config["caption"], &config["alt"]]
                .into_iter()
                .map(str_of)
                .find(|s| !s.is_empty())
                .unwrap_or_else(|| "Image".to_owned());
            let _ = write!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"{SOFT}\"/>",
                area.x, area.y, area.w, area.h
            );
            text(
                out,
                area.x + 12.0,
                area.y + area.h / 2.0 + 6.0,
                16.0,
                false,
                MUTED,
                &label,
                area.w - 24.0,
            );
        }
    }
}

/// A configuration value as text: strings as they are, numbers readable.
fn str_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map(numbers::readable).unwrap_or_default(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn num(value: &Value) -> Option<f64> {
    value.as_f64().filter(|v| v.is_finite())
}

fn items(config: &Value, field: &str, line: impl Fn(&Value) -> String) -> Vec<String> {
    config[field]
        .as_array()
        .map(|all| all.iter().map(line).collect())
        .unwrap_or_default()
}

/// Markdown as plain lines: headings, list marks and links' targets dropped.
fn markdown_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let line = line.trim_start_matches(['#', ' ', '>']);
            let line = line
                .strip_prefix("- [x] ")
                .or_else(|| line.strip_prefix("- [ ] "))
                .or_else(|| line.strip_prefix("- "))
                .or_else(|| line.strip_prefix("* "))
                .unwrap_or(line);
            let mut plain = String::with_capacity(line.len());
            let mut in_target = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    ']' if chars.peek() == Some(&'(') => {
                        in_target = true;
                        chars.next();
                    }
                    ')' if in_target => in_target = false,
                    '[' | '*' | '`' | '_' => {}
                    c if !in_target => plain.push(c),
                    _ => {}
                }
            }
            plain
        })
        .filter(|line| !line.trim().is_empty())
        .collect()
}

/// One line of text at `(x, y)` (its baseline), cut with an ellipsis to about `max_width`.
#[allow(clippy::too_many_arguments)]
fn text(
    out: &mut String,
    x: f64,
    y: f64,
    size: f64,
    bold: bool,
    fill: &str,
    content: &str,
    max_width: f64,
) {
    let shown = clip(content, max_width, size, bold);
    if shown.is_empty() {
        return;
    }
    let weight = if bold { " font-weight=\"bold\"" } else { "" };
    let _ = write!(
        out,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{size:.1}\"{weight} fill=\"{fill}\">{}</text>",
        esc(&shown)
    );
}

/// `content` on one line, cut to about `max_width` px at `size` (DejaVu Sans averages
/// about 0.6 em a character, bold 0.66), control characters dropped.
fn clip(content: &str, max_width: f64, size: f64, bold: bool) -> String {
    let per_char = size * if bold { 0.66 } else { 0.6 };
    let room = (max_width / per_char).floor().max(0.0) as usize;
    let clean: String = content
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.trim();
    if clean.chars().count() <= room {
        return clean.to_owned();
    }
    if room < 2 {
        return String::new();
    }
    let mut cut: String = clean.chars().take(room - 1).collect();
    cut.push('…');
    cut
}

/// Lines of text from the top of `area`, as many as fit.
fn listed(out: &mut String, area: Area, lines: Vec<String>) {
    let size = 15.0;
    let step = 22.0;
    let fit = ((area.h - 4.0) / step).floor().max(0.0) as usize;
    for (i, line) in lines.iter().take(fit).enumerate() {
        text(
            out,
            area.x,
            area.y + 16.0 + i as f64 * step,
            size,
            false,
            FG,
            line,
            area.w,
        );
    }
}

/// A figure as large as `area` allows (at most 44 px), with a muted label above it.
fn figure(out: &mut String, area: Area, label: &str, value: &str, note: Option<(&str, &str)>) {
    let size = (area.h * 0.5).clamp(18.0, 44.0);
    let mut y = area.y;
    if !label.is_empty() && area.h > size + 20.0 {
        text(out, area.x, y + 14.0, 14.0, false, MUTED, label, area.w);
        y += 22.0;
    }
    text(out, area.x, y + size * 0.9, size, true, FG, value, area.w);
    if let Some((note, colour)) = note {
        if y + size + 24.0 <= area.y + area.h {
            text(
                out,
                area.x,
                y + size + 22.0,
                15.0,
                true,
                colour,
                note,
                area.w,
            );
        }
    }
}

fn trend_colour(card: &Value) -> &'static str {
    let trend = card["trend"].as_str().unwrap_or("");
    let good = card["trend_good"].as_str().unwrap_or("up");
    match trend {
        "up" | "down" if trend == good => "#047857",
        "up" | "down" => "#b91c1c",
        _ => MUTED,
    }
}

fn stat_cards(out: &mut String, config: &Value, area: Area) {
    let cards = config["cards"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let shown = cards
        .len()
        .min(((area.w + GAP) / 150.0).floor().max(1.0) as usize);
    let width = (area.w - GAP * shown.saturating_sub(1) as f64) / shown.max(1) as f64;
    for (i, card) in cards.iter().take(shown).enumerate() {
        let change = str_of(&card["change"]);
        let note = (!change.is_empty()).then(|| (change.as_str(), trend_colour(card)));
        let cell = Area {
            x: area.x + i as f64 * (width + GAP),
            w: width,
            ..area
        };
        figure(
            out,
            cell,
            &str_of(&card["title"]),
            &str_of(&card["value"]),
            note,
        );
    }
}

fn kpi(out: &mut String, config: &Value, area: Area) {
    let unit = str_of(&config["unit"]);
    let value = format!("{} {unit}", str_of(&config["value"]));
    let change = str_of(&config["change"]);
    let note = (!change.is_empty()).then(|| (change.as_str(), trend_colour(config)));
    let spark: Vec<f64> = config["sparkline"]
        .as_array()
        .map(|v| v.iter().filter_map(num).collect())
        .unwrap_or_default();
    let (top, bottom) = if spark.len() > 1 && area.h > 110.0 {
        let line = Area {
            y: area.y + area.h - 36.0,
            h: 36.0,
            ..area
        };
        (
            Area {
                h: area.h - 44.0,
                ..area
            },
            Some(line),
        )
    } else {
        (area, None)
    };
    figure(out, top, &str_of(&config["label"]), value.trim(), note);
    if let Some(line) = bottom {
        let series = [Some(spark.iter().map(|v| Some(*v)).collect::<Vec<_>>())];
        plot_lines(out, line, &series, false);
    }
}

fn gauge(out: &mut String, config: &Value, area: Area) {
    let value = num(&config["value"]).unwrap_or(0.0);
    let min = num(&config["min"]).unwrap_or(0.0);
    let max = num(&config["max"]).unwrap_or(100.0);
    let unit = str_of(&config["unit"]);
    let shown = format!("{} {unit}", numbers::readable(value));
    let bar = 14.0;
    figure(
        out,
        Area {
            h: area.h - bar - 8.0,
            ..area
        },
        &str_of(&config["label"]),
        shown.trim(),
        None,
    );
    let fraction = if max > min {
        ((value - min) / (max - min)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    meter(
        out,
        area.x,
        area.y + area.h - bar,
        area.w,
        bar,
        fraction,
        LIGHT[0],
    );
}

/// A horizontal bar filled to `fraction`.
fn meter(out: &mut String, x: f64, y: f64, w: f64, h: f64, fraction: f64, colour: &str) {
    let _ = write!(
        out,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"{r:.1}\" fill=\"{SOFT}\"/>\
         <rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\" rx=\"{r:.1}\" fill=\"{colour}\"/>",
        w * fraction,
        r = h / 2.0
    );
}

fn progress(out: &mut String, config: &Value, area: Area) {
    let rows = config["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let step = 28.0;
    let fit = (area.h / step).floor().max(0.0) as usize;
    let label_w = (area.w * 0.35).min(220.0);
    for (i, item) in rows.iter().take(fit).enumerate() {
        let y = area.y + i as f64 * step;
        let value = num(&item["value"]).unwrap_or(0.0);
        let max = num(&item["max"]).unwrap_or(100.0);
        let fraction = if max > 0.0 {
            (value / max).clamp(0.0, 1.0)
        } else {
            0.0
        };
        text(
            out,
            area.x,
            y + 16.0,
            15.0,
            false,
            FG,
            &str_of(&item["label"]),
            label_w - 8.0,
        );
        let pct = format!("{}%", numbers::readable((fraction * 100.0).round()));
        let bar_w = area.w - label_w - 56.0;
        if bar_w > 20.0 {
            meter(
                out,
                area.x + label_w,
                y + 6.0,
                bar_w,
                10.0,
                fraction,
                LIGHT[i % LIGHT.len()],
            );
        }
        text(
            out,
            area.x + area.w - 48.0,
            y + 16.0,
            14.0,
            false,
            MUTED,
            &pct,
            48.0,
        );
    }
}

/// Each series' values (missing ones `None`) of a line, area or bar chart.
fn series_of(config: &Value) -> Vec<Option<Vec<Option<f64>>>> {
    config["series"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|s| s["data"].as_array().map(|d| d.iter().map(num).collect()))
                .collect()
        })
        .unwrap_or_default()
}

/// The smallest and largest of `values`, widened to include zero for bars and never empty.
fn span(values: impl Iterator<Item = f64>, with_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if with_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi)
}

fn lines(out: &mut String, config: &Value, area: Area, filled: bool) {
    plot_lines(out, area, &series_of(config), filled);
}

/// Lines over shared x positions, scaled together, each in its palette colour.
fn plot_lines(out: &mut String, area: Area, series: &[Option<Vec<Option<f64>>>], filled: bool) {
    let all = series.iter().flatten().flatten().flatten().copied();
    let (lo, hi) = span(all, filled);
    let longest = series.iter().flatten().map(Vec::len).max().unwrap_or(0);
    if longest == 0 {
        return;
    }
    let x_of = |i: usize| {
        if longest == 1 {
            area.x + area.w / 2.0
        } else {
            area.x + area.w * i as f64 / (longest - 1) as f64
        }
    };
    let y_of = |v: f64| area.y + area.h - (v - lo) / (hi - lo) * area.h;
    for (s, data) in series.iter().enumerate() {
        let Some(data) = data else { continue };
        let colour = LIGHT[s % LIGHT.len()];
        let points: Vec<(f64, f64)> = data
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (x_of(i), y_of(v))))
            .collect();
        let path: String = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1} "))
            .collect();
        if filled && points.len() > 1 {
            let (first, last) = (points[0].0, points[points.len() - 1].0);
            let base = y_of(lo.max(0.0).min(hi));
            let _ = write!(
                out,
                "<polygon points=\"{first:.1},{base:.1} {path}{last:.1},{base:.1}\" fill=\"{colour}\" fill-opacity=\"0.18\"/>"
            );
        }
        let _ = write!(
            out,
            "<polyline points=\"{path}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"3\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>"
        );
        if points.len() == 1 {
            let (x, y) = points[0];
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{colour}\"/>"
            );
        }
    }
}

fn bars(out: &mut String, config: &Value, area: Area) {
    let series = series_of(config);
    let all = series.iter().flatten().flatten().flatten().copied();
    let (lo, hi) = span(all, true);
    let groups = series.iter().flatten().map(Vec::len).max().unwrap_or(0);
    let count = series.len().max(1);
    if groups == 0 {
        return;
    }
    let group_w = area.w / groups as f64;
    let bar_w = (group_w * 0.8 / count as f64).max(1.0);
    let y_of = |v: f64| area.y + area.h - (v - lo) / (hi - lo) * area.h;
    let zero = y_of(0.0);
    for (s, data) in series.iter().enumerate() {
        let Some(data) = data else { continue };
        for (g, value) in data.iter().enumerate() {
            let Some(v) = value else { continue };
            let x = area.x + g as f64 * group_w + group_w * 0.1 + s as f64 * bar_w;
            let (top, height) = (y_of(*v).min(zero), (y_of(*v) - zero).abs());
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{height:.1}\" fill=\"{}\"/>",
                (bar_w - 2.0).max(1.0),
                LIGHT[s % LIGHT.len()]
            );
        }
    }
}

fn pie(out: &mut String, config: &Value, area: Area) {
    let slices: Vec<(String, f64)> = config["slices"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|s| {
                    num(&s["value"])
                        .filter(|v| *v > 0.0)
                        .map(|v| (str_of(&s["label"]), v))
                })
                .collect()
        })
        .unwrap_or_default();
    let total: f64 = slices.iter().map(|(_, v)| v).sum();
    let r = (area.h.min(area.w) / 2.0).max(4.0);
    let (cx, cy) = (area.x + r, area.y + area.h / 2.0);
    if total <= 0.0 {
        return;
    }
    let mut angle = -std::f64::consts::FRAC_PI_2;
    for (i, (_, value)) in slices.iter().enumerate() {
        let colour = LIGHT[i % LIGHT.len()];
        let sweep = value / total * std::f64::consts::TAU;
        if sweep >= std::f64::consts::TAU - 1e-9 {
            let _ = write!(
                out,
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{r:.1}\" fill=\"{colour}\"/>"
            );
        } else {
            let (x1, y1) = (cx + r * angle.cos(), cy + r * angle.sin());
            let end = angle + sweep;
            let (x2, y2) = (cx + r * end.cos(), cy + r * end.sin());
            let large = u8::from(sweep > std::f64::consts::PI);
            let _ = write!(
                out,
                "<path d=\"M{cx:.1},{cy:.1} L{x1:.1},{y1:.1} A{r:.1},{r:.1} 0 {large} 1 {x2:.1},{y2:.1} Z\" fill=\"{colour}\" stroke=\"{CARD}\" stroke-width=\"2\"/>"
            );
        }
        angle += sweep;
    }
    if config["donut"].as_bool() == Some(true) {
        let _ = write!(
            out,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{:.1}\" fill=\"{CARD}\"/>",
            r * 0.55
        );
    }
    let legend = Area {
        x: area.x + 2.0 * r + 20.0,
        w: area.w - 2.0 * r - 20.0,
        ..area
    };
    if legend.w > 60.0 {
        let step = 22.0;
        let fit = (legend.h / step).floor().max(0.0) as usize;
        for (i, (label, value)) in slices.iter().take(fit).enumerate() {
            let y = legend.y + i as f64 * step;
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\"/>",
                legend.x,
                y + 4.0,
                LIGHT[i % LIGHT.len()]
            );
            let share = format!(
                "{label}  {}%",
                numbers::readable((value / total * 1000.0).round() / 10.0)
            );
            text(
                out,
                legend.x + 20.0,
                y + 15.0,
                14.0,
                false,
                FG,
                &share,
                legend.w - 20.0,
            );
        }
    }
}

fn scatter(out: &mut String, config: &Value, area: Area) {
    let series: Vec<Vec<(f64, f64)>> = config["series"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|s| {
                    s["points"]
                        .as_array()
                        .map(|p| {
                            p.iter()
                                .filter_map(|p| Some((num(&p["x"])?, num(&p["y"])?)))
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    let (x_lo, x_hi) = span(series.iter().flatten().map(|p| p.0), false);
    let (y_lo, y_hi) = span(series.iter().flatten().map(|p| p.1), false);
    let inner = Area {
        x: area.x + 6.0,
        y: area.y + 6.0,
        w: area.w - 12.0,
        h: area.h - 12.0,
    };
    for (s, points) in series.iter().enumerate() {
        for (x, y) in points {
            let px = inner.x + (x - x_lo) / (x_hi - x_lo) * inner.w;
            let py = inner.y + inner.h - (y - y_lo) / (y_hi - y_lo) * inner.h;
            let _ = write!(
                out,
                "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5\" fill=\"{}\" fill-opacity=\"0.85\"/>",
                LIGHT[s % LIGHT.len()]
            );
        }
    }
}

fn heatmap(out: &mut String, config: &Value, area: Area) {
    let rows: Vec<Vec<Option<f64>>> = config["values"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|r| {
                    r.as_array()
                        .map(|r| r.iter().map(num).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    if rows.is_empty() || columns == 0 {
        return;
    }
    let (lo, hi) = span(rows.iter().flatten().flatten().copied(), false);
    let (cw, ch) = (area.w / columns as f64, area.h / rows.len() as f64);
    for (r, row) in rows.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            let (fill, opacity) = match value {
                Some(v) => (LIGHT[0], 0.12 + 0.88 * (v - lo) / (hi - lo)),
                None => (SOFT, 1.0),
            };
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\" fill-opacity=\"{opacity:.2}\" stroke=\"{CARD}\" stroke-width=\"2\"/>",
                area.x + c as f64 * cw,
                area.y + r as f64 * ch,
                cw,
                ch
            );
        }
    }
}

fn table(out: &mut String, config: &Value, area: Area) {
    let columns = config["columns"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let rows = config["rows"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let shown = columns
        .len()
        .min(((area.w / 90.0).floor().max(1.0)) as usize);
    if shown == 0 {
        return;
    }
    let width = area.w / shown as f64;
    let step = 22.0;
    let fit = (area.h / step).floor().max(0.0) as usize;
    for (c, column) in columns.iter().take(shown).enumerate() {
        let x = area.x + c as f64 * width;
        text(
            out,
            x,
            area.y + 15.0,
            14.0,
            true,
            MUTED,
            &str_of(&column["name"]),
            width - 8.0,
        );
        let id = column["id"].as_str().unwrap_or("");
        for (r, row) in rows.iter().take(fit.saturating_sub(1)).enumerate() {
            let cell = str_of(&row["cells"][id]);
            text(
                out,
                x,
                area.y + 15.0 + (r + 1) as f64 * step,
                14.0,
                false,
                FG,
                &cell,
                width - 8.0,
            );
        }
    }
}

fn status_grid(out: &mut String, config: &Value, area: Area) {
    let all = config["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let step = 24.0;
    let per_column = (area.h / step).floor().max(1.0) as usize;
    let columns = ((area.w / 180.0).floor().max(1.0)) as usize;
    let width = area.w / columns as f64;
    for (i, item) in all.iter().take(per_column * columns).enumerate() {
        let (c, r) = (i / per_column, i % per_column);
        let (x, y) = (area.x + c as f64 * width, area.y + r as f64 * step);
        let colour = match item["status"].as_str() {
            Some("ok") => "#10b981",
            Some("warn") => "#f59e0b",
            Some("error") => "#ef4444",
            _ => "#9ca3af",
        };
        let _ = write!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"6\" fill=\"{colour}\"/>",
            x + 6.0,
            y + 11.0
        );
        text(
            out,
            x + 18.0,
            y + 16.0,
            15.0,
            false,
            FG,
            &str_of(&item["name"]),
            width - 26.0,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::{
        pinboards::view::BoardView,
        store::{Pinboard, PlacedPin, Sharing},
    };

    fn pin(i: usize, pin_type: PinType) -> Pin {
        Pin {
            title: Some(format!("<{}> & \"{}\"", pin_type.as_str(), i)),
            status: (i == 1).then(|| "critical".to_owned()),
            ..Pin::new(
                format!("p-{i}"),
                pin_type.as_str(),
                pin_type.example().to_string(),
            )
        }
    }

    fn board(placed: Vec<PlacedPin>) -> PageView {
        PageView {
            content: Content::Board(BoardView {
                board: Pinboard {
                    id: "pb-1".to_owned(),
                    title: "Ops <wall> & more".to_owned(),
                    description: None,
                    tags: Vec::new(),
                    sharing: Sharing::default(),
                    created_at: 0,
                    updated_at: 0,
                },
                placed,
                blocks: HashMap::new(),
            }),
            since: Some("0".to_owned()),
        }
    }

    /// Width and height from a PNG's IHDR chunk.
    fn size(png: &[u8]) -> (u32, u32) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        let at = |i: usize| u32::from_be_bytes([png[i], png[i + 1], png[i + 2], png[i + 3]]);
        (at(16), at(20))
    }

    #[test]
    fn the_picture_is_encoded_without_losing_a_colour() {
        let mut pixmap = tiny_skia::Pixmap::new(3, 2).expect("pixmap");
        pixmap.fill(tiny_skia::Color::from_rgba8(18, 52, 86, 255));
        let file = encode(&pixmap).expect("png");
        let decoder = ::png::Decoder::new(std::io::Cursor::new(file));
        let mut reader = decoder.read_info().expect("header");
        let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut pixels).expect("frame");
        assert_eq!(
            (info.width, info.height, info.color_type),
            (3, 2, ::png::ColorType::Rgb)
        );
        assert_eq!(pixels[..info.buffer_size()], [18, 52, 86].repeat(6));
    }

    #[test]
    fn an_empty_board_is_a_picture_that_says_so() {
        let view = board(Vec::new());
        let svg = svg_of(&view);
        assert!(svg.contains("This board has no pins yet."));
        assert!(svg.contains("Ops &lt;wall&gt; &amp; more"));
        assert_eq!(size(&png(&view).expect("png")), (WIDTH, HEIGHT));
    }

    #[test]
    fn every_pin_type_is_drawn_on_the_grid() {
        let placed: Vec<PlacedPin> = PinType::ALL
            .iter()
            .enumerate()
            .map(|(i, &t)| PlacedPin {
                position: Position {
                    x: (i as i64 % 4) * 3,
                    y: (i as i64 / 4) * 2,
                    w: 3,
                    h: 2,
                },
                pin: pin(i, t),
            })
            .collect();
        let view = board(placed);
        let svg = svg_of(&view);
        assert!(
            !svg.contains("<image") && !svg.contains("href"),
            "nothing to fetch"
        );
        // The first rows fit the picture, with their titles escaped; the last are cut.
        for t in &PinType::ALL[..8] {
            assert!(
                svg.contains(&format!("&lt;{}&gt; &amp; &quot;", t.as_str())),
                "{}",
                t.as_str()
            );
        }
        assert!(
            svg.contains("€1.2M") && svg.contains("182.5 ms"),
            "figures shown"
        );
        assert!(
            svg.contains("<polyline") && svg.contains("<path d=\"M"),
            "charts drawn"
        );
        usvg::Tree::from_str(&svg, &usvg::Options::default()).expect("valid SVG");
        assert_eq!(size(&png(&view).expect("png")), (WIDTH, HEIGHT));
    }

    #[test]
    fn one_pin_fills_the_picture() {
        let view = PageView {
            content: Content::Pin(crate::pinboards::view::PinView {
                pin: pin(0, PinType::Kpi),
                blocks: String::new(),
            }),
            since: None,
        };
        let svg = svg_of(&view);
        assert!(svg.contains("width=\"1104\""), "{svg}");
        assert_eq!(size(&png(&view).expect("png")), (WIDTH, HEIGHT));
    }

    #[test]
    fn text_is_cut_to_its_room() {
        assert_eq!(clip("short", 200.0, 10.0, false), "short");
        let cut = clip(&"x".repeat(100), 60.0, 10.0, false);
        assert_eq!(cut.chars().count(), 10);
        assert!(cut.ends_with('…'));
        assert_eq!(clip("a\nb", 100.0, 10.0, false), "a b");
        assert_eq!(
            markdown_lines("## Title\n\n- [x] Done\nSee [the book](https://x)."),
            ["Title", "Done", "See the book."]
        );
    }

    #[test]
    fn the_card_tags_are_escaped_and_absolute_under_a_public_url() {
        let view = board(Vec::new());
        let card = LinkCard::of(&view, "pb-1", "https://cork.example/");
        assert_eq!(card.url.as_deref(), Some("https://cork.example/share/pb-1"));
        assert_eq!(card.image, "https://cork.example/share/pb-1.png");
        let tags = card.tags().into_string();
        assert!(
            tags.contains("<meta property=\"og:title\" content=\"Ops &lt;wall&gt; &amp; more\">")
        );
        assert!(tags.contains("<meta name=\"twitter:card\" content=\"summary_large_image\">"));
        let relative = LinkCard::of(&view, "pb-1", "");
        assert_eq!(
            (relative.url, relative.image.as_str()),
            (None, "/share/pb-1.png")
        );
    }
}
