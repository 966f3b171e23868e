-- Inbound hooks (CONTRACT.md 14): a url whose token lets a sender with no credential write
-- one dataset of the workspace. The token is kept as a lookup handle (its first characters,
-- indexed) and the SHA-256 of the whole, as API keys are. The signature secret is kept as
-- given: checking an HMAC needs it. seq orders them for keyset pages.
CREATE TABLE hooks (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY,
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    name             TEXT NOT NULL,
    dataset          TEXT NOT NULL,
    mode             TEXT NOT NULL,
    max_items        BIGINT NOT NULL,
    lookup           TEXT NOT NULL UNIQUE,
    token_hash       TEXT NOT NULL,
    signature_scheme TEXT,
    signature_secret TEXT,
    created_at       BIGINT NOT NULL
);
CREATE INDEX hooks_workspace_seq ON hooks (workspace_id, seq DESC);
