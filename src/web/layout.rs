//! The shell of the web app's own pages (settings, invitations, and those to come): the
//! document head, one style sheet allowed by its hash (the colours and type scale of the
//! share and sign-in pages, light and dark), a bar with the app's sections (Boards, People,
//! Keys) and sign-out, and the one same-origin script of these pages (`assets/settings.js`,
//! copy buttons). Pages are maud templates, which escape every value; their CSP allows that
//! style sheet, scripts of this site only, and forms posting to this site only; their
//! referrer policy is `same-origin`, under which a browser sends the `Origin` every post of
//! theirs is checked by.

use std::sync::OnceLock;

use axum::{http::StatusCode, response::Response};
use base64::{engine::general_purpose::STANDARD, Engine};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use sha2::{Digest, Sha256};

use crate::{auth::sessions::SignedIn, render::Page};

/// The style sheet of the app's pages (assets/layout.css), embedded at build time.
const CSS: &str = include_str!("../../assets/layout.css");

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

/// The start of every app page's `<head>` (the app's, the sign-in forms', the docs'): the
/// charset, the viewport, `noindex` when the page should stay out of search engines, its
/// referrer policy, its title and its style sheet inline (the CSP names its hash).
pub(crate) fn head_start(title: &str, noindex: bool, referrer: &str, css: &str) -> Markup {
    html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width,initial-scale=1";
        @if noindex {
            meta name="robots" content="noindex";
        }
        meta name="referrer" content=(referrer);
        title { (title) }
        style { (PreEscaped(css)) }
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
                (head_start(&format!("{} · Corkboard", shell.title), true, "same-origin", CSS))
                script src=(crate::render::assets::SETTINGS.path()) defer {}
            }
            body { (body) }
        }
    };
    Page::new(
        document.into_string(),
        body.into_string(),
        format!(
            "default-src 'none'; script-src 'self'; style-src 'sha256-{}'; img-src 'self' data:; \
             base-uri 'none'; form-action 'self'",
            style_hash()
        ),
        "same-origin",
    )
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
