-- Web sign-in sessions (CONTRACT.md 13): the cookie holds a random id, the store only its
-- SHA-256. The user is named by subject and workspace name, as an ID token names them, so
-- each request sees the membership's current role.
CREATE TABLE web_sessions (
    id_hash    TEXT PRIMARY KEY,
    subject    TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);
