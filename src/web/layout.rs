//! The shell of the web app's own pages (settings, invitations, and those to come): the
//! document head, one style sheet allowed by its hash (the colours and type scale of the
//! share and sign-in pages, light and dark), a bar with the app's sections (Boards, People,
//! Keys) and sign-out, and the one same-origin script of these pages (`assets/settings.js`,
//! copy buttons). Pages are maud templates, which escape every value; their CSP allows that
//! style sheet, scripts of this site only, and forms posting to this site only; their
//! referrer policy is `same-origin`, under which a browser sends the `Origin` every post of
//! theirs is checked by.

use std::sync::OnceLock;

use axum::{
    http::{header, StatusCode},
    response::{IntoResponse, Response},
};
use base64::{engine::general_purpose::STANDARD, Engine};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use sha2::{Digest, Sha256};

use crate::{auth::sessions::SignedIn, render::Page};

const CSS: &str = "\
:root{color-scheme:light dark;--bg:#f4f5f7;--fg:#111;--card:#fff;--line:#e5e7eb;--soft:#eef0f3;--muted:#555;--accent:#2563eb;--bad:#dc2626;--good:#047857;\
font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg);line-height:1.35}\
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--fg:#e7e9ec;--card:#181b21;--line:#2b3038;--soft:#262b33;--muted:#a3abb5;--accent:#60a5fa;--bad:#f87171;--good:#34d399}}\
body{margin:0}a{color:var(--accent)}\
.top{display:flex;flex-wrap:wrap;align-items:center;gap:8px 16px;padding:10px 24px;background:var(--card);border-bottom:1px solid var(--line)}\
.brand{font-weight:700;color:var(--fg);text-decoration:none}\
.top nav{display:flex;gap:4px;flex-wrap:wrap}.top nav a{padding:5px 10px;border-radius:6px;color:var(--fg);text-decoration:none}\
.top nav a:hover{background:var(--soft)}.top nav a[aria-current=page]{background:var(--soft);font-weight:600}\
.who{margin-left:auto;display:flex;gap:10px;align-items:center;color:var(--muted);font-size:.9rem;min-width:0}\
.who span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.who form{margin:0}\
main{max-width:1000px;margin:24px auto;padding:0 24px}main.narrow{max-width:440px;margin-top:8vh}\
h1{font-size:1.6rem;margin:0 0 16px}h2{font-size:1.1rem;margin:0 0 12px}\
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:18px 20px;margin:0 0 16px}\
.muted{color:var(--muted);font-size:.9rem;margin:0 0 12px}\
form{margin:0}.stack{display:grid;gap:12px}.row{display:flex;flex-wrap:wrap;gap:12px;align-items:end}\
.row label{flex:1 1 200px}label{display:grid;gap:4px;font-size:.9rem}\
fieldset{border:1px solid var(--line);border-radius:6px;margin:0;padding:8px 12px 12px}legend{font-size:.9rem;padding:0 4px}\
.checks{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:6px 12px}\
.checks label{display:flex;gap:6px;align-items:center;font-size:.9rem}.checks code{font-size:.85rem}\
input,select{font:inherit;padding:8px 10px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);min-width:0}\
input[type=checkbox]{padding:0;width:1rem;height:1rem}\
input:focus,select:focus,button:focus-visible,a:focus-visible,summary:focus-visible{outline:2px solid var(--accent);outline-offset:1px}\
button,.button{font:inherit;padding:8px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;white-space:nowrap}\
button.plain,.button.plain{background:var(--card);color:var(--fg);border-color:var(--line)}\
button.danger{background:var(--bad);border-color:var(--bad)}.small{padding:3px 10px;font-size:.85rem}\
.secret{display:flex;gap:8px;margin:8px 0 0}.secret input{flex:1;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9rem}\
.fresh{border-color:var(--good);border-width:2px}.notice{border-left:4px solid var(--good);padding:8px 12px;background:var(--card);margin:0 0 16px}\
.error{color:var(--bad);border:1px solid var(--bad);border-radius:6px;padding:8px 10px;margin:0 0 12px}\
table{border-collapse:collapse;width:100%;font-size:.9rem}\
th,td{border-bottom:1px solid var(--soft);padding:8px;text-align:left;vertical-align:top}th{color:var(--muted);font-weight:600;font-size:.85rem}\
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem;overflow-wrap:anywhere}\
.tags{display:flex;flex-wrap:wrap;gap:4px}.tag{background:var(--soft);border-radius:999px;padding:1px 8px;font-size:.8rem;white-space:nowrap}\
.gone{color:var(--muted)}.gone td:first-child{text-decoration:line-through}\
details{position:relative}summary{list-style:none;cursor:pointer}summary::-webkit-details-marker{display:none}\
.confirm{margin:8px 0 0;display:grid;gap:8px;max-width:260px;font-size:.85rem}\
.empty{color:var(--muted);margin:0;padding:12px 0}\
@media (max-width:720px){.top{padding:10px 12px}main{padding:0 12px;margin:16px auto}main.narrow{margin-top:16px}\
.who{margin-left:0;width:100%;justify-content:space-between}\
table,tbody,tr,td{display:block}thead{display:none}tr{border-bottom:1px solid var(--line);padding:8px 0}\
td{border:0;padding:3px 0;display:flex;gap:8px}td[data-label]::before{content:attr(data-label);color:var(--muted);min-width:6.5rem;font-size:.85rem}}";

/// The page script (assets/settings.js), embedded at build time.
const SETTINGS_JS: &str = include_str!("../../assets/settings.js");

/// The script's URL path: its content hash in the name, so it can be cached forever.
pub(super) fn script_path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let digest = Sha256::digest(SETTINGS_JS.as_bytes());
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("/assets/settings-{hex}.js")
    })
}

/// `GET /assets/settings-<hash>.js`: the script, immutable (a new script has a new name).
pub(super) async fn script() -> Response {
    let fixed = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (fixed, SETTINGS_JS).into_response()
}

fn style_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| STANDARD.encode(Sha256::digest(CSS.as_bytes())))
}

/// A section of the app, as the bar names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Boards,
    People,
    Keys,
}

/// Who a page is for, and where in the app it is.
pub(crate) struct Shell<'a> {
    /// The document's title and the page's heading.
    pub title: &'a str,
    /// The signed-in user's name (their email), or `None` on a page for anyone (an
    /// invitation's), which has no bar of sections.
    pub user: Option<&'a str>,
    /// The section the bar marks as current.
    pub current: Option<Section>,
    /// Whether the bar offers the owners' sections (People, Keys).
    pub owner: bool,
}

fn bar(shell: &Shell<'_>, user: &str) -> Markup {
    let sections: &[(Section, &str, &str)] = &[
        (Section::Boards, "/boards", "Boards"),
        (Section::People, "/settings/people", "People"),
        (Section::Keys, "/settings/keys", "Keys"),
    ];
    html! {
        header.top {
            a.brand href="/boards" { "Corkboard" }
            nav aria-label="Sections" {
                @for (section, href, label) in sections {
                    @if *section == Section::Boards || shell.owner {
                        a href=(href) aria-current=[(shell.current == Some(*section)).then_some("page")] { (label) }
                    }
                }
            }
            div.who {
                span { (user) }
                form method="post" action="/logout" {
                    button.plain.small type="submit" { "Sign out" }
                }
            }
        }
    }
}

/// A page of the app: `main` under the bar (or alone, on a page for anyone), found (200).
pub(crate) fn page(shell: &Shell<'_>, main: Markup) -> Page {
    let body = html! {
        @if let Some(user) = shell.user {
            (bar(shell, user))
        }
        main.narrow[shell.user.is_none()] data-title=(shell.title) {
            h1 { (shell.title) }
            (main)
        }
    };
    let document = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta name="robots" content="noindex";
                meta name="referrer" content="same-origin";
                title { (shell.title) " · Corkboard" }
                style { (PreEscaped(CSS)) }
                script src=(script_path()) defer {}
            }
            body { (body) }
        }
    };
    Page {
        found: true,
        html: document.into_string(),
        fragment: body.into_string(),
        referrer: "same-origin",
        csp: format!(
            "default-src 'none'; script-src 'self'; style-src 'sha256-{}'; img-src 'self' data:; \
             base-uri 'none'; form-action 'self'",
            style_hash()
        ),
    }
}

/// A page of an owner's section (`/settings/...`) for `who`, answered with `status` (a
/// form's refusal is not found: nothing was done).
pub(crate) fn owner_page(
    title: &str,
    current: Section,
    who: &SignedIn,
    main: Markup,
    status: StatusCode,
) -> Response {
    let shell = Shell {
        title,
        user: Some(&who.name),
        current: Some(current),
        owner: true,
    };
    let mut page = page(&shell, main);
    page.found = status == StatusCode::OK;
    super::html(page, status)
}

/// A notice above a page's content (what was just done).
pub(crate) fn notice(text: &str) -> Markup {
    html! { p.notice role="status" { (text) } }
}

/// What to fix in a form, above it.
pub(crate) fn error(text: &str) -> Markup {
    html! { p.error role="alert" { (text) } }
}

/// A secret or link shown once: a read-only field, selected by the script, and its copy
/// button (hidden until the script shows it).
pub(crate) fn shown_once(id: &str, label: &str, value: &str) -> Markup {
    html! {
        label for=(id) { (label) }
        div.secret {
            input id=(id) type="text" readonly value=(value) data-secret autocomplete="off" spellcheck="false";
            button.plain type="button" data-copy=(id) hidden { "Copy" }
        }
    }
}

/// A button that asks before it posts `action`: a disclosure whose confirmation is the
/// form (so it works without the script, and a stray click does nothing).
pub(crate) fn confirmed(label: &str, question: &str, action: &str, confirm: &str) -> Markup {
    html! {
        details {
            summary.button.plain.small role="button" { (label) }
            form.confirm method="post" action=(action) {
                span { (question) }
                button.danger.small type="submit" { (confirm) }
            }
        }
    }
}

/// An ISO 8601 instant as a page shows it (`2026-11-28 10:07 UTC`), with the instant
/// itself for machines.
pub(crate) fn when(iso: &str) -> Markup {
    let shown = chrono::DateTime::parse_from_rfc3339(iso)
        .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|_| iso.to_owned());
    html! { time datetime=(iso) { (shown) } }
}
