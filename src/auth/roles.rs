//! Roles: the built-in `owner`, `editor` and `viewer`, and a workspace's custom roles
//! (`POST/GET /roles`), each a name and a set of scopes. A signed-in user's scopes are
//! those of their role.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Principal, Scope, Scopes};
use crate::{
    app::AppState,
    clock,
    error::{Error, Result},
    store::{RoleRow, Store},
};

/// What an editor holds: every scope but `*`, so everything but API key management.
const EDITOR: [Scope; 8] = [
    Scope::DatasetsRead,
    Scope::DatasetsWrite,
    Scope::PinsRead,
    Scope::PinsWrite,
    Scope::PinsShare,
    Scope::PinboardsRead,
    Scope::PinboardsWrite,
    Scope::PinboardsInvite,
];
const VIEWER: [Scope; 3] = [Scope::DatasetsRead, Scope::PinsRead, Scope::PinboardsRead];
const BUILTIN: [&str; 3] = ["owner", "editor", "viewer"];

/// The scopes of a built-in role.
fn builtin(name: &str) -> Option<Scopes> {
    let list: &[Scope] = match name {
        "owner" => &[Scope::All],
        "editor" => &EDITOR,
        "viewer" => &VIEWER,
        _ => return None,
    };
    Some(Scopes::of(list))
}

/// The scopes of role `name` in workspace `ws`; `None` when there is no such role.
pub async fn lookup(store: &Store, ws: &str, name: &str) -> Result<Option<Scopes>> {
    if let Some(scopes) = builtin(name) {
        return Ok(Some(scopes));
    }
    let Some(role) = store.find_role(ws, name).await? else {
        return Ok(None);
    };
    Scopes::parse_list(&role.scopes)
        .map(Some)
        .map_err(|bad| Error::internal(format!("stored role has unknown scope {bad}")))
}

/// The scopes of role `name` in workspace `ws`. A role that doesn't exist (the identity
/// provider named one nobody created) grants nothing.
pub async fn scopes_of(store: &Store, ws: &str, name: &str) -> Result<Scopes> {
    Ok(lookup(store, ws, name).await?.unwrap_or_default())
}

/// `POST /roles` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRoleBody {
    /// `[a-z0-9_-]{1,64}`, not the name of a built-in role nor of another custom role
    /// (409).
    #[schemars(regex(pattern = NAME_PATTERN))]
    pub name: String,
    /// The scopes the role grants (at least one); the caller must hold each (403).
    #[schemars(schema_with = "scope_list")]
    pub permissions: Vec<String>,
}

/// A role's name: built-in or custom.
pub const NAME_PATTERN: &str = "^[a-z0-9_-]{1,64}$";

/// Most names a list of scopes may hold (there are fewer scopes; repeats are refused
/// beyond this, so a body can't make the server parse an endless list).
pub const MAX_SCOPE_NAMES: usize = 32;

/// The schema of a list of scopes: 1 to [`MAX_SCOPE_NAMES`] scope names.
pub fn scope_list(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_SCOPE_NAMES,
        "items": { "type": "string", "enum": names },
    })
}

/// A role as `GET /roles` lists it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RoleRecord {
    pub name: String,
    pub permissions: Vec<&'static str>,
    pub builtin: bool,
    /// ISO 8601; `null` for built-in roles.
    pub created_at: Option<String>,
}

/// Whether `name` matches [`NAME_PATTERN`].
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Checks that `who` may grant `wanted`: nobody hands out a scope they don't hold.
pub fn check_grant(who: &Principal, wanted: Scopes) -> Result<()> {
    match who.scopes.first_missing(wanted) {
        Some(scope) => Err(Error::Forbidden(format!(
            "you can't grant `{}`, which you don't hold",
            scope.as_str()
        ))),
        None => Ok(()),
    }
}

/// Parses a list of scope names in `field`; at least one.
pub fn parse_scopes(names: &[String], field: &str) -> Result<Scopes> {
    let expected = || {
        let all: Vec<_> = Scope::ALL.iter().map(|s| s.as_str()).collect();
        format!("one of {}", all.join(", "))
    };
    if names.len() > MAX_SCOPE_NAMES {
        return Err(Error::validation(
            field,
            format!("at most {MAX_SCOPE_NAMES} scope names"),
        ));
    }
    let scopes = Scopes::from_names(names)
        .map_err(|i| Error::validation(format!("{field}[{i}]"), expected()))?;
    if scopes.is_empty() {
        return Err(Error::validation(field, "at least one scope"));
    }
    Ok(scopes)
}

pub async fn create(state: &AppState, who: &Principal, body: CreateRoleBody) -> Result<RoleRecord> {
    if !valid_name(&body.name) {
        return Err(Error::validation("name", "1 to 64 of a-z, 0-9, - and _"));
    }
    if BUILTIN.contains(&body.name.as_str()) {
        return Err(Error::Conflict(format!(
            "`{}` is a built-in role",
            body.name
        )));
    }
    let scopes = parse_scopes(&body.permissions, "permissions")?;
    check_grant(who, scopes)?;
    let max = state.limits().roles_per_workspace;
    if state.store.list_roles(&who.workspace_id).await?.len() >= max {
        return Err(Error::Conflict(format!(
            "the workspace has {max} custom roles, the most it may have"
        )));
    }
    let row = RoleRow {
        name: body.name,
        scopes: scopes.to_list(),
        created_at: clock::now_ms(),
    };
    state.store.insert_role(&who.workspace_id, &row).await?;
    Ok(RoleRecord {
        permissions: scopes.names(),
        builtin: false,
        created_at: Some(clock::iso(row.created_at)),
        name: row.name,
    })
}

/// The built-in roles, then the workspace's own, oldest first.
pub async fn list(state: &AppState, who: &Principal) -> Result<Vec<RoleRecord>> {
    let mut records: Vec<RoleRecord> = BUILTIN
        .into_iter()
        .filter_map(|name| {
            builtin(name).map(|scopes| RoleRecord {
                name: name.to_owned(),
                permissions: scopes.names(),
                builtin: true,
                created_at: None,
            })
        })
        .collect();
    for row in state.store.list_roles(&who.workspace_id).await? {
        let scopes = Scopes::parse_list(&row.scopes)
            .map_err(|bad| Error::internal(format!("stored role has unknown scope {bad}")))?;
        records.push(RoleRecord {
            name: row.name,
            permissions: scopes.names(),
            builtin: false,
            created_at: Some(clock::iso(row.created_at)),
        });
    }
    Ok(records)
}
