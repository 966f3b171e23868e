//! Whole share pages: one pin, one board on its 12-column grid, or the one 404 page, and the
//! signed-in user's pages drawn on the same shell. Pages are maud templates (every value
//! escaped). Each page carries a single `<style>` element (assets/page.css, the series
//! palette, assets/types.css, kiosk mode's rules on kiosk pages, the account bar's on a
//! signed-in user's, and the page's own rules: a page carries no rule it can't use) and its
//! CSP allows exactly that element (by its SHA-256), images, and, on a live page, its
//! same-origin scripts ([`super::assets`]: the live one, kiosk mode's, and those a caller
//! adds) and their connections to the same origin: no
//! inline script, no other styles, no forms.
//!
//! A page keeps what it was drawn from, so that [`paged`], [`following`], [`with_account`]
//! and [`with_tools`] draw it again with more instead of editing its HTML.

use base64::{engine::general_purpose::STANDARD, Engine};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use sha2::{Digest, Sha256};

use super::signal::signal;
use super::svg::{self, Room};
use super::{assets, body_in};
use crate::{
    clock,
    pin_types::PinType,
    pinboards::view::{Content, PageView},
    store::{Pin, Pinboard, PlacedPin, Position},
};

/// A rendered page: whether it shows something (200) or not (404), its HTML, and the
/// Content-Security-Policy that goes with it.
#[derive(Debug, Clone)]
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
    /// What a page of this module was drawn from; `None` for pages drawn elsewhere.
    document: Option<Box<Document>>,
}

impl Page {
    /// A page drawn elsewhere (the app's, sign-in and docs pages), found (200).
    pub fn new(html: String, fragment: String, csp: String, referrer: &'static str) -> Page {
        Page {
            found: true,
            html,
            fragment,
            csp,
            referrer,
            document: None,
        }
    }

    /// The page drawn again after `change` to what it is drawn from (a page drawn elsewhere
    /// is returned as it is).
    fn redrawn(mut self, change: impl FnOnce(&mut Document)) -> Page {
        if let Some(document) = self.document.as_deref_mut() {
            change(document);
            let (html, fragment, csp) = document.draw();
            self.html = html;
            self.fragment = fragment;
            self.csp = csp;
            self.referrer = document.referrer();
        }
        self
    }
}

/// The share pages' style sheet (assets/page.css), embedded at build time.
const CSS: &str = include_str!("../../assets/page.css");

/// The pin types' own design (assets/types.css), after the base sheet.
const TYPES_CSS: &str = include_str!("../../assets/types.css");

/// Kiosk mode's rules (assets/kiosk.css: the dark wall, the fitted grid, its pages), in
/// kiosk pages only.
const KIOSK_CSS: &str = include_str!("../../assets/kiosk.css");

/// The signed-in user's bar and board list (assets/account.css), on their pages only.
const ACCOUNT_CSS: &str = include_str!("../../assets/account.css");

/// How a share page is shown, beyond what it shows.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// `?kiosk=1`: the board fills a dark window, no header or footer.
    pub kiosk: bool,
    /// The page's `<main>` alone, without header or footer (an embed); the live script
    /// keeps swapping it (it adds no header or footer a page lacks).
    pub bare: bool,
    /// Where a live page follows its item (`{base}/events`, `{base}/fragment`) instead of
    /// the share routes: a signed-in user's board page.
    pub base: Option<String>,
    /// The seconds each page of a kiosk board too tall for the screen stays up
    /// (`kiosk.page_secs`), for kiosk mode's script.
    pub page_secs: Option<u64>,
    /// Same-origin scripts of the page beyond the live and kiosk ones (their paths).
    pub scripts: Vec<String>,
    /// The page as one turn of a playlist: what its script opens next, and when.
    pub turn: Option<Turn>,
}

/// One turn of a playlist, on `<body>` for `assets/play.js`.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The page that comes next (`data-next`).
    pub next: String,
    /// How long this one stays (`data-seconds`).
    pub seconds: i64,
}

/// What a share page follows live: its share id and where its stream resumes (the view's
/// `since`): the script follows `/share/{id}/events` from there, so nothing committed
/// meanwhile is missed.
#[derive(Debug, Clone)]
struct Live {
    id: String,
    since: String,
}

/// A page's body: what comes above its `<main>` (the header), the main, and what comes
/// under it (the footer). A bare page shows its main alone.
pub(super) struct Body {
    pub top: Markup,
    pub main: Markup,
    pub bottom: Markup,
}

/// Everything a page is drawn from.
#[derive(Debug, Clone)]
struct Document {
    title: String,
    top: Markup,
    main: Markup,
    bottom: Markup,
    /// The page's own rules, after the shared style sheet.
    extra_css: String,
    view: View,
    live: Option<Live>,
    /// The signed-in user's bar: their name, and whether they own the workspace.
    account: Option<(String, bool)>,
    /// The editor's tools (HTML), under the account bar.
    tools: Option<String>,
    /// The web app's style sheet of controls (assets/editor.css), linked.
    app_styles: bool,
    /// More of the head, at its end (a share page's link preview tags).
    head: Option<Markup>,
}

impl Document {
    fn referrer(&self) -> &'static str {
        if self.account.is_some() {
            "same-origin"
        } else {
            "no-referrer"
        }
    }

    /// The page's scripts, in order: the live one and kiosk mode's on a live page, the
    /// editor's with its tools, then the caller's.
    fn scripts(&self) -> Vec<&str> {
        let mut scripts = Vec::new();
        if self.live.is_some() {
            scripts.push(assets::LIVE.path());
            if self.view.kiosk {
                scripts.push(assets::KIOSK.path());
            }
        }
        if self.tools.is_some() {
            scripts.push(assets::EDITOR.path());
        }
        scripts.extend(self.view.scripts.iter().map(String::as_str));
        scripts
    }

    /// The page's one style sheet: the shared rules, kiosk mode's and the account bar's
    /// when the page has them, then the page's own.
    fn style(&self) -> String {
        let (kiosk, kiosk_palette) = if self.view.kiosk {
            (KIOSK_CSS, svg::kiosk_palette_css())
        } else {
            ("", "")
        };
        let account = if self.account.is_some() {
            ACCOUNT_CSS
        } else {
            ""
        };
        format!(
            "{CSS}{}{TYPES_CSS}{kiosk_palette}{kiosk}{account}{}",
            svg::palette_css(),
            self.extra_css
        )
    }

    /// The page's HTML, its body's content alone, and its CSP.
    fn draw(&self) -> (String, String, String) {
        let view = &self.view;
        let style = self.style();
        let kiosk = view.kiosk.then_some("kiosk");
        let scripts = self.scripts();
        let fragment = html! {
            @if let Some((name, owner)) = &self.account {
                (account_bar(name, *owner))
            }
            @if let Some(tools) = &self.tools {
                (PreEscaped(tools))
            }
            @if !view.bare { (self.top) }
            (self.main)
            @if !view.bare { (self.bottom) }
        };
        let live = self.live.as_ref();
        let document = html! {
            (DOCTYPE)
            // On `<html>` too, where kiosk mode sets the root font size that every `rem`
            // follows.
            html lang="en" class=[kiosk] data-page-secs=[view.page_secs.filter(|_| view.kiosk)] {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width,initial-scale=1";
                    meta name="robots" content="noindex";
                    meta name="referrer" content=(self.referrer());
                    title { (self.title) }
                    style { (PreEscaped(&style)) }
                    @for src in &scripts {
                        script src=(src) defer {}
                    }
                    @if self.app_styles {
                        link rel="stylesheet" href=(assets::EDITOR_STYLE.path());
                    }
                    @if let Some(head) = &self.head {
                        (head)
                    }
                }
                body data-next=[view.turn.as_ref().map(|t| &t.next)]
                    data-seconds=[view.turn.as_ref().map(|t| t.seconds)]
                    class=[kiosk]
                    data-base=[live.and(view.base.as_ref())]
                    data-share=[live.map(|l| &l.id)]
                    data-since=[live.map(|l| &l.since)] {
                    (fragment)
                }
            }
        };
        let policy = if scripts.is_empty() {
            ""
        } else {
            "script-src 'self'; connect-src 'self'; "
        };
        let styles = if self.app_styles { "'self' " } else { "" };
        let forms = if self.account.is_some() {
            "'self'"
        } else {
            "'none'"
        };
        let csp = format!(
            "default-src 'none'; {policy}style-src {styles}'sha256-{}'; img-src https: http: data:; \
             base-uri 'none'; form-action {forms}",
            STANDARD.encode(Sha256::digest(style.as_bytes()))
        );
        (document.into_string(), fragment.into_string(), csp)
    }
}

/// `page` with the seconds each page of a kiosk board too tall for the screen stays up
/// (`kiosk.page_secs`), on `<html>` for its script; other pages are returned as they are.
pub fn paged(page: Page, secs: u64) -> Page {
    page.redrawn(|d| d.view.page_secs = Some(secs))
}

/// Assembles a page: `body` in the document, with `extra_css` appended to the shared style
/// sheet, shown as `view` says and following `live` when it is live.
fn document(
    title: &str,
    body: Body,
    extra_css: &str,
    found: bool,
    view: View,
    live: Option<Live>,
) -> Page {
    let document = Document {
        title: title.to_owned(),
        top: body.top,
        main: body.main,
        bottom: body.bottom,
        extra_css: extra_css.to_owned(),
        view,
        live,
        account: None,
        tools: None,
        app_styles: false,
        head: None,
    };
    let (html, fragment, csp) = document.draw();
    Page {
        found,
        html,
        fragment,
        csp,
        referrer: document.referrer(),
        document: Some(Box::new(document)),
    }
}

/// A page that follows nothing: `body` in the document, with `extra_css` appended to the
/// shared style sheet.
pub(super) fn page(title: &str, body: Body, extra_css: &str, found: bool) -> Page {
    document(title, body, extra_css, found, View::default(), None)
}

fn footer(updated_at: i64) -> Markup {
    html! {
        footer { "Shared with Corkboard · updated " (PreEscaped(super::times::updated(updated_at))) }
    }
}

/// A pin in its frame: its title as heading, or (untitled) its type as the frame's name,
/// then its signals (status, staleness at `now`); `data-pin` names it for the page script;
/// on a board, `cell` is its grid class and position (`data-x/y/w/h`); its content is drawn
/// for a cell of `room`.
fn frame(pin: &Pin, blocks: &str, cell: Option<(usize, Position)>, room: Room, now: i64) -> Markup {
    let signal = signal(
        pin.status.as_deref(),
        pin.stale_at(now),
        pin.last_pushed_at,
        now,
    );
    let grid = cell.map(|(i, _)| format!(" g{i}")).unwrap_or_default();
    let at = cell.map(|(_, p)| p);
    html! {
        section class={ "pin" (grid) (signal.classes) } data-pin=(pin.id)
            data-x=[at.map(|p| p.x)] data-y=[at.map(|p| p.y)]
            data-w=[at.map(|p| p.w)] data-h=[at.map(|p| p.h)]
            aria-label=[pin.title.is_none().then_some(&pin.pin_type)] {
            @if let Some(title) = &pin.title {
                h2 { (title) }
            }
            (PreEscaped(signal.html))
            (PreEscaped(body_in(&pin.pin_type, &pin.pin_config, room)))
            (PreEscaped(blocks))
        }
    }
}

/// The page of a board or pin as [`crate::pinboards::view`] shows it, `?kiosk=1` or not,
/// following item `id` live from the view's `since` when it has one.
pub fn view_page(view: &PageView, id: &str, kiosk: bool) -> Page {
    shown_page(
        view,
        id,
        View {
            kiosk,
            ..View::default()
        },
    )
}

/// [`view_page`] shown as `how` says (bare, with more scripts, as a playlist's turn...).
pub fn shown_page(view: &PageView, id: &str, how: View) -> Page {
    let live = view.since.clone().map(|since| Live {
        id: id.to_owned(),
        since,
    });
    match &view.content {
        Content::Board(b) => board_page(&b.board, &b.placed, &b.blocks, how, live),
        Content::Pin(p) => pin_page(&p.pin, &p.blocks, how, live),
    }
}

/// The page of one public pin, with its templates resolved and `blocks` (the HTML of its
/// evaluated blocks) under its content.
fn pin_page(pin: &Pin, blocks: &str, how: View, live: Option<Live>) -> Page {
    let title = pin.title.clone().unwrap_or_else(|| {
        PinType::parse(&pin.pin_type)
            .map_or("Shared pin", PinType::description)
            .to_owned()
    });
    let body = Body {
        top: html! { header {} },
        main: html! {
            main.single data-title=(title) {
                (frame(pin, blocks, None, Room::columns(8), clock::now_ms()))
            }
        },
        bottom: footer(pin.updated_at),
    };
    document(&title, body, "", true, how, live)
}

/// The page of one public board: its pins on the grid, in position order (the order the
/// store returns them), each placed by a generated class (and by its `data-x/y/w/h`, which
/// the page script applies to redrawn pins), with its templates resolved and the HTML of its
/// evaluated blocks (`blocks`, by pin id) under its content.
fn board_page(
    board: &Pinboard,
    pins: &[PlacedPin],
    blocks: &std::collections::HashMap<String, String>,
    how: View,
    live: Option<Live>,
) -> Page {
    // Each pin's place on the grid, as a rule of the page's style sheet (the CSP allows no
    // inline style).
    let css: String = pins
        .iter()
        .enumerate()
        .map(|(i, placed)| {
            let p = placed.position;
            // grid-area: row start / column start / row end / column end.
            format!(
                ".g{i}{{grid-area:{}/{}/span {}/span {}}}",
                p.y + 1,
                p.x + 1,
                p.h,
                p.w
            )
        })
        .collect();
    let now = clock::now_ms();
    let body = Body {
        top: html! {
            header {
                h1 { (board.title) }
                @if let Some(description) = &board.description {
                    p.desc { (description) }
                }
            }
        },
        main: html! {
            main data-title=(board.title) data-version=(clock::iso(board.updated_at)) {
                @if pins.is_empty() {
                    p.muted { "This board has no pins yet." }
                }
                div.board {
                    @for (i, placed) in pins.iter().enumerate() {
                        (frame(
                            &placed.pin,
                            blocks.get(&placed.pin.id).map_or("", String::as_str),
                            Some((i, placed.position)),
                            Room::columns(placed.position.w),
                            now,
                        ))
                    }
                }
            }
        },
        bottom: footer(board.updated_at),
    };
    document(&board.title, body, &css, true, how, live)
}

/// A page with a heading and `main` (inside `<main>`, titled `title` for the page script),
/// no footer.
fn headed(title: &str, main: Markup) -> Body {
    Body {
        top: html! { header { h1 { (title) } } },
        main: html! { main data-title=(title) { (main) } },
        bottom: Markup::default(),
    }
}

/// The one page for anything not shown: missing, private or sign-in only look the same. It
/// follows nothing: no script, no stream.
pub fn not_found_page() -> Page {
    let body = headed(
        "Not found",
        html! {
            p.muted {
                "There is nothing to show here. The link may be wrong, or what it pointed to is \
                 no longer shared."
            }
        },
    );
    page("Not found", body, "", false)
}

/// `<public_url>/upgrade`, where a 429's `upgrade_url` points unless the operator set another
/// (SPEC.md 8): on a self-hosted server there is nothing to buy, so it says what the limits
/// here are and who can raise them. `tiers` are `(name, per minute, per hour)`; `writes` the
/// write bucket's capacity and window in seconds.
pub fn rate_limits_page(tiers: &[(&str, u32, u32)], writes: (u32, u64)) -> Page {
    let (capacity, window) = writes;
    let body = Body {
        top: html! { header { h1 { "Rate limits on this server" } } },
        main: html! {
            main data-title="Rate limits" {
                div.pin {
                    p {
                        "Each API key has a tier; its requests count per minute and per hour \
                         (a batch costs a token per 10 items), and its writes also draw on a bucket of "
                        (capacity) " every " (window) " s. A refused request is a 429 that says \
                         which window ran out and when it resets (" code { "Retry-After" } ")."
                    }
                    table {
                        thead {
                            tr {
                                th { "Tier" }
                                th.num { "Requests a minute" }
                                th.num { "Requests an hour" }
                            }
                        }
                        tbody {
                            @for (name, minute, hour) in tiers {
                                tr { td { (name) } td.num { (minute) } td.num { (hour) } }
                            }
                        }
                    }
                    p.muted {
                        "This server is run by its own operator: there is no plan to buy. The \
                         operator sets a key's tier when making it ("
                        code { "corkboard keys create --tier team" }
                        ") and each tier's limits in the configuration ("
                        code { "[rate_limits.tiers.team]" } ", or "
                        code { "CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE" } ")."
                    }
                }
            }
        },
        bottom: Markup::default(),
    };
    page("Rate limits", body, "", true)
}

/// `/` for a visitor without a session (where sign-out lands): a way to sign in while web
/// sign-in is on (`sign_in`), and the API's documentation.
pub fn signed_out_page(sign_in: bool) -> Page {
    let body = headed(
        "Corkboard",
        html! {
            @if sign_in {
                p { "You are signed out." }
                p { a href="/login" { "Sign in" } " to see your boards." }
            } @else {
                p { "Automations push pins onto boards people watch live." }
            }
            p {
                "For developers: the " a href="/docs" { "API reference" } " and the "
                a href="/docs/pin-types" { "pin types" } "."
            }
        },
    );
    page("Corkboard", body, "", true)
}

/// The signed-in user's bar: their name, the app's sections (People and Keys for an owner,
/// as the settings pages' bar offers them) and sign-out (a form posting to `/logout`, so
/// the page's policy allows forms to this site).
fn account_bar(name: &str, owner: bool) -> Markup {
    html! {
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
}

/// `page` as a signed-in user's page: their bar above it, forms allowed to this site, and
/// the referrer policy `same-origin` (under `no-referrer` a browser sends `Origin: null` with
/// the sign-out form, which `POST /logout` must refuse).
pub fn with_account(page: Page, name: &str, owner: bool) -> Page {
    page.redrawn(|d| d.account = Some((name.to_owned(), owner)))
}

/// A live page that follows `base` (`{base}/events`, `{base}/fragment`) instead of the
/// share routes: a signed-in user's board page.
pub fn following(page: Page, base: &str) -> Page {
    page.redrawn(|d| d.view.base = Some(base.to_owned()))
}

/// `GET /boards`: the boards a signed-in user may read, newest change first, each with its
/// last update time; `new_board` (the "New board" form, HTML) above them for a user who may
/// make one. Without boards, the empty state says so.
pub fn boards_page(name: &str, owner: bool, boards: &[Pinboard], new_board: Option<&str>) -> Page {
    let body = Body {
        top: html! {
            header.with-tools {
                h1 { "Boards" }
                @if let Some(create) = new_board { (PreEscaped(create)) }
            }
        },
        main: html! {
            main data-title="Boards" {
                @if boards.is_empty() {
                    div.empty {
                        p { strong { "No boards yet" } }
                        p.muted {
                            @if new_board.is_some() { "Make the first one: New board." }
                            @else { "Boards shared with you appear here." }
                        }
                    }
                } @else {
                    ul.boards {
                        @for b in boards {
                            li {
                                a href={ "/boards/" (b.id) } { (b.title) }
                                (PreEscaped(super::times::time(&clock::iso(b.updated_at))))
                            }
                        }
                    }
                }
            }
        },
        bottom: Markup::default(),
    };
    let page = page("Boards", body, "", true);
    with_account(page, name, owner).redrawn(|d| d.app_styles = true)
}

/// `page` with `head` at the end of its head.
pub(super) fn with_head(page: Page, head: Markup) -> Page {
    page.redrawn(|d| d.head = Some(head))
}

/// A board page with `tools` (the editor's, HTML) between the account bar and the board,
/// the editor's script and the web app's style sheet of controls (same-origin, allowed by
/// the CSP).
pub fn with_tools(page: Page, tools: &str) -> Page {
    page.redrawn(|d| {
        d.tools = Some(tools.to_owned());
        d.app_styles = true;
    })
}

/// A page of one line of news from the editor (a refused change, posted by a form): what
/// went wrong and the way back.
pub fn message_page(title: &str, text: &str, back: &str) -> Page {
    let body = headed(
        title,
        html! {
            div.pin { p { (text) } p { a href=(back) { "Go back" } } }
        },
    );
    page(title, body, "", false)
}

/// A piece of HTML alone (the editor's picker list), with the policy of a page that runs
/// nothing.
pub fn fragment_page(html: String) -> Page {
    Page::new(
        html,
        String::new(),
        "default-src 'none'; base-uri 'none'; form-action 'self'".to_owned(),
        "same-origin",
    )
}

/// The page of a sign-in that did not succeed: nothing about why, a link to try again.
pub fn sign_in_failed_page() -> Page {
    let body = headed(
        "Sign-in failed",
        html! {
            p.muted { "The identity provider's answer could not be accepted." }
            p { a href="/login" { "Try again" } }
        },
    );
    page("Sign-in failed", body, "", false)
}
