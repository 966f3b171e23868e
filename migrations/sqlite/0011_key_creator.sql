-- The user who made a key over the API (or whose key made it): the key never does more
-- than that user's current role in its workspace allows. NULL for keys made with the CLI.
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
