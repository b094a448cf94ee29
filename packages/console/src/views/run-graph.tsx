import type { GraphDefinition, GraphNode } from '../api/types.js';
import { GraphView, type NodeMark } from '../components/graph-view.js';
import { iterationsOf, type NodeInstance, shownStatus } from '../lib/run-state.js';

/** A container opened on the graph: a loop or map node at one of its passes or items. */
export interface Scope {
  readonly node: GraphNode;
  readonly iteration: string;
}

function marksFor(nodes: readonly GraphNode[], instances: Map<string, NodeInstance>, iteration: string) {
  const marks = new Map<string, NodeMark>();
  for (const node of nodes) {
    const instance = instances.get(`${node.id}@${iteration}`);
    const notes: string[] = [];
    if (instance && instance.attempts.length > 1) notes.push(`${instance.attempts.length} attempts`);
    if (node.body) {
      const n = iterationsOf(instances, node.id, iteration).length;
      notes.push(node.kind === 'map' ? `${n} item${n === 1 ? '' : 's'}` : `${n} pass${n === 1 ? '' : 'es'}`);
    }
    marks.set(node.id, {
      ...(instance ? { status: shownStatus(instance) } : {}),
      ...(notes.length ? { note: notes.join(', ') } : {}),
    });
  }
  return marks;
}

/**
 * The run's graph at the scope opened: the definition's top level, or the body of a loop or map at one
 * pass or item. Choosing a container offers its passes or items; opening one shows its body.
 */
export function RunGraph(props: {
  graph: GraphDefinition;
  instances: Map<string, NodeInstance>;
  scope: Scope[];
  chosen: string | null;
  onScope: (scope: Scope[]) => void;
  onChoose: (nodeId: string) => void;
}) {
  const here = props.scope.at(-1);
  const nodes = here ? (here.node.body?.nodes ?? []) : props.graph.nodes;
  const edges = here ? (here.node.body?.edges ?? []) : props.graph.edges;
  const iteration = here?.iteration ?? '';
  const chosen = nodes.find((n) => n.id === props.chosen);
  const passes = chosen?.body ? iterationsOf(props.instances, chosen.id, iteration) : [];
  return (
    <section aria-label="Graph" className="run-graph">
      <nav aria-label="Graph level" className="crumbs">
        <button type="button" className="link" disabled={!here} onClick={() => props.onScope([])}>
          {props.graph.name}
        </button>
        {props.scope.map((s, i) => (
          <span key={`${s.node.id}@${s.iteration}`}>
            {' › '}
            <button
              type="button"
              className="link"
              disabled={i === props.scope.length - 1}
              onClick={() => props.onScope(props.scope.slice(0, i + 1))}
            >
              {s.node.id}[{s.iteration}]
            </button>
          </span>
        ))}
      </nav>
      <GraphView
        nodes={nodes}
        edges={edges}
        marks={marksFor(nodes, props.instances, iteration)}
        chosen={props.chosen}
        onChoose={props.onChoose}
        label={`Graph of ${here ? `${here.node.id}[${here.iteration}]` : props.graph.name}, nodes coloured by state`}
      />
      {chosen?.body && (
        <fieldset className="iterations">
          <legend>
            {chosen.kind === 'map' ? 'Items' : 'Passes'} of {chosen.id} (open one to see its nodes):
          </legend>
          {passes.length === 0 && <span className="muted"> none started yet</span>}
          {passes.slice(0, 200).map((it) => (
            <button
              key={it}
              type="button"
              className={`chip status-${props.instances.get(`${chosen.id}@${it}`)?.latest.status ?? 'pending'}`}
              onClick={() => props.onScope([...props.scope, { node: chosen, iteration: it }])}
            >
              {it.split('/').at(-1)}
            </button>
          ))}
          {passes.length > 200 && <span className="muted"> and {passes.length - 200} more</span>}
        </fieldset>
      )}
    </section>
  );
}
