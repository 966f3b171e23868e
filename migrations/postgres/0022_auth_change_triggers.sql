-- What counts in auth_changes (0021): written by whoever changes keys, memberships or roles.
CREATE FUNCTION corkboard_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE auth_changes SET n = n + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed
    AFTER UPDATE OF workspace_id, lookup, secret_hash, scopes, tier, revoked_at, expires_at,
        created_by OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION corkboard_auth_changed();

-- Row triggers: a sign-in's upsert that leaves its row as it was fires none.
CREATE TRIGGER memberships_changed
    AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION corkboard_auth_changed();

CREATE TRIGGER roles_changed
    AFTER INSERT OR UPDATE OR DELETE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION corkboard_auth_changed();
