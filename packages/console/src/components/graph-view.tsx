import {
  Background,
  Controls,
  type Edge,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
} from '@xyflow/react';
import { memo, useMemo } from 'react';
import type { GraphEdge, GraphNode } from '../api/types.js';
import { edgeLabel, layoutGraph, NODE_HEIGHT, NODE_WIDTH } from '../lib/layout.js';
import { useTheme } from '../lib/theme-context.js';

/** What a node box shows beside its id: a status, and a note such as "3 attempts" or "4 passes". */
export interface NodeMark {
  readonly status?: string;
  readonly note?: string;
}

type WeftNodeData = { node: GraphNode; mark: NodeMark | undefined; selected: boolean };

const WeftNode = memo(function WeftNode(props: NodeProps<Node<WeftNodeData>>) {
  const { node, mark, selected } = props.data;
  const status = mark?.status;
  return (
    <div
      className={`graph-node ${status ? `status-${status}` : ''} ${selected ? 'chosen' : ''}`}
      title={`${node.id} (${node.kind})${status ? `: ${status}` : ''}`}
    >
      <Handle type="target" position={Position.Left} />
      <div className="graph-node-id">{node.id}</div>
      <div className="graph-node-kind">
        {node.kind === 'task' ? String(node.taskType ?? 'task') : node.kind}
        {node.body ? ' ▸' : ''}
      </div>
      {(status || mark?.note) && (
        <div className="graph-node-state">
          {status && <span className="dot" aria-hidden="true" />}
          {status?.replace('_', ' ')}
          {mark?.note ? ` · ${mark.note}` : ''}
        </div>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  );
});

const nodeTypes = { weft: WeftNode };

/**
 * A definition's graph, laid out by dagre and drawn with React Flow. Each node is coloured by `marks`
 * (the state of its instance in a run); clicking a node, or focusing it with Tab and pressing Enter,
 * chooses it.
 */
export function GraphView(props: {
  nodes: readonly GraphNode[];
  edges: readonly GraphEdge[];
  marks?: ReadonlyMap<string, NodeMark>;
  chosen?: string | null;
  onChoose?: (nodeId: string) => void;
  label: string;
  height?: number;
}) {
  const theme = useTheme();
  const placed = useMemo(() => layoutGraph(props.nodes, props.edges), [props.nodes, props.edges]);
  const flowNodes: Node<WeftNodeData>[] = placed.map((p, i) => {
    const node = props.nodes[i]!;
    const mark = props.marks?.get(node.id);
    return {
      id: node.id,
      type: 'weft',
      // Every box has the one size the layout gives it (and the stylesheet draws). Told it, React Flow shows
      // a node at once; without it, it hides each new node object (every live update makes them) until it
      // has measured it, and a run page's nodes were seen staying hidden for 20 s under load.
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
      position: { x: p.x, y: p.y },
      data: { node, mark, selected: props.chosen === node.id },
      ariaLabel: `Node ${node.id}, ${node.kind}${mark?.status ? `, ${mark.status.replace('_', ' ')}` : ''}${mark?.note ? `, ${mark.note}` : ''}`,
      connectable: false,
      draggable: false,
    };
  });
  const flowEdges: Edge[] = props.edges.map((e, i) => {
    const label = edgeLabel(e);
    return {
      id: `${e.from}->${e.to}#${i}`,
      source: e.from,
      target: e.to,
      markerEnd: { type: MarkerType.ArrowClosed },
      focusable: false,
      ...(label ? { label } : {}),
    };
  });
  return (
    <figure
      className="graph"
      style={{ height: props.height ?? 360 }}
      aria-label={props.label}
      onKeyDown={(event) => {
        // A node focused with Tab is chosen with Enter or Space, as a click chooses it.
        const target = event.target as HTMLElement;
        if ((event.key === 'Enter' || event.key === ' ') && target.classList.contains('react-flow__node')) {
          event.preventDefault();
          if (target.dataset.id) props.onChoose?.(target.dataset.id);
        }
      }}
    >
      <ReactFlow
        nodes={flowNodes}
        edges={flowEdges}
        nodeTypes={nodeTypes}
        colorMode={theme}
        fitView
        fitViewOptions={{ padding: 0.15, maxZoom: 1.2 }}
        minZoom={0.2}
        nodesConnectable={false}
        nodesDraggable={false}
        edgesFocusable={false}
        proOptions={{ hideAttribution: true }}
        onNodeClick={(_, node) => props.onChoose?.(node.id)}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </figure>
  );
}
