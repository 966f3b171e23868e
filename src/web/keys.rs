//! `/settings/keys` (owners, CONTRACT.md 16): the workspace's API keys, "Generate key" (a
//! name, scopes as checkboxes, a tier) showing the new key once, and revoking a key after a
//! confirmation. Every action is the API's own operation ([`crate::auth::key_admin`]) as
//! the signed-in owner, so a key made here is bound to its maker's role as one made with
//! `POST /v1/api-keys` by them is. Posts come from this site only (`Origin`).

use axum::{
    body::Body,
    extract::{OriginalUri, Path, State},
    http::{HeaderMap, StatusCode, Uri},
    response::{IntoResponse, Response},
};
use maud::{html, Markup};
use serde::Deserialize;

use super::{
    layout::{self, Section},
    local::{read_form, UNREADABLE},
    login::refuse_cross_site,
    not_found, see_other,
    session::MaybeSignedIn,
    to_login,
};
use crate::{
    app::AppState,
    auth::{
        authorize,
        key_admin::{self, CreateKeyBody, CreatedKeyRecord, KeyRecord},
        sessions::SignedIn,
        Access, Scope, Tier,
    },
    error::Error,
};

/// The signed-in owner of the request's session, or the answer for anyone else: to sign-in
/// without a session, the 404 page for a user whose role is not the owner's (`*`, asked of
/// the one authorisation point).
pub(super) async fn owner(
    state: &AppState,
    who: Option<SignedIn>,
    uri: &Uri,
) -> Result<SignedIn, Response> {
    let Some(mut who) = who else {
        return Err(to_login(uri));
    };
    match authorize(state, who.principal, Access::workspace(Scope::All), None).await {
        Ok(principal) => {
            who.principal = principal;
            Ok(who)
        }
        Err(Error::Forbidden(_) | Error::ScopeRequired(_)) => Err(not_found()),
        Err(e) => Err(e.into_response()),
    }
}

/// What a form shows for a refusal of the operation it posted to: its message and status;
/// `None` for a failure that is not the form's (the error envelope answers it).
pub(super) fn refusal(e: &Error) -> Option<(String, StatusCode)> {
    let status = match e {
        Error::Validation { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        Error::Forbidden(_) | Error::ScopeRequired(_) => StatusCode::FORBIDDEN,
        Error::Conflict(_) => StatusCode::CONFLICT,
        _ => return None,
    };
    let text = e.to_string();
    let mut chars = text.chars();
    let text = chars.next().map_or_else(String::new, |first| {
        format!("{}{}.", first.to_uppercase(), chars.as_str())
    });
    Some((text, status))
}

/// What a form typed, shown again with its error.
#[derive(Deserialize, Default)]
#[serde(default)]
struct GenerateForm {
    name: String,
    scopes: Vec<String>,
    tier: String,
}

/// What the page shows besides the keys.
#[derive(Default)]
struct Shown<'a> {
    created: Option<&'a CreatedKeyRecord>,
    error: Option<&'a str>,
    form: Option<&'a GenerateForm>,
    notice: Option<&'a str>,
}

const SCOPE_NOTES: [(Scope, &str); 9] = [
    (Scope::PinsRead, "read pins and blocks"),
    (Scope::PinsWrite, "create, change, delete pins"),
    (Scope::PinsShare, "share settings"),
    (Scope::PinboardsRead, "read boards"),
    (Scope::PinboardsWrite, "change boards, place pins"),
    (Scope::PinboardsInvite, "collaborators, roles, invitations"),
    (Scope::DatasetsRead, "read datasets"),
    (Scope::DatasetsWrite, "change datasets"),
    (Scope::All, "everything, keys too"),
];

const TIERS: [Tier; 3] = [Tier::Starter, Tier::Professional, Tier::Team];

fn generate_form(state: &AppState, who: &SignedIn, typed: Option<&GenerateForm>) -> Markup {
    let checked =
        |scope: Scope| typed.is_some_and(|f| f.scopes.iter().any(|s| s == scope.as_str()));
    let default_tier = state.settings.default_tier.min(who.principal.tier);
    let chosen = typed
        .and_then(|f| Tier::parse(&f.tier))
        .unwrap_or(default_tier);
    html! {
        section.card aria-labelledby="generate" {
            h2 id="generate" { "Generate key" }
            form.stack method="post" action="/settings/keys" {
                div.row {
                    label { "Name"
                        input name="name" required maxlength="100" placeholder="e.g. Nightly deploy job"
                            value=(typed.map_or("", |f| f.name.as_str()));
                    }
                    label { "Tier"
                        select name="tier" {
                            @for tier in TIERS.iter().filter(|t| **t <= who.principal.tier) {
                                option value=(tier.as_str()) selected[*tier == chosen] { (tier.as_str()) }
                            }
                        }
                    }
                }
                fieldset {
                    legend { "Scopes" }
                    div.checks {
                        @for (scope, note) in SCOPE_NOTES {
                            label title=(note) {
                                input type="checkbox" name="scopes" value=(scope.as_str()) checked[checked(scope)];
                                code { (scope.as_str()) }
                            }
                        }
                    }
                }
                div { button type="submit" { "Generate key" } }
            }
        }
    }
}

fn created_card(created: &CreatedKeyRecord) -> Markup {
    html! {
        section.card.fresh aria-labelledby="new-key" {
            h2 id="new-key" { "Key “" (created.record.name) "” is ready" }
            p.muted { "Copy it now: it is shown this once, and only its hash is kept." }
            (layout::shown_once("key-secret", "Your new key", &created.key))
        }
    }
}

fn keys_table(keys: &[KeyRecord]) -> Markup {
    html! {
        section.card aria-labelledby="keys" {
            h2 id="keys" { "Keys" }
            @if keys.is_empty() {
                p.empty { "No keys yet: generate one above for your first automation." }
            } @else {
                table {
                    thead { tr { th { "Name" } th { "Prefix" } th { "Scopes" } th { "Tier" } th { "Created" } th { "Last used" } th {} } }
                    tbody {
                        @for key in keys {
                            tr.gone[key.revoked_at.is_some()] data-key=(key.id) {
                                td data-label="Name" { (key.name) }
                                td data-label="Prefix" { code { (key.prefix) "…" } }
                                td data-label="Scopes" { span.tags { @for scope in &key.scopes { span.tag { (scope) } } } }
                                td data-label="Tier" { (key.tier) }
                                td data-label="Created" { (layout::when(&key.created_at)) }
                                td data-label="Last used" {
                                    @match &key.last_used_at {
                                        Some(at) => (layout::when(at)),
                                        None => span.muted { "never" },
                                    }
                                }
                                td {
                                    @if key.revoked_at.is_some() {
                                        span.muted { "revoked" }
                                    } @else {
                                        (layout::confirmed(
                                            "Revoke",
                                            "Revoke this key? Whatever uses it is refused from its next request.",
                                            &format!("/settings/keys/{}/revoke", key.id),
                                            "Revoke key",
                                        ))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

async fn keys_page(
    state: &AppState,
    who: &SignedIn,
    shown: Shown<'_>,
    status: StatusCode,
) -> Response {
    let keys = match key_admin::list(state, &who.principal).await {
        Ok(keys) => keys,
        Err(e) => return e.into_response(),
    };
    let main = html! {
        @if let Some(text) = shown.notice { (layout::notice(text)) }
        @if let Some(created) = shown.created { (created_card(created)) }
        @if let Some(error) = shown.error { (layout::error(error)) }
        (generate_form(state, who, shown.form))
        (keys_table(&keys))
    };
    layout::owner_page("API keys", Section::Keys, who, main, status)
}

/// `GET /settings/keys`.
pub(super) async fn page(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
) -> Response {
    let who = match owner(&state, who, &uri).await {
        Ok(who) => who,
        Err(answer) => return answer,
    };
    let revoked = uri.query().is_some_and(|q| q == "revoked=1");
    let shown = Shown {
        notice: revoked.then_some("Key revoked: it no longer works."),
        ..Shown::default()
    };
    keys_page(&state, &who, shown, StatusCode::OK).await
}

/// The page again, with the form as typed and what to fix.
async fn again(
    state: &AppState,
    who: &SignedIn,
    form: &GenerateForm,
    error: &str,
    status: StatusCode,
) -> Response {
    let shown = Shown {
        error: Some(error),
        form: Some(form),
        ..Shown::default()
    };
    keys_page(state, who, shown, status).await
}

/// Where a post without a session sends its sender: sign-in, then this page.
fn keys_uri() -> Uri {
    Uri::from_static("/settings/keys")
}

/// `POST /settings/keys`: makes the key and answers the page showing it, once.
pub(super) async fn generate(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    let who = match owner(&state, who, &keys_uri()).await {
        Ok(who) => who,
        Err(answer) => return answer,
    };
    let Some(form) = read_form::<GenerateForm>(body).await else {
        let empty = GenerateForm::default();
        return again(&state, &who, &empty, UNREADABLE, StatusCode::BAD_REQUEST).await;
    };
    let unfit = if form.name.trim().is_empty() {
        Some("Give the key a name.")
    } else if form.scopes.is_empty() {
        Some("Choose at least one scope.")
    } else {
        None
    };
    if let Some(error) = unfit {
        return again(&state, &who, &form, error, StatusCode::UNPROCESSABLE_ENTITY).await;
    }
    let Some(tier) = Tier::parse(&form.tier) else {
        return again(
            &state,
            &who,
            &form,
            "Choose a tier.",
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await;
    };
    let body = CreateKeyBody {
        name: form.name.clone(),
        scopes: form.scopes.clone(),
        tier: Some(tier),
        expires_at: None,
    };
    match key_admin::create(&state, &who.principal, body).await {
        Ok(created) => {
            let shown = Shown {
                created: Some(&created),
                ..Shown::default()
            };
            keys_page(&state, &who, shown, StatusCode::OK).await
        }
        Err(e) => match refusal(&e) {
            Some((text, status)) => again(&state, &who, &form, &text, status).await,
            None => e.into_response(),
        },
    }
}

/// `POST /settings/keys/{id}/revoke`: revokes the key, back to the page. A key that is not
/// the workspace's (or revoked already) is the 404 page.
pub(super) async fn revoke(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    let who = match owner(&state, who, &keys_uri()).await {
        Ok(who) => who,
        Err(answer) => return answer,
    };
    match key_admin::revoke(&state, &who.principal, &id).await {
        Ok(_) => see_other("/settings/keys?revoked=1"),
        Err(Error::NotFound { .. }) => not_found(),
        Err(e) => e.into_response(),
    }
}
