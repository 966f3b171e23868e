-- Local accounts (CONTRACT.md 16): a user may have a display name and a password, kept only
-- as an Argon2id PHC string. Users of an identity provider have neither (both NULL).
ALTER TABLE users ADD COLUMN name TEXT;
ALTER TABLE users ADD COLUMN password_hash TEXT;
-- One password account per email (stored lower-case): sign-in finds it by email.
CREATE UNIQUE INDEX users_local_email ON users (email) WHERE password_hash IS NOT NULL;

-- Setup links (<public_url>/setup/<token>): only the SHA-256 of a link's token. Making a
-- link removes the older ones, and using it removes it: at most one works at a time.
CREATE TABLE setup_tokens (
    token_hash TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
