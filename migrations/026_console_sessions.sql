-- The support console's sign-in sessions (src/server/console/session-store.ts), shared by every
-- console replica, so a request may land on any of them and signing out on one ends the
-- session on all. The cookie carries a random token; only its SHA-256 is kept here, so a copy
-- of this table signs no one in. A session ends at sign-out (the row is deleted), after
-- CASEWORK_CONSOLE_IDLE_MINUTES without use (last_seen), or at expires_at, fixed at sign-in by
-- CASEWORK_CONSOLE_SESSION_HOURS however busy it is. The principal is what the key signed in
-- with may do (its label and grants), never the key. `flash` is the one message the next page
-- shows (what the last form did), cleared when shown.
CREATE TABLE IF NOT EXISTS console_sessions (
  token_sha256 bytea PRIMARY KEY CHECK (octet_length(token_sha256) = 32),
  principal jsonb NOT NULL,
  person text NOT NULL CHECK (length(person) BETWEEN 1 AND 100),
  created_at timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  flash jsonb,
  CHECK (expires_at > created_at)
);
-- Expired and idle sessions are swept at each sign-in; the index keeps the sweep cheap.
CREATE INDEX IF NOT EXISTS console_sessions_last_seen ON console_sessions (last_seen);
CREATE INDEX IF NOT EXISTS console_sessions_expires_at ON console_sessions (expires_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON console_sessions TO casework_app;
