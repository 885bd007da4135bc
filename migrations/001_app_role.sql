-- The role application queries run as (SET ROLE on connect). It owns no table, so row-level
-- security always applies to it; the connecting user is granted it so SET ROLE is allowed.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'casework_app') THEN
    CREATE ROLE casework_app NOLOGIN;
  END IF;
END
$$;
GRANT casework_app TO CURRENT_USER;
GRANT USAGE ON SCHEMA public TO casework_app;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The customer a transaction is scoped to, set by withCustomer(); NULL outside one.
CREATE OR REPLACE FUNCTION casework_customer() RETURNS text
  LANGUAGE sql STABLE AS $$ SELECT nullif(current_setting('casework.customer_id', true), '') $$;
