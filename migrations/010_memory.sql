-- Long-term memory about customers (design text 12.10.5, sections 4 and 5): free-text notes
-- searchable by meaning, a structured profile of named fields, case records written after a
-- run, and an audit trail of who read, corrected or deleted what. Customer ids are plain text
-- (no foreign key to the shop's tables) so memory stands on its own.

-- One remembered note. `text_key` is the normalised text: the natural key that merges
-- duplicates. A note stops being current when it expires or a newer note on the same subject
-- supersedes it; `superseded_at` (not `superseded_by`, which a delete may null) says which.
CREATE TABLE memory_notes (
  note_id        bigserial PRIMARY KEY,
  customer_id    text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  kind           text NOT NULL CHECK (kind IN ('fact', 'preference', 'customer_claim', 'commitment')),
  -- The profile field this note states, when it states one; claims never do.
  subject        text CHECK (subject IN ('delivery_instructions', 'preferred_resolution',
                                         'preferred_contact_channel', 'language')),
  text           text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 1000),
  text_key       text NOT NULL CHECK (char_length(text_key) >= 1),
  source_run     text NOT NULL,
  written_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL,
  due_on         date,
  superseded_at  timestamptz,
  superseded_by  bigint REFERENCES memory_notes (note_id) ON DELETE SET NULL,
  corrected_at   timestamptz,
  search         tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
  CHECK (kind = 'commitment' OR due_on IS NULL),
  CHECK (kind <> 'customer_claim' OR subject IS NULL),
  UNIQUE (customer_id, text_key)
);
-- Start-of-run reads: a customer's current notes, newest first.
CREATE INDEX memory_notes_customer ON memory_notes (customer_id, written_at DESC);
-- recall(): full-text and trigram search over the text.
CREATE INDEX memory_notes_search ON memory_notes USING gin (search);
CREATE INDEX memory_notes_trgm ON memory_notes USING gin (text gin_trgm_ops);

-- The structured profile: one row per named field, pointing at the note that states it now,
-- so the value, its date, source run and expiry have a single home and a forget removes both.
CREATE TABLE memory_profile (
  customer_id    text NOT NULL,
  field          text NOT NULL CHECK (field IN ('delivery_instructions', 'preferred_resolution',
                                                'preferred_contact_channel', 'language')),
  note_id        bigint NOT NULL REFERENCES memory_notes (note_id) ON DELETE CASCADE,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (customer_id, field)
);
CREATE INDEX memory_profile_note ON memory_profile (note_id);

-- array_to_string is only STABLE in general (element output functions could vary), but for
-- text[] it cannot change, and a generated column needs an immutable expression.
CREATE FUNCTION memory_join_ids(ids text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT array_to_string(ids, ' ') $$;

-- One closed case per investigation run: the workflow id is the natural key, so a retried
-- post-run activity updates the one row instead of adding another.
CREATE TABLE memory_cases (
  case_id        bigserial PRIMARY KEY,
  customer_id    text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  source_run     text NOT NULL,
  ticket_id      text NOT NULL,
  order_ids      text[] NOT NULL DEFAULT '{}',
  problem        text NOT NULL CHECK (char_length(problem) BETWEEN 1 AND 2000),
  resolution     text NOT NULL CHECK (char_length(resolution) <= 2000),
  closed_on      date NOT NULL,
  recorded_at    timestamptz NOT NULL,
  search         tsvector GENERATED ALWAYS AS (
                   to_tsvector('english', problem || ' ' || resolution || ' ' || memory_join_ids(order_ids))
                 ) STORED,
  UNIQUE (customer_id, source_run)
);
CREATE INDEX memory_cases_customer ON memory_cases (customer_id, closed_on DESC);
CREATE INDEX memory_cases_search ON memory_cases USING gin (search);
CREATE INDEX memory_cases_trgm ON memory_cases USING gin (problem gin_trgm_ops);

-- Who looked at, corrected or deleted a customer's memory. It names what was touched (ids,
-- counts) but never the text, so it can outlive a forget without keeping what was forgotten.
CREATE TABLE memory_audit (
  audit_id       bigserial PRIMARY KEY,
  customer_id    text NOT NULL,
  action         text NOT NULL CHECK (action IN ('read', 'correct', 'forget')),
  actor          text NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
  target         text NOT NULL,
  detail         jsonb NOT NULL DEFAULT '{}',
  at             timestamptz NOT NULL
);
CREATE INDEX memory_audit_customer ON memory_audit (customer_id, at DESC);

-- Row-level security, as for the shop's tables: a transaction sees only the customer
-- withCustomer() scoped it to, and nothing when unscoped. FORCE binds the owner too.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['memory_notes', 'memory_profile', 'memory_cases', 'memory_audit']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY %I ON %I USING (customer_id = casework_customer()) WITH CHECK (customer_id = casework_customer())',
      t || '_own_customer', t);
  END LOOP;
END
$$;

-- The audit trail is append-only for the app: a forget cannot erase the record of itself.
GRANT SELECT, INSERT, UPDATE, DELETE ON memory_notes, memory_profile, memory_cases TO casework_app;
GRANT SELECT, INSERT ON memory_audit TO casework_app;
GRANT USAGE ON SEQUENCE memory_notes_note_id_seq, memory_cases_case_id_seq, memory_audit_audit_id_seq TO casework_app;
