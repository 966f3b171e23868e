//! Signed-in users: the identity of a valid ID token becomes a member of a workspace (made
//! on first sight) whose role gives the scopes.

use super::{keys::valid_workspace_name, roles, Identity, Principal, Subject};
use crate::{
    app::AppState,
    error::{Error, Result},
    store::SignIn,
};

/// Where a token without a workspace claim signs in.
const DEFAULT_WORKSPACE: &str = "default";

/// The principal of a verified identity. One read when nothing changed since the last
/// request; a write when the user, their membership, email or claimed role is new.
pub async fn sign_in(state: &AppState, identity: Identity) -> Result<Principal> {
    let workspace = identity.workspace.as_deref().unwrap_or(DEFAULT_WORKSPACE);
    if !valid_workspace_name(workspace) {
        tracing::debug!(workspace, "ID token names an invalid workspace");
        return Err(Error::Unauthorized);
    }
    let found = state
        .store
        .find_member(&identity.subject, workspace)
        .await?;
    let current = found.filter(|m| {
        m.email == identity.email && identity.role.as_ref().is_none_or(|role| *role == m.role)
    });
    let member = match current {
        Some(member) => member,
        None => {
            let jwt = &state.settings.auth.jwt;
            state
                .store
                .enroll(&SignIn {
                    subject: &identity.subject,
                    email: identity.email.as_deref(),
                    workspace,
                    claimed_role: identity.role.as_deref(),
                    default_role: &jwt.default_role,
                    now: crate::clock::now_ms(),
                })
                .await?
        }
    };
    let scopes = roles::scopes_of(&state.store, &member.workspace_id, &member.role).await?;
    Ok(Principal {
        workspace_id: member.workspace_id,
        subject: Subject::User(member.user_id),
        scopes,
        tier: state.settings.default_tier,
    })
}
