import { WeftError } from '@weft/core';
import { type Engine, MAX_MOVE_RUNS, type MoveOutcome, type MoveVerdict } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { actorOf, audit } from './audit.js';
import { versionField } from './fields.js';

interface Target {
  definition: string;
  to_version: number;
  node_map?: Record<string, string>;
}
interface PlanBody extends Target {
  run_ids?: string[];
  from_version?: number;
  status?: 'running' | 'paused';
  limit?: number;
  cursor?: string;
}
interface ApplyBody extends Target {
  run_ids: string[];
  by?: string;
  reason?: string;
}

const NODE_ID = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' };
const RUN_IDS = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_MOVE_RUNS,
  items: { type: 'string', maxLength: 36 },
};
const target = {
  definition: { type: 'string', minLength: 1, maxLength: 200 },
  to_version: versionField,
  node_map: {
    type: 'object',
    maxProperties: 1000,
    propertyNames: NODE_ID,
    additionalProperties: NODE_ID,
  },
};

const planSchema = {
  body: {
    type: 'object',
    required: ['definition', 'to_version'],
    additionalProperties: false,
    properties: {
      ...target,
      run_ids: RUN_IDS,
      from_version: versionField,
      status: { type: 'string', enum: ['running', 'paused'] },
      limit: { type: 'integer', minimum: 1, maximum: MAX_MOVE_RUNS },
      cursor: { type: 'string', maxLength: 36 },
    },
  },
};
const applySchema = {
  body: {
    type: 'object',
    required: ['definition', 'to_version', 'run_ids'],
    additionalProperties: false,
    properties: {
      ...target,
      run_ids: RUN_IDS,
      by: { type: 'string', minLength: 1, maxLength: 200 },
      reason: { type: 'string', maxLength: 2000 },
    },
  },
};

/**
 * Moving runs in flight to another version of their definition. `POST /v1/runs/migrate/plan` says, for each
 * selected run (the ids given, or a page of the running or paused runs of a version), whether it can move,
 * and if not, why; nothing changes. `POST /v1/runs/migrate` moves the runs named (the movable ids of a plan),
 * each in its own transaction under its lock, checked again there; the answer says, per run, whether it moved.
 */
export function runMoveRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{ Body: PlanBody }>(
    '/v1/runs/migrate/plan',
    { schema: planSchema, config: { auth: 'read' } },
    async (request) => {
      const b = request.body;
      if (b.run_ids && (b.from_version !== undefined || b.status !== undefined || b.cursor !== undefined))
        throw new WeftError(
          'bad_request',
          'give either run_ids, or from_version/status/cursor to list runs: not both',
          400,
        );
      runIds(b.run_ids ?? []);
      if (b.cursor !== undefined && !isUuid(b.cursor))
        throw new WeftError(
          'bad_cursor',
          `cursor ${JSON.stringify(b.cursor)} is not one this API gave out`,
          400,
        );
      const plan = await engine.moves.plan({
        namespace: namespaceOf(request),
        definition: b.definition,
        toVersion: b.to_version,
        nodeMap: b.node_map ?? {},
        ...(b.run_ids ? { runIds: b.run_ids } : {}),
        ...(b.from_version !== undefined ? { fromVersion: b.from_version } : {}),
        ...(b.status ? { status: b.status } : {}),
        ...(b.limit !== undefined ? { limit: b.limit } : {}),
        ...(b.cursor ? { cursor: b.cursor } : {}),
      });
      const runs = plan.runs.map(verdictJson);
      return {
        definition: b.definition,
        to_version: plan.toVersion,
        movable: runs.filter((r) => r.movable).length,
        refused: runs.filter((r) => !r.movable).length,
        runs,
        next_cursor: plan.next,
      };
    },
  );

  app.post<{ Body: ApplyBody }>(
    '/v1/runs/migrate',
    { schema: applySchema, config: { auth: 'operate' } },
    async (request) => {
      const b = request.body;
      runIds(b.run_ids);
      const outcomes = await engine.moves.apply(
        {
          namespace: namespaceOf(request),
          definition: b.definition,
          toVersion: b.to_version,
          nodeMap: b.node_map ?? {},
          runIds: b.run_ids,
        },
        { by: actorOf(request, b.by), ...(b.reason ? { reason: b.reason } : {}) },
      );
      const runs = outcomes.map(outcomeJson);
      const moved = runs.filter((r) => r.moved).length;
      await audit(request, 'runs.migrate', b.definition, {
        to_version: b.to_version,
        node_map: b.node_map ?? {},
        moved,
        refused: runs.length - moved,
      });
      return {
        definition: b.definition,
        to_version: b.to_version,
        moved,
        refused: runs.length - moved,
        runs,
      };
    },
  );
}

function runIds(ids: readonly string[]): void {
  const bad = ids.find((id) => !isUuid(id));
  if (bad !== undefined)
    throw new WeftError('bad_request', `run_ids: ${JSON.stringify(bad)} is not a run id (a UUID)`, 400);
}

function verdictJson(v: MoveVerdict) {
  return { run_id: v.runId, from_version: v.fromVersion, movable: v.movable, reasons: v.reasons };
}

function outcomeJson(o: MoveOutcome) {
  return { run_id: o.runId, from_version: o.fromVersion, moved: o.moved, reasons: o.reasons };
}
