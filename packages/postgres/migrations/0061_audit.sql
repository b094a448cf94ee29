-- Administrative changes, newest last: who (the key's name), what, in which namespace (NULL when the change
-- is not one namespace's, such as a key), on what, and the request's details. Only appended to.
CREATE TABLE weft.audit (
  id         bigserial   PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  actor      text        NOT NULL,
  action     text        NOT NULL,
  namespace  text,
  target     text,
  details    jsonb       NOT NULL DEFAULT '{}'
);
