//! The [`Auth`] extractor: authenticates the bearer credential and checks one scope, so a
//! handler's signature says which scope it needs.

use std::{marker::PhantomData, sync::Arc};

use axum::{
    extract::FromRequestParts,
    http::{request::Parts, HeaderMap},
};

use super::{
    access::{authorize, Access},
    key_cache::KeptKey,
    users, ApiKeySecret, Principal, Reach, Scope, Scopes, Subject, Tier,
};
use crate::{app::AppState, Error};

/// A marker naming the scope a route requires.
pub trait RequiredScope {
    const SCOPE: Scope;
}

macro_rules! required_scope {
    ($($name:ident => $scope:ident),* $(,)?) => {$(
        #[doc = concat!("Requires `", stringify!($scope), "`.")]
        pub struct $name;
        impl RequiredScope for $name {
            const SCOPE: Scope = Scope::$scope;
        }
    )*};
}

required_scope! {
    PinsRead => PinsRead,
    PinsWrite => PinsWrite,
    PinsShare => PinsShare,
    PinboardsRead => PinboardsRead,
    PinboardsWrite => PinboardsWrite,
    PinboardsInvite => PinboardsInvite,
    DatasetsRead => DatasetsRead,
    DatasetsWrite => DatasetsWrite,
    AllScopes => All,
}

/// An authenticated caller holding scope `S`. Rejects with 401 `UNAUTHORIZED`, or with 403:
/// `SCOPE_REQUIRED` for a key without the scope, `FORBIDDEN` for a user whose role lacks it.
pub struct Auth<S> {
    pub principal: Principal,
    scope: PhantomData<S>,
}

impl<S: RequiredScope + Send + Sync> FromRequestParts<AppState> for Auth<S> {
    type Rejection = Error;

    /// The principal was put there by [`crate::limits::enforce`], which authenticates every
    /// API request before it is priced.
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(Error::Unauthorized)?;
        Ok(Auth {
            principal: authorize(state, principal, Access::workspace(S::SCOPE), None).await?,
            scope: PhantomData,
        })
    }
}

/// Whether an API key's principal kept by an earlier request may serve this one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// Read the key's rows (pages: nothing confirms a kept principal there).
    No,
    /// Serve a kept principal, else read the rows and keep them (API requests, whose rate-limit
    /// check confirms a kept principal: [`crate::limits::enforce`]).
    Yes,
    /// Read the rows and keep them: the kept principal was found out of date.
    Refresh,
}

/// An authenticated caller, and what is left to confirm.
pub(crate) struct Authenticated {
    pub principal: Principal,
    /// PostgreSQL, a kept principal: the count of changes to credentials (`auth_changes`) it
    /// was kept under. It serves only if the rate-limit check reads the same count.
    pub unconfirmed: Option<i64>,
}

/// Checks the bearer credential in `headers`: a live API key (`cbk_...`), else, when ID
/// tokens are configured, a valid JWT. 401 for anything else.
pub(crate) async fn authenticate(
    headers: &HeaderMap,
    state: &AppState,
    reuse: Reuse,
) -> Result<Authenticated, Error> {
    let presented = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            let token = token.trim();
            (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
        })
        .ok_or(Error::Unauthorized)?;
    let authenticated = if presented.starts_with(ApiKeySecret::PREFIX) {
        key_principal(presented, state, reuse).await
    } else {
        match &state.jwt {
            Some(jwt) => match jwt.verify(presented).await {
                Ok(identity) => {
                    users::sign_in(state, identity)
                        .await
                        .map(|principal| Authenticated {
                            principal,
                            unconfirmed: None,
                        })
                }
                Err(e) => Err(e),
            },
            None => Err(Error::Unauthorized),
        }
    };
    // A credential was sent: a refusal names it (`WWW-Authenticate: ... invalid_token`).
    authenticated.map_err(|e| match e {
        Error::Unauthorized => Error::InvalidToken,
        other => other,
    })
}

async fn key_principal(
    presented: &str,
    state: &AppState,
    reuse: Reuse,
) -> Result<Authenticated, Error> {
    let presented = ApiKeySecret::from_presented(presented).ok_or(Error::Unauthorized)?;
    let now = state.clock.now_ms();
    let epoch = match reuse {
        Reuse::No => None,
        Reuse::Yes | Reuse::Refresh => state.store.auth().current(),
    };
    let kept = match (reuse, epoch) {
        (Reuse::Yes, Some(epoch)) => state.keys.get(presented.lookup(), epoch, now),
        _ => None,
    };
    let hit = kept.is_some();
    let (key, unconfirmed) = match kept {
        Some(key) => {
            let changes = key.changes;
            (key, changes)
        }
        None => {
            // Read before the rows, so that a change committed between the two makes what
            // is kept out of date rather than wrongly current.
            let changes = match epoch {
                Some(_) => state.store.auth_changes().await?,
                None => None,
            };
            let key = Arc::new(KeptKey {
                changes,
                ..read_key(&presented, state).await?
            });
            if let Some(epoch) = epoch {
                state.keys.keep(presented.lookup(), epoch, now, key.clone());
            }
            (key, None)
        }
    };
    if key.expires_at.is_some_and(|at| at <= now) || !presented.hash().matches(&key.secret_hash) {
        return Err(Error::Unauthorized);
    }
    if hit {
        // A read key was noted by `read_key`.
        state.note_key_used(&key.id);
    }
    tracing::Span::current().record("key_id", key.id.as_str());
    Ok(Authenticated {
        principal: Principal {
            workspace_id: key.workspace_id.clone(),
            subject: Subject::Key(key.id.clone()),
            scopes: key.scopes,
            tier: key.tier,
            reach: Reach::Workspace,
        },
        unconfirmed,
    })
}

/// Reads the key of `presented` and, for a key a user made, its creator's role: a live key
/// whose secret matches, else 401.
async fn read_key(presented: &ApiKeySecret, state: &AppState) -> Result<KeptKey, Error> {
    let row = state
        .store
        .find_key(presented.lookup())
        .await?
        .ok_or(Error::Unauthorized)?;
    let expired = row.expires_at.is_some_and(|at| at <= state.clock.now_ms());
    if row.revoked_at.is_some() || expired || !presented.hash().matches(&row.secret_hash) {
        return Err(Error::Unauthorized);
    }
    let mut scopes = Scopes::parse_list(&row.scopes)
        .map_err(|bad| Error::internal(format!("stored key has unknown scope {bad}")))?;
    // A key a user made never does more than that user's role allows now: a demoted or
    // departed creator takes their keys' power with them.
    if let Some(creator) = &row.created_by {
        let ceiling = match state.store.member_role(&row.workspace_id, creator).await? {
            Some(role) => super::roles::scopes_of(&state.store, &row.workspace_id, &role).await?,
            None => Scopes::default(),
        };
        scopes = scopes.within(ceiling);
    }
    let tier = Tier::parse(&row.tier).unwrap_or(state.settings.default_tier);
    if row.last_used_at.is_none() {
        // A key's first use is written before it is answered, so `GET /api-keys` shows it
        // at once; later uses in the background, at most once a minute.
        if let Err(e) = state.store.touch_key(&row.id, crate::clock::now_ms()).await {
            tracing::debug!(error = %e, "could not record key use");
        }
    } else {
        state.note_key_used(&row.id);
    }
    Ok(KeptKey {
        id: row.id,
        workspace_id: row.workspace_id,
        secret_hash: row.secret_hash,
        expires_at: row.expires_at,
        scopes,
        tier,
        changes: None,
    })
}
