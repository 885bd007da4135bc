-- One money ledger per order, enforced here whatever the caller (the model's tools, a person,
-- a payment provider reporting refunds later): an order's refunds never exceed what was
-- captured on it; refunds for a duplicate charge never exceed the over-capture (captured minus
-- the order's total); refunds for goods not received never exceed what was paid for the goods;
-- and a charge is reversed at most once. A refund names its kind and the charge it reverses, or
-- only the order for a goodwill or partial refund. Amounts carry the order's currency.
--
-- Why a trigger with a row lock: the bounds are sums over many rows, which no CHECK or UNIQUE
-- can express, and a serializable transaction would make every caller retry on conflicts it
-- did not cause. The trigger locks the order's ledger row (SELECT … FOR UPDATE) before it sums,
-- so two refunds of one order racing from two workers run the check one after the other, and
-- the second sees the first (READ COMMITTED takes a fresh snapshot per statement after the
-- lock). "A charge is reversed at most once" is also a plain unique index, which holds even
-- against a caller that bypasses the trigger's sums.

-- The row every refund of an order locks. The app cannot lock orders (it may only read them).
CREATE TABLE order_ledgers (
  order_id             text PRIMARY KEY,
  customer_id          text NOT NULL,
  currency             text NOT NULL,
  opened_at            timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, order_id)
);

ALTER TABLE refund_requests
  ADD COLUMN currency text,
  ADD COLUMN kind text NOT NULL DEFAULT 'partial' CHECK (kind IN ('duplicate_charge', 'not_received', 'goodwill', 'partial')),
  -- the charge's processor reference (ch_…), for the kinds that reverse one charge
  ADD COLUMN charge_id text,
  -- other requests pending on the same money when this one was filed: flagged on the request itself
  ADD COLUMN overlapping_requests text[] NOT NULL DEFAULT '{}';

-- An approval the ledger could not honour ends 'refused': nothing paid, and it no longer holds money.
ALTER TABLE refund_requests DROP CONSTRAINT refund_requests_status_check;
ALTER TABLE refund_requests ADD CONSTRAINT refund_requests_status_check
  CHECK (status IN ('awaiting_approval', 'approved', 'denied', 'refunded', 'expired', 'refused'));

ALTER TABLE refunds
  ADD COLUMN currency text,
  ADD COLUMN kind text CHECK (kind IN ('duplicate_charge', 'not_received', 'goodwill', 'partial')),
  ADD COLUMN charge_id text;

-- Who decided, as the person typed it at sign-in (approver is the name the limits are checked
-- against), and through what (the console key's label, the CLI, the HTTP API).
ALTER TABLE refund_decisions
  ADD COLUMN decided_by text,
  ADD COLUMN decided_via text;

-- Back-fill. Currency: the order's. Kind and charge, where the trail shows them: a request whose
-- reason speaks of a double charge, on an order with two captures of its amount, reverses the
-- later capture; one whose reason speaks of goods not received, on an order with one capture,
-- reverses that capture. Anything else stays an order-level (partial) refund.
UPDATE refund_requests r SET currency = o.currency FROM orders o WHERE o.order_id = r.order_id;
UPDATE refund_requests r
   SET kind = 'duplicate_charge',
       charge_id = (SELECT p.processor_ref FROM payments p
                     WHERE p.order_id = r.order_id AND p.kind = 'charge' AND p.processor_code = 'CPT' AND p.amount_cents = r.amount_cents
                     ORDER BY p.created_at DESC, p.payment_id DESC LIMIT 1)
 WHERE r.reason ~* '(duplicate|twice|double)'
   AND (SELECT count(*) FROM payments p
         WHERE p.order_id = r.order_id AND p.kind = 'charge' AND p.processor_code = 'CPT' AND p.amount_cents = r.amount_cents) >= 2;
UPDATE refund_requests r
   SET kind = 'not_received',
       charge_id = (SELECT p.processor_ref FROM payments p WHERE p.order_id = r.order_id AND p.kind = 'charge' AND p.processor_code = 'CPT')
 WHERE r.kind = 'partial'
   AND r.reason ~* '(not received|never arrived|not delivered|marked delivered|missing parcel)'
   AND (SELECT count(*) FROM payments p WHERE p.order_id = r.order_id AND p.kind = 'charge' AND p.processor_code = 'CPT') = 1
   AND r.amount_cents <= (SELECT p.amount_cents FROM payments p WHERE p.order_id = r.order_id AND p.kind = 'charge' AND p.processor_code = 'CPT');
ALTER TABLE refund_requests ALTER COLUMN currency SET NOT NULL;

-- A refund takes its kind from its request; its charge too, unless an earlier refund already
-- reversed that charge (a trail from before this ledger may hold two): that one keeps it, this
-- one is recorded against the order, so existing trails stay valid.
UPDATE refunds f SET currency = r.currency, kind = r.kind FROM refund_requests r WHERE r.request_id = f.request_id;
UPDATE refunds f SET charge_id = first.charge_id
  FROM (SELECT DISTINCT ON (r.charge_id) f2.refund_id, r.charge_id
          FROM refunds f2 JOIN refund_requests r ON r.request_id = f2.request_id
         WHERE r.charge_id IS NOT NULL
         ORDER BY r.charge_id, f2.issued_at, f2.refund_id) first
 WHERE first.refund_id = f.refund_id;
UPDATE refunds SET kind = 'partial' WHERE charge_id IS NULL AND kind IN ('duplicate_charge', 'not_received');
ALTER TABLE refunds ALTER COLUMN currency SET NOT NULL, ALTER COLUMN kind SET NOT NULL;
INSERT INTO order_ledgers (order_id, customer_id, currency)
  SELECT DISTINCT o.order_id, o.customer_id, o.currency FROM orders o JOIN refund_requests r ON r.order_id = o.order_id
  ON CONFLICT DO NOTHING;

-- A charge is reversed at most once.
CREATE UNIQUE INDEX refunds_one_per_charge ON refunds (charge_id) WHERE charge_id IS NOT NULL;
CREATE INDEX refund_requests_order ON refund_requests (order_id, status);
CREATE INDEX refunds_order ON refunds (order_id);

-- A request carries the order's currency; one naming another currency is refused.
CREATE FUNCTION refund_requests_currency() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  order_currency text;
BEGIN
  SELECT currency INTO order_currency FROM orders WHERE order_id = NEW.order_id AND customer_id = NEW.customer_id;
  IF NEW.currency IS NULL THEN
    NEW.currency := order_currency;
  ELSIF NEW.currency <> order_currency THEN
    RAISE EXCEPTION 'refund request in % on order % charged in %', NEW.currency, NEW.order_id, order_currency
      USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_currency';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER refund_requests_currency BEFORE INSERT ON refund_requests FOR EACH ROW EXECUTE FUNCTION refund_requests_currency();

-- The bounds, checked under the order's lock before any refund row is written.
CREATE FUNCTION refunds_within_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  o record;
  req record;
  charge_amount bigint;
  captured bigint;
  refunded bigint;
  of_kind bigint;
BEGIN
  SELECT currency, total_cents INTO o FROM orders WHERE order_id = NEW.order_id AND customer_id = NEW.customer_id;
  SELECT kind, charge_id, currency INTO req FROM refund_requests WHERE request_id = NEW.request_id AND customer_id = NEW.customer_id;
  NEW.kind := coalesce(req.kind, NEW.kind, 'partial');
  NEW.charge_id := coalesce(req.charge_id, NEW.charge_id);
  NEW.currency := coalesce(NEW.currency, o.currency);
  IF NEW.currency <> o.currency THEN
    RAISE EXCEPTION 'refund in % on order % charged in %', NEW.currency, NEW.order_id, o.currency
      USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_currency';
  END IF;

  INSERT INTO order_ledgers (order_id, customer_id, currency) VALUES (NEW.order_id, NEW.customer_id, o.currency) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM order_ledgers WHERE order_id = NEW.order_id FOR UPDATE;
  -- A retried payment of the same approval is left to ON CONFLICT: it is not a second refund.
  IF EXISTS (SELECT 1 FROM refunds WHERE approval_id = NEW.approval_id) THEN
    RETURN NEW;
  END IF;

  SELECT coalesce(sum(amount_cents), 0) INTO captured FROM payments
   WHERE order_id = NEW.order_id AND kind = 'charge' AND processor_code = 'CPT';
  SELECT coalesce(sum(amount_cents), 0) INTO refunded FROM (
    SELECT amount_cents FROM refunds WHERE order_id = NEW.order_id
    UNION ALL
    SELECT p.amount_cents FROM payments p
     WHERE p.order_id = NEW.order_id AND p.kind = 'refund' AND p.processor_code IN ('RFS', 'RFP')
       AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.refund_id = p.processor_ref)
  ) counted;
  IF refunded + NEW.amount_cents > captured THEN
    RAISE EXCEPTION 'order % was captured % %, % is already refunded; a refund of % would exceed what was captured',
      NEW.order_id, captured, o.currency, refunded, NEW.amount_cents
      USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_captured';
  END IF;

  IF NEW.charge_id IS NOT NULL THEN
    SELECT amount_cents INTO charge_amount FROM payments
     WHERE order_id = NEW.order_id AND kind = 'charge' AND processor_code = 'CPT' AND processor_ref = NEW.charge_id;
    IF charge_amount IS NULL THEN
      RAISE EXCEPTION 'charge % is not a captured charge of order %', NEW.charge_id, NEW.order_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_charge';
    END IF;
    IF NEW.amount_cents > charge_amount THEN
      RAISE EXCEPTION 'charge % of order % was %; a refund of % would exceed it', NEW.charge_id, NEW.order_id, charge_amount, NEW.amount_cents
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_charge';
    END IF;
    IF EXISTS (SELECT 1 FROM refunds WHERE charge_id = NEW.charge_id) THEN
      RAISE EXCEPTION 'charge % of order % is already refunded; a charge is reversed at most once', NEW.charge_id, NEW.order_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_charge_once';
    END IF;
  END IF;

  IF NEW.kind = 'duplicate_charge' THEN
    SELECT coalesce(sum(amount_cents), 0) INTO of_kind FROM refunds WHERE order_id = NEW.order_id AND kind = 'duplicate_charge';
    IF of_kind + NEW.amount_cents > greatest(0, captured - o.total_cents) THEN
      RAISE EXCEPTION 'order % of % % was captured %; duplicate-charge refunds of % would exceed the over-capture of %',
        NEW.order_id, o.total_cents, o.currency, captured, of_kind + NEW.amount_cents, greatest(0, captured - o.total_cents)
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_duplicate';
    END IF;
  ELSIF NEW.kind = 'not_received' THEN
    SELECT coalesce(sum(amount_cents), 0) INTO of_kind FROM refunds WHERE order_id = NEW.order_id AND kind = 'not_received';
    IF of_kind + NEW.amount_cents > least(o.total_cents, captured) THEN
      RAISE EXCEPTION 'order % paid % % for the goods; not-received refunds of % would exceed it',
        NEW.order_id, least(o.total_cents, captured), o.currency, of_kind + NEW.amount_cents
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_not_received';
    END IF;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER refunds_within_ledger BEFORE INSERT ON refunds FOR EACH ROW EXECUTE FUNCTION refunds_within_ledger();

ALTER TABLE order_ledgers ENABLE ROW LEVEL SECURITY;
ALTER TABLE order_ledgers FORCE ROW LEVEL SECURITY;
CREATE POLICY order_ledgers_own_customer ON order_ledgers
  USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer());
-- UPDATE only so the trigger may lock the row (FOR UPDATE needs it); nothing rewrites a ledger row.
GRANT SELECT, INSERT, UPDATE ON order_ledgers TO casework_app;
