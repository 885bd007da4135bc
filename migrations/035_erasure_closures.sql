-- The investigations an erasure closed first (src/client/erasure-closing.ts; docs/payload-privacy.md,
-- "Erasure"). A running investigation must still replay and read its own conversation, so an
-- erasure closes each of the customer's open cases through the ticket's close, waits until the
-- run has ended, withdraws a refund still pending, tells the customer and the team on the desk,
-- and only then erases. One row per run it asked to close: an erasure retried after a run that
-- was slow to end, a crash or a desk outage finishes telling exactly those runs. Identifiers only.
CREATE TABLE erasure_closures (
  workflow_id  text NOT NULL CHECK (char_length(workflow_id) BETWEEN 1 AND 300),
  run_id       text NOT NULL CHECK (char_length(run_id) BETWEEN 1 AND 100),
  customer_id  text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  requested_by text NOT NULL CHECK (char_length(requested_by) BETWEEN 1 AND 200),
  requested_at timestamptz NOT NULL DEFAULT now(),
  -- Set once the run has ended, its refund withdrawn and the desk told.
  told_at      timestamptz,
  PRIMARY KEY (workflow_id, run_id)
);
CREATE INDEX erasure_closures_untold ON erasure_closures (customer_id) WHERE told_at IS NULL;
GRANT SELECT, INSERT, UPDATE (told_at) ON erasure_closures TO casework_app;
