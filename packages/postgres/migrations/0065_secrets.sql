-- Secrets per namespace, sealed with AES-256-GCM by the server before they reach this table: only the
-- ciphertext (tag appended), its nonce and the id of the key that sealed it are stored. The key id lets a
-- server with a new key open values sealed with an old one and seal them again.
CREATE TABLE weft.secrets (
  namespace   text        NOT NULL,
  name        text        NOT NULL,
  key_id      text        NOT NULL,
  nonce       bytea       NOT NULL,
  ciphertext  bytea       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, name)
);

CREATE INDEX secrets_key_id ON weft.secrets (key_id);
