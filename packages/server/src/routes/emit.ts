import { randomUUID } from 'node:crypto';
import { EVENT_NAME_PATTERN, type Json } from '@weft/core';
import type { EmitOutcome, Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { keyNameOf } from './audit.js';

const emitSchema = {
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: {
        type: 'string',
        pattern: EVENT_NAME_PATTERN.source,
        description: "the event name, matched against the definitions' triggers",
      },
      data: { description: "the event's data (default null), what triggers read as `data`" },
      id: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'your id for this event: a repeat starts nothing new (default: a random one)',
      },
    },
  },
};

/** What an event started, as the API answers it. */
export function emitJson(event: { id: string; name: string }, outcome: EmitOutcome) {
  return {
    event,
    runs: outcome.runs.map((r) => ({
      definition: r.definition,
      version: r.version,
      run_id: r.run.id,
      status: r.run.status,
      created: r.created,
    })),
    failures: outcome.failures.map((f) => ({
      definition: f.definition,
      version: f.version,
      error: { code: f.error.code, message: f.error.message },
    })),
  };
}

/**
 * Sending events: `POST /v1/events` starts the latest version of every definition whose triggers listen
 * for the event, in one transaction, at most once per event id and definition (a repeat answers the runs
 * the first one started, `created: false`).
 */
export function emitRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{ Body: { name: string; data?: Json; id?: string } }>(
    '/v1/events',
    {
      schema: emitSchema,
      config: { auth: 'operate' },
      bodyLimit: engine.context.config.maxPayloadBytes + 64 * 1024,
    },
    async (request) => {
      const { name, data } = request.body;
      const id = request.body.id ?? randomUUID();
      const outcome = await engine.events.emit({
        namespace: namespaceOf(request),
        name,
        id,
        data: data === undefined ? null : data,
        ...keyNameOf(request),
      });
      return emitJson({ id, name }, outcome);
    },
  );
}
