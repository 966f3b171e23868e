//! Signed-in users: the identity of a valid ID token becomes a member of a workspace (made
//! on first sight) whose role gives the scopes.

use super::{keys::valid_workspace_name, roles, Identity, Principal, Reach, Subject};
use crate::{
    app::AppState,
    error::{Error, Result},
    store::SignIn,
};

/// Where tokens sign in when no workspace claim is configured.
pub(crate) const DEFAULT_WORKSPACE: &str = "default";

/// The principal of a verified identity. One read when nothing changed since the last
/// request; a write when the user, their membership, email or claimed role is new.
pub async fn sign_in(state: &AppState, identity: Identity) -> Result<Principal> {
    let claim_configured = !state.settings.auth.jwt.workspace_claim.is_empty();
    let workspace = match identity.workspace.as_deref() {
        Some(workspace) => workspace,
        // With a workspace claim configured, a token without it belongs to no workspace: it
        // must not land in `default`, where keys made without --workspace keep their data.
        None if claim_configured => {
            tracing::debug!("ID token lacks the configured workspace claim");
            return Err(Error::Unauthorized);
        }
        None => DEFAULT_WORKSPACE,
    };
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
        reach: Reach::Workspace,
    })
}
