-- API keys. A key is shown once when it is made; only its SHA-256 is kept, with a short public prefix to
-- find it by. A key has a role, the namespaces it may act in (NULL: every namespace) and, for a worker key,
-- the task types it may take (NULL: any). Revoking keeps the row, so history and the audit list still name
-- whose key it was. `last_used_at` is written at most about once a minute per key, not on every request.
CREATE TABLE weft.api_keys (
  prefix        text        PRIMARY KEY,
  name          text        NOT NULL UNIQUE,
  hash          bytea       NOT NULL,
  role          text        NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'worker')),
  namespaces    text[],
  task_types    text[],
  created_by    text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz
);
