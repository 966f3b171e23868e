//! Local accounts on the web (CONTRACT.md 16): `POST /login` (a password sign-in) and
//! `GET`/`POST /setup/{token}` (the owner's account from a setup link). Both posts come from
//! this site only (`Origin`, as `POST /logout`), read their form whole (at most
//! [`FORM_BYTES`]) and answer a page: never an error envelope for what a person typed.
//! While `auth.local.enabled` is off, both are the 404 page.

use axum::{
    body::Body,
    extract::{Path, State},
    http::{header, Extensions, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde::{de::DeserializeOwned, Deserialize};

use super::{
    forms::{self, LoginForm, SetupForm},
    html,
    login::{refuse_cross_site, session_cookie, with_cookie},
    not_found, safe_next, see_other,
};
use crate::{
    app::AppState,
    auth::local::{self, NewAccount, Password, SignInOutcome},
};

/// The largest form read: a sign-in or a setup is far smaller.
const FORM_BYTES: usize = 16 * 1024;
/// A setup link's token is 43 characters; anything much longer is not one.
const TOKEN_CHARS: usize = 128;

#[derive(Deserialize, Default)]
#[serde(default)]
struct LoginBody {
    email: String,
    password: String,
    next: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SetupBody {
    name: String,
    email: String,
    password: String,
    confirm: String,
}

/// The request's form, or `None` when it is too large or not a form.
pub(super) async fn read_form<T: DeserializeOwned>(body: Body) -> Option<T> {
    let bytes = axum::body::to_bytes(body, FORM_BYTES).await.ok()?;
    serde_html_form::from_bytes(&bytes).ok()
}

pub(super) const UNREADABLE: &str = "The form could not be read. Please try again.";

/// `POST /login`: email and password. Right: a session and on to `next` (a same-site path,
/// else `/boards`). Wrong password or unknown email: the same page and status (401), the
/// same work (an unknown email is checked against a dummy hash). Past the password guard:
/// the 429 page with `Retry-After`, whatever the password.
pub(super) async fn password(
    State(state): State<AppState>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Body,
) -> Response {
    if !state.settings.auth.local.enabled {
        return not_found();
    }
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    let provider = state.oidc.is_some();
    let again = |next: &str, error, status| {
        let form = LoginForm {
            next,
            error: Some(error),
            provider,
        };
        html(forms::login_page(&form), status)
    };
    let Some(form) = read_form::<LoginBody>(body).await else {
        return again("/boards", UNREADABLE, StatusCode::BAD_REQUEST);
    };
    let next = safe_next(Some(&form.next));
    let address = crate::limits::client_address(
        &headers,
        &extensions,
        &state.settings.rate_limits.auth_failures.client_ip_header,
    );
    let password = Password::typed(form.password);
    match local::sign_in_with_password(&state, &form.email, password, address).await {
        Ok(SignInOutcome::Started(started)) => {
            with_cookie(see_other(&next), &session_cookie(&state, &started))
        }
        Ok(SignInOutcome::Refused) => {
            again(&next, "Wrong email or password.", StatusCode::UNAUTHORIZED)
        }
        Ok(SignInOutcome::Held { until }) => held(until - state.clock.now_ms()),
        Err(e) => e.into_response(),
    }
}

/// The 429 page of a held sign-in, with `Retry-After` (seconds, at least 1).
fn held(remaining_ms: i64) -> Response {
    let secs = u64::try_from(remaining_ms.saturating_add(999) / 1000)
        .unwrap_or(0)
        .max(1);
    let mut response = html(forms::held_page(secs), StatusCode::TOO_MANY_REQUESTS);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// Whether `token` names a setup link that still works.
async fn open(state: &AppState, token: &str) -> crate::Result<bool> {
    if !state.settings.auth.local.enabled || token.len() > TOKEN_CHARS {
        return Ok(false);
    }
    local::setup_open(state, token).await
}

/// `GET /setup/{token}`: the owner's form, or the 404 page for a link that doesn't work
/// (unknown, used, expired or replaced).
pub(super) async fn setup_form(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Response {
    match open(&state, &token).await {
        Ok(true) => {
            let form = SetupForm {
                token: &token,
                name: "",
                email: "",
                error: None,
            };
            html(forms::setup_page(&form), StatusCode::OK)
        }
        Ok(false) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// `POST /setup/{token}`: name, email, password and its confirmation. Valid: the link is
/// used up, its person is the default workspace's owner, signed in, and goes to `/boards`.
/// Invalid: the form again with what to fix (422; 400 when it could not be read).
pub(super) async fn setup(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    match open(&state, &token).await {
        Ok(true) => {}
        Ok(false) => return not_found(),
        Err(e) => return e.into_response(),
    }
    let again = |name: &str, email: &str, error, status| {
        let form = SetupForm {
            token: &token,
            name,
            email,
            error: Some(error),
        };
        html(forms::setup_page(&form), status)
    };
    let Some(form) = read_form::<SetupBody>(body).await else {
        return again("", "", UNREADABLE, StatusCode::BAD_REQUEST);
    };
    let account = match NewAccount::parse(&form.name, &form.email, form.password, &form.confirm) {
        Ok(account) => account,
        Err(message) => {
            return again(
                &form.name,
                &form.email,
                message,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
        }
    };
    match local::complete_setup(&state, &token, account).await {
        Ok(Some(started)) => with_cookie(see_other("/boards"), &session_cookie(&state, &started)),
        Ok(None) => not_found(),
        Err(e) => e.into_response(),
    }
}
