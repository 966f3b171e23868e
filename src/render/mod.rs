//! HTML of pins for share pages, generated in Rust (the one renderer, for the first paint
//! and every live redraw): charts are inline SVG, markdown goes through pulldown-cmark then
//! ammonia, and every string that comes from a pin's content is escaped (maud templates
//! escape every value; `esc` where HTML is still written by hand). One file per family of
//! pin types; `page.rs` wraps pins into whole pages with their Content-Security-Policy and
//! the page script (assets/live.js) that keeps them live.

pub mod assets;
mod cards;
mod catalogue;
mod charts;
mod gauge;
mod numbers;
mod page;
mod plots;
pub mod preview;
mod signal;
mod svg;
mod tables;
mod text;
mod times;

pub use page::{
    boards_page, following, fragment_page, message_page, not_found_page, paged, rate_limits_page,
    shown_page, sign_in_failed_page, signed_out_page, view_page, with_account, with_tools, Page,
    Turn, View,
};

pub use catalogue::pin_types_page;

use serde::de::DeserializeOwned;

use crate::pin_types::PinType;
use svg::Room;

/// Escapes text for HTML element content and quoted attribute values alike.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A link that leaks nothing to its target, or plain text when `url` isn't http(s).
pub(crate) fn link(url: &str, text: &str) -> String {
    let url = crate::pin_types::parse_web_url(url);
    maud::html! {
        @if let Some(url) = url {
            a href=(url.as_str()) rel="noopener noreferrer nofollow" { (text) }
        } @else {
            (text)
        }
    }
    .into_string()
}

fn parse<T: DeserializeOwned>(config: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(config)
}

fn render(pin_type: PinType, config: &str, room: Room) -> Result<String, serde_json::Error> {
    use PinType as P;
    Ok(match pin_type {
        P::StatCards => cards::stat_cards(&parse(config)?),
        P::Kpi => cards::kpi(&parse(config)?),
        P::Progress => cards::progress(&parse(config)?),
        P::LineChart => charts::line(&parse(config)?, false, room),
        P::AreaChart => charts::line(&parse(config)?, true, room),
        P::BarChart => charts::bar(&parse(config)?, room),
        P::PieChart => plots::pie(&parse(config)?),
        P::ScatterChart => plots::scatter(&parse(config)?, room),
        P::Heatmap => plots::heatmap(&parse(config)?, room),
        P::Gauge => gauge::gauge(&parse(config)?),
        P::FlexibleTable => tables::flexible_table(&parse(config)?),
        P::StatusGrid => tables::status_grid(&parse(config)?),
        P::List => tables::list(&parse(config)?),
        P::Timeline => tables::timeline(&parse(config)?),
        P::Markdown => text::markdown(&parse(config)?),
        P::Json => text::json(&parse(config)?),
        P::Code => text::code(&parse(config)?),
        P::Image => text::image(&parse(config)?),
    })
}

/// The HTML of a pin's content (its configuration, stored JSON text) drawn half a page
/// wide. A configuration that no longer parses shows a notice instead of failing the
/// whole page.
pub fn pin_body(pin_type: &str, config: &str) -> String {
    body_in(pin_type, config, Room::columns(6))
}

/// [`pin_body`] in a cell of `room`, which decides how many chart labels fit.
fn body_in(pin_type: &str, config: &str, room: Room) -> String {
    let rendered = PinType::parse(pin_type)
        .ok_or_else(|| format!("unknown pin type {pin_type}"))
        .and_then(|t| render(t, config, room).map_err(|e| e.to_string()));
    rendered.unwrap_or_else(|cause| {
        tracing::warn!(%cause, pin_type, "stored pin configuration can't be rendered");
        "<p class=\"muted\">This pin can't be shown.</p>".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders the catalogue example of `pin_type` and checks the HTML is there and inert.
    fn renders_example(pin_type: PinType) {
        let config = pin_type.example().to_string();
        let html = render(pin_type, &config, Room::columns(3))
            .unwrap_or_else(|e| panic!("{}: {e}", pin_type.as_str()));
        assert!(html.len() > 40, "{}: {html}", pin_type.as_str());
        assert!(!html.contains("<script"), "{}", pin_type.as_str());
        assert!(
            !html.contains("style=\""),
            "{}: no inline styles",
            pin_type.as_str()
        );
    }

    macro_rules! example_renders {
        ($($test:ident => $pin_type:ident),* $(,)?) => {
            $(
                #[test]
                fn $test() {
                    renders_example(PinType::$pin_type);
                }
            )*
            const COVERED: &[PinType] = &[$(PinType::$pin_type),*];
        };
    }

    example_renders! {
        stat_cards => StatCards, kpi => Kpi, line_chart => LineChart, area_chart => AreaChart,
        bar_chart => BarChart, pie_chart => PieChart, scatter_chart => ScatterChart,
        heatmap => Heatmap, gauge => Gauge, progress => Progress,
        flexible_table => FlexibleTable, markdown => Markdown, json => Json, code => Code,
        image => Image, list => List, timeline => Timeline, status_grid => StatusGrid,
    }

    #[test]
    fn the_tests_above_cover_every_type() {
        for pin_type in PinType::ALL {
            assert!(
                COVERED.contains(pin_type),
                "no test for {}",
                pin_type.as_str()
            );
        }
    }

    #[test]
    fn escaping_and_links() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(link("javascript:alert(1)", "x"), "x");
        assert_eq!(
            link("https://a.example/?q=\"><b>", "<t>"),
            "<a href=\"https://a.example/?q=%22%3E%3Cb%3E\" rel=\"noopener noreferrer nofollow\">&lt;t&gt;</a>"
        );
    }
}
