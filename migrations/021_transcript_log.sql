-- The transcript log: every entry of an investigation's conversation, written once, in order
-- (src/db/transcript-log.ts). Keyed by the investigation's workflow id, which is the same in
-- every run of it (continue-as-new), and the entry's number in the investigation. The workflow
-- keeps only a lean skeleton of the live tail and sends the model activity a plan naming
-- entries; the activity reads their bodies here. `body` is the entry after the payload codec:
-- ciphertext under the same keys and rotation as Temporal payloads, never customer text.
-- Writes are idempotent: the same entry again writes nothing; a different body for a key
-- already written is refused, naming it.
CREATE TABLE IF NOT EXISTS transcript_log (
  workflow_id text NOT NULL,
  seq integer NOT NULL CHECK (seq > 0),
  -- message: a content block of the conversation (role says whose); memory, agent_notes,
  -- case_notes: a version of a context block; step: a step record moved out of the carried state.
  kind text NOT NULL CHECK (kind IN ('message', 'memory', 'agent_notes', 'case_notes', 'step')),
  role text CHECK (role IN ('user', 'assistant', 'system')),
  body bytea NOT NULL,
  -- SHA-256 of body (hex), checked on every read.
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  -- The offline estimate of the tokens the entry's text carries.
  tokens integer NOT NULL CHECK (tokens >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, seq),
  CHECK ((kind = 'message') = (role IS NOT NULL))
);
-- Entries are written once and read; only an operator's retention job deletes them.
GRANT SELECT, INSERT ON transcript_log TO casework_app;
