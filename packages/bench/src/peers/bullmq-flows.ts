/** The queue every job of the peer benchmark goes to (under a prefix of its own each time). */
export const QUEUE = 'steps';

/** Job options of every step: three attempts, as Weft's bench tasks (`max_attempts: 3`). */
const JOB_OPTS = { attempts: 3 } as const;

/** The part of a BullMQ flow the benchmark builds (a subset of bullmq's FlowJob, to keep bullmq out of here). */
export interface StepFlow {
  readonly name: string;
  readonly queueName: string;
  readonly data: { readonly run: string; readonly segment: number };
  readonly opts: { readonly jobId: string; readonly attempts: number };
  readonly children?: StepFlow[];
}

/**
 * Splits a workload's layers into segments that a BullMQ flow can express. A flow is a tree whose children
 * run before their parent, so one flow holds at most one layer of several nodes (its leaves) under a
 * chain of single nodes: W2's ten-node chain is one flow (s0 the deepest child, s9 the root); W1 is [a],
 * then [b c d e] under f. The root of a segment, once its step is done, adds the next segment's flow.
 */
export function segmentsOf(layers: readonly string[][]): string[][][] {
  const segments: string[][][] = [];
  for (const layer of layers) {
    const current = segments.at(-1);
    if (current === undefined || layer.length > 1) segments.push([layer]);
    else current.push(layer);
  }
  for (const segment of segments)
    if (segment.at(-1)!.length > 1)
      throw new Error('a BullMQ flow needs one node at its root: the shape ends in a fan');
  return segments;
}

/** The job id of a run's node: the same on every attempt, so adding a segment again adds nothing. */
export function jobId(run: string, node: string): string {
  return `${run}-${node}`;
}

/** The flow of one segment of a run: its last layer (one node) the root, its first layer the leaves. */
export function segmentFlow(run: string, segments: readonly string[][][], index: number): StepFlow {
  const segment = segments[index]!;
  const job = (node: string, children?: StepFlow[]): StepFlow => ({
    name: node,
    queueName: QUEUE,
    data: { run, segment: index },
    opts: { jobId: jobId(run, node), ...JOB_OPTS },
    ...(children ? { children } : {}),
  });
  let below: StepFlow[] | undefined;
  for (const layer of segment) {
    const made = layer.map((node) => job(node, below));
    below = made;
  }
  return below![0]!;
}

/** The node whose completion ends a run: the root of its last segment. */
export function lastNode(segments: readonly string[][][]): string {
  return segments.at(-1)!.at(-1)![0]!;
}
