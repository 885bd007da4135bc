-- Every payload of an investigation's Temporal history, stored by reference under the
-- customer's own data key (src/temporal/storage/customer-driver.ts), and the role retention
-- deletes as (src/db/retention.ts, docs/operations.md, "Retention").
--
-- The history of `investigation-<ticketId>` holds only references (driver casework-customer,
-- the SHA-256 of the stored bytes); the bytes are the payload (already encrypted under the
-- deployment key) encrypted again under the ticket owner's data key (customer_keys, migration
-- 029). Erasing the customer destroys that key, so the signals, inputs, results, previews and
-- failures of their investigations can be decrypted by no one, while the history stays a valid,
-- immutable record and every other customer's history still decodes and replays.
CREATE TABLE customer_payloads (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  -- The ticket's owner, whose key the bytes are under; NULL for an investigation started
  -- without the gate (no owner recorded), whose payloads stay under the deployment key alone.
  customer_id text CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  bytes bytea NOT NULL,
  size_bytes integer NOT NULL CHECK (size_bytes = octet_length(bytes)),
  -- The investigation that stored it first (retention keys on it, with last_stored_at).
  workflow_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_stored_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_payloads_customer ON customer_payloads (customer_id);
CREATE INDEX customer_payloads_last_stored ON customer_payloads (last_stored_at);
-- Written once and read, refreshed when stored again; only retention deletes them.
GRANT SELECT, INSERT, UPDATE (last_stored_at) ON customer_payloads TO casework_app;

-- Retention deletes as its own role: casework_app may not delete content, this role may
-- delete it and do nothing else. Memory of closed cases is under row-level security, so the
-- role gets policies of its own there (read and delete any customer's old cases, never write).
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'casework_retention') THEN
    CREATE ROLE casework_retention NOLOGIN;
  END IF;
END
$$;
GRANT casework_retention TO CURRENT_USER;
GRANT USAGE ON SCHEMA public TO casework_retention;
GRANT SELECT (workflow_id, seq, created_at), DELETE ON transcript_log TO casework_retention;
GRANT SELECT (workflow_id, run_id, activity_id, created_at), DELETE ON model_replies TO casework_retention;
GRANT SELECT (sha256, last_stored_at), DELETE ON payload_blobs TO casework_retention;
GRANT SELECT (sha256, customer_id, workflow_id, last_stored_at), DELETE ON customer_payloads TO casework_retention;
GRANT SELECT (case_id, customer_id, closed_on), DELETE ON memory_cases TO casework_retention;
CREATE POLICY memory_cases_retention_read ON memory_cases FOR SELECT TO casework_retention USING (true);
CREATE POLICY memory_cases_retention_delete ON memory_cases FOR DELETE TO casework_retention USING (true);
CREATE INDEX IF NOT EXISTS transcript_log_created ON transcript_log (created_at);
CREATE INDEX IF NOT EXISTS model_replies_created ON model_replies (created_at);
