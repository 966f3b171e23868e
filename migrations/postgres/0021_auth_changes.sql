-- API keys' principals are kept between requests (src/auth/key_cache.rs). Every change that
-- could alter one, whoever makes it (any replica, the CLI, psql), counts here in its own
-- transaction: a key's revocation or power, a membership, a role. Each request's rate-limit
-- statement reads the count, and a kept principal is used only while it stands. A key's
-- `last_used_at` (written once a minute per key) is not such a change.
CREATE TABLE auth_changes (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    n BIGINT NOT NULL
);
INSERT INTO auth_changes (n) VALUES (0);
