import { type Definition, formatProblem, WeftError } from '@weft/core';
import type { Store } from '../store/store.js';

/**
 * Refuses a definition whose task or http nodes use a semaphore or rate-limit key that is declared neither in the
 * definition nor already in the namespace: a typo there would otherwise lift the limit without a word.
 */
export async function checkLimitNames(
  store: Store,
  namespace: string,
  definition: Definition,
): Promise<void> {
  const wanted: { kind: 'semaphore' | 'rate'; name: string; node: string; line: number }[] = [];
  for (const node of definition.nodes) {
    if (node.kind !== 'task' && node.kind !== 'http') continue;
    for (const name of Object.keys(node.semaphores ?? {}))
      if (definition.limits?.semaphores[name] === undefined)
        wanted.push({ kind: 'semaphore', name, node: node.id, line: node.line });
    if (node.rateLimit && definition.limits?.rates[node.rateLimit] === undefined)
      wanted.push({ kind: 'rate', name: node.rateLimit, node: node.id, line: node.line });
  }
  if (wanted.length === 0) return;
  const existing = new Set((await store.listLimits(namespace)).map((l) => `${l.kind}:${l.name}`));
  const problems = wanted
    .filter((w) => !existing.has(`${w.kind}:${w.name}`))
    .map((w) => ({
      line: w.line,
      node: w.node,
      path: w.kind === 'semaphore' ? 'semaphores' : 'rate_limit',
      message: `node "${w.node}" uses ${w.kind === 'semaphore' ? 'semaphore' : 'rate limit'} "${w.name}", which is not declared: add it under limits.${w.kind === 'semaphore' ? 'semaphores' : 'rates'} or set it with weft limits set ${w.kind} ${w.name} ...`,
    }));
  if (problems.length === 0) return;
  const lines = problems.map(formatProblem);
  throw new WeftError(
    'invalid_definition',
    `the definition has ${lines.length} problem(s):\n${lines.join('\n')}`,
    422,
    {
      problems,
    },
  );
}
