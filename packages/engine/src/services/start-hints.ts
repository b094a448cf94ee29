import type { NewRun } from '../store/store.js';

/** A definition by name. */
export interface DefinitionName {
  readonly namespace: string;
  readonly name: string;
}

/** A definition name as one key (`namespace`, NUL, `name`): what the engine remembers a latest version by. */
export const nameKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;

/**
 * Raised inside a start's transaction when a latest version it took from the engine's memory is no longer
 * the latest: the transaction rolls back, and the batch starts again reading its versions from the store.
 */
export class StaleLatestVersions extends Error {
  constructor(readonly names: readonly DefinitionName[]) {
    super(`a newer version of ${names.map((n) => n.name).join(', ')} was deployed meanwhile`);
  }
}

/** The definitions whose latest version the batch's starts took from memory, each once. */
export function hintedNames(
  starts: readonly { readonly run: NewRun; readonly hinted?: boolean }[],
): DefinitionName[] {
  const names = new Map<string, DefinitionName>();
  for (const s of starts)
    if (s.hinted) {
      const { namespace, definitionName: name } = s.run;
      names.set(nameKey(namespace, name), { namespace, name });
    }
  return [...names.values()];
}

/**
 * Throws `StaleLatestVersions` when a start took, as the latest version of its definition, a version that is
 * not the latest the store holds now (another process deployed since, or the definition is gone).
 */
export function checkHints(
  starts: readonly { readonly run: NewRun; readonly hinted?: boolean }[],
  latest: readonly { namespace: string; name: string; version: number | null }[],
): void {
  const now = new Map(latest.map((l) => [nameKey(l.namespace, l.name), l.version]));
  const stale = new Map<string, DefinitionName>();
  for (const s of starts) {
    if (!s.hinted) continue;
    const key = nameKey(s.run.namespace, s.run.definitionName);
    if (now.get(key) !== s.run.definitionVersion)
      stale.set(key, { namespace: s.run.namespace, name: s.run.definitionName });
  }
  if (stale.size > 0) throw new StaleLatestVersions([...stale.values()]);
}
