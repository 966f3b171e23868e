//! Credentials: API keys (`cbk_...`, stored only as a SHA-256 hash) and ID tokens (JWT) of
//! signed-in users, scopes, roles, tiers, and the [`Auth`] extractor that turns a request's
//! `Authorization` header into a [`Principal`].

mod access;
mod board_access;
mod extract;
mod jwt;
mod jwt_settings;
pub mod key_admin;
mod key_cache;
mod keys;
pub mod local;
mod oidc;
pub mod roles;
pub mod sessions;
mod users;

pub use access::{also_needs, authorize, Access};

pub use board_access::BoardAuth;
pub(crate) use extract::{authenticate, Authenticated, Reuse};
pub use extract::{
    AllScopes, Auth, DatasetsRead, DatasetsWrite, PinboardsInvite, PinboardsRead, PinboardsWrite,
    PinsRead, PinsShare, PinsWrite, RequiredScope,
};
pub use jwt::{Identity, JwtVerifier};
pub use jwt_settings::JwtSettings;
pub use key_cache::{KeyCache, KEPT_FOR_MS};
pub use keys::{
    create_key, list_keys, revoke_key, valid_workspace_name, ApiKeySecret, CreatedKey, KeyHash,
    NewKey,
};
pub use local::LocalSettings;
pub use oidc::{Oidc, OidcSettings, Pending};
pub(crate) use users::{sign_in, DEFAULT_WORKSPACE};

use serde::{Deserialize, Serialize};

/// Whether the identity provider may be reached at `url`: over https, or plain http only on
/// a loopback address (a provider on the same machine, or a test's). Whoever can answer
/// for the provider over a network can sign in as anyone, so plain http elsewhere is
/// refused (the issuer at start-up, the endpoints its discovery document names, the JWKS).
pub(crate) fn is_trusted_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| match u.scheme() {
        "https" => true,
        "http" => match u.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        },
        _ => false,
    })
}

/// A permission a credential may hold (SPEC.md 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    DatasetsRead,
    DatasetsWrite,
    PinsRead,
    PinsWrite,
    PinsShare,
    PinboardsRead,
    PinboardsWrite,
    PinboardsInvite,
    All,
}

impl Scope {
    pub const ALL: [Scope; 9] = [
        Scope::DatasetsRead,
        Scope::DatasetsWrite,
        Scope::PinsRead,
        Scope::PinsWrite,
        Scope::PinsShare,
        Scope::PinboardsRead,
        Scope::PinboardsWrite,
        Scope::PinboardsInvite,
        Scope::All,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::DatasetsRead => "datasets:read",
            Scope::DatasetsWrite => "datasets:write",
            Scope::PinsRead => "pins:read",
            Scope::PinsWrite => "pins:write",
            Scope::PinsShare => "pins:share",
            Scope::PinboardsRead => "pinboards:read",
            Scope::PinboardsWrite => "pinboards:write",
            Scope::PinboardsInvite => "pinboards:invite",
            Scope::All => "*",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of scopes; `*` implies every other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u16);

impl Scopes {
    /// Parses a comma-separated list such as `pins:read,pins:write`; `Err` names the unknown one.
    pub fn parse_list(list: &str) -> Result<Scopes, String> {
        let mut scopes = Scopes::default();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let scope = Scope::parse(item).ok_or_else(|| item.to_owned())?;
            scopes.0 |= scope.bit();
        }
        Ok(scopes)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn allows(self, scope: Scope) -> bool {
        self.0 & (Scope::All.bit() | scope.bit()) != 0
    }

    /// Everything either set allows.
    pub fn union(self, other: Scopes) -> Scopes {
        Scopes(self.0 | other.0)
    }

    /// What these scopes allow that `ceiling` allows too (`*` on either side stands for
    /// everything the other allows).
    pub fn within(self, ceiling: Scopes) -> Scopes {
        let all = Scope::All.bit();
        match (self.0 & all != 0, ceiling.0 & all != 0) {
            (_, true) => self,
            (true, false) => ceiling,
            (false, false) => Scopes(self.0 & ceiling.0),
        }
    }

    /// The first scope of `wanted` that these scopes don't allow: what a holder of `self`
    /// may not grant to a key, a role or a collaborator.
    pub fn first_missing(self, wanted: Scopes) -> Option<Scope> {
        Scope::ALL
            .into_iter()
            .filter(|s| wanted.0 & s.bit() != 0)
            .find(|s| !self.allows(*s))
    }

    pub fn of(list: &[Scope]) -> Scopes {
        Scopes(list.iter().fold(0, |acc, s| acc | s.bit()))
    }

    /// Scopes from their names; `Err` is the index of the first unknown one.
    pub fn from_names(names: &[String]) -> Result<Scopes, usize> {
        names
            .iter()
            .enumerate()
            .try_fold(Scopes::default(), |acc, (i, name)| {
                Scope::parse(name).map(|s| Scopes(acc.0 | s.bit())).ok_or(i)
            })
    }

    /// The names, in the order of [`Scope::ALL`].
    pub fn names(self) -> Vec<&'static str> {
        Scope::ALL
            .into_iter()
            .filter(|s| self.0 & s.bit() != 0)
            .map(Scope::as_str)
            .collect()
    }

    /// The stored and displayed form: `pins:read,pins:write`.
    pub fn to_list(self) -> String {
        self.names().join(",")
    }
}

/// Rate-limit tier of a key (SPEC.md 8.1), from the smallest to the largest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Starter,
    Professional,
    Team,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Starter => "starter",
            Tier::Professional => "professional",
            Tier::Team => "team",
        }
    }

    pub fn parse(s: &str) -> Option<Tier> {
        [Tier::Starter, Tier::Professional, Tier::Team]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
}

/// Whose credential it is: an API key or a signed-in user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Key(String),
    User(String),
}

impl Subject {
    /// The key's or the user's id: what rate limits are counted by.
    pub fn id(&self) -> &str {
        match self {
            Subject::Key(id) | Subject::User(id) => id,
        }
    }
}

/// Who is calling: the credential's workspace, identity, scopes and tier. A user's scopes
/// are those of their role.
#[derive(Debug, Clone)]
pub struct Principal {
    pub workspace_id: String,
    pub subject: Subject,
    pub scopes: Scopes,
    pub tier: Tier,
    pub reach: Reach,
}

/// What of its workspace a principal may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// A member's key or user: the whole workspace, as its scopes allow.
    Workspace,
    /// A collaborator from another workspace, acting on this one board only: its placements,
    /// and pins already on a board of the workspace where they may edit.
    Board(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_is_reached_over_https_or_on_loopback() {
        for url in [
            "https://accounts.example.com",
            "http://127.0.0.1:9000/realms/x",
            "http://[::1]:9000",
            "http://localhost:8081/token",
        ] {
            assert!(is_trusted_url(url), "{url}");
        }
        for url in [
            "http://accounts.example.com",
            "http://10.0.0.5/token",
            "http://localhost.evil.example",
            "ftp://127.0.0.1",
            "not a url",
        ] {
            assert!(!is_trusted_url(url), "{url}");
        }
    }

    #[test]
    fn star_allows_everything_and_lists_round_trip() {
        let all = Scopes::parse_list("*").unwrap();
        assert!(all.allows(Scope::PinboardsInvite));
        let some = Scopes::parse_list("pins:read, pins:write").unwrap();
        assert!(some.allows(Scope::PinsWrite));
        assert!(!some.allows(Scope::PinsShare));
        assert_eq!(Scopes::parse_list(&some.to_list()).unwrap(), some);
        assert_eq!(Scopes::parse_list("pins:raed"), Err("pins:raed".into()));
    }
}
