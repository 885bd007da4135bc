-- Recall by meaning (issue 11): every note and case carries a sentence embedding and the id of
-- the model that made it, so a change of model is noticed and re-embedded (`casework memory
-- reindex`), never compared across models.
--
-- Vectors are plain real[] with an SQL similarity function, on every server, rather than the
-- pgvector type where a server happens to have it: recall is an exact search over one
-- customer's own current notes (tens to hundreds of rows, found through the customer index),
-- so an approximate-nearest-neighbour index would buy nothing, and one column type means one
-- application code path and one set of tests for every deployment. The stock Postgres here
-- has no pgvector at all; PGlite and the deployment image could, and gain nothing from it.

ALTER TABLE memory_notes
  ADD COLUMN embedding       real[],
  ADD COLUMN embedding_model text,
  -- A vector without its model id could be compared with another model's: never allowed.
  ADD CONSTRAINT memory_notes_embedding_model CHECK ((embedding IS NULL) = (embedding_model IS NULL));

ALTER TABLE memory_cases
  ADD COLUMN embedding       real[],
  ADD COLUMN embedding_model text,
  ADD CONSTRAINT memory_cases_embedding_model CHECK ((embedding IS NULL) = (embedding_model IS NULL));

-- Cosine similarity of two unit vectors is their dot product. NULL when either is missing or
-- the lengths differ (another model's vector), so such a row simply has no semantic score.
-- A PL/pgSQL loop rather than SQL over unnest(a, b): measured on 50 notes x 384 dimensions,
-- the loop runs in about half the time, because unnest builds a row per element.
CREATE FUNCTION memory_cosine(a real[], b real[]) RETURNS double precision
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  dot double precision := 0;
BEGIN
  IF a IS NULL OR b IS NULL OR cardinality(a) <> cardinality(b) THEN
    RETURN NULL;
  END IF;
  FOR i IN 1 .. cardinality(a) LOOP
    dot := dot + a[i]::double precision * b[i];
  END LOOP;
  RETURN dot;
END
$$;
