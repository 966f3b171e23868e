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

/// The share pages' style sheet (assets/page.css), embedded at build time.
const CSS: &str = include_str!("../../assets/page.css");

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
    let style = format!("{CSS}{}{extra_css}", svg::palette_css());
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
