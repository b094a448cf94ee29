-- Search attributes: key-value tags of a run, given at start or set by transform nodes, that lists filter on
-- (`customer = 42`). One row per run and name, keyed by run_id first like all run data. The value is kept as
-- given (text, number or boolean) and matched as text, so `42` finds 42 and "42".
--
-- A table rather than a jsonb column with a GIN index: a filtered list is newest first, a page at a time,
-- and this index hands over a name and value's runs already in run id order, so the first page of
-- `customer = 42` reads about a page however many runs the namespace holds; a GIN index gives an unordered
-- bitmap that must be read whole and sorted. It also keeps the runs row (rewritten at every step) small.
CREATE TABLE weft.run_attributes (
  run_id     uuid  NOT NULL,
  namespace  text  NOT NULL,
  key        text  NOT NULL,
  value      jsonb NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX run_attributes_match ON weft.run_attributes (namespace, key, (value #>> '{}'), run_id DESC);
