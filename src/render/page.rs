//! Whole share pages: one pin, one board on its 12-column grid, or the one 404 page. Each
//! page carries a single `<style>` element and its CSP allows exactly that element (by its
//! SHA-256), images, and nothing else: no script, no other styles, no forms.

use base64::{engine::general_purpose::STANDARD, Engine};
use sha2::{Digest, Sha256};

use super::{esc, pin_body};
use crate::{
    clock,
    pin_types::PinType,
    store::{Pin, Pinboard, PlacedPin},
};

/// A rendered page: whether it shows something (200) or not (404), its HTML, and the
/// Content-Security-Policy that goes with it.
pub struct Page {
    pub found: bool,
    pub html: String,
    pub csp: String,
}

const CSS: &str = "\
:root{color-scheme:light;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#111;background:#f4f5f7}\
body{margin:0;padding:24px}header{max-width:1400px;margin:0 auto 16px}h1{font-size:1.6rem;margin:0 0 4px}\
.desc{white-space:pre-line;color:#444;margin:0}main{max-width:1400px;margin:0 auto}\
.board{display:grid;grid-template-columns:repeat(12,minmax(0,1fr));grid-auto-rows:minmax(90px,auto);gap:12px}\
.pin{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:12px 14px;overflow:auto;min-width:0}\
.pin h2{font-size:1rem;margin:0 0 8px}.single .pin{max-width:900px;margin:0 auto}\
.chart{width:100%;height:auto;display:block}.pie,.gauge{max-width:320px;margin:0 auto}\
.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:.85rem}\
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{flex:1 1 140px;border:1px solid #eef0f3;border-radius:6px;padding:8px 10px}\
.label{color:#555;margin:0;font-size:.85rem}.figure{font-size:1.8rem;font-weight:600;margin:2px 0}\
.unit{font-size:1rem;color:#555;margin-left:4px}.change{margin:0;font-size:.9rem}.up{color:#047857}.down{color:#b91c1c}.flat{color:#555}\
.muted{color:#666;margin:2px 0}.spark{width:100%;height:36px;display:block}\
.progress,.list,.status-grid,.timeline{padding:0;margin:0;list-style:none}\
.progress li{display:grid;grid-template-columns:minmax(80px,1fr) 2fr auto;gap:8px;align-items:center;margin:4px 0}\
progress{width:100%}.num{font-variant-numeric:tabular-nums;text-align:right}\
.scroll{overflow:auto}table{border-collapse:collapse;width:100%;font-size:.9rem}\
th,td{border-bottom:1px solid #eef0f3;padding:4px 8px;text-align:left;vertical-align:top}\
.status-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:8px}\
.status-grid li,.timeline li{padding:6px 8px;border-left:4px solid #9ca3af;background:#fafafa}\
.timeline li{margin:0 0 6px}.badge{font-size:.75rem;font-weight:600;text-transform:uppercase}\
.st-ok{border-color:#10b981;color:#047857}.st-warn{border-color:#f59e0b;color:#b45309}\
.st-error{border-color:#ef4444;color:#b91c1c}.st-unknown{border-color:#9ca3af;color:#555}\
.status-grid strong,.status-grid .muted{color:#111}\
pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:.85rem;margin:0}\
figure{margin:0}figcaption{color:#555;font-size:.85rem;margin:4px 0}img{max-width:100%;height:auto}\
.md img{max-width:100%}.md table{width:auto}footer{max-width:1400px;margin:16px auto 0;color:#777;font-size:.8rem}\
@media (max-width:720px){body{padding:12px}.board{display:block}.board .pin{margin-bottom:12px}}";

/// Assembles a page around `main`, with `extra_css` appended to the shared style sheet.
fn page(title: &str, header: &str, main: &str, footer: &str, extra_css: &str, found: bool) -> Page {
    let style = format!("{CSS}{extra_css}");
    let hash = STANDARD.encode(Sha256::digest(style.as_bytes()));
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><meta name=\"referrer\" content=\"no-referrer\">\
         <title>{}</title><style>{style}</style></head><body><header>{header}</header>{main}{footer}</body></html>",
        esc(title)
    );
    Page {
        found,
        html,
        csp: format!(
            "default-src 'none'; style-src 'sha256-{hash}'; img-src https: http: data:; \
             base-uri 'none'; form-action 'none'"
        ),
    }
}

fn footer(updated_at: i64) -> String {
    format!(
        "<footer>Shared with Corkboard · updated <time>{}</time></footer>",
        clock::iso(updated_at)
    )
}

/// A pin in its frame: its title as heading, or (untitled) its type as the frame's name.
fn frame(pin: &Pin, blocks: &str, class: &str) -> String {
    let (heading, name) = match pin.title.as_deref() {
        Some(title) => (format!("<h2>{}</h2>", esc(title)), String::new()),
        None => (
            String::new(),
            format!(" aria-label=\"{}\"", esc(&pin.pin_type)),
        ),
    };
    format!(
        "<section class=\"pin {class}\"{name}>{heading}{}{blocks}</section>",
        pin_body(&pin.pin_type, &pin.pin_config)
    )
}

/// The page of one public pin, with its templates resolved and `blocks` (the HTML of its
/// evaluated blocks) under its content.
pub fn pin_page(pin: &Pin, blocks: &str) -> Page {
    let title = pin.title.clone().unwrap_or_else(|| {
        PinType::parse(&pin.pin_type)
            .map_or("Shared pin", PinType::description)
            .to_owned()
    });
    page(
        &title,
        "",
        &format!("<main class=\"single\">{}</main>", frame(pin, blocks, "")),
        &footer(pin.updated_at),
        "",
        true,
    )
}

/// The page of one public board: its pins on the grid, in position order (the order the
/// store returns them), each placed by a generated class, with its templates resolved and
/// the HTML of its evaluated blocks (`blocks`, by pin id) under its content.
pub fn board_page(
    board: &Pinboard,
    pins: &[PlacedPin],
    blocks: &std::collections::HashMap<String, String>,
) -> Page {
    let mut css = String::new();
    let mut cells = String::new();
    for (i, placed) in pins.iter().enumerate() {
        let p = placed.position;
        css.push_str(&format!(
            ".g{i}{{grid-column:{} / span {};grid-row:{} / span {}}}",
            p.x + 1,
            p.w,
            p.y + 1,
            p.h
        ));
        let pin_blocks = blocks.get(&placed.pin.id).map_or("", String::as_str);
        cells.push_str(&frame(&placed.pin, pin_blocks, &format!("g{i}")));
    }
    let description = board
        .description
        .as_deref()
        .map(|d| format!("<p class=\"desc\">{}</p>", esc(d)))
        .unwrap_or_default();
    let empty = if pins.is_empty() {
        "<p class=\"muted\">This board has no pins yet.</p>"
    } else {
        ""
    };
    page(
        &board.title,
        &format!("<h1>{}</h1>{description}", esc(&board.title)),
        &format!("<main>{empty}<div class=\"board\">{cells}</div></main>"),
        &footer(board.updated_at),
        &css,
        true,
    )
}

/// The one page for anything not shown: missing, private or sign-in only look the same.
pub fn not_found_page() -> Page {
    page(
        "Not found",
        "<h1>Not found</h1>",
        "<main><p class=\"muted\">There is nothing to show here. The link may be wrong, or what \
         it pointed to is no longer shared.</p></main>",
        "",
        "",
        false,
    )
}
