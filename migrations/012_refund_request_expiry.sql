-- A refund request whose investigation ended without deciding it (terminated, abandoned) must
-- not wait for ever nor keep the order's amount spoken for. Every request now expires: after
-- expires_at it no longer reserves the amount, and the next request on the order marks it
-- 'expired'. Four days is past the workflow's own automatic denial (72 h by default), so a
-- live investigation always decides first.
ALTER TABLE refund_requests ADD COLUMN expires_at timestamptz NOT NULL DEFAULT (now() + interval '4 days');
UPDATE refund_requests SET expires_at = requested_at + interval '4 days';
ALTER TABLE refund_requests DROP CONSTRAINT refund_requests_status_check;
ALTER TABLE refund_requests ADD CONSTRAINT refund_requests_status_check
  CHECK (status IN ('awaiting_approval', 'approved', 'denied', 'refunded', 'expired'));
