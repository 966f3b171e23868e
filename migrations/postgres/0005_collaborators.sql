-- A user's role on one board, whatever their own workspace. Goes with the board.
CREATE TABLE collaborators (
    pinboard_id TEXT NOT NULL REFERENCES pinboards (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id),
    role        TEXT NOT NULL,
    added_at    BIGINT NOT NULL,
    PRIMARY KEY (pinboard_id, user_id)
);
CREATE INDEX collaborators_user ON collaborators (user_id);
