import { type Json, WeftError } from '@weft/core';
import {
  type Engine,
  MAX_LINES_PER_WRITE,
  MAX_LOG_PAGE,
  type StoredTaskLogLine,
  TASK_LOG_LEVELS,
  type TaskLogLevel,
} from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { attemptField, digitsField, ROW_ID_PATTERN, uuidField } from './fields.js';

/** The longest message a line may arrive with; the bound an attempt keeps is smaller (lines are cut). */
const MAX_MESSAGE_CHARS = 64 * 1024;

const lineSchema = {
  type: 'object',
  required: ['level', 'message'],
  additionalProperties: false,
  properties: {
    level: { type: 'string', enum: TASK_LOG_LEVELS },
    message: { type: 'string', maxLength: MAX_MESSAGE_CHARS },
    fields: { type: 'object' },
    at: { type: 'string', minLength: 1, maxLength: 64, description: 'when the handler wrote it (ISO time)' },
  },
};

interface WireLine {
  level: TaskLogLevel;
  message: string;
  fields?: Json;
  at?: string;
}

/** A line's time as the worker sent it; a time that is not one is refused, saying which line. */
function timeOf(line: WireLine, index: number): Date | undefined {
  if (line.at === undefined) return undefined;
  const at = new Date(line.at);
  if (Number.isNaN(at.getTime()) || at.getUTCFullYear() < 2000 || at.getUTCFullYear() > 9999)
    throw new WeftError(
      'bad_request',
      `lines[${index}].at must be a time such as 2026-01-31T12:00:00.000Z`,
      400,
    );
  return at;
}

function lineJson(l: StoredTaskLogLine) {
  return {
    id: l.id,
    task_id: l.taskId,
    node_id: l.nodeId,
    iteration: l.iteration,
    attempt: l.attempt,
    at: l.at.toISOString(),
    level: l.level,
    message: l.message,
    fields: l.fields,
  };
}

/**
 * Task logs: a worker appends its handler's lines to the attempt it holds (`POST /v1/tasks/:id/logs`,
 * fenced by the lease like a report), and anyone who may read the run reads them (`GET /v1/runs/:id/logs`).
 */
export function taskLogRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{
    Params: { id: string };
    Body: { run_id: string; attempt: number; lease_token: string; lines: WireLine[] };
  }>(
    '/v1/tasks/:id/logs',
    {
      config: { auth: 'work' },
      schema: {
        params: { type: 'object', properties: { id: uuidField } },
        body: {
          type: 'object',
          required: ['run_id', 'attempt', 'lease_token', 'lines'],
          additionalProperties: false,
          properties: {
            run_id: uuidField,
            attempt: attemptField,
            lease_token: uuidField,
            lines: { type: 'array', maxItems: MAX_LINES_PER_WRITE, items: lineSchema },
          },
        },
      },
    },
    async (request) => {
      const { run_id, attempt, lease_token, lines } = request.body;
      const verdict = await engine.logs.append(
        namespaceOf(request),
        { runId: run_id, taskId: request.params.id, attempt, leaseToken: lease_token },
        lines.map((l, i) => {
          const at = timeOf(l, i);
          return {
            level: l.level,
            message: l.message,
            ...(l.fields !== undefined ? { fields: l.fields } : {}),
            ...(at ? { at } : {}),
          };
        }),
      );
      return { kept: verdict.kept, dropped: verdict.dropped, truncated: verdict.truncated };
    },
  );
  readRoute(app, engine);
}

/** `GET /v1/runs/:id/logs`: a page of the run's lines, by node and attempt. */
function readRoute(app: FastifyInstance, engine: Engine): void {
  app.get<{
    Params: { id: string };
    Querystring: { node?: string; attempt?: string; after?: string; limit?: string };
  }>(
    '/v1/runs/:id/logs',
    {
      config: { auth: 'read' },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            node: { type: 'string', minLength: 1, maxLength: 128, description: 'only lines of this node' },
            attempt: { ...digitsField(), description: 'only lines of this attempt' },
            after: {
              type: 'string',
              pattern: ROW_ID_PATTERN,
              description: 'lines after this id (next_after)',
            },
            limit: {
              ...digitsField(4),
              description: `most lines answered, 1 to ${MAX_LOG_PAGE} (default 200)`,
            },
          },
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!isUuid(id)) throw new WeftError('run_not_found', `there is no run ${id} (run ids are UUIDs)`, 404);
      await engine.runs.get(id, namespaceOf(request));
      const q = request.query;
      const attempt = q.attempt === undefined ? undefined : Number(q.attempt);
      if (attempt !== undefined && attempt < 1)
        throw new WeftError('bad_request', 'attempt must be a whole number of at least 1', 400);
      const page = await engine.logs.list({
        runId: id,
        ...(q.node !== undefined ? { nodeId: q.node } : {}),
        ...(attempt !== undefined ? { attempt } : {}),
        ...(q.after !== undefined ? { after: q.after } : {}),
        limit: q.limit === undefined ? 200 : Number(q.limit),
      });
      return { lines: page.lines.map(lineJson), next_after: page.nextAfter };
    },
  );
}
