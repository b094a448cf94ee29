import { randomUUID } from 'node:crypto';
import { definitionHash, type Json, parseDefinition } from '@weft/core';
import {
  type DefinitionRecord,
  emptyWriteSet,
  type LeasedTask,
  type LeaseRequest,
  type Store,
  type TaskReport,
  type WriteSet,
} from '@weft/engine';
import { uuidv7 } from '@weft/engine/internal';

/** A store under test, as a conformance suite gets it from its factory. */
export interface StoreUnderTest {
  readonly store: Store;
  /**
   * Another handle on the same data, for tests of concurrent transactions. A store on a database gives a
   * new instance with connections of its own, so its transactions really run at the same time as the
   * first one's; an in-process store may give itself (the default).
   */
  connect?(): Store | Promise<Store>;
  /** Closes the store (and every handle `connect` gave). */
  close(): Promise<void>;
}

/** Makes a fresh, empty store for one suite. */
export type StoreFactory = () => Promise<StoreUnderTest>;

/** What the tests of one group share: the store, handles for concurrency, a namespace of their own. */
export interface Fixture {
  readonly store: Store;
  /** `n` handles on the same data (see StoreUnderTest.connect). */
  peers(n: number): Promise<Store[]>;
}

/** A namespace no other test uses, so tests on one store do not see each other's rows. */
export const freshNamespace = (): string => `ns-${randomUUID().slice(0, 8)}`;

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A one-node definition (or `yaml`) parsed and deployed in its own transaction. */
export async function deploy(store: Store, namespace: string, yaml?: string): Promise<DefinitionRecord> {
  const source = yaml ?? `name: conformance\nnodes:\n  - { id: a, task_type: work }\n`;
  const parsed = parseDefinition(source);
  if (!parsed.ok) throw new Error(`fixture definition is invalid: ${JSON.stringify(parsed.error)}`);
  const definition = parsed.value;
  const { record } = await store.transaction((tx) =>
    tx.deployDefinition(namespace, definition.name, definitionHash(definition), source, definition),
  );
  return record;
}

/** Inserts a run of `def` and returns its id. */
export async function insertRun(
  store: Store,
  def: DefinitionRecord,
  options: { input?: Json; idempotencyKey?: string; id?: string } = {},
): Promise<string> {
  const id = options.id ?? uuidv7();
  const inserted = await store.transaction((tx) => tx.insertRuns([newRun(def, id, options)]));
  if (inserted.length !== 1) throw new Error(`fixture run ${id} was not inserted`);
  return id;
}

/** A NewRun of `def`. */
export function newRun(
  def: DefinitionRecord,
  id: string,
  options: { input?: Json; idempotencyKey?: string } = {},
) {
  return {
    id,
    namespace: def.namespace,
    definitionId: def.id,
    definitionName: def.name,
    definitionVersion: def.version,
    input: options.input ?? { n: 1 },
    ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
  };
}

/** A write set with the given parts filled in. */
export function writes(parts: Partial<WriteSet>): WriteSet {
  return { ...emptyWriteSet(), ...parts };
}

/** What `queueTask` makes: a queued attempt with its queue row. */
export interface QueuedTask {
  readonly runId: string;
  readonly taskId: string;
  readonly nodeId: string;
  readonly attempt: number;
}

/**
 * Inserts a queued attempt of node `nodeId` and puts it on the queue (`copies` queue rows: a queue row is
 * only a wake-up, and duplicates must be harmless), under the run's lock, committed.
 */
export async function queueTask(
  store: Store,
  runId: string,
  namespace: string,
  options: {
    nodeId?: string;
    taskType?: string;
    attempt?: number;
    priority?: number;
    timeoutMs?: number | null;
    delayMs?: number;
    copies?: number;
    gates?: Record<string, number> | null;
  } = {},
): Promise<QueuedTask> {
  const taskId = uuidv7();
  const nodeId = options.nodeId ?? 'a';
  const attempt = options.attempt ?? 1;
  const taskType = options.taskType ?? 'work';
  const priority = options.priority ?? 0;
  await store.transaction(async (tx) => {
    await tx.lockRuns([runId], 'wait');
    await tx.write(
      writes({
        newTasks: [
          {
            id: taskId,
            runId,
            namespace,
            nodeId,
            iteration: '',
            attempt,
            status: 'queued',
            taskType,
            priority,
            timeoutMs: options.timeoutMs ?? null,
            input: { node: nodeId },
            output: null,
            error: null,
            arrivals: [],
            lease: null,
          },
        ],
        queue: Array.from({ length: options.copies ?? 1 }, () => ({
          taskId,
          runId,
          attempt,
          namespace,
          taskType,
          priority,
          delayMs: options.delayMs ?? 0,
          gates: options.gates ?? null,
        })),
      }),
    );
  });
  return { runId, taskId, nodeId, attempt };
}

/** A lease request for a worker. */
export function leaseRequest(
  namespace: string,
  options: { taskTypes?: string[]; max?: number; worker?: string; leaseMs?: number } = {},
): LeaseRequest {
  return {
    namespace,
    taskTypes: options.taskTypes ?? ['work'],
    max: options.max ?? 1,
    worker: options.worker ?? 'worker-1',
    leaseMs: options.leaseMs ?? 30_000,
  };
}

/** Leases in a transaction of its own. */
export async function lease(store: Store, request: LeaseRequest): Promise<LeasedTask[]> {
  return (await store.transaction((tx) => tx.leaseTasks(request))).tasks;
}

/** A completion report for a leased task. */
export function completion(task: LeasedTask, output: Json = 'done'): TaskReport {
  return {
    runId: task.runId,
    taskId: task.id,
    attempt: task.attempt,
    leaseToken: task.leaseToken,
    outcome: { kind: 'completed', output },
  };
}

/** The attempt of `taskId` as the store lists it. */
export async function taskRow(store: Store, runId: string, taskId: string) {
  return (await store.listTasks(runId)).find((t) => t.id === taskId);
}
