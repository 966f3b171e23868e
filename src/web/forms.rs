//! The pages with forms of local accounts (CONTRACT.md 16): sign-in (`/login`), the owner's
//! setup (`/setup/{token}`) and the page of a sign-in held back by the password guard. They
//! look like the other pages (the same colours and cards, light and dark) from a style sheet
//! of their own, allowed by its hash as share pages allow theirs; no script at all, so they
//! work without JavaScript; forms post to this site only (`form-action 'self'`), and the
//! referrer policy is `same-origin`, under which a browser sends the `Origin` these posts
//! are checked by. Every text is escaped.

use base64::{engine::general_purpose::STANDARD, Engine};
use sha2::{Digest, Sha256};

use crate::render::{esc, Page};

/// The style sheet of these pages (assets/forms.css), embedded at build time.
const CSS: &str = include_str!("../../assets/forms.css");

/// A page of this module: `body` inside `<main>`, its one style sheet allowed by its hash.
/// Found (200) unless the caller says otherwise: a form shown again with an error is not.
fn form_page(title: &str, body: &str) -> Page {
    let hash = STANDARD.encode(Sha256::digest(CSS.as_bytes()));
    let main = format!(
        "<main data-title=\"{t}\"><h1>{t}</h1>{body}</main>",
        t = esc(title)
    );
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><meta name=\"referrer\" content=\"same-origin\">\
         <title>{}</title><style>{CSS}</style></head><body>{main}</body></html>",
        esc(title)
    );
    Page {
        found: true,
        html,
        fragment: main,
        referrer: "same-origin",
        csp: format!(
            "default-src 'none'; script-src 'self'; style-src 'sha256-{hash}'; \
             base-uri 'none'; form-action 'self'"
        ),
    }
}

fn error_box(error: Option<&str>) -> String {
    error.map_or_else(String::new, |e| {
        format!("<p class=\"error\" role=\"alert\">{}</p>", esc(e))
    })
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
    let next = esc(form.next);
    let provider = if form.provider {
        let to: String = url::form_urlencoded::byte_serialize(form.next.as_bytes()).collect();
        format!(
            "<p class=\"or\">or</p><div class=\"provider\"><a class=\"button plain\" \
             href=\"/login/provider?next={}\">Sign in with your identity provider</a></div>",
            esc(&to)
        )
    } else {
        String::new()
    };
    let body = format!(
        "<div class=\"card\">{}<form method=\"post\" action=\"/login\">\
         <input type=\"hidden\" name=\"next\" value=\"{next}\">\
         <label>Email<input type=\"email\" name=\"email\" autocomplete=\"username\" required autofocus></label>\
         <label>Password<input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
         <button type=\"submit\">Sign in</button></form>{provider}</div>",
        error_box(form.error)
    );
    let mut page = form_page("Sign in to Corkboard", &body);
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
    let body = format!(
        "<div class=\"card\"><p class=\"muted\">You become the owner of this Corkboard's default \
         workspace and sign in with this email and password. The link works once.</p>{}\
         <form method=\"post\" action=\"/setup/{}\">\
         <label>Name<input name=\"name\" value=\"{}\" autocomplete=\"name\" maxlength=\"100\" required autofocus></label>\
         <label>Email<input type=\"email\" name=\"email\" value=\"{}\" autocomplete=\"username\" required></label>\
         <label>Password ({min} to {max} characters)<input type=\"password\" name=\"password\" \
         autocomplete=\"new-password\" minlength=\"{min}\" maxlength=\"{max}\" required></label>\
         <label>Password again<input type=\"password\" name=\"confirm\" autocomplete=\"new-password\" \
         minlength=\"{min}\" maxlength=\"{max}\" required></label>\
         <button type=\"submit\">Create the owner's account</button></form></div>",
        error_box(form.error),
        esc(form.token),
        esc(form.name),
        esc(form.email)
    );
    let mut page = form_page("Set up Corkboard", &body);
    page.found = form.error.is_none();
    page
}

/// The answer to a sign-in held back by the password guard (429): when to try again.
pub(super) fn held_page(retry_after_secs: u64) -> Page {
    let minutes = retry_after_secs.div_ceil(60).max(1);
    let body = format!(
        "<div class=\"card\"><p class=\"error\" role=\"alert\">Too many failed sign-ins from \
         here or for this account.</p><p class=\"muted\">Try again in {minutes} minute{}.</p>\
         <a href=\"/login\">Back to sign-in</a></div>",
        if minutes == 1 { "" } else { "s" }
    );
    let mut page = form_page("Sign-in paused", &body);
    page.found = false;
    page
}
