//! Credentials: API keys (`cbk_...`, stored only as a SHA-256 hash), scopes, tiers, and the
//! [`Auth`] extractor that turns a request's `Authorization` header into a [`Principal`].

mod extract;
mod keys;

pub(crate) use extract::authenticate;
pub use extract::{
    Auth, PinboardsRead, PinboardsWrite, PinsRead, PinsShare, PinsWrite, RequiredScope,
};
pub use keys::{create_key, list_keys, revoke_key, ApiKeySecret, CreatedKey, KeyHash, NewKey};

use serde::{Deserialize, Serialize};

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

    /// The stored and displayed form: `pins:read,pins:write`.
    pub fn to_list(self) -> String {
        Scope::ALL
            .into_iter()
            .filter(|s| self.0 & s.bit() != 0)
            .map(Scope::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Rate-limit tier of a key (SPEC.md 8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// Who is calling: the credential's workspace, identity, scopes and tier.
#[derive(Debug, Clone)]
pub struct Principal {
    pub workspace_id: String,
    pub key_id: String,
    pub scopes: Scopes,
    pub tier: Tier,
}

#[cfg(test)]
mod tests {
    use super::*;

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
