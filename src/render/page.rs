//! Whole share pages: one pin, one board on its 12-column grid, or the one 404 page. Each
//! page carries a single `<style>` element and its CSP allows exactly that element (by its
//! SHA-256), images, and, on a live page, the one same-origin script (`/assets/live-*.js`)
//! and its connections to the same origin: no inline script, no other styles, no forms.

use base64::{engine::general_purpose::STANDARD, Engine};
use sha2::{Digest, Sha256};

use super::signal::signal;
use super::svg::{self, Room};
use super::{body_in, esc};
use crate::{
    clock,
    pin_types::PinType,
    pinboards::view::{Content, PageView},
    store::{Pin, Pinboard, PlacedPin},
};

/// A rendered page: whether it shows something (200) or not (404), its HTML, and the
/// Content-Security-Policy that goes with it.
pub struct Page {
    pub found: bool,
    pub html: String,
    /// The page's `<body>` content alone (header, main, footer), what the page script swaps
    /// in on a change.
    pub fragment: String,
    pub csp: String,
    /// The page's referrer policy: `no-referrer`, but `same-origin` on a signed-in user's
    /// pages (see [`with_account`]).
    pub referrer: &'static str,
}

const CSS: &str = "\
:root{color-scheme:light dark;--bg:#f4f5f7;--fg:#111;--card:#fff;--line:#e5e7eb;--soft:#eef0f3;--muted:#555;--code:#f6f8fa;--row:#fafafa;\
--good:#047857;--bad:#b91c1c;--ok:#047857;--warn:#d97706;--crit:#b91c1c;\
font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg);line-height:1.35}\
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--fg:#e7e9ec;--card:#181b21;--line:#2b3038;--soft:#262b33;--muted:#a3abb5;--code:#12151b;--row:#1d2128;\
--good:#34d399;--bad:#f87171;--ok:#10b981;--warn:#f59e0b;--crit:#ef4444}}\
body{margin:0;padding:24px}header{max-width:1400px;margin:0 auto 16px}h1{font-size:1.6rem;margin:0 0 4px}\
.desc{white-space:pre-line;color:var(--muted);margin:0}main{max-width:1400px;margin:0 auto}\
.board{display:grid;grid-template-columns:repeat(12,minmax(0,1fr));grid-auto-rows:minmax(90px,auto);gap:12px}\
.pin{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px;overflow:auto;min-width:0;\
position:relative;display:flex;flex-direction:column}.pin>*{flex:none;min-height:0}\
.pin h2{font-size:1rem;margin:0 0 8px}.single .pin{max-width:900px;margin:0 auto}.single .plot{flex-basis:20rem}\
.plot{flex:1 0 11rem;display:flex;box-sizing:border-box;font-size:.8rem;padding:.8em 1.2em 1.8em 2em;container-type:size}\
@container (max-height:150px){.chart .alt{display:none}}@container (max-width:260px){.chart .alt-x{display:none}}\
@container (max-width:560px){.wide .alt-c{display:none}}\
.plot.xt{padding-bottom:3.3em}.plot.yt{padding-top:2em}.yl2{padding-left:2em}.yl4{padding-left:3.2em}\
.yl6{padding-left:4.4em}.yl8{padding-left:5.6em}.yl10{padding-left:6.8em}.yl12{padding-left:8em}\
.yl14{padding-left:9.2em}.yl16{padding-left:10.4em}\
.plot>svg{flex:1 1 0;min-width:0;align-self:stretch;height:auto;overflow:visible;display:block}\
.chart text{fill:var(--muted)}.chart .grid{stroke:var(--line)}.chart .zero{stroke:var(--muted);stroke-opacity:.7}\
.field{overflow:visible}.s{fill:var(--s)}.ln{fill:none;stroke:var(--s);stroke-width:2.5px;stroke-linejoin:round}\
.ar{fill:var(--s);fill-opacity:.18}.pt{fill:var(--s);stroke:var(--card);stroke-width:1px}\
.cut{stroke:var(--card);stroke-width:1.5px}.hole{fill:var(--card)}.cell{stroke:var(--card)}.chart .none{fill:var(--soft)}\
.chart .on-dark{fill:#fff}.chart .on-light{fill:#111}\
.pie,.gauge{width:100%;height:auto;display:block;max-width:320px;margin:0 auto}\
.dial{align-self:center;width:100%;max-width:320px;display:flex;flex-direction:column}\
.track{stroke:var(--soft)}.needle{stroke:var(--fg)}.hub{fill:var(--fg)}\
.ends{display:flex;justify-content:space-between;margin:0;padding:0 9%;color:var(--muted);font-size:.85rem}\
.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:.85rem}\
.sw{display:inline-block;width:.75em;height:.75em;border-radius:2px;background:var(--s);margin-right:.4em}\
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{flex:1 1 140px;border:1px solid var(--soft);border-radius:6px;padding:8px 10px}\
.label{color:var(--muted);margin:0;font-size:.85rem}.figure{font-size:1.8rem;font-weight:600;margin:2px 0;font-variant-numeric:tabular-nums}\
.unit{font-size:1rem;color:var(--muted);margin-left:4px}.change{margin:0;font-size:.9rem;font-weight:600}\
.good{color:var(--good)}.bad{color:var(--bad)}.flat{color:var(--muted)}\
.muted{color:var(--muted);margin:2px 0}.spark{width:100%;height:36px;display:block}.spark .ln{stroke-width:2px}\
.pill{align-self:flex-start;margin:0 0 6px;padding:1px 10px;border-radius:999px;font-size:.8rem;font-weight:700;line-height:1.5}\
.pin>h2+.pill{position:absolute;top:10px;right:12px;margin:0}.pin>h2:has(+.pill){padding-right:6.5rem}\
.pill.ok{background:#047857;color:#fff}.pill.warning{background:#f59e0b;color:#111}.pill.critical{background:#b91c1c;color:#fff}\
.pin.sig-ok{border-left:6px solid var(--ok)}.pin.sig-warning{border-left:6px solid var(--warn)}.pin.sig-critical{border-left:6px solid var(--crit)}\
.pin.stale{border-style:dashed}.pin.stale>h2{color:var(--muted)}.pin.stale>:not(h2,.pill,.stale-note){opacity:.45;filter:grayscale(1)}\
.stale-note{margin:0 0 6px;font-size:.85rem;font-weight:600}\
.progress,.list,.status-grid,.timeline{padding:0;margin:0;list-style:none}\
.progress li{display:grid;grid-template-columns:minmax(80px,1fr) 2fr auto;gap:8px;align-items:center;margin:4px 0}\
progress{width:100%}.num{font-variant-numeric:tabular-nums;text-align:right}\
.scroll{overflow:auto}table{border-collapse:collapse;width:100%;font-size:.9rem}\
th,td{border-bottom:1px solid var(--soft);padding:4px 8px;text-align:left;vertical-align:top}\
.status-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(180px,100%),1fr));gap:8px}\
.status-grid li,.timeline li{padding:6px 8px;border-left:4px solid #9ca3af;background:var(--row)}\
.timeline li{margin:0 0 6px}.badge{font-size:.8rem;font-weight:600;text-transform:uppercase}\
.st-ok{border-color:#10b981;color:#059669}.st-warn{border-color:#f59e0b;color:#d97706}\
.st-error{border-color:#ef4444;color:#dc2626}.st-unknown{border-color:#9ca3af;color:var(--muted)}\
.status-grid strong,.status-grid .muted{color:var(--fg)}\
pre{background:var(--code);padding:8px;overflow:auto;font-size:.85rem;margin:0}\
figure{margin:0}figcaption{color:var(--muted);font-size:.85rem;margin:4px 0}img{max-width:100%;height:auto}\
.md img{max-width:100%}.md table{width:auto}footer{max-width:1400px;margin:16px auto 0;color:var(--muted);font-size:.8rem}\
a{color:#2563eb}\
#live{position:fixed;right:10px;bottom:8px;font-size:.8rem;padding:2px 8px;border-radius:10px;background:var(--card);\
border:1px solid var(--line);color:var(--muted)}#live::before{content:\"\\25CF  \";color:#9ca3af}\
#live.live::before{color:#10b981}#live.reconnecting::before{color:#f59e0b}#live.stale::before{color:#ef4444}\
html.kiosk{font-size:18px}\
body.kiosk{--bg:#07090c;--fg:#f1f3f5;--card:#12161c;--line:#232a33;--soft:#20262e;--muted:#aab3bd;--code:#0c0f13;--row:#171c22;\
--good:#34d399;--bad:#f87171;--ok:#10b981;--warn:#f59e0b;--crit:#ef4444;\
color-scheme:dark;color:var(--fg);background:var(--bg);height:100vh;box-sizing:border-box;padding:12px}\
.kiosk header,.kiosk footer{display:none}.kiosk main{max-width:none;height:100%;overflow:hidden}\
.kiosk .board{height:100%;grid-auto-rows:minmax(0,1fr);gap:10px}\
html.fitted main{height:var(--k-page)}html.fitted .board{height:auto;grid-auto-rows:var(--k-row);transform:translateY(var(--k-shift))}\
html.paged body{padding-bottom:calc(16px + 1.6rem)}\
#pages{position:fixed;left:50%;bottom:6px;transform:translateX(-50%);font-size:1.1rem;font-weight:700;\
padding:0 14px;border-radius:999px;background:var(--card);border:1px solid var(--line);font-variant-numeric:tabular-nums}\
.kiosk [hidden]{display:none!important}.more{color:var(--muted);font-weight:600;font-size:.85rem}\
.kiosk .pin{overflow:hidden;container-type:inline-size;padding:10px 12px}.kiosk .single .pin{height:100%;box-sizing:border-box}\
.kiosk .pin>.plot{flex:1 1 0;min-height:6rem}\
.kiosk .pin>.chart{flex:1 1 0;height:auto;min-height:4rem}\
.kiosk .pin>.dial{flex:1 1 0;width:auto;max-width:100%;aspect-ratio:300/175;min-height:3.5rem}.kiosk .dial>svg{flex:1 1 0;min-height:0}\
.kiosk .pin>.image{flex:1 1 0;min-height:4rem;display:flex;flex-direction:column}\
.kiosk .image img{flex:1 1 0;min-height:0;width:100%;object-fit:contain}\
.kiosk .pin h2{font-size:1.15rem}.kiosk .figure{font-size:clamp(1.3rem,15cqw,2.4rem);line-height:1.15}\
.kiosk .scroll,.kiosk pre{overflow:visible}.kiosk pre{white-space:pre-wrap}.kiosk .card{min-width:0}\
.kiosk .pin h2,.kiosk .pin p,.kiosk pre,.kiosk td,.kiosk li,.kiosk .card{overflow-wrap:anywhere}\
.kiosk .tight th{overflow-wrap:anywhere}.kiosk li.more{background:none;border-left-color:transparent}.kiosk .md>*{margin:0 0 .5em}\
.kiosk .progress li{grid-template-columns:minmax(0,1fr) auto;gap:2px 8px}.kiosk .progress progress{grid-column:1 / -1;grid-row:2}\
.account{max-width:1400px;margin:0 auto 12px;display:flex;gap:12px;align-items:center;justify-content:flex-end;font-size:.9rem;color:var(--muted)}\
.account form{margin:0}.account button{font:inherit;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg);cursor:pointer}\
.kiosk .account{display:none}.boards{list-style:none;padding:0;margin:0;display:grid;gap:8px}\
.boards li{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 14px;display:flex;justify-content:space-between;gap:12px}\
@media (max-width:720px){body{padding:12px}.board{display:block}.board .pin{margin-bottom:12px}}";

/// The pin types' own design (assets/types.css), after the base sheet.
const TYPES_CSS: &str = include_str!("../../assets/types.css");

/// How a share page is shown: the viewer's choice of kiosk mode, and, for a page that
/// follows its item live, the share id and where its stream resumes.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// `?kiosk=1`: the board fills a dark window, no header or footer.
    pub kiosk: bool,
    /// The share id and where its stream resumes (the view's `since`): the script follows
    /// `/share/{id}/events` from there, so nothing committed meanwhile is missed.
    pub live: Option<(String, String)>,
}

/// The page script's URL path: its content hash in the name, so it can be cached forever.
pub fn script_path() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let digest = Sha256::digest(LIVE_JS.as_bytes());
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("/assets/live-{hex}.js")
    })
}

/// The page script (assets/live.js), embedded at build time.
pub const LIVE_JS: &str = include_str!("../../assets/live.js");

/// Kiosk mode's script (assets/kiosk.js): fits the board to the screen, in pages when it
/// must. Embedded at build time.
pub const KIOSK_JS: &str = include_str!("../../assets/kiosk.js");

fn kiosk_script_path() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| hashed("kiosk", "js", KIOSK_JS))
}

/// `page` with the seconds each page of a kiosk board too tall for the screen stays up
/// (`kiosk.page_secs`), on `<html>` for its script; other pages are returned as they are.
pub fn paged(mut page: Page, secs: u64) -> Page {
    page.html = page.html.replacen(
        "<html lang=\"en\" class=\"kiosk\">",
        &format!("<html lang=\"en\" class=\"kiosk\" data-page-secs=\"{secs}\">"),
        1,
    );
    page
}

/// Assembles a page: `body` (header, main, footer: what the fragment route sends too) in
/// the document, with `extra_css` appended to the shared style sheet.
pub(super) fn page(title: &str, body: String, extra_css: &str, found: bool, view: &View) -> Page {
    let style = format!("{CSS}{}{TYPES_CSS}{extra_css}", svg::palette_css());
    let hash = STANDARD.encode(Sha256::digest(style.as_bytes()));
    // On `<html>` too, where kiosk mode sets the root font size that every `rem` follows.
    let kiosk = if view.kiosk { " class=\"kiosk\"" } else { "" };
    let (live, script, policy) = match &view.live {
        Some((id, since)) => (
            format!(" data-share=\"{}\" data-since=\"{}\"", esc(id), esc(since)),
            format!(
                "<script src=\"{}\" defer></script>{}",
                script_path(),
                if view.kiosk {
                    format!("<script src=\"{}\" defer></script>", kiosk_script_path())
                } else {
                    String::new()
                }
            ),
            "script-src 'self'; connect-src 'self'; ",
        ),
        None => (String::new(), String::new(), ""),
    };
    let html = format!(
        "<!doctype html><html lang=\"en\"{kiosk}><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><meta name=\"referrer\" content=\"no-referrer\">\
         <title>{}</title><style>{style}</style>{script}</head><body{kiosk}{live}>{body}</body></html>",
        esc(title)
    );
    Page {
        found,
        html,
        fragment: body,
        referrer: "no-referrer",
        csp: format!(
            "default-src 'none'; {policy}style-src 'sha256-{hash}'; img-src https: http: data:; \
             base-uri 'none'; form-action 'none'"
        ),
    }
}

fn footer(updated_at: i64) -> String {
    format!(
        "<footer>Shared with Corkboard · updated {}</footer>",
        super::times::updated(updated_at)
    )
}

/// A pin in its frame: its title as heading, or (untitled) its type as the frame's name,
/// then its signals (status, staleness at `now`); `data-pin` names it for the page script,
/// `attrs` adds its grid position; its content is drawn for a cell of `room`.
fn frame(pin: &Pin, blocks: &str, class: &str, attrs: &str, room: Room, now: i64) -> String {
    let (heading, name) = match pin.title.as_deref() {
        Some(title) => (format!("<h2>{}</h2>", esc(title)), String::new()),
        None => (
            String::new(),
            format!(" aria-label=\"{}\"", esc(&pin.pin_type)),
        ),
    };
    let signal = signal(
        pin.status.as_deref(),
        pin.stale_at(now),
        pin.last_pushed_at,
        now,
    );
    format!(
        "<section class=\"pin {class}{}\" data-pin=\"{}\"{attrs}{name}>{heading}{}{}{blocks}</section>",
        signal.classes,
        esc(&pin.id),
        signal.html,
        body_in(&pin.pin_type, &pin.pin_config, room)
    )
}

/// The page of a board or pin as [`crate::pinboards::view`] shows it, `?kiosk=1` or not,
/// following item `id` live from the view's `since` when it has one.
pub fn view_page(view: &PageView, id: &str, kiosk: bool) -> Page {
    let how = View {
        kiosk,
        live: view.since.clone().map(|since| (id.to_owned(), since)),
    };
    match &view.content {
        Content::Board(b) => board_page(&b.board, &b.placed, &b.blocks, &how),
        Content::Pin(p) => pin_page(&p.pin, &p.blocks, &how),
    }
}

/// The page of one public pin, with its templates resolved and `blocks` (the HTML of its
/// evaluated blocks) under its content.
pub fn pin_page(pin: &Pin, blocks: &str, view: &View) -> Page {
    let title = pin.title.clone().unwrap_or_else(|| {
        PinType::parse(&pin.pin_type)
            .map_or("Shared pin", PinType::description)
            .to_owned()
    });
    let body = format!(
        "<header></header><main class=\"single\" data-title=\"{}\">{}</main>{}",
        esc(&title),
        frame(pin, blocks, "", "", Room::columns(8), clock::now_ms()),
        footer(pin.updated_at)
    );
    page(&title, body, "", true, view)
}

/// The page of one public board: its pins on the grid, in position order (the order the
/// store returns them), each placed by a generated class (and by its `data-x/y/w/h`, which
/// the page script applies to redrawn pins), with its templates resolved and the HTML of its
/// evaluated blocks (`blocks`, by pin id) under its content.
pub fn board_page(
    board: &Pinboard,
    pins: &[PlacedPin],
    blocks: &std::collections::HashMap<String, String>,
    view: &View,
) -> Page {
    let mut css = String::new();
    let mut cells = String::new();
    let now = clock::now_ms();
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
        let attrs = format!(
            " data-x=\"{}\" data-y=\"{}\" data-w=\"{}\" data-h=\"{}\"",
            p.x, p.y, p.w, p.h
        );
        cells.push_str(&frame(
            &placed.pin,
            pin_blocks,
            &format!("g{i}"),
            &attrs,
            Room::columns(p.w),
            now,
        ));
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
    let body = format!(
        "<header><h1>{}</h1>{description}</header><main data-title=\"{}\" data-version=\"{}\">{empty}<div class=\"board\">{cells}</div></main>{}",
        esc(&board.title),
        esc(&board.title),
        clock::iso(board.updated_at),
        footer(board.updated_at)
    );
    page(&board.title, body, &css, true, view)
}

/// The one page for anything not shown: missing, private or sign-in only look the same. It
/// follows nothing: no script, no stream.
pub fn not_found_page() -> Page {
    page(
        "Not found",
        "<header><h1>Not found</h1></header><main data-title=\"Not found\"><p class=\"muted\">There is nothing to show here. \
         The link may be wrong, or what it pointed to is no longer shared.</p></main>"
            .to_owned(),
        "",
        false,
        &View::default(),
    )
}

/// `<public_url>/upgrade`, where a 429's `upgrade_url` points unless the operator set another
/// (SPEC.md 8): on a self-hosted server there is nothing to buy, so it says what the limits
/// here are and who can raise them. `tiers` are `(name, per minute, per hour)`; `writes` the
/// write bucket's capacity and window in seconds.
pub fn rate_limits_page(tiers: &[(&str, u32, u32)], writes: (u32, u64)) -> Page {
    let rows: String = tiers
        .iter()
        .map(|(name, minute, hour)| {
            format!(
                "<tr><td>{}</td><td class=\"num\">{minute}</td><td class=\"num\">{hour}</td></tr>",
                esc(name)
            )
        })
        .collect();
    let (capacity, window) = writes;
    let body = format!(
        "<header><h1>Rate limits on this server</h1></header><main data-title=\"Rate limits\">\
         <div class=\"pin\"><p>Each API key has a tier; its requests count per minute and per hour \
         (a batch costs a token per 10 items), and its writes also draw on a bucket of \
         {capacity} every {window} s. A refused request is a 429 that says which window ran out and \
         when it resets (<code>Retry-After</code>).</p>\
         <table><thead><tr><th>Tier</th><th class=\"num\">Requests a minute</th>\
         <th class=\"num\">Requests an hour</th></tr></thead><tbody>{rows}</tbody></table>\
         <p class=\"muted\">This server is run by its own operator: there is no plan to buy. The \
         operator sets a key's tier when making it (<code>corkboard keys create --tier team</code>) \
         and each tier's limits in the configuration (<code>[rate_limits.tiers.team]</code>, or \
         <code>CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE</code>).</p></div></main>"
    );
    let mut page = page("Rate limits", body, "", true, &View::default());
    page.found = true;
    page
}

/// `/` for a visitor without a session (where sign-out lands): a way to sign in while web
/// sign-in is on (`sign_in`), and the API's documentation.
pub fn signed_out_page(sign_in: bool) -> Page {
    let welcome = if sign_in {
        "<p>You are signed out.</p><p><a href=\"/login\">Sign in</a> to see your boards.</p>"
    } else {
        "<p>Automations push pins onto boards people watch live.</p>"
    };
    let mut page = page(
        "Corkboard",
        format!(
            "<header><h1>Corkboard</h1></header><main data-title=\"Corkboard\">{welcome}<p>For \
             developers: the <a href=\"/docs\">API reference</a> and the \
             <a href=\"/docs/pin-types\">pin types</a>.</p></main>"
        ),
        "",
        false,
        &View::default(),
    );
    page.found = true;
    page
}

/// The bar of a signed-in user's pages: who they are, their boards, and a sign-out button
/// (a form posting to `/logout`, so the page's policy allows forms to this site).
/// The signed-in user's bar: their name, the app's sections (People and Keys for an owner,
/// as the settings pages' bar offers them) and sign-out.
fn account_bar(name: &str, owner: bool) -> String {
    maud::html! {
        nav.account {
            span { (name) }
            a href="/boards" { "Boards" }
            @if owner {
                a href="/settings/people" { "People" }
                a href="/settings/keys" { "Keys" }
            }
            form method="post" action="/logout" { button type="submit" { "Sign out" } }
        }
    }
    .into_string()
}

/// `page` as a signed-in user's page: their bar above it, forms allowed to this site, and
/// the referrer policy `same-origin` (under `no-referrer` a browser sends `Origin: null` with
/// the sign-out form, which `POST /logout` must refuse).
pub fn with_account(mut page: Page, name: &str, owner: bool) -> Page {
    let bar = account_bar(name, owner);
    let body = format!("{bar}{}", page.fragment);
    page.html = page.html.replacen(&page.fragment, &body, 1).replacen(
        "<meta name=\"referrer\" content=\"no-referrer\">",
        "<meta name=\"referrer\" content=\"same-origin\">",
        1,
    );
    page.fragment = body;
    page.csp = page.csp.replace("form-action 'none'", "form-action 'self'");
    page.referrer = "same-origin";
    page
}

/// A live page that follows `base` (`{base}/events`, `{base}/fragment`) instead of the
/// share routes: a signed-in user's board page.
pub fn following(mut page: Page, base: &str) -> Page {
    page.html = page.html.replacen(
        " data-share=\"",
        &format!(" data-base=\"{}\" data-share=\"", esc(base)),
        1,
    );
    page
}

/// `GET /boards`: the boards a signed-in user may read, newest change first, each with its
/// last update time; `new_board` (the "New board" form, HTML) above them for a user who may
/// make one. Without boards, the empty state says so.
pub fn boards_page(name: &str, owner: bool, boards: &[Pinboard], new_board: Option<&str>) -> Page {
    let list = maud::html! {
        @if boards.is_empty() {
            div.empty {
                p { strong { "No boards yet" } }
                p.muted { @if new_board.is_some() { "Make the first one: New board." } @else { "Boards shared with you appear here." } }
            }
        } @else {
            ul.boards {
                @for b in boards {
                    li { a href=(format!("/boards/{}", b.id)) { (b.title) } (maud::PreEscaped(super::times::time(&clock::iso(b.updated_at)))) }
                }
            }
        }
    };
    let create = new_board.map(maud::PreEscaped);
    let body = maud::html! {
        header.with-tools { h1 { "Boards" } @if let Some(create) = create { (create) } }
        main data-title="Boards" { (list) }
    };
    with_styles(with_account(
        page("Boards", body.into_string(), "", true, &View::default()),
        name,
        owner,
    ))
}

/// The editor's script (assets/editor.js) and the style sheet of the web app's own controls
/// (assets/editor.css), embedded at build time.
pub const EDITOR_JS: &str = include_str!("../../assets/editor.js");
pub const EDITOR_CSS: &str = include_str!("../../assets/editor.css");

/// `/assets/<name>-<hash>.<ext>` of an embedded asset: its content hash in the name, so it
/// can be cached forever.
fn hashed(name: &str, ext: &str, text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("/assets/{name}-{hex}.{ext}")
}

fn editor_script_path() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| hashed("editor", "js", EDITOR_JS))
}

fn editor_style_path() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| hashed("editor", "css", EDITOR_CSS))
}

/// The embedded asset at `path` (`/assets/...`): its content type and text.
pub fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    if path == script_path() {
        Some(("text/javascript; charset=utf-8", LIVE_JS))
    } else if path == kiosk_script_path() {
        Some(("text/javascript; charset=utf-8", KIOSK_JS))
    } else if path == editor_script_path() {
        Some(("text/javascript; charset=utf-8", EDITOR_JS))
    } else if path == editor_style_path() {
        Some(("text/css; charset=utf-8", EDITOR_CSS))
    } else {
        None
    }
}

/// `page` with the web app's style sheet of controls (same-origin, allowed by the CSP).
fn with_styles(mut page: Page) -> Page {
    let link = format!("<link rel=\"stylesheet\" href=\"{}\">", editor_style_path());
    page.html = page.html.replacen("</head>", &format!("{link}</head>"), 1);
    page.csp = page.csp.replacen("style-src ", "style-src 'self' ", 1);
    page
}

/// A board page with `tools` (the editor's, HTML) between the account bar and the board,
/// and the editor's script: outside the header, main and footer the live script swaps, so
/// a redraw keeps what is typed there.
pub fn with_tools(mut page: Page, tools: &str) -> Page {
    let at = page
        .fragment
        .find("</nav>")
        .map_or(0, |i| i + "</nav>".len());
    let body = format!("{}{tools}{}", &page.fragment[..at], &page.fragment[at..]);
    page.html = page.html.replacen(&page.fragment, &body, 1);
    page.fragment = body;
    let script = format!(
        "<script src=\"{}\" defer></script></head>",
        editor_script_path()
    );
    page.html = page.html.replacen("</head>", &script, 1);
    if !page.csp.contains("script-src") {
        page.csp = page.csp.replacen(
            "style-src ",
            "script-src 'self'; connect-src 'self'; style-src ",
            1,
        );
    }
    with_styles(page)
}

/// A page of one line of news from the editor (a refused change, posted by a form): what
/// went wrong and the way back.
pub fn message_page(title: &str, text: &str, back: &str) -> Page {
    let body = maud::html! {
        header { h1 { (title) } }
        main data-title=(title) {
            div.pin { p { (text) } p { a href=(back) { "Go back" } } }
        }
    };
    let mut page = page(title, body.into_string(), "", false, &View::default());
    page.found = false;
    page
}

/// A piece of HTML alone (the editor's picker list), with the policy of a page that runs
/// nothing.
pub fn fragment_page(html: String) -> Page {
    Page {
        found: true,
        html,
        fragment: String::new(),
        csp: "default-src 'none'; base-uri 'none'; form-action 'self'".to_owned(),
        referrer: "same-origin",
    }
}

/// The page of a sign-in that did not succeed: nothing about why, a link to try again.
pub fn sign_in_failed_page() -> Page {
    let mut page = page(
        "Sign-in failed",
        "<header><h1>Sign-in failed</h1></header><main data-title=\"Sign-in failed\">\
         <p class=\"muted\">The identity provider's answer could not be accepted.</p>\
         <p><a href=\"/login\">Try again</a></p></main>"
            .to_owned(),
        "",
        true,
        &View::default(),
    );
    page.found = false;
    page
}
