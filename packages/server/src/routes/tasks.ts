import { type Json, type TaskError, WeftError } from '@weft/core';
import type { Engine, TaskReport } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { leasedJson } from '../wire.js';
import type { WorkerSightings } from '../worker-sightings.js';
import { attemptField, uuidField } from './fields.js';

const uuid = uuidField;
const worker = { type: 'string', minLength: 1, maxLength: 200 };
const taskTypes = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: { type: 'string', minLength: 1, maxLength: 128 },
};
const errorSchema = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: {
    message: { type: 'string' },
    retryable: { type: 'boolean' },
    type: { type: 'string' },
    stack: { type: 'string' },
    details: {},
  },
};
const reportItem = {
  type: 'object',
  required: ['run_id', 'task_id', 'attempt', 'lease_token'],
  additionalProperties: false,
  properties: {
    run_id: uuid,
    task_id: uuid,
    attempt: attemptField,
    lease_token: uuid,
    node_id: { type: 'string', maxLength: 128 },
    iteration: { type: 'string', maxLength: 256 },
    output: {},
    error: errorSchema,
  },
};

const { task_id: _taskId, ...reportFields } = reportItem.properties;
const singleReportProperties = { ...reportFields, worker };

interface WireReport {
  run_id: string;
  task_id: string;
  attempt: number;
  lease_token: string;
  node_id?: string;
  iteration?: string;
  output?: Json;
  error?: { message: string; retryable?: boolean; type?: string; stack?: string; details?: Json };
}

/**
 * A report as the engine takes it. Built as plain literals, without spreading: every report of every request
 * passes here, and the spreads were a measurable part of a report request's own CPU.
 */
function toReport(r: WireReport): TaskReport {
  if (r.error !== undefined && r.output !== undefined) {
    throw new WeftError(
      'bad_request',
      `the report for task ${r.task_id} has both output and error; send one`,
      400,
    );
  }
  const outcome: TaskReport['outcome'] =
    r.error === undefined
      ? { kind: 'completed', output: r.output === undefined ? null : r.output }
      : { kind: 'failed', error: taskError(r.error) };
  return r.node_id === undefined
    ? { runId: r.run_id, taskId: r.task_id, attempt: r.attempt, leaseToken: r.lease_token, outcome }
    : {
        runId: r.run_id,
        taskId: r.task_id,
        attempt: r.attempt,
        leaseToken: r.lease_token,
        nodeId: r.node_id,
        iteration: r.iteration ?? '',
        outcome,
      };
}

/** A worker's error as the engine records it (retryable unless the worker says not). */
function taskError(e: NonNullable<WireReport['error']>): TaskError {
  return {
    message: e.message,
    reason: 'error',
    retryable: e.retryable ?? true,
    ...(e.type !== undefined ? { type: e.type } : {}),
    ...(e.stack !== undefined ? { stack: e.stack } : {}),
    ...(e.details !== undefined ? { details: e.details } : {}),
  };
}

/** The worker protocol: poll (long-poll), heartbeat, and reports (batched, or one task at a time). */
export function taskRoutes(
  app: FastifyInstance,
  engine: Engine,
  sightings?: WorkerSightings,
  closing?: AbortSignal,
): void {
  app.post<{ Body: { worker: string; task_types: string[]; max?: number; wait_ms?: number } }>(
    '/v1/tasks/poll',
    {
      config: { auth: 'work' },
      schema: {
        body: {
          type: 'object',
          required: ['worker', 'task_types'],
          additionalProperties: false,
          properties: {
            worker,
            task_types: taskTypes,
            max: { type: 'integer', minimum: 1, maximum: 500 },
            wait_ms: { type: 'integer', minimum: 0, maximum: 60_000 },
          },
        },
      },
    },
    async (request, reply) => {
      // The worker hung up before an answer: stop waiting. (The request's own 'close' event fires as soon
      // as its body has been read, so it cannot tell.)
      sightings?.seen(namespaceOf(request), request.body.worker, request.body.task_types);
      const abort = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableEnded) abort.abort();
      });
      // The server is stopping: answer at once with what the poll holds (nothing, unless a task was handed
      // to it in that instant), so workers are not left waiting on a server that is going away.
      const signal = closing ? AbortSignal.any([abort.signal, closing]) : abort.signal;
      const tasks = await engine.tasks.poll({
        namespace: namespaceOf(request),
        worker: request.body.worker,
        taskTypes: request.body.task_types,
        max: request.body.max ?? 1,
        waitMs: request.body.wait_ms ?? 0,
        signal,
      });
      const terms = engine.tasks.terms;
      return { tasks: tasks.map(leasedJson), lease_ms: terms.leaseMs, heartbeat_ms: terms.heartbeatMs };
    },
  );

  app.post<{
    Body: {
      worker: string;
      tasks: { run_id: string; task_id: string; attempt: number; lease_token: string }[];
    };
  }>(
    '/v1/tasks/heartbeat',
    {
      config: { auth: 'work' },
      schema: {
        body: {
          type: 'object',
          required: ['worker', 'tasks'],
          additionalProperties: false,
          properties: {
            worker,
            tasks: {
              type: 'array',
              maxItems: 1000,
              items: {
                type: 'object',
                required: ['run_id', 'task_id', 'attempt', 'lease_token'],
                additionalProperties: false,
                properties: {
                  run_id: uuid,
                  task_id: uuid,
                  attempt: attemptField,
                  lease_token: uuid,
                },
              },
            },
          },
        },
      },
    },
    async (request) => {
      sightings?.seen(namespaceOf(request), request.body.worker, []);
      const result = await engine.tasks.heartbeat(
        namespaceOf(request),
        request.body.worker,
        request.body.tasks.map((t) => ({
          runId: t.run_id,
          taskId: t.task_id,
          attempt: t.attempt,
          leaseToken: t.lease_token,
        })),
      );
      return { held: result.held, lost: result.lost, lease_ms: engine.tasks.terms.leaseMs };
    },
  );

  app.post<{ Body: { worker: string; reports: WireReport[]; next?: { task_types: string[]; max: number } } }>(
    '/v1/tasks/report',
    {
      config: { auth: 'work' },
      schema: {
        body: {
          type: 'object',
          required: ['worker', 'reports'],
          additionalProperties: false,
          properties: {
            worker,
            reports: { type: 'array', maxItems: 1000, items: reportItem },
            next: {
              type: 'object',
              required: ['task_types', 'max'],
              additionalProperties: false,
              properties: { task_types: taskTypes, max: { type: 'integer', minimum: 0, maximum: 500 } },
            },
          },
        },
      },
    },
    async (request) => {
      const { worker: who, reports, next } = request.body;
      sightings?.seen(namespaceOf(request), who, next?.task_types ?? []);
      const { verdicts, leased } = await engine.tasks.report({
        namespace: namespaceOf(request),
        worker: who,
        reports: reports.map(toReport),
        ...(next ? { next: { taskTypes: next.task_types, max: next.max } } : {}),
      });
      return {
        results: verdicts.map((v) =>
          v.accepted
            ? { task_id: v.taskId, accepted: true }
            : { task_id: v.taskId, accepted: false, why: v.why },
        ),
        tasks: leased.map(leasedJson),
      };
    },
  );

  for (const verb of ['complete', 'fail'] as const) {
    app.post<{ Params: { id: string }; Body: Omit<WireReport, 'task_id'> & { worker?: string } }>(
      `/v1/tasks/:id/${verb}`,
      {
        config: { auth: 'work' },
        schema: {
          params: { type: 'object', properties: { id: uuid } },
          body: {
            type: 'object',
            required:
              verb === 'fail'
                ? ['run_id', 'attempt', 'lease_token', 'error']
                : ['run_id', 'attempt', 'lease_token'],
            additionalProperties: false,
            properties: singleReportProperties,
          },
        },
      },
      async (request, reply) => {
        const { worker: who, ...rest } = request.body;
        const report = toReport({
          ...rest,
          task_id: request.params.id,
          ...(verb === 'complete' ? { error: undefined } : { output: undefined }),
        });
        const { verdicts } = await engine.tasks.report({
          namespace: namespaceOf(request),
          worker: who ?? 'http',
          reports: [report],
        });
        const verdict = verdicts[0]!;
        if (!verdict.accepted) {
          return reply.status(409).send({
            error: { code: 'report_refused', message: `the ${verb} report was refused: ${verdict.why}` },
          });
        }
        return { task_id: verdict.taskId, accepted: true };
      },
    );
  }
}
