//! People (CONTRACT.md 16): `/settings/people` for owners (the members and their roles, the
//! live invitations with revoke, an invite form showing the new link once) and the link's
//! own page, `/invite/{token}`, where the invited person sets a name and password, or, signed
//! in already with that email (a password account, or the identity provider's), joins with
//! one button; either way they land on `/boards`, signed in to the workspace. Every action
//! is the API's operation ([`crate::invitations`]); posts come from this site only
//! (`Origin`); the invite routes count per client address like sign-in and setup.

use axum::{
    body::Body,
    extract::{OriginalUri, Path, State},
    http::{HeaderMap, StatusCode, Uri},
    response::{IntoResponse, Response},
};
use maud::{html, Markup};
use serde::Deserialize;

use super::{
    html,
    keys::{owner, refusal},
    layout::{self, Section, Shell},
    local::{read_form, UNREADABLE},
    login::{refuse_cross_site, session_cookie, with_cookie},
    not_found, see_other,
    session::{self, MaybeSignedIn},
};
use crate::{
    app::AppState,
    auth::{
        local::{NewAccount, PASSWORD_CHARS},
        roles,
        sessions::SignedIn,
    },
    error::Error,
    invitations::{self, CreatedInvitation, InviteBody, Joined},
    store::OpenInvitation,
};

#[derive(Deserialize, Default)]
#[serde(default)]
struct InviteForm {
    email: String,
    role: String,
}

/// What the people page shows besides its lists.
#[derive(Default)]
struct Shown<'a> {
    created: Option<&'a CreatedInvitation>,
    error: Option<&'a str>,
    form: Option<&'a InviteForm>,
    notice: Option<&'a str>,
}

fn people_uri() -> Uri {
    Uri::from_static("/settings/people")
}

fn invite_form(roles: &[String], typed: Option<&InviteForm>) -> Markup {
    let chosen = typed.map_or("viewer", |f| f.role.as_str());
    html! {
        section.card aria-labelledby="invite" {
            h2 id="invite" { "Invite someone" }
            p.muted { "You get a link to send them. It works once, for 7 days: they set a password (or sign in with your identity provider) and join with this role." }
            form.row method="post" action="/settings/people" {
                label { "Email"
                    input type="email" name="email" required maxlength="254" autocomplete="off"
                        value=(typed.map_or("", |f| f.email.as_str()));
                }
                label { "Role"
                    select name="role" {
                        @for role in roles {
                            option value=(role) selected[role == chosen] { (role) }
                        }
                    }
                }
                button type="submit" { "Invite" }
            }
        }
    }
}

fn created_card(created: &CreatedInvitation) -> Markup {
    html! {
        section.card.fresh aria-labelledby="new-link" {
            h2 id="new-link" { "Invitation for " (created.record.email) }
            p.muted { "Send them this link. It is shown this once; it works once, until " (layout::when(&created.record.expires_at)) "." }
            (layout::shown_once("invite-link", "Invitation link", &created.url))
        }
    }
}

async fn people_page(
    state: &AppState,
    who: &SignedIn,
    shown: Shown<'_>,
    status: StatusCode,
) -> Response {
    let listed = async {
        let members = invitations::members(state, &who.principal).await?;
        let pending = invitations::list(state, &who.principal).await?;
        let roles: Vec<String> = roles::list(state, &who.principal)
            .await?
            .into_iter()
            .map(|r| r.name)
            .collect();
        Ok::<_, Error>((members, pending, roles))
    };
    let (members, pending, roles) = match listed.await {
        Ok(listed) => listed,
        Err(e) => return e.into_response(),
    };
    let main = html! {
        @if let Some(text) = shown.notice { (layout::notice(text)) }
        @if let Some(created) = shown.created { (created_card(created)) }
        @if let Some(error) = shown.error { (layout::error(error)) }
        (invite_form(&roles, shown.form))
        section.card aria-labelledby="pending" {
            h2 id="pending" { "Pending invitations" }
            @if pending.is_empty() {
                p.empty { "No pending invitations." }
            } @else {
                table {
                    thead { tr { th { "Email" } th { "Role" } th { "Invited" } th { "Expires" } th {} } }
                    tbody {
                        @for invitation in &pending {
                            tr data-invitation=(invitation.id) {
                                td data-label="Email" { (invitation.email) }
                                td data-label="Role" { span.tag { (invitation.role) } }
                                td data-label="Invited" { (layout::when(&invitation.created_at)) }
                                td data-label="Expires" { (layout::when(&invitation.expires_at)) }
                                td {
                                    (layout::confirmed(
                                        "Revoke",
                                        "Revoke this invitation? Its link stops working.",
                                        &format!("/settings/people/invitations/{}/revoke", invitation.id),
                                        "Revoke invitation",
                                    ))
                                }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="members" {
            h2 id="members" { "Members" }
            @if members.is_empty() {
                p.empty { "No members yet: invite someone above." }
            } @else {
                table {
                    thead { tr { th { "Name" } th { "Email" } th { "Role" } th { "Joined" } } }
                    tbody {
                        @for member in &members {
                            tr {
                                td data-label="Name" { (member.name.as_deref().unwrap_or("—")) }
                                td data-label="Email" { (member.email.as_deref().unwrap_or("—")) }
                                td data-label="Role" { span.tag { (member.role) } }
                                td data-label="Joined" { (layout::when(&crate::clock::iso(member.created_at))) }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::owner_page("People", Section::People, who, main, status)
}

/// `GET /settings/people`.
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
        notice: revoked.then_some("Invitation revoked: its link no longer works."),
        ..Shown::default()
    };
    people_page(&state, &who, shown, StatusCode::OK).await
}

async fn again(
    state: &AppState,
    who: &SignedIn,
    form: &InviteForm,
    error: &str,
    status: StatusCode,
) -> Response {
    let shown = Shown {
        error: Some(error),
        form: Some(form),
        ..Shown::default()
    };
    people_page(state, who, shown, status).await
}

/// `POST /settings/people`: invites the email with the role and shows the link, once.
pub(super) async fn invite(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    let who = match owner(&state, who, &people_uri()).await {
        Ok(who) => who,
        Err(answer) => return answer,
    };
    let Some(form) = read_form::<InviteForm>(body).await else {
        let empty = InviteForm::default();
        return again(&state, &who, &empty, UNREADABLE, StatusCode::BAD_REQUEST).await;
    };
    let body = InviteBody {
        email: form.email.clone(),
        role: form.role.clone(),
    };
    match invitations::create(&state, &who.principal, body).await {
        Ok(created) => {
            let shown = Shown {
                created: Some(&created),
                ..Shown::default()
            };
            people_page(&state, &who, shown, StatusCode::OK).await
        }
        Err(e) => match refusal(&e) {
            Some((text, status)) => again(&state, &who, &form, &text, status).await,
            None => e.into_response(),
        },
    }
}

/// `POST /settings/people/invitations/{id}/revoke`: back to the page; the 404 page for an
/// invitation that is not the workspace's (or is used).
pub(super) async fn revoke(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    let who = match owner(&state, who, &people_uri()).await {
        Ok(who) => who,
        Err(answer) => return answer,
    };
    match invitations::revoke(&state, &who.principal, &id).await {
        Ok(_) => see_other("/settings/people?revoked=1"),
        Err(Error::NotFound { .. }) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// What the invitation's page shows: its form, or its join button for a signed-in user of
/// its email.
struct InvitePage<'a> {
    token: &'a str,
    invitation: &'a OpenInvitation,
    /// The signed-in visitor's email, if any.
    signed_in_as: Option<&'a str>,
    name: &'a str,
    error: Option<&'a str>,
    provider: bool,
    local: bool,
}

fn invite_page(shown: &InvitePage<'_>) -> crate::render::Page {
    let inv = shown.invitation;
    let action = format!("/invite/{}", shown.token);
    let (min, max) = PASSWORD_CHARS;
    let same_email = shown.signed_in_as == Some(inv.email.as_str());
    let main = html! {
        div.card {
            p.muted { "You are invited to the workspace " strong { (inv.workspace) } " as " strong { (inv.role) } ", with the email " strong { (inv.email) } ". The link works once." }
            @if let Some(error) = shown.error { (layout::error(error)) }
            @if same_email {
                form.stack method="post" action=(action) {
                    input type="hidden" name="join" value="1";
                    button type="submit" { "Join as " (inv.role) }
                }
            } @else {
                @if let Some(other) = shown.signed_in_as {
                    p.muted { "You are signed in as " (other) ". To join, sign out first, or sign in with " (inv.email) "." }
                }
                @if shown.local {
                    form.stack method="post" action=(action) {
                        label { "Email" input type="email" value=(inv.email) readonly autocomplete="username"; }
                        label { "Name" input name="name" value=(shown.name) autocomplete="name" maxlength="100" required autofocus; }
                        label { "Password (" (min) " to " (max) " characters)"
                            input type="password" name="password" autocomplete="new-password" minlength=(min) maxlength=(max) required;
                        }
                        label { "Password again"
                            input type="password" name="confirm" autocomplete="new-password" minlength=(min) maxlength=(max) required;
                        }
                        button type="submit" { "Join" }
                    }
                    @if shown.signed_in_as.is_none() {
                        @let back: String = url::form_urlencoded::byte_serialize(action.as_bytes()).collect();
                        p.muted { "Have a Corkboard account with this email? " a href={ "/login?next=" (back) } { "Sign in" } " first, then join here." }
                    }
                }
                @if shown.provider {
                    @let next: String = url::form_urlencoded::byte_serialize(action.as_bytes()).collect();
                    p.muted { "Or sign in with your identity provider as " (inv.email) ", then join here." }
                    a.button.plain href={ "/login/provider?next=" (next) } { "Sign in with your identity provider" }
                }
            }
        }
    };
    let shell = Shell {
        title: "Join Corkboard",
        user: None,
        current: None,
        owner: false,
    };
    let mut page = layout::page(&shell, main);
    page.found = shown.error.is_none();
    page
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JoinForm {
    join: String,
    name: String,
    password: String,
    confirm: String,
}

/// The invitation of `token` while it works and web sign-in is on.
async fn open(state: &AppState, token: &str) -> Result<Option<OpenInvitation>, Response> {
    if !state.web_sign_in() {
        return Ok(None);
    }
    invitations::open(state, token)
        .await
        .map_err(IntoResponse::into_response)
}

/// The signed-in visitor's email, if any.
async fn email_of(state: &AppState, who: Option<&SignedIn>) -> Result<Option<String>, Response> {
    let Some(who) = who else { return Ok(None) };
    invitations::email_of(state, who.principal.subject.id())
        .await
        .map_err(IntoResponse::into_response)
}

/// `GET /invite/{token}`: the invitation's page; the 404 page for a link that doesn't work
/// (unknown, used, revoked or expired).
pub(super) async fn invitation(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(token): Path<String>,
) -> Response {
    let invitation = match open(&state, &token).await {
        Ok(Some(invitation)) => invitation,
        Ok(None) => return not_found(),
        Err(answer) => return answer,
    };
    let email = match email_of(&state, who.as_ref()).await {
        Ok(email) => email,
        Err(answer) => return answer,
    };
    let shown = InvitePage {
        token: &token,
        invitation: &invitation,
        signed_in_as: email.as_deref(),
        name: "",
        error: None,
        provider: state.oidc.is_some(),
        local: state.settings.auth.local.enabled,
    };
    html(invite_page(&shown), StatusCode::OK)
}

/// `POST /invite/{token}`: a name and password (a new account of the invitation's email),
/// or `join` from a signed-in user of that email. Joined: the link is used up, and the
/// person is signed in to the workspace, on to `/boards`. Otherwise the page again with
/// what to do (422 for the form, 409 when a password account of that email exists, 403
/// for a signed-in user of another email).
pub(super) async fn join(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    let invitation = match open(&state, &token).await {
        Ok(Some(invitation)) => invitation,
        Ok(None) => return not_found(),
        Err(answer) => return answer,
    };
    let email = match email_of(&state, who.as_ref()).await {
        Ok(email) => email,
        Err(answer) => return answer,
    };
    let form = read_form::<JoinForm>(body).await;
    let again = |name: &str, error: &str, status| {
        let shown = InvitePage {
            token: &token,
            invitation: &invitation,
            signed_in_as: email.as_deref(),
            name,
            error: Some(error),
            provider: state.oidc.is_some(),
            local: state.settings.auth.local.enabled,
        };
        html(invite_page(&shown), status)
    };
    let Some(form) = form else {
        return again("", UNREADABLE, StatusCode::BAD_REQUEST);
    };
    let joined = match (form.join.is_empty(), who.as_ref()) {
        (false, Some(who)) => invitations::accept_signed_in(&state, &token, who).await,
        (false, None) => {
            return again("", "Sign in first, then join.", StatusCode::UNAUTHORIZED);
        }
        (true, _) if !state.settings.auth.local.enabled => return not_found(),
        (true, _) => {
            let account =
                NewAccount::parse(&form.name, &invitation.email, form.password, &form.confirm);
            match account {
                Ok(account) => invitations::accept_with_password(&state, &token, account).await,
                Err(message) => {
                    return again(&form.name, message, StatusCode::UNPROCESSABLE_ENTITY);
                }
            }
        }
    };
    match joined {
        Ok(Joined::Started(started)) => {
            if let Err(e) = session::end(&state, &headers).await {
                return e.into_response();
            }
            with_cookie(see_other("/boards"), &session_cookie(&state, &started))
        }
        Ok(Joined::Gone) => not_found(),
        Ok(Joined::HasAccount) => again(
            &form.name,
            "You have an account with this email already: sign in with it, then open this link again.",
            StatusCode::CONFLICT,
        ),
        Ok(Joined::OtherEmail) => again(
            &form.name,
            "This invitation is for another email than the one you are signed in with.",
            StatusCode::FORBIDDEN,
        ),
        Err(e) => e.into_response(),
    }
}
