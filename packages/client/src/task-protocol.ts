import type { ClientOptions } from './connection.js';
import { HttpJson } from './http-json.js';
import { TaskCalls } from './task-calls.js';

export type { HeldTask, Leased, NextTasks, QueuedTask, TaskSend } from './task-calls.js';

/**
 * The worker protocol (`/v1/tasks/...`): what a worker process needs and nothing else, over Node's own
 * HTTP (see `HttpJson`), so that importing it (`@weft/client/tasks`) does not load the full client.
 * The calls are `TaskCalls`, the same `WeftClient` makes over its own transport.
 */
export class TaskProtocolClient extends TaskCalls {
  private readonly http: HttpJson;

  constructor(options: ClientOptions) {
    const http = new HttpJson(options);
    super((method, path, body, signal) => http.call(method, path, body, signal));
    this.http = http;
  }

  /** The server's base URL. */
  get url(): string {
    return this.http.url;
  }

  /** Closes the connections. */
  close(): Promise<void> {
    return this.http.close();
  }
}
