-- The refund trail casework writes: a request the model files, the human decision recorded by
-- the workflow, and the refund paid on that approval. The constraints are the last line of
-- defence: the database cannot hold a refund without a recorded approval of that very request,
-- and an approval pays out at most once.

CREATE TABLE refund_requests (
  request_id           text PRIMARY KEY,
  customer_id          text NOT NULL,
  order_id             text NOT NULL,
  amount_cents         integer NOT NULL CHECK (amount_cents > 0),
  reason               text NOT NULL,
  workflow_id          text NOT NULL,
  -- a retried request_refund activity carries the same tool_use id: one request per model call
  tool_use_id          text NOT NULL,
  requested_at         timestamptz NOT NULL DEFAULT now(),
  status               text NOT NULL DEFAULT 'awaiting_approval'
                       CHECK (status IN ('awaiting_approval', 'approved', 'denied', 'refunded')),
  FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, order_id),
  UNIQUE (customer_id, request_id),
  -- scoped to the workflow: tool_use ids are unique per model call, not across every model
  -- (the offline investigator derives them from the conversation, so two tickets can share one)
  UNIQUE (workflow_id, tool_use_id)
);

-- Written by the workflow on behalf of a human approver; one decision per request, first wins.
-- Only an approval has an approval_id, so a refund (which must name one) can never rest on a denial.
CREATE TABLE refund_decisions (
  request_id           text PRIMARY KEY,
  customer_id          text NOT NULL,
  decision             text NOT NULL CHECK (decision IN ('approved', 'denied')),
  approver             text NOT NULL,
  reason               text,
  decided_at           timestamptz NOT NULL,
  approval_id          text UNIQUE,
  CHECK ((decision = 'approved') = (approval_id IS NOT NULL)),
  FOREIGN KEY (customer_id, request_id) REFERENCES refund_requests (customer_id, request_id),
  UNIQUE (request_id, approval_id)
);

-- approval_id UNIQUE: an approval pays out at most once, however often issue_refund retries.
CREATE TABLE refunds (
  refund_id            text PRIMARY KEY,
  customer_id          text NOT NULL,
  approval_id          text NOT NULL UNIQUE REFERENCES refund_decisions (approval_id),
  request_id           text NOT NULL,
  order_id             text NOT NULL,
  amount_cents         integer NOT NULL CHECK (amount_cents > 0),
  issued_at            timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (customer_id, request_id) REFERENCES refund_requests (customer_id, request_id),
  -- the approval must be the one recorded for this very request
  FOREIGN KEY (request_id, approval_id) REFERENCES refund_decisions (request_id, approval_id)
);

-- Row-level security, as for the shop's records (002_shop.sql).
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['refund_requests', 'refund_decisions', 'refunds']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY %I ON %I USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer())',
      t || '_own_customer', t);
  END LOOP;
END
$$;

-- The app may only append to the refund trail (plus move a request's status along); it can
-- never rewrite a decision or a refund.
GRANT SELECT, INSERT, UPDATE ON refund_requests TO casework_app;
GRANT SELECT, INSERT ON refund_decisions, refunds TO casework_app;
