import {
  fitLines,
  type HeldAttempt,
  type StoredTaskLogLine,
  type TaskLogLimits,
  type TaskLogLine,
  type TaskLogQuery,
  type TaskLogStore,
  type TaskLogVerdict,
} from '@weft/engine';
import type { Sql } from 'postgres';
import { holdTaskLog, listTaskLogs, writeTaskLogLines } from './ops/task-logs.js';

/** PostgreSQL's code for a foreign key violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/** Task log lines in `weft.task_logs`, kept with their run (`ON DELETE CASCADE`). */
export class PgTaskLogStore implements TaskLogStore {
  constructor(private readonly sql: Sql) {}

  async append(
    namespace: string | null,
    held: HeldAttempt,
    lines: readonly TaskLogLine[],
    limits: TaskLogLimits,
  ): Promise<TaskLogVerdict | null> {
    try {
      return await this.sql.begin(async (tx) => {
        const usage = await holdTaskLog(tx, held, namespace);
        if (!usage) return null;
        const fitted = fitLines(usage, lines, limits);
        if (fitted.rows.length > 0)
          await writeTaskLogLines(
            tx,
            { ...held, nodeId: usage.nodeId, iteration: usage.iteration },
            usage,
            fitted.rows,
            fitted.usage,
          );
        return {
          kept: lines.length - fitted.dropped,
          dropped: fitted.dropped,
          truncated: fitted.usage.truncated,
        };
      });
    } catch (e) {
      // The run was deleted while its first lines were written: nothing to keep them with.
      if ((e as { code?: string }).code === FOREIGN_KEY_VIOLATION) return null;
      throw e;
    }
  }

  list(query: TaskLogQuery): Promise<StoredTaskLogLine[]> {
    return listTaskLogs(this.sql, query);
  }
}
