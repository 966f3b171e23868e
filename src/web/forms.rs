//! The pages with forms of local accounts (CONTRACT.md 16): sign-in (`/login`), the owner's
//! setup (`/setup/{token}`) and the page of a sign-in held back by the password guard. They
//! look like the other pages (the same colours and cards, light and dark) from a style sheet
//! of their own, allowed by its hash as share pages allow theirs; no script at all, so they
//! work without JavaScript; forms post to this site only (`form-action 'self'`), and the
//! referrer policy is `same-origin`, under which a browser sends the `Origin` these posts
//! are checked by. Pages are maud templates, which escape every value.

use base64::{engine::general_purpose::STANDARD, Engine};
use maud::{html, Markup, DOCTYPE};
use sha2::{Digest, Sha256};

use crate::render::Page;

/// The style sheet of these pages (assets/forms.css), embedded at build time.
const CSS: &str = include_str!("../../assets/forms.css");

/// A page of this module: `body` inside `<main>`, its one style sheet allowed by its hash.
/// Found (200) unless the caller says otherwise: a form shown again with an error is not.
fn form_page(title: &str, body: Markup) -> Page {
    let hash = STANDARD.encode(Sha256::digest(CSS.as_bytes()));
    let main = html! {
        main data-title=(title) {
            h1 { (title) }
            (body)
        }
    };
    let document = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                (super::layout::head_start(title, true, "same-origin", CSS))
            }
            body { (main) }
        }
    };
    Page::new(
        document.into_string(),
        main.into_string(),
        format!(
            "default-src 'none'; script-src 'self'; style-src 'sha256-{hash}'; \
             base-uri 'none'; form-action 'self'"
        ),
        "same-origin",
    )
}

fn error_box(error: Option<&str>) -> Markup {
    html! {
        @if let Some(error) = error {
            p.error role="alert" { (error) }
        }
    }
}

/// What `/login` shows.
pub(super) struct LoginForm<'a> {
    /// Where a sign-in goes after (already a same-site path).
    pub next: &'a str,
    /// Never the email typed: a refusal must read the same whichever of the two was wrong.
    pub error: Option<&'a str>,
    /// The identity provider's button too.
    pub provider: bool,
}

/// `/login` with local accounts on: the password form, and the provider's button when
/// there is one.
pub(super) fn login_page(form: &LoginForm<'_>) -> Page {
    let to: String = url::form_urlencoded::byte_serialize(form.next.as_bytes()).collect();
    let body = html! {
        div.card {
            (error_box(form.error))
            form method="post" action="/login" {
                input type="hidden" name="next" value=(form.next);
                label { "Email" input type="email" name="email" autocomplete="username" required autofocus; }
                label { "Password" input type="password" name="password" autocomplete="current-password" required; }
                button type="submit" { "Sign in" }
            }
            @if form.provider {
                p.or { "or" }
                div.provider {
                    a.button.plain href={ "/login/provider?next=" (to) } { "Sign in with your identity provider" }
                }
            }
        }
    };
    let mut page = form_page("Sign in to Corkboard", body);
    page.found = form.error.is_none();
    page
}

/// What `/setup/{token}` shows: the form, filled with what was typed (never the password).
pub(super) struct SetupForm<'a> {
    pub token: &'a str,
    pub name: &'a str,
    pub email: &'a str,
    pub error: Option<&'a str>,
}

/// `/setup/{token}`: the owner's name, email and password (twice).
pub(super) fn setup_page(form: &SetupForm<'_>) -> Page {
    let (min, max) = crate::auth::local::PASSWORD_CHARS;
    let body = html! {
        div.card {
            p.muted {
                "You become the owner of this Corkboard's default workspace and sign in with \
                 this email and password. The link works once."
            }
            (error_box(form.error))
            form method="post" action={ "/setup/" (form.token) } {
                label { "Name" input name="name" value=(form.name) autocomplete="name" maxlength="100" required autofocus; }
                label { "Email" input type="email" name="email" value=(form.email) autocomplete="username" required; }
                label {
                    "Password (" (min) " to " (max) " characters)"
                    input type="password" name="password" autocomplete="new-password" minlength=(min) maxlength=(max) required;
                }
                label {
                    "Password again"
                    input type="password" name="confirm" autocomplete="new-password" minlength=(min) maxlength=(max) required;
                }
                button type="submit" { "Create the owner's account" }
            }
        }
    };
    let mut page = form_page("Set up Corkboard", body);
    page.found = form.error.is_none();
    page
}

/// The answer to a sign-in held back by the password guard (429): when to try again.
pub(super) fn held_page(retry_after_secs: u64) -> Page {
    let minutes = retry_after_secs.div_ceil(60).max(1);
    let body = html! {
        div.card {
            p.error role="alert" { "Too many failed sign-ins from here or for this account." }
            p.muted { "Try again in " (minutes) " minute" @if minutes != 1 { "s" } "." }
            a href="/login" { "Back to sign-in" }
        }
    };
    let mut page = form_page("Sign-in paused", body);
    page.found = false;
    page
}
