//! The hook operations: create, list and delete for a caller of the API (`datasets:write`
//! and `datasets:read`, stated by their routes), and the two steps of a call to a hook's
//! url, which has no caller until its token names one: [`admit`] (the token, the minute's
//! count, the signature) and [`deliver`] (the dataset write, as the hook's [`super::caller`]).

use serde_json::Value;

use super::{
    caller, data_write, signature, CreateHookBody, CreatedHook, Delivered, HookRecord, HookToken,
    SignedHeaders,
};
use crate::{
    app::AppState,
    auth::{self, Access, Principal, Scope},
    clock, datasets,
    error::{Error, Result},
    store::{HookQuery, HookRow},
    wire::{Deleted, Page, PageParams},
};

fn hook_missing() -> Error {
    Error::NotFound {
        what: "hook",
        index: None,
    }
}

/// `POST /hooks`: the hook with its url, the only time the token is shown.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateHookBody,
) -> Result<CreatedHook> {
    let (row, token) = body.into_hook(&who.workspace_id, clock::now_ms())?;
    state.store.insert_hook(&row).await?;
    Ok(CreatedHook {
        record: HookRecord::new(&row)?,
        url: token.url(state.public_base()),
    })
}

/// `GET /hooks`: newest first, keyset-paginated like `GET /datasets`.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<Page<HookRecord>> {
    let (limit, before_seq) = params.window()?;
    let query = HookQuery {
        limit: limit + 1,
        before_seq,
    };
    let rows = state.store.list_hooks(&who.workspace_id, &query).await?;
    Page::of(rows, limit, |(seq, _)| *seq).try_map(|(_, hook)| HookRecord::new(&hook))
}

/// `DELETE /hooks/{id}`: its url answers 404 from then on.
pub async fn delete(state: &AppState, who: &Principal, id: &str) -> Result<Deleted> {
    if state.store.delete_hook(&who.workspace_id, id).await? {
        Ok(Deleted::new(id))
    } else {
        Err(hook_missing())
    }
}

/// A call to a hook's url that may write: its hook, found by the token and checked.
#[derive(Debug)]
pub struct Admitted(HookRow);

/// The first step of `POST /in/{token}`: the hook the token names (404 for a token that
/// names none, also a deleted hook's), one call counted against its minute (429), and the
/// signature of `body` when the hook wants one (401). Nothing is written.
pub async fn admit(
    state: &AppState,
    token: &str,
    headers: &SignedHeaders,
    body: &[u8],
) -> Result<Admitted> {
    let token = HookToken::from_presented(token).ok_or_else(hook_missing)?;
    let hook = state
        .store
        .find_hook(token.lookup())
        .await?
        .filter(|hook| token.hash().matches(&hook.token_hash))
        .ok_or_else(hook_missing)?;
    crate::limits::count_hook_call(state, &hook.id).await?;
    if let (Some(scheme), Some(secret)) = (&hook.signature_scheme, &hook.signature_secret) {
        let scheme = super::Scheme::parse(scheme)?;
        signature::verify(scheme, secret, headers, body, state.clock.now_ms())?;
    }
    Ok(Admitted(hook))
}

/// The second step: the admitted call's `body` (any JSON) written to the hook's dataset
/// as its mode says, one version and one event, through the datasets' own operation.
pub async fn deliver(state: &AppState, call: Admitted, body: Value) -> Result<Delivered> {
    let Admitted(hook) = call;
    let who = auth::authorize(
        state,
        caller(state, &hook),
        Access::workspace(Scope::DatasetsWrite),
        None,
    )
    .await?;
    let write = data_write(&hook, body)?;
    let record = datasets::ops::write_named(state, &who, "dataset", &hook.dataset, &write).await?;
    Ok(Delivered {
        dataset_id: record.id,
        version: record.version,
    })
}
