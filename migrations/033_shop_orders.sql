-- Refunds on any shop's orders. The refund trail and the order ledger named their orders by
-- foreign keys to the demo shop's `orders` table, so an order that lives in Shopify could not be
-- refunded. Now they name the order as the commerce port gives it (the shop's order id), and the
-- ledger reads the order's currency and total from `shop_orders`: what the port last reported of
-- each order a tool read, written by the tools before they request or pay a refund. The demo
-- shop's own records still count for its orders (a demo order with no report reads from
-- `orders`, as before), so the demo path is unchanged. The bounds themselves are those of
-- 024_order_ledger.sql and 030_payment_provider.sql, now over `ledger_orders`; a charge's refund
-- is also bounded by what the provider reports already refunded on it.

CREATE TABLE shop_orders (
  order_id             text PRIMARY KEY,
  customer_id          text NOT NULL,
  -- the adapter that reported it (CASEWORK_SHOP: demo, shopify)
  shop                 text NOT NULL,
  currency             text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  total_cents          integer NOT NULL CHECK (total_cents >= 0),
  reported_at          timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE shop_orders ENABLE ROW LEVEL SECURITY;
ALTER TABLE shop_orders FORCE ROW LEVEL SECURITY;
CREATE POLICY shop_orders_own_customer ON shop_orders
  USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer());
GRANT SELECT, INSERT, UPDATE ON shop_orders TO casework_app;

-- Every order the ledger knows: the port's last report, else the demo shop's own record.
CREATE VIEW ledger_orders WITH (security_invoker = true) AS
  SELECT s.customer_id, s.order_id, s.currency, s.total_cents FROM shop_orders s
  UNION ALL
  SELECT o.customer_id, o.order_id, o.currency, o.total_cents FROM orders o
   WHERE NOT EXISTS (SELECT 1 FROM shop_orders s WHERE s.order_id = o.order_id);
GRANT SELECT ON ledger_orders TO casework_app;

-- The orders the trail already names keep a row of their own, so they no longer depend on the
-- demo table.
INSERT INTO shop_orders (order_id, customer_id, shop, currency, total_cents)
  SELECT o.order_id, o.customer_id, 'demo', o.currency, o.total_cents FROM orders o
   WHERE EXISTS (SELECT 1 FROM refund_requests r WHERE r.order_id = o.order_id)
      OR EXISTS (SELECT 1 FROM order_ledgers l WHERE l.order_id = o.order_id)
  ON CONFLICT DO NOTHING;

-- The trail and the ledger name orders through shop_orders, whatever shop holds them.
ALTER TABLE refund_requests DROP CONSTRAINT refund_requests_customer_id_order_id_fkey;
ALTER TABLE order_ledgers DROP CONSTRAINT order_ledgers_customer_id_order_id_fkey;

-- A request names an order the ledger knows, of its customer, and carries the order's currency.
CREATE OR REPLACE FUNCTION refund_requests_currency() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  order_currency text;
BEGIN
  SELECT currency INTO order_currency FROM ledger_orders WHERE order_id = NEW.order_id AND customer_id = NEW.customer_id;
  IF order_currency IS NULL THEN
    RAISE EXCEPTION 'refund request on order % which no shop reported for customer %', NEW.order_id, NEW.customer_id
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'refund_requests_order';
  END IF;
  IF NEW.currency IS NULL THEN
    NEW.currency := order_currency;
  ELSIF NEW.currency <> order_currency THEN
    RAISE EXCEPTION 'refund request in % on order % charged in %', NEW.currency, NEW.order_id, order_currency
      USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_currency';
  END IF;
  RETURN NEW;
END
$$;

-- A ledger row belongs to an order the ledger knows.
CREATE FUNCTION order_ledgers_known() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ledger_orders WHERE order_id = NEW.order_id AND customer_id = NEW.customer_id) THEN
    RAISE EXCEPTION 'ledger for order % which no shop reported for customer %', NEW.order_id, NEW.customer_id
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'order_ledgers_order';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER order_ledgers_known BEFORE INSERT ON order_ledgers FOR EACH ROW EXECUTE FUNCTION order_ledgers_known();

-- The ledger's bounds (030_payment_provider.sql) over ledger_orders, and a charge's refund
-- bounded by what is left on it as the provider last reported it.
CREATE OR REPLACE FUNCTION refunds_within_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  o record;
  req record;
  charge_amount bigint;
  charge_refunded bigint;
  captured bigint;
  refunded bigint;
  of_kind bigint;
BEGIN
  SELECT currency, total_cents INTO o FROM ledger_orders WHERE order_id = NEW.order_id AND customer_id = NEW.customer_id;
  IF o.currency IS NULL THEN
    RAISE EXCEPTION 'refund on order % which no shop reported for customer %', NEW.order_id, NEW.customer_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_order';
  END IF;
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
    -- Refunded on the charge outside casework (the shop's admin, the provider's dashboard): the provider's own count.
    SELECT refunded_cents INTO charge_refunded FROM provider_charges WHERE charge_id = NEW.charge_id AND order_id = NEW.order_id;
    IF coalesce(charge_refunded, 0) + NEW.amount_cents > charge_amount THEN
      RAISE EXCEPTION 'charge % of order % was %, and the payment provider reports % already refunded on it; a refund of % would exceed it',
        NEW.charge_id, NEW.order_id, charge_amount, charge_refunded, NEW.amount_cents
        USING ERRCODE = 'check_violation', CONSTRAINT = 'order_ledger_charge';
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
