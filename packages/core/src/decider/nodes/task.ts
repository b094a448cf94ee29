import type { TaskNode } from '../../definition/node-types.js';
import { putTask } from '../task-rows.js';
import { limitKeyOf } from './limit-key.js';
import type { NodeHandler } from './node-handler.js';
import { startingInput } from './node-input.js';

/**
 * A task node: work a worker does. Reaching it queues attempt 1 with the computed input for the workers
 * of its task type; its outcome comes back as `node_completed` or `node_failed`, and a retry queues the
 * next attempt with the same input.
 */
export const taskNode: NodeHandler<TaskNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const input = await startingInput(ctx, node.id, reach);
    if (!input) return;
    const { attempt } = input;
    const limitKey = await limitKeyOf(ctx, node, iteration);
    putTask(ctx, node.id, iteration, waiting, {
      status: 'queued',
      input: input.value,
      arrivals,
      dispatch: {
        taskType: node.taskType,
        priority: node.priority,
        timeoutMs: node.timeoutMs,
        ...(limitKey !== undefined ? { limitKey } : {}),
      },
    });
    ctx.record('task.scheduled', { task_type: node.taskType }, { nodeId: node.id, iteration, attempt });
  },

  async retry(ctx, node, failed, delayMs) {
    const attempt = failed.attempt + 1;
    const { iteration } = failed;
    const limitKey = await limitKeyOf(ctx, node, iteration);
    ctx.emit({
      kind: 'create_task',
      nodeId: node.id,
      iteration,
      attempt,
      status: 'queued',
      input: failed.input,
      output: null,
      error: null,
      arrivals: [],
      dispatch: {
        taskType: node.taskType,
        priority: node.priority,
        timeoutMs: node.timeoutMs,
        ...(delayMs > 0 ? { delayMs } : {}),
        ...(limitKey !== undefined ? { limitKey } : {}),
      },
    });
    ctx.record(
      'task.scheduled',
      { task_type: node.taskType, retry: true, ...(delayMs > 0 ? { delay_ms: delayMs } : {}) },
      { nodeId: node.id, iteration, attempt },
    );
  },
};
