-- Finds the definitions an event starts (POST /v1/events) without reading every version: only versions
-- that list triggers are indexed, by them, so a lookup by event name (`@>`) reads the versions that listen
-- for it; the query then checks that each one's name still listens in its latest version.
CREATE INDEX definitions_triggers ON weft.definitions
  USING gin ((definition -> 'triggers') jsonb_path_ops)
  WHERE definition ? 'triggers';
