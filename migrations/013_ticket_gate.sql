-- The gate in front of every investigation (issue 10): which customer a ticket belongs to, and
-- every event id ever admitted, so ownership and deduplication outlive any one workflow run.
-- Only ids and hashes are stored, never a customer's words, so these tables need no row-level
-- security: casework_app reads and writes them for every customer, and a row reveals no more
-- than the ticket id and customer id the ticketing system already sent in the clear.

-- First event wins: the customer of the first admitted event owns the ticket for good, open,
-- waiting or closed; another customer's event for it is refused.
CREATE TABLE ticket_owners (
  ticket_id      text PRIMARY KEY CHECK (char_length(ticket_id) BETWEEN 1 AND 100),
  customer_id    text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  first_event_id text NOT NULL,
  first_seen_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per event id ever admitted. `body_sha256` is the hash of the event's canonical body
-- (src/db/tickets.ts): the same id with another body is a conflict, not a retry.
-- `delivered_at` stays null until Temporal took the event, so a delivery lost to an outage is
-- delivered again when the ticketing system resends it, and a delivered one never is.
CREATE TABLE ticket_events (
  event_id     text PRIMARY KEY CHECK (char_length(event_id) BETWEEN 1 AND 200),
  ticket_id    text NOT NULL,
  body_sha256  text NOT NULL CHECK (body_sha256 ~ '^[0-9a-f]{64}$'),
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX ticket_events_ticket ON ticket_events (ticket_id);

GRANT SELECT, INSERT, UPDATE ON ticket_owners, ticket_events TO casework_app;
