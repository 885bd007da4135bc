-- Money-moving MCP tool calls (docs/mcp.md): the model's request, a person's decision, and the
-- call itself, recorded before it is made and after it answers. As with refunds, the database is
-- the last line of defence: no call row without a recorded approval of that very request, and at
-- most one call row per approval.

CREATE TABLE mcp_call_requests (
  request_id           text PRIMARY KEY,
  customer_id          text NOT NULL,
  workflow_id          text NOT NULL,
  tool_use_id          text NOT NULL,
  -- the name the model called (mcp_<server>_<tool>), the server and its own tool name
  tool                 text NOT NULL,
  server               text NOT NULL,
  server_tool          text NOT NULL,
  arguments            jsonb NOT NULL,
  amount_cents         integer CHECK (amount_cents IS NULL OR amount_cents >= 0),
  requested_at         timestamptz NOT NULL DEFAULT now(),
  status               text NOT NULL DEFAULT 'awaiting_approval'
                       CHECK (status IN ('awaiting_approval', 'approved', 'denied', 'called', 'failed', 'unknown')),
  UNIQUE (customer_id, request_id),
  -- a retried request carries the same tool_use id: one request per model call
  UNIQUE (workflow_id, tool_use_id)
);

-- One decision per request, first wins; only an approval has an approval_id.
CREATE TABLE mcp_call_decisions (
  request_id           text PRIMARY KEY,
  customer_id          text NOT NULL,
  decision             text NOT NULL CHECK (decision IN ('approved', 'denied')),
  approver             text NOT NULL,
  decided_by           text,
  decided_via          text,
  reason               text,
  decided_at           timestamptz NOT NULL,
  approval_id          text UNIQUE,
  CHECK ((decision = 'approved') = (approval_id IS NOT NULL)),
  FOREIGN KEY (customer_id, request_id) REFERENCES mcp_call_requests (customer_id, request_id),
  UNIQUE (request_id, approval_id)
);

-- Written before the server is called (outcome NULL: in flight) and completed after it answers.
-- approval_id is the key: an approval calls the server at most once, and a retry that finds the
-- call in flight repeats it only with the same idempotency key, or reports it unknown.
CREATE TABLE mcp_calls (
  approval_id          text PRIMARY KEY REFERENCES mcp_call_decisions (approval_id),
  customer_id          text NOT NULL,
  request_id           text NOT NULL,
  idempotency_key      text NOT NULL UNIQUE,
  attempts             integer NOT NULL DEFAULT 1 CHECK (attempts >= 1),
  started_at           timestamptz NOT NULL DEFAULT now(),
  outcome              text CHECK (outcome IN ('succeeded', 'failed', 'unknown')),
  result               text,
  finished_at          timestamptz,
  CHECK ((outcome IS NULL) = (finished_at IS NULL)),
  FOREIGN KEY (customer_id, request_id) REFERENCES mcp_call_requests (customer_id, request_id),
  FOREIGN KEY (request_id, approval_id) REFERENCES mcp_call_decisions (request_id, approval_id)
);

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['mcp_call_requests', 'mcp_call_decisions', 'mcp_calls']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY %I ON %I USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer())',
      t || '_own_customer', t);
  END LOOP;
END
$$;

-- Requests move their status along and calls are completed; a decision is never rewritten.
GRANT SELECT, INSERT, UPDATE ON mcp_call_requests, mcp_calls TO casework_app;
GRANT SELECT, INSERT ON mcp_call_decisions TO casework_app;
