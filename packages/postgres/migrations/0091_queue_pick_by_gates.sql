-- The gated lease path reads, besides the best queued rows of a task type, the head of each distinct set of
-- gates (one per limit key, for nodes with a limit_key), walking this index from one gates value to the next:
-- a key with a long backlog then cannot hide the few rows of another key from the leaser.
CREATE INDEX queue_pick_by_gates ON weft.queue (namespace, task_type, gates, priority DESC, id)
  WHERE gates IS NOT NULL;
