import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { Link, useParams } from 'react-router';
import { api } from '../api/endpoints.js';
import { onSessionChange, sessionVersion } from '../api/session.js';
import type { GraphNode, Run } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { JsonView } from '../components/json-view.js';
import { StatusBadge } from '../components/status-badge.js';
import { formatDuration, formatTime, shortId } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';
import { useRunEvents } from '../lib/run-events.js';
import { nodeInstances } from '../lib/run-state.js';
import { NodePanel } from './node-panel.js';
import { RunActions } from './run-actions.js';
import { RunGraph, type Scope } from './run-graph.js';
import { SignalForm, signalNames } from './signal-form.js';
import { Timeline } from './timeline.js';

/**
 * One run: its graph coloured by node state, its history as a timeline, each node's attempts and data,
 * the operator actions and signals. The history stream drives the page: each event adds a timeline row
 * and reads the run's nodes again, so colours change as the run moves.
 */
export function RunPage() {
  const { id = '' } = useParams();
  const ns = useNamespace();
  const queries = useQueryClient();
  const run = useQuery({ queryKey: ['run', ns, id], queryFn: () => api.run(id) });
  const definition = useQuery({
    queryKey: ['definition', ns, run.data?.definition, run.data?.version],
    queryFn: () => api.definitionVersion(run.data!.definition, run.data!.version),
    enabled: !!run.data,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const generation = useSyncExternalStore(onSessionChange, sessionVersion);
  const { events, state } = useRunEvents(id, generation);
  useRefreshOn(events.length, () => void queries.invalidateQueries({ queryKey: ['run', ns, id] }));
  const { scope, setScope, chosen, setChosen } = useGraphPlace(id);
  const instances = useMemo(() => nodeInstances(run.data?.tasks ?? []), [run.data]);
  const refresh = () => void queries.invalidateQueries({ queryKey: ['run', ns, id] });
  if (run.error) return <ErrorNote error={run.error} what={`Run ${id}`} />;
  if (!run.data) return <p aria-busy="true">Loading the run…</p>;
  const graph = definition.data?.definition;
  const here = scope.at(-1);
  const nodes: GraphNode[] = here ? (here.node.body?.nodes ?? []) : (graph?.nodes ?? []);
  const iteration = here?.iteration ?? '';
  const chosenNode = nodes.find((n) => n.id === chosen) ?? null;
  const onNode = (nodeId: string) => {
    if (graph?.nodes.some((n) => n.id === nodeId)) {
      setScope([]);
      setChosen(nodeId);
    } else setChosen(nodeId);
  };
  return (
    <article aria-labelledby="run-title" className="run-page">
      <RunHeader run={run.data} stream={state} />
      <RunActions run={run.data} onDone={refresh} />
      <ErrorNote error={definition.error} what="Could not read the run's definition" />
      {graph && (
        <RunGraph
          graph={graph}
          instances={instances}
          scope={scope}
          chosen={chosen}
          onScope={(next) => {
            setScope(next);
            setChosen(null);
          }}
          onChoose={setChosen}
        />
      )}
      <div className="run-columns">
        {chosenNode && (
          <NodePanel
            run={run.data}
            node={chosenNode}
            iteration={iteration}
            instance={instances.get(`${chosenNode.id}@${iteration}`)}
            onDone={refresh}
          />
        )}
        {graph && (
          <SignalForm
            runId={id}
            names={signalNames(graph.nodes)}
            finished={['completed', 'failed', 'cancelled', 'terminated'].includes(run.data.status)}
            onSent={refresh}
          />
        )}
      </div>
      <Timeline events={events} onNode={onNode} />
    </article>
  );
}

function RunHeader(props: { run: Run; stream: string }) {
  const { run } = props;
  return (
    <header className="run-head">
      <h1 id="run-title">
        Run{' '}
        <span className="mono" title={run.id}>
          {shortId(run.id)}
        </span>{' '}
        <StatusBadge status={run.status} />
      </h1>
      <p className={`stream stream-${props.stream}`} role="status">
        {props.stream === 'live'
          ? '● live'
          : props.stream === 'reconnecting'
            ? '○ reconnecting…'
            : props.stream}
      </p>
      <dl className="facts">
        <dt>Definition</dt>
        <dd>
          <Link to={`/definitions/${encodeURIComponent(run.definition)}?version=${run.version}`}>
            {run.definition}
          </Link>{' '}
          v{run.version}
        </dd>
        <dt>Id</dt>
        <dd className="mono">{run.id}</dd>
        <dt>Started</dt>
        <dd>{formatTime(run.created_at)}</dd>
        <dt>Finished</dt>
        <dd>
          {run.finished_at
            ? `${formatTime(run.finished_at)} (${formatDuration(run.created_at, run.finished_at)})`
            : '—'}
        </dd>
        {run.parent && (
          <>
            <dt>Started by</dt>
            <dd>
              <Link to={`/runs/${run.parent.run_id}`} className="mono">
                {shortId(run.parent.run_id)}
              </Link>{' '}
              node {run.parent.node_id}
            </dd>
          </>
        )}
        {run.attributes && Object.keys(run.attributes).length > 0 && (
          <>
            <dt>Attributes</dt>
            <dd>
              {Object.entries(run.attributes).map(([name, value]) => (
                <Link key={name} to={`/runs?attr=${encodeURIComponent(`${name}:${value}`)}`} className="mono">
                  {name}={String(value)}{' '}
                </Link>
              ))}
            </dd>
          </>
        )}
      </dl>
      <details>
        <summary>Input, output and error</summary>
        <h3>Input</h3>
        <JsonView value={run.input} label="Run input" />
        <h3>Output</h3>
        <JsonView value={run.output} label="Run output" />
        {run.error !== null && (
          <>
            <h3>Error</h3>
            <JsonView value={run.error} label="Run error" />
          </>
        )}
      </details>
    </header>
  );
}

/** Calls `refresh` when `count` changes, at most every 300 ms (a burst of events reads the run once). */
function useRefreshOn(count: number, refresh: () => void) {
  const last = useRef(0);
  const timer = useRef<number | null>(null);
  const latest = useRef(refresh);
  latest.current = refresh;
  useEffect(() => {
    if (count === 0) return;
    const wait = Math.max(0, last.current + 300 - Date.now());
    if (timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      last.current = Date.now();
      latest.current();
    }, wait);
  }, [count]);
  useEffect(() => () => void (timer.current !== null && clearTimeout(timer.current)), []);
}

/** Where the graph is opened (top level, or a loop's pass or a map's item) and the node chosen there. */
function useGraphPlace(runId: string) {
  const [scope, setScope] = useState<Scope[]>([]);
  const [chosen, setChosen] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: another run opened on the same page starts at its top level
  useEffect(() => {
    setScope([]);
    setChosen(null);
  }, [runId]);
  return { scope, setScope, chosen, setChosen };
}
