//! Local accounts (CONTRACT.md 16): people who sign in with an email and a password, so a
//! self-hoster needs no identity provider. The owner comes from a setup link
//! (`<public_url>/setup/<token>`: 256 random bits, single use, 24 h, only its SHA-256
//! stored; a new link replaces the older ones). Passwords are kept only as Argon2id hashes
//! (the `argon2` crate's recommended parameters), hashed and checked off the async runtime,
//! a few at a time. A session of theirs is a web session like any other (`sessions`).

use std::net::IpAddr;

use argon2::{
    password_hash::{phc::PasswordHash, PasswordHasher, PasswordVerifier},
    Argon2,
};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use super::{sessions, sessions::SessionId, DEFAULT_WORKSPACE};
use crate::{
    app::AppState,
    error::{Error, Result},
    store::{NewOwner, Store},
};

/// `[auth.local]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct LocalSettings {
    /// Sign-in with a password, and the setup link.
    pub enabled: bool,
    /// How long a session lasts, hours.
    pub session_hours: u64,
}

impl LocalSettings {
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.enabled && self.session_hours == 0 {
            return Err("auth.local.session_hours must be at least 1".into());
        }
        Ok(())
    }

    /// How long a session lasts, ms.
    pub(crate) fn session_ms(&self) -> i64 {
        i64::try_from(self.session_hours)
            .unwrap_or(i64::MAX)
            .saturating_mul(3_600_000)
    }
}

/// How long a setup link works.
pub const SETUP_LINK_MS: i64 = 24 * 3_600_000;
/// Characters a password must have at least, and may have at most.
pub const PASSWORD_CHARS: (usize, usize) = (12, 128);
const NAME_CHARS: usize = 100;
const EMAIL_CHARS: usize = 254;
/// Hashes computed at once: each takes 19 MiB and a core for a moment, so a burst of
/// sign-ins waits its turn rather than taking the machine's memory.
static HASHING: Semaphore = Semaphore::const_new(4);
/// What a sign-in with an unknown email is checked against, so that it costs what a wrong
/// password costs (the hash of a random password nobody knows, with the default parameters:
/// see the test below).
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$pHRgAQHbgO4noexhew0gaA$tIrJY+2VB0MthDRXtzclV7QehkZ0HMxX9abjTi0lGKg";

/// A new setup link: printed once, never stored or logged.
pub struct SetupLink(String);

impl SetupLink {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SetupLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SetupLink(<redacted>)")
    }
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Makes a setup link under `public_base`; every older link stops working.
pub async fn new_setup_link(store: &Store, public_base: &str) -> Result<SetupLink> {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    let now = crate::clock::now_ms();
    store
        .replace_setup_token(&token_hash(&token), now, now.saturating_add(SETUP_LINK_MS))
        .await?;
    Ok(SetupLink(format!("{public_base}/setup/{token}")))
}

/// Whether `token` (a setup link's last segment) still works.
pub async fn setup_open(state: &AppState, token: &str) -> Result<bool> {
    state
        .store
        .setup_token_open(&token_hash(token), crate::clock::now_ms())
        .await
}

/// A password as typed: never shown, logged or stored.
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

impl Password {
    /// Any text, as sign-in takes it: only a hash can tell whether it is right.
    pub fn typed(text: String) -> Password {
        Password(text)
    }
}

/// The setup form, checked: who becomes the owner.
#[derive(Debug)]
pub struct NewAccount {
    name: String,
    email: String,
    password: Password,
}

impl NewAccount {
    /// Checks the form's fields; the message says what to fix.
    pub fn parse(
        name: &str,
        email: &str,
        password: String,
        confirm: &str,
    ) -> std::result::Result<NewAccount, &'static str> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > NAME_CHARS {
            return Err("Enter your name (at most 100 characters).");
        }
        if name.chars().any(char::is_control) {
            return Err("Your name can't hold control characters.");
        }
        let email = normal_email(email).ok_or("Enter a valid email address.")?;
        let chars = password.chars().count();
        if chars < PASSWORD_CHARS.0 || chars > PASSWORD_CHARS.1 {
            return Err("The password must have 12 to 128 characters.");
        }
        if password != confirm {
            return Err("The two passwords differ.");
        }
        Ok(NewAccount {
            name: name.to_owned(),
            email,
            password: Password(password),
        })
    }
}

impl NewAccount {
    /// Its name and email, and its password hashed (Argon2id, off the async runtime).
    pub(crate) async fn hashed(self) -> Result<(String, String, String)> {
        let hash = hash_password(self.password).await?;
        Ok((self.name, self.email, hash))
    }
}

/// An email as accounts keep it: trimmed and lower-case, `local@domain` without spaces.
pub fn normal_email(email: &str) -> Option<String> {
    let email = email.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    let plain = !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && email.chars().count() <= EMAIL_CHARS
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    plain.then_some(email)
}

/// Runs `work` (a hash or a check) on the blocking pool, once a hashing permit is free.
async fn hashing<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let _permit = HASHING
        .acquire()
        .await
        .map_err(|e| Error::internal_in("password hashing", e))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::internal_in("password hashing", e))
}

async fn hash_password(password: Password) -> Result<String> {
    hashing(move || {
        Argon2::default()
            .hash_password(password.0.as_bytes())
            .map(|hash| hash.to_string())
    })
    .await?
    .map_err(|e| Error::internal_in("password hashing", e))
}

/// Whether `password` is the one of `hash`; with no hash (no such account), the same work
/// against [`DUMMY_HASH`], and false.
async fn verify_password(password: Password, hash: Option<String>) -> Result<bool> {
    let known = hash.is_some();
    let hash = hash.unwrap_or_else(|| DUMMY_HASH.to_owned());
    let matches = hashing(move || {
        PasswordHash::new(&hash).is_ok_and(|parsed| {
            Argon2::default()
                .verify_password(password.0.as_bytes(), &parsed)
                .is_ok()
        })
    })
    .await?;
    Ok(known && matches)
}

/// A session just started: the cookie's value and how long it lasts.
pub struct Started {
    pub id: SessionId,
    pub ttl_ms: i64,
}

/// Uses setup link `token`: its person becomes the owner of the default workspace, with a
/// password, and is signed in. `None` when the link is unknown, used or expired.
pub async fn complete_setup(
    state: &AppState,
    token: &str,
    account: NewAccount,
) -> Result<Option<Started>> {
    let settings = &state.settings.auth.local;
    let NewAccount {
        name,
        email,
        password,
    } = account;
    let password_hash = hash_password(password).await?;
    let subject = state
        .store
        .complete_setup(&NewOwner {
            token_hash: &token_hash(token),
            name: &name,
            email: &email,
            password_hash: &password_hash,
            workspace: DEFAULT_WORKSPACE,
            now: crate::clock::now_ms(),
        })
        .await?;
    let Some(subject) = subject else {
        return Ok(None);
    };
    tracing::info!(
        workspace = DEFAULT_WORKSPACE,
        "owner set up with a setup link"
    );
    let ttl_ms = settings.session_ms();
    let id = sessions::create(state, &subject, DEFAULT_WORKSPACE, ttl_ms).await?;
    Ok(Some(Started { id, ttl_ms }))
}

/// What a password sign-in came to.
pub enum SignInOutcome {
    Started(Started),
    /// A wrong password or an unknown email: the same to the caller.
    Refused,
    /// Too many failures from this address or for this account: tries are refused until
    /// this instant (epoch ms).
    Held {
        until: i64,
    },
}

/// Signs in `email` with `password`, from `address`, behind the password guard.
pub async fn sign_in_with_password(
    state: &AppState,
    email: &str,
    password: Password,
    address: Option<IpAddr>,
) -> Result<SignInOutcome> {
    let account = email.trim().to_lowercase();
    let now = state.clock.now_ms();
    if let Err(until) = state.password_guard.admit(address, &account, now) {
        state.metrics.refused(crate::metrics::Limit::AuthFailures);
        return Ok(SignInOutcome::Held { until });
    }
    let user = match normal_email(&account) {
        Some(email) => state.store.password_user(&email, DEFAULT_WORKSPACE).await?,
        None => None,
    };
    let hash = user.as_ref().map(|u| u.password_hash.clone());
    let (true, Some(user)) = (verify_password(password, hash).await?, user) else {
        tracing::debug!("password sign-in refused");
        return Ok(SignInOutcome::Refused);
    };
    state.password_guard.succeeded(address, &account, now);
    let ttl_ms = state.settings.auth.local.session_ms();
    let id = sessions::create(state, &user.subject, &user.workspace, ttl_ms).await?;
    Ok(SignInOutcome::Started(Started { id, ttl_ms }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dummy_hash_costs_what_a_real_one_does() {
        let dummy = PasswordHash::new(DUMMY_HASH).unwrap();
        let real = Argon2::default().hash_password(b"correct horse").unwrap();
        assert_eq!(dummy.algorithm, real.algorithm);
        assert_eq!(dummy.params, real.params);
        assert_eq!(dummy.version, real.version);
    }

    #[test]
    fn setup_form_rules() {
        let ok = |pw: &str| NewAccount::parse("Ann", "Ann@Example.test ", pw.into(), pw);
        let account = ok("twelve chars").unwrap();
        assert_eq!(account.email, "ann@example.test");
        assert!(ok("eleven char").is_err());
        assert!(ok(&"é".repeat(128)).is_ok());
        assert!(ok(&"é".repeat(129)).is_err());
        assert!(NewAccount::parse("Ann", "a@b", "twelve chars".into(), "twelve charz").is_err());
        assert!(NewAccount::parse(" ", "a@b", "twelve chars".into(), "twelve chars").is_err());
        for bad in ["", "ann", "@x", "a@", "a b@x", "a@b@c"] {
            assert!(normal_email(bad).is_none(), "{bad}");
        }
    }
}
