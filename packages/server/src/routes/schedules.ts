import { type Json, WeftError } from '@weft/core';
import type { Engine, OverlapPolicy } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { scheduleJson, sweeperJson } from '../wire-flow.js';
import { audit } from './audit.js';
import { INT4_MAX, versionField } from './fields.js';

const scheduleBody = {
  body: {
    type: 'object',
    required: ['definition', 'cron'],
    additionalProperties: false,
    properties: {
      definition: { type: 'string', minLength: 1 },
      version: versionField,
      cron: { type: 'string', minLength: 1, maxLength: 200 },
      timezone: { type: 'string', minLength: 1, maxLength: 100 },
      input: {},
      overlap: { type: 'string', enum: ['skip', 'allow', 'buffer_one'] },
      paused: { type: 'boolean' },
    },
  },
};

interface ScheduleBody {
  definition: string;
  version?: number;
  cron: string;
  timezone?: string;
  input?: Json;
  overlap?: OverlapPolicy;
  paused?: boolean;
}

/** Schedules of the request's namespace: create or replace, list, show, pause, resume, delete. */
export function scheduleRoutes(app: FastifyInstance, engine: Engine): void {
  app.put<{ Params: { name: string }; Body: ScheduleBody }>(
    '/v1/schedules/:name',
    { schema: scheduleBody, config: { auth: 'operate' } },
    async (request) => {
      const b = request.body;
      const s = await engine.schedules.put({
        namespace: namespaceOf(request),
        name: request.params.name,
        definition: b.definition,
        cron: b.cron,
        ...(b.version !== undefined ? { version: b.version } : {}),
        ...(b.timezone !== undefined ? { timezone: b.timezone } : {}),
        ...(b.input !== undefined ? { input: b.input } : {}),
        ...(b.overlap !== undefined ? { overlap: b.overlap } : {}),
        ...(b.paused !== undefined ? { paused: b.paused } : {}),
      });
      await audit(request, 'schedule.put', request.params.name, b);
      return scheduleJson(s);
    },
  );

  app.get('/v1/schedules', { config: { auth: 'read' } }, async (request) => ({
    items: (await engine.schedules.list(namespaceOf(request))).map(scheduleJson),
  }));

  app.get<{ Params: { name: string } }>(
    '/v1/schedules/:name',
    { config: { auth: 'read' } },
    async (request) => scheduleJson(await engine.schedules.get(namespaceOf(request), request.params.name)),
  );

  for (const verb of ['pause', 'resume'] as const) {
    app.post<{ Params: { name: string } }>(
      `/v1/schedules/:name/${verb}`,
      { config: { auth: 'operate' } },
      async (request) => {
        const s = await engine.schedules.setPaused(
          namespaceOf(request),
          request.params.name,
          verb === 'pause',
        );
        await audit(request, `schedule.${verb}`, request.params.name);
        return scheduleJson(s);
      },
    );
  }

  app.delete<{ Params: { name: string } }>(
    '/v1/schedules/:name',
    { config: { auth: 'operate' } },
    async (request) => {
      await engine.schedules.delete(namespaceOf(request), request.params.name);
      await audit(request, 'schedule.delete', request.params.name);
      return { deleted: true };
    },
  );
}

/** The stuck-run sweeper: its figures, and a round on demand. */
export function sweeperRoutes(app: FastifyInstance, engine: Engine): void {
  app.get('/v1/sweeper', { config: { auth: 'read' } }, async () => {
    return { ...sweeperJson(engine.sweeper.stats), idle_ms: engine.context.config.sweepIdleMs };
  });
  app.post<{ Body: { idle_ms?: number } | null }>(
    '/v1/sweeper/run',
    {
      config: { auth: 'system' },
      schema: {
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: { idle_ms: { type: 'integer', minimum: 0, maximum: INT4_MAX } },
        },
      },
    },
    async (request) => {
      const idle = request.body?.idle_ms;
      if (idle !== undefined && idle < 1000)
        throw new WeftError(
          'bad_request',
          'idle_ms below 1000 would catch runs that are only between two steps',
          400,
        );
      const repaired = await engine.sweeper.round(idle);
      return { repaired };
    },
  );
}
