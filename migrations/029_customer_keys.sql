-- Per-customer data keys (envelope encryption) and the record of every erasure
-- (src/db/customer-keys.ts, src/temporal/codec/customer-keys.ts, docs/payload-privacy.md).
-- Each customer's transcript entries and kept model replies are encrypted under that customer's
-- own AES-256 data key; the key is stored here only wrapped (AES-256-GCM) by one of the
-- deployment's master keys (CASEWORK_CODEC_KEYS), named by `wrapping_key_id`, so rotating the
-- master key re-wraps these rows and re-encrypts no data. Erasing a customer overwrites the
-- wrapped key with NULL and stamps `destroyed_at`: from then on nothing under that key can be
-- decrypted by anyone. A customer who comes back after an erasure gets a new version.
CREATE TABLE customer_keys (
  customer_id     text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  version         integer NOT NULL CHECK (version > 0),
  -- nonce ‖ ciphertext ‖ tag of the 32-byte data key; NULL once destroyed.
  wrapped_key     bytea,
  wrapping_key_id text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  rewrapped_at    timestamptz,
  destroyed_at    timestamptz,
  PRIMARY KEY (customer_id, version),
  CHECK ((destroyed_at IS NULL) = (wrapped_key IS NOT NULL AND wrapping_key_id IS NOT NULL))
);

-- A destroyed key stays destroyed: no update may give it a key again.
CREATE FUNCTION customer_keys_stay_destroyed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.destroyed_at IS NOT NULL THEN
    RAISE EXCEPTION 'customer key %:% was destroyed at %; it cannot be restored', OLD.customer_id, OLD.version, OLD.destroyed_at
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER customer_keys_stay_destroyed BEFORE UPDATE ON customer_keys
  FOR EACH ROW EXECUTE FUNCTION customer_keys_stay_destroyed();

-- Who erased whom and when, with counts of what went: never any content.
CREATE TABLE customer_erasures (
  id          bigserial PRIMARY KEY,
  customer_id text NOT NULL CHECK (char_length(customer_id) BETWEEN 1 AND 100),
  erased_by   text NOT NULL CHECK (char_length(erased_by) BETWEEN 1 AND 200),
  erased_at   timestamptz NOT NULL DEFAULT now(),
  detail      jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX customer_erasures_customer ON customer_erasures (customer_id, erased_at);

-- casework_app creates keys on first use, re-wraps and destroys them (an UPDATE, never a DELETE,
-- so the row keeps when), and appends erasures. A wrapped key is useless without a master key.
GRANT SELECT, INSERT, UPDATE ON customer_keys TO casework_app;
GRANT SELECT, INSERT ON customer_erasures TO casework_app;
GRANT USAGE ON SEQUENCE customer_erasures_id_seq TO casework_app;
