import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api } from '../api/endpoints.js';
import type { HumanTask } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { JsonView } from '../components/json-view.js';
import { formatTime, shortId } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';
import { AnswerForm } from './answer-form.js';

/**
 * One human task: what it is about, its claim, and the answer form generated from the task's JSON
 * Schema (checked in the browser as it is filled in, and again by the server on submit).
 */
export function HumanTaskPage() {
  const { id = '' } = useParams();
  const ns = useNamespace();
  const queries = useQueryClient();
  const task = useQuery({ queryKey: ['human-task', ns, id], queryFn: () => api.humanTask(id) });
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const act = async (fn: () => Promise<unknown>, what: string) => {
    setError(null);
    setDone(null);
    try {
      await fn();
      setDone(what);
      void queries.invalidateQueries({ queryKey: ['human-task', ns, id] });
      void queries.invalidateQueries({ queryKey: ['inbox', ns] });
    } catch (e) {
      setError(e);
    }
  };
  if (task.error) return <ErrorNote error={task.error} what={`Human task ${id}`} />;
  const t = task.data;
  if (!t) return <p aria-busy="true">Loading the task…</p>;
  return (
    <article aria-labelledby="task-title">
      <h1 id="task-title">{t.title}</h1>
      {t.description && <p>{t.description}</p>}
      <TaskFacts task={t} />
      <h2>What the task is about</h2>
      <JsonView value={t.input} label="Task input" />
      {t.state === 'open' && <AnswerForm task={t} act={act} />}
      {t.state === 'completed' && (
        <>
          <h2>Answer by {t.completed_by}</h2>
          <JsonView value={t.data} label="Answer" />
        </>
      )}
      {done && <p role="status">{done}</p>}
      <ErrorNote error={error} />
    </article>
  );
}

function TaskFacts(props: { task: HumanTask }) {
  const t = props.task;
  return (
    <dl className="facts">
      <dt>State</dt>
      <dd>{t.state}</dd>
      <dt>Run</dt>
      <dd>
        <Link to={`/runs/${t.run_id}`} className="mono" title={t.run_id}>
          {shortId(t.run_id)}
        </Link>{' '}
        ({t.definition}, node {t.node_id})
      </dd>
      <dt>For</dt>
      <dd>{t.assignees.join(', ') || 'anyone'}</dd>
      <dt>Claimed by</dt>
      <dd>{t.claimed_by ?? 'nobody'}</dd>
      <dt>Due</dt>
      <dd>{formatTime(t.deadline_at)}</dd>
    </dl>
  );
}
