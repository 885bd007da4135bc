-- Desk deliveries casework cannot hand to an investigation yet, and who their requesters are
-- (src/db/parked-deliveries.ts). A desk's webhook from a requester casework cannot map to a
-- customer, or one the ticket gate refuses (another customer's ticket, an event id reused with
-- another body), is parked here and answered 2xx: a desk's circuit breaker counts 4xx answers,
-- and retrying could never fix these. A person maps the requester (the delivery then goes on to
-- its investigation) or discards it; either leaves an audit row, with no content.

-- Requesters a person mapped to a casework customer, beside CASEWORK_DESK_CUSTOMERS (which is
-- read first). `requester` is the desk's user or contact id, or a Freshdesk requester's email,
-- lower-cased, as the configuration map keys them.
CREATE TABLE desk_requesters (
  desk        text NOT NULL CHECK (desk IN ('zendesk', 'intercom', 'freshdesk')),
  requester   text NOT NULL CHECK (char_length(requester) BETWEEN 1 AND 320),
  customer_id text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  mapped_by   text NOT NULL CHECK (char_length(mapped_by) BETWEEN 1 AND 100),
  mapped_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (desk, requester)
);

-- One row per parked delivery, keyed by the desk's own identity of it (the event id the adapter
-- derived from the desk's comment, part or notification id), so a redelivery parks nothing twice.
-- `body` is the event (its words included) through the payload codec: ciphertext, never text.
CREATE TABLE parked_deliveries (
  id           bigserial PRIMARY KEY,
  desk         text NOT NULL CHECK (desk IN ('zendesk', 'intercom', 'freshdesk')),
  event_id     text NOT NULL UNIQUE CHECK (char_length(event_id) BETWEEN 1 AND 200),
  ticket_id    text NOT NULL CHECK (char_length(ticket_id) BETWEEN 1 AND 100),
  requester    text NOT NULL CHECK (char_length(requester) BETWEEN 1 AND 320),
  -- unmapped_requester: nobody maps the requester yet; ticket_owner / event_reused: the gate refused it.
  reason       text NOT NULL CHECK (reason IN ('unmapped_requester', 'ticket_owner', 'event_reused')),
  body         bytea NOT NULL,
  parked_at    timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  discarded_at timestamptz,
  CHECK (delivered_at IS NULL OR discarded_at IS NULL)
);
CREATE INDEX parked_deliveries_waiting ON parked_deliveries (desk, requester, id) WHERE delivered_at IS NULL AND discarded_at IS NULL;

-- Who did what to a parked delivery or a requester, and when. Ids only.
CREATE TABLE desk_delivery_audit (
  id          bigserial PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  actor       text NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 100),
  action      text NOT NULL CHECK (action IN ('mapped', 'delivered', 'discarded')),
  desk        text NOT NULL,
  requester   text,
  customer_id text,
  event_id    text,
  reason      text CHECK (char_length(reason) <= 500)
);

GRANT SELECT, INSERT, UPDATE ON desk_requesters, parked_deliveries TO casework_app;
GRANT SELECT, INSERT ON desk_delivery_audit TO casework_app;
GRANT USAGE ON SEQUENCE parked_deliveries_id_seq, desk_delivery_audit_id_seq TO casework_app;
