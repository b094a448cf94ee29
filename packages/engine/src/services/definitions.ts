import {
  compileWorkflow,
  type Definition,
  definitionHash,
  formatProblem,
  parseDefinition,
  storageProblem,
  WeftError,
  type Workflow,
} from '@weft/core';
import type { DefinitionRecord } from '../store/records.js';
import type { Store, StoreTx } from '../store/store.js';
import { checkLimitNames } from './limit-names.js';
import { declaredLimitRows } from './limits.js';
import { nameKey } from './start-hints.js';

/** Deploys definitions and serves them, compiled, to the evaluator. Versions are immutable, so caching is safe. */
export class DefinitionService {
  private readonly compiled = new Map<string, Workflow>();
  private readonly records = new Map<string, DefinitionRecord>();
  /** The version a name's latest was when this process last read it, by `namespace\0name`: a hint only. */
  private readonly latest = new Map<string, string>();

  /** Called after a deploy that set limits. */
  onLimitsChanged: ((namespace: string) => Promise<void>) | null = null;

  constructor(private readonly store: Store) {}

  /** The compiled workflow of a version, if this process has it (never reads the store). */
  cached(definitionId: string): Workflow | undefined {
    return this.compiled.get(definitionId);
  }

  /**
   * Validates YAML and stores it as a version: the same content gives back the existing version, changed
   * content the next number. Invalid YAML changes nothing and throws `invalid_definition` listing every
   * problem with its line.
   */
  async deploy(namespace: string, source: string): Promise<{ record: DefinitionRecord; created: boolean }> {
    const parsed = parseDefinition(source);
    if (!parsed.ok) {
      const lines = parsed.error.map(formatProblem);
      throw new WeftError(
        'invalid_definition',
        `the definition has ${lines.length} problem(s):\n${lines.join('\n')}`,
        422,
        {
          problems: parsed.error,
        },
      );
    }
    return this.deployParsed(namespace, parsed.value, source);
  }

  /** Stores an already validated definition (built in code, for instance). */
  async deployParsed(
    namespace: string,
    definition: Definition,
    source: string,
  ): Promise<{ record: DefinitionRecord; created: boolean }> {
    // Text a YAML escape ("\0") put in the definition would fail its statement: refuse it here instead.
    const unstorable = storageProblem(source, 'source') ?? storageProblem(definition, 'definition');
    if (unstorable)
      throw new WeftError('bad_request', `${unstorable.path} ${unstorable.message}`, 400, {
        problems: [unstorable],
      });
    const hash = definitionHash(definition);
    await checkLimitNames(this.store, namespace, definition);
    const declared = declaredLimitRows(namespace, definition.limits);
    const result = await this.store.transaction(async (tx) => {
      const deployed = tx.deployDefinition(namespace, definition.name, hash, source, definition);
      // A definition that declares limits sets them, in the same transaction as the version.
      if (declared.length > 0) await tx.setLimits(declared);
      return deployed;
    });
    this.records.set(result.record.id, result.record);
    this.latest.delete(nameKey(namespace, definition.name));
    if (declared.length > 0) await this.onLimitsChanged?.(namespace);
    return result;
  }

  /** A definition version by name (latest when no version is given), or a `definition_not_found` error. */
  async resolve(
    namespace: string,
    name: string,
    version?: number,
  ): Promise<{ record: DefinitionRecord; workflow: Workflow }> {
    const record = await this.store.getDefinition(namespace, name, version);
    if (!record) {
      const what =
        version === undefined ? `definition "${name}"` : `version ${version} of definition "${name}"`;
      throw new WeftError(
        'definition_not_found',
        `${what} is not deployed in namespace "${namespace}"; deploy it first`,
        404,
      );
    }
    this.records.set(record.id, record);
    return { record, workflow: this.compile(record) };
  }

  /**
   * For a start: a definition version as `resolve` gives it, but the latest version of a name is taken
   * from what this process last read, when it has it, without reading the store (`hinted`). Another
   * process may have deployed since, so a start of a hinted version checks, in its transaction, that the
   * version is still the latest (`StoreTx.latestDefinitionVersions`), and starts again without the hint
   * (`forgetLatest`) when it is not.
   */
  async resolveForStart(
    namespace: string,
    name: string,
    version?: number,
  ): Promise<{ record: DefinitionRecord; workflow: Workflow; hinted: boolean }> {
    const key = nameKey(namespace, name);
    const id = version === undefined ? this.latest.get(key) : undefined;
    const record = id === undefined ? undefined : this.records.get(id);
    const workflow = id === undefined ? undefined : this.compiled.get(id);
    if (record && workflow) return { record, workflow, hinted: true };
    const found = await this.resolve(namespace, name, version);
    if (version === undefined) {
      // Two reads may answer out of order: keep the newer version.
      const known = this.records.get(this.latest.get(key) ?? '');
      if (!known || known.version < found.record.version) this.latest.set(key, found.record.id);
    }
    return { ...found, hinted: false };
  }

  /** Drops the hints of these names' latest versions: the next start reads them from the store. */
  forgetLatest(names: readonly { namespace: string; name: string }[]): void {
    for (const n of names) this.latest.delete(nameKey(n.namespace, n.name));
  }

  /**
   * The compiled workflow of a stored version. Inside a transaction, pass it: the definition is then read
   * on the transaction's own connection. Reading it from the pool while holding a connection and a run
   * lock can exhaust the pool (every connection held by a transaction waiting for one more), and then
   * nothing moves (test: "a join after a switch", with a cold cache on three engines).
   */
  async workflow(definitionId: string, tx?: Pick<StoreTx, 'getDefinitionById'>): Promise<Workflow> {
    const hit = this.compiled.get(definitionId);
    if (hit) return hit;
    const record =
      this.records.get(definitionId) ??
      (await (tx ? tx.getDefinitionById(definitionId) : this.store.getDefinitionById(definitionId)));
    if (!record) throw new Error(`definition ${definitionId} is missing from the store`);
    return this.compile(record);
  }

  private compile(record: DefinitionRecord): Workflow {
    let workflow = this.compiled.get(record.id);
    if (!workflow) {
      workflow = compileWorkflow(record.definition);
      this.compiled.set(record.id, workflow);
    }
    return workflow;
  }
}
