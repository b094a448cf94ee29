/** The pg-boss queue of a namespace's task type: one queue per type, so consumers take only their types. */
export function queueName(prefix: string, namespace: string, taskType: string): string {
  return `${prefix}.${namespace}.${taskType}`;
}
