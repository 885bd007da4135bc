-- The shop's own records the investigation tools read (customers, orders, shipments, courier
-- tracking, earlier tickets, payments, policies). In a deployment these mirror the shop's
-- systems; the demo seeds them (src/dev/demo-data). The refund trail casework itself writes is
-- 003_refund_trail.sql.
-- Columns mirror what upstream systems send, internal fields included: shaping happens in the
-- tools, not here, so the raw rows stay as rich (and as verbose) as the real feeds.

CREATE TABLE customers (
  customer_id          text PRIMARY KEY,
  name                 text NOT NULL,
  email                text NOT NULL,
  phone                text,
  default_address      text NOT NULL,
  address_lat          double precision,
  address_lon          double precision,
  loyalty_tier         text,
  crm_segment          text,
  risk_score           numeric(5, 2),
  marketing_opt_in     boolean NOT NULL DEFAULT false,
  internal_notes       text,
  created_at           timestamptz NOT NULL
);

CREATE TABLE orders (
  order_id             text PRIMARY KEY,
  customer_id          text NOT NULL REFERENCES customers (customer_id),
  placed_at            timestamptz NOT NULL,
  status_code          text NOT NULL,
  currency             text NOT NULL,
  total_cents          integer NOT NULL CHECK (total_cents >= 0),
  -- [{sku, name, qty, unit_price_cents, tax_cents, warehouse_bin, supplier_ref, ...}]
  items                jsonb NOT NULL,
  delivery_address     text NOT NULL,
  address_lat          double precision,
  address_lon          double precision,
  delivery_instructions text,
  channel              text,
  warehouse_code       text,
  fraud_score          numeric(5, 2),
  erp_ref              text,
  internal_notes       text,
  updated_at           timestamptz NOT NULL,
  -- lets child tables prove a row's order belongs to the same customer
  UNIQUE (customer_id, order_id)
);

CREATE TABLE shipments (
  shipment_id          text PRIMARY KEY,
  customer_id          text NOT NULL,
  order_id             text NOT NULL,
  courier              text NOT NULL,
  tracking_number      text NOT NULL UNIQUE,
  status_code          text NOT NULL,
  service_level        text,
  label_id             text,
  origin_depot         text,
  route_id             text,
  weight_g             integer,
  dims_mm              text,
  internal_notes       text,
  created_at           timestamptz NOT NULL,
  FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, order_id),
  UNIQUE (customer_id, shipment_id)
);

CREATE TABLE tracking_events (
  event_id             text PRIMARY KEY,
  customer_id          text NOT NULL,
  shipment_id          text NOT NULL,
  order_id             text NOT NULL,
  occurred_at          timestamptz NOT NULL,
  -- the courier's raw event code, e.g. DLV, OFD, MSC (src/activities/tools/codes.ts explains them)
  code                 text NOT NULL,
  -- proof-of-delivery type on DLV events: DS doorstep, RC reception, NB neighbour, SG signed, SP safe place
  pod_type             text,
  pod_photo_url        text,
  pod_signature        text,
  location_code        text NOT NULL,
  location_name        text NOT NULL,
  description          text NOT NULL,
  scanner_id           text,
  route_id             text,
  gps_lat              double precision,
  gps_lon              double precision,
  depot_note           text,
  raw_payload          jsonb NOT NULL,
  received_at          timestamptz NOT NULL,
  FOREIGN KEY (customer_id, shipment_id) REFERENCES shipments (customer_id, shipment_id)
);
CREATE INDEX tracking_events_order ON tracking_events (order_id, occurred_at DESC);

CREATE TABLE support_tickets (
  ticket_id            text PRIMARY KEY,
  customer_id          text NOT NULL REFERENCES customers (customer_id),
  order_id             text,
  opened_at            timestamptz NOT NULL,
  closed_at            timestamptz,
  subject              text NOT NULL,
  body                 text NOT NULL,
  status               text NOT NULL,
  channel              text,
  assigned_agent       text,
  internal_tags        text[] NOT NULL DEFAULT '{}',
  sentiment_score      numeric(4, 2),
  sla_breached         boolean NOT NULL DEFAULT false,
  FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, order_id)
);
CREATE INDEX support_tickets_customer ON support_tickets (customer_id, opened_at DESC);

CREATE TABLE payments (
  payment_id           text PRIMARY KEY,
  customer_id          text NOT NULL,
  order_id             text NOT NULL,
  kind                 text NOT NULL CHECK (kind IN ('charge', 'refund')),
  amount_cents         integer NOT NULL CHECK (amount_cents > 0),
  currency             text NOT NULL,
  -- the processor's raw status code, e.g. CPT captured, RFS refund settled
  processor_code       text NOT NULL,
  processor_ref        text NOT NULL,
  method_code          text NOT NULL,
  avs_result           text,
  cvv_result           text,
  acquirer_response    text,
  risk_flags           text[] NOT NULL DEFAULT '{}',
  raw_response         jsonb NOT NULL,
  created_at           timestamptz NOT NULL,
  FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, order_id)
);
CREATE INDEX payments_order ON payments (order_id, created_at);

-- Not customer data: every investigation may read every policy.
CREATE TABLE policies (
  topic                text PRIMARY KEY,
  title                text NOT NULL,
  body                 text NOT NULL,
  keywords             text[] NOT NULL,
  owner_team           text,
  revision             integer NOT NULL DEFAULT 1,
  legal_review_notes   text,
  updated_at           timestamptz NOT NULL
);

-- Row-level security: a transaction sees only the customer withCustomer() scoped it to, and
-- none at all when unscoped. FORCE makes it bind the table owner too (superusers still bypass).
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['customers', 'orders', 'shipments', 'tracking_events', 'support_tickets', 'payments']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY %I ON %I USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer())',
      t || '_own_customer', t);
  END LOOP;
END
$$;

-- The app only reads the shop's records.
GRANT SELECT ON customers, orders, shipments, tracking_events, support_tickets, payments, policies TO casework_app;
