-- The W3C traceparent of the span that started a run (null without tracing): tasks leased later open their
-- spans under it, so a run's work stays in the trace of the request that started it.
ALTER TABLE weft.runs ADD COLUMN trace_context text;
