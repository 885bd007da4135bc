-- The model's answers to history-by-reference calls (an investigation step's reply, a
-- compaction's notes), kept once they are paid for (src/db/transcript-log.ts, keepReply).
-- Keyed by the activity that asked: the investigation's workflow id, the run and the activity
-- id, which every retry of that model call shares and no other call has (a new run, whether
-- recovered, reopened or continued as new, has a new run id). A retry whose completion was
-- lost (its worker died after the answer was kept) returns the kept answer instead of asking,
-- and paying, the model again. `reply_seq` is the entry number in transcript_log where a
-- reply's blocks start or a compaction's notes go. `body` is the whole answer (a reply's
-- content, stop reason and usage; a compaction's notes and usage) after the payload codec:
-- ciphertext, as in transcript_log.
CREATE TABLE IF NOT EXISTS model_replies (
  workflow_id text NOT NULL,
  run_id text NOT NULL,
  activity_id text NOT NULL,
  reply_seq integer NOT NULL CHECK (reply_seq > 0),
  body bytea NOT NULL,
  -- SHA-256 of body (hex), checked on every read.
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, run_id, activity_id)
);
-- Written once and read, like the transcript log; only an operator's retention job deletes them.
GRANT SELECT, INSERT ON model_replies TO casework_app;
