-- Keys made over HTTP may expire.
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;

-- People signed in with an ID token, known by the token's `sub`.
CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    subject    TEXT NOT NULL UNIQUE,
    email      TEXT,
    created_at INTEGER NOT NULL
);

-- A user's role in a workspace: owner, editor, viewer or a custom role's name.
CREATE TABLE memberships (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    user_id      TEXT NOT NULL REFERENCES users (id),
    role         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);

-- Custom roles: a name and the scopes it grants (comma list, as api_keys.scopes).
CREATE TABLE roles (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, name)
);
