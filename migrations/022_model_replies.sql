-- The model's replies to history-by-reference steps, kept once they are paid for
-- (src/db/transcript-log.ts, TranscriptLog.keepReply). Keyed like the transcript log: the
-- investigation's workflow id and the entry number the reply's blocks start at (the step
-- plan's replySeq), which no other step of the investigation uses. A retry of the model
-- activity whose completion was lost (its worker died after the reply was written) returns
-- the kept reply instead of asking, and paying, the model again. `body` is the whole reply
-- (content, stop reason, usage) after the payload codec: ciphertext, as in transcript_log.
CREATE TABLE IF NOT EXISTS model_replies (
  workflow_id text NOT NULL,
  reply_seq integer NOT NULL CHECK (reply_seq > 0),
  body bytea NOT NULL,
  -- SHA-256 of body (hex), checked on every read.
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, reply_seq)
);
-- Written once and read, like the transcript log; only an operator's retention job deletes them.
GRANT SELECT, INSERT ON model_replies TO casework_app;
