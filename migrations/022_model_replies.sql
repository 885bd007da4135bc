-- The model's replies to history-by-reference steps, kept once they are paid for
-- (src/db/transcript-log.ts, TranscriptLog.keepReply). Keyed by the activity that asked: the
-- investigation's workflow id, the run and the activity id, which every retry of that model
-- call shares and no other call has (a new run, recovered, reopened or continued as new, has a
-- new run id). A retry whose completion was lost (its worker died after the reply was kept)
-- returns the kept reply instead of asking, and paying, the model again. `reply_seq` is the
-- entry number its blocks start at in transcript_log. `body` is the whole reply (content,
-- stop reason, usage) after the payload codec: ciphertext, as in transcript_log.
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
