-- Payloads stored by reference instead of in Temporal history (the SDK's External Storage,
-- src/temporal/storage/postgres-driver.ts). Content-addressed: the key is the SHA-256 of the
-- stored bytes, so a retried task or a replay writes nothing twice. The bytes are the payload
-- after the encryption codec: ciphertext, never customer text. A retention job may delete blobs
-- whose last_stored_at is older than the namespace's retention plus the longest run: storing
-- equal bytes again refreshes last_stored_at (at most once an hour), so a blob a newer run
-- still references is never taken for stale.
CREATE TABLE IF NOT EXISTS payload_blobs (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes bytea NOT NULL,
  size_bytes integer NOT NULL CHECK (size_bytes = octet_length(bytes)),
  -- Who wrote it first, for retention and erasure; a blob shared by equal payloads keeps the first.
  namespace text,
  workflow_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_stored_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS payload_blobs_workflow ON payload_blobs (workflow_id);
CREATE INDEX IF NOT EXISTS payload_blobs_last_stored ON payload_blobs (last_stored_at);
-- Blobs are written once and read; only an operator's retention job deletes them.
GRANT SELECT, INSERT, UPDATE (last_stored_at) ON payload_blobs TO casework_app;
