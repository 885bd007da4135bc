-- Refunds are paid through the payment provider (src/commerce/payment-provider.ts), exactly
-- once: casework reserves the refund in its ledger (refunds, under the order's lock), then asks
-- the provider with an idempotency key derived from the approval, and records the answer here.
-- The ledger's bounds hold against what the provider reports: its captured charges and its
-- refunds, as last read, sit beside the shop's own payment records, and every bound reads both.

-- What the provider answered for each refund casework paid: one row per casework refund, written
-- with the reservation ('sending', the charge and key chosen once, so every retry sends the very
-- same request) and moved along by the provider's answer and its webhook events.
CREATE TABLE refund_payouts (
  refund_id            text PRIMARY KEY REFERENCES refunds (refund_id),
  customer_id          text NOT NULL,
  provider             text NOT NULL,
  idempotency_key      text NOT NULL UNIQUE,
  charge_id            text NOT NULL,
  reason               text NOT NULL,
  status               text NOT NULL
                       CHECK (status IN ('sending', 'pending', 'succeeded', 'failed', 'canceled', 'requires_action', 'refused')),
  provider_refund_id   text UNIQUE,
  -- the provider's words for a refusal or a failure
  failure_reason       text,
  sent_at              timestamptz NOT NULL DEFAULT now(),
  answered_at          timestamptz
);

-- The provider's charges and refunds of an order as it last reported them (read by get_payments,
-- request_refund and issue_refund): the ledger counts them beside the shop's payment records.
CREATE TABLE provider_charges (
  charge_id            text PRIMARY KEY,
  customer_id          text NOT NULL,
  order_id             text NOT NULL,
  provider             text NOT NULL,
  amount_cents         integer NOT NULL CHECK (amount_cents >= 0),
  currency             text NOT NULL,
  status               text NOT NULL CHECK (status IN ('captured', 'pending', 'failed')),
  refunded_cents       integer NOT NULL,
  created_at           timestamptz NOT NULL,
  reported_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX provider_charges_order ON provider_charges (order_id);

CREATE TABLE provider_refunds (
  refund_id            text PRIMARY KEY,
  customer_id          text NOT NULL,
  order_id             text NOT NULL,
  provider             text NOT NULL,
  charge_id            text,
  amount_cents         integer NOT NULL CHECK (amount_cents > 0),
  currency             text NOT NULL,
  status               text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled', 'requires_action')),
  failure_reason       text,
  -- set when the refund carries casework's refund id in its metadata: that same refund, counted once
  casework_refund_id   text,
  created_at           timestamptz NOT NULL,
  reported_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX provider_refunds_order ON provider_refunds (order_id);

-- The demo payment provider (src/commerce/demo/payments.ts): its charges are the shop's payment
-- records; its refunds are kept here as a provider keeps them, one per idempotency key.
CREATE TABLE demo_provider_refunds (
  refund_id            text PRIMARY KEY,
  customer_id          text NOT NULL,
  idempotency_key      text NOT NULL UNIQUE,
  -- the request's parameters: a key reused with others is refused, as a provider does
  params_hash          text NOT NULL,
  order_id             text NOT NULL,
  charge_id            text NOT NULL,
  amount_cents         integer NOT NULL CHECK (amount_cents > 0),
  currency             text NOT NULL,
  reason               text NOT NULL,
  status               text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
  metadata             jsonb NOT NULL DEFAULT '{}',
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX demo_provider_refunds_charge ON demo_provider_refunds (charge_id);

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['refund_payouts', 'provider_charges', 'provider_refunds', 'demo_provider_refunds']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY %I ON %I USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer())',
      t || '_own_customer', t);
  END LOOP;
END
$$;

-- A provider's webhook events, by the provider's event id: each is acted on once. No customer
-- data (ids and a type), and read before the customer is known, so outside row-level security.
CREATE TABLE provider_events (
  provider             text NOT NULL,
  event_id             text NOT NULL,
  type                 text NOT NULL,
  provider_refund_id   text,
  received_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);

-- Whose refund a provider refund is, for its webhook (which names no customer): the refund,
-- its customer and the investigation that asked for it, and nothing else.
CREATE FUNCTION casework_payout_of(p_provider text, p_provider_refund_id text, p_casework_refund_id text)
RETURNS TABLE (refund_id text, customer_id text, workflow_id text, request_id text, order_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT o.refund_id, o.customer_id, q.workflow_id, q.request_id, f.order_id
    FROM refund_payouts o
    JOIN refunds f ON f.refund_id = o.refund_id
    JOIN refund_requests q ON q.request_id = f.request_id
   WHERE o.provider = p_provider
     AND (o.provider_refund_id = p_provider_refund_id OR o.refund_id = p_casework_refund_id)
   LIMIT 1
$$;
REVOKE ALL ON FUNCTION casework_payout_of(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION casework_payout_of(text, text, text) TO casework_app;

-- The order's captured charges: the shop's payment records, and the provider's report of any
-- the records do not hold.
CREATE VIEW ledger_charges WITH (security_invoker = true) AS
  SELECT p.customer_id, p.order_id, p.processor_ref AS charge_id, p.amount_cents, p.created_at AS at, p.payment_id AS seq
    FROM payments p WHERE p.kind = 'charge' AND p.processor_code = 'CPT'
  UNION ALL
  SELECT c.customer_id, c.order_id, c.charge_id, c.amount_cents, c.created_at, c.charge_id
    FROM provider_charges c
   WHERE c.status = 'captured' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.kind = 'charge' AND p.processor_ref = c.charge_id);

-- The order's refunds that count: casework's (unless the provider refused or failed them:
-- nothing was returned), the shop's records of the processor's settled or pending refunds, and
-- the provider's report of refunds made outside casework. Each refund once.
CREATE VIEW ledger_refunds WITH (security_invoker = true) AS
  SELECT f.customer_id, f.order_id, f.refund_id, f.amount_cents, f.kind, f.charge_id, f.issued_at AS at, f.request_id
    FROM refunds f
   WHERE NOT EXISTS (SELECT 1 FROM refund_payouts o WHERE o.refund_id = f.refund_id AND o.status IN ('refused', 'failed', 'canceled'))
  UNION ALL
  SELECT p.customer_id, p.order_id, p.processor_ref, p.amount_cents, 'partial', NULL, p.created_at, NULL
    FROM payments p
   WHERE p.kind = 'refund' AND p.processor_code IN ('RFS', 'RFP')
     AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.refund_id = p.processor_ref)
  UNION ALL
  SELECT r.customer_id, r.order_id, r.refund_id, r.amount_cents, 'partial', NULL, r.created_at, NULL
    FROM provider_refunds r
   WHERE r.status IN ('pending', 'succeeded', 'requires_action')
     AND r.casework_refund_id IS NULL
     AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.refund_id = r.refund_id)
     AND NOT EXISTS (SELECT 1 FROM refund_payouts o WHERE o.provider_refund_id = r.refund_id)
     AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.kind = 'refund' AND p.processor_ref = r.refund_id);

-- The ledger's bounds (024_order_ledger.sql), now over both sources.
CREATE OR REPLACE FUNCTION refunds_within_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
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
  IF EXISTS (SELECT 1 FROM refunds WHERE approval_id = NEW.approval_id) THEN
    RETURN NEW;
  END IF;

  SELECT coalesce(sum(amount_cents), 0) INTO captured FROM ledger_charges WHERE order_id = NEW.order_id;
  SELECT coalesce(sum(amount_cents), 0) INTO refunded FROM ledger_refunds WHERE order_id = NEW.order_id;
  IF refunded + NEW.amount_cents > captured THEN
    RAISE EXCEPTION 'order % was captured % %, % is already refunded; a refund of % would exceed what was captured',
      NEW.order_id, captured, o.currency, refunded, NEW.amount_cents
      USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_captured';
  END IF;

  IF NEW.charge_id IS NOT NULL THEN
    SELECT amount_cents INTO charge_amount FROM ledger_charges WHERE order_id = NEW.order_id AND charge_id = NEW.charge_id;
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
    SELECT coalesce(sum(amount_cents), 0) INTO of_kind FROM ledger_refunds WHERE order_id = NEW.order_id AND kind = 'duplicate_charge';
    IF of_kind + NEW.amount_cents > greatest(0, captured - o.total_cents) THEN
      RAISE EXCEPTION 'order % of % % was captured %; duplicate-charge refunds of % would exceed the over-capture of %',
        NEW.order_id, o.total_cents, o.currency, captured, of_kind + NEW.amount_cents, greatest(0, captured - o.total_cents)
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_duplicate';
    END IF;
  ELSIF NEW.kind = 'not_received' THEN
    SELECT coalesce(sum(amount_cents), 0) INTO of_kind FROM ledger_refunds WHERE order_id = NEW.order_id AND kind = 'not_received';
    IF of_kind + NEW.amount_cents > least(o.total_cents, captured) THEN
      RAISE EXCEPTION 'order % paid % % for the goods; not-received refunds of % would exceed it',
        NEW.order_id, least(o.total_cents, captured), o.currency, of_kind + NEW.amount_cents
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_not_received';
    END IF;
  END IF;
  RETURN NEW;
END
$$;

-- The app records the provider's answers; it never deletes them. The demo provider's refunds
-- are written by the demo provider, which runs as the app.
GRANT SELECT, INSERT, UPDATE ON refund_payouts, provider_charges, provider_refunds TO casework_app;
GRANT SELECT, INSERT ON demo_provider_refunds TO casework_app;
GRANT SELECT, INSERT ON provider_events TO casework_app;
GRANT SELECT ON ledger_charges, ledger_refunds TO casework_app;
