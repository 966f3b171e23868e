-- Invitations to a workspace (CONTRACT.md 16): an email and the role its person joins with.
-- Only the SHA-256 of the link's token is kept; accepting or revoking removes the row, so a
-- link works once. One live invitation per email and workspace.
CREATE TABLE invitations (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    email        TEXT NOT NULL,
    role         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    invited_by   TEXT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    UNIQUE (workspace_id, email)
);

-- Board collaborators invited by an email that has no user yet: bound (moved into
-- collaborators) at the first sign-in of a user with that email. Go with the board.
CREATE TABLE pending_collaborators (
    pinboard_id TEXT NOT NULL REFERENCES pinboards (id) ON DELETE CASCADE,
    email       TEXT NOT NULL,
    role        TEXT NOT NULL,
    added_at    BIGINT NOT NULL,
    PRIMARY KEY (pinboard_id, email)
);
CREATE INDEX pending_collaborators_email ON pending_collaborators (email);
