import type { MappingSource } from '../expr/mapping.js';
import type { JsonObject } from '../json.js';
import { isJsonObject } from '../json.js';
import { err, ok, type Result } from '../result.js';
import { type Defaults, Draft } from './draft.js';
import { deepFreeze } from './freeze.js';
import { describeLocated, parseLocated, type SyntaxProblem } from './located.js';
import { readStatusCallback } from './parse-effect-nodes.js';
import { deadlineEdges } from './parse-human.js';
import { readLimits } from './parse-limits.js';
import { readRetry } from './parse-retry.js';
import { readTriggers } from './parse-triggers.js';
import { MAX_DURATION_MS, NAME_PATTERN } from './patterns.js';
import type { DefinitionProblem } from './problems.js';
import { readEdges } from './read-edges.js';
import { readNodes } from './read-nodes.js';
import { MapReader } from './reader.js';
import { DEFAULT_RETRY, type Definition } from './types.js';
import { validateDefinition } from './validate.js';

/**
 * Parses and validates a YAML definition. Every problem is returned in one pass, each with its line and,
 * where it belongs to a node, the node id: a YAML syntax error at its own line and column; otherwise every
 * field problem and every graph problem (duplicate ids, unknown edge ends, cycles, expressions), checked
 * on what could be read, with a broken node standing in for itself where its shape is not needed.
 * Nothing is returned half-valid; a valid definition comes back deeply frozen.
 */
export function parseDefinition(text: string): Result<Definition, DefinitionProblem[]> {
  const { tree, problems: yaml } = parseLocated(text);
  const draft = new Draft();
  draft.problems.push(...yaml.map(yamlProblem));
  if (!tree) return err(draft.problems);
  if (tree.kind !== 'map') {
    const message = `a definition must be a map with name, nodes and edges, not ${describeLocated(tree)}`;
    return err([...draft.problems, { line: tree.line, path: '', message }]);
  }
  const top = new MapReader(tree, '', draft.problems);
  const definition = readDefinition(top, draft);
  const read = draft.problems.length;
  const checked = validateDefinition(definition, draft.broken);
  // A graph check may say again what reading said (the same line and words): say it once.
  const said = draft.problems.slice(0, read);
  const problems = [
    ...said,
    ...checked.filter((p) => !said.some((q) => q.line === p.line && q.message === p.message)),
  ];
  return problems.length > 0 ? err(problems) : ok(deepFreeze(definition));
}

function yamlProblem(p: SyntaxProblem): DefinitionProblem {
  const at = p.column !== undefined ? ` at column ${p.column}` : '';
  return {
    line: p.line,
    ...(p.column !== undefined ? { column: p.column } : {}),
    path: '',
    message: `YAML syntax${at}: ${p.message}`,
  };
}

/** Reads every section of the definition's top-level map; problems go to the draft. */
function readDefinition(top: MapReader, draft: Draft): Definition {
  const name = top.string('name', {
    required: true,
    pattern: NAME_PATTERN,
    patternHint: 'is not a valid name: use letters, digits, ".", "_" and "-"',
  });
  const description = top.string('description');
  const inputSchema = top.json('input_schema');
  if (inputSchema !== undefined && inputSchema !== null && !isJsonObject(inputSchema)) {
    top.problem('must be a JSON Schema object', top.lineOf('input_schema'), 'input_schema');
  }
  const output = top.json('output');
  const defaults = readDefaults(top);
  const nodes = readNodes(top, draft, defaults, '');
  const edges = [...readEdges(top, draft, ''), ...deadlineEdges(nodes)];
  const limits = readLimits(top);
  const onStatus = readStatusCallback(top);
  const triggers = readTriggers(top);
  top.done(
    'a definition (expected name, description, input_schema, output, defaults, nodes, edges, limits, on_status, triggers)',
  );
  return {
    name: name ?? '',
    ...(description !== undefined ? { description } : {}),
    nodes,
    edges,
    inputSchema: isJsonObject(inputSchema) ? (inputSchema as JsonObject) : null,
    output: (output ?? null) as MappingSource | null,
    ...(limits ? { limits } : {}),
    ...(onStatus ? { onStatus } : {}),
    ...(triggers && triggers.length > 0 ? { triggers } : {}),
  };
}

function readDefaults(top: MapReader): Defaults {
  const reader = top.map('defaults');
  if (!reader) return { retry: DEFAULT_RETRY, timeoutMs: null, priority: 0 };
  const retry = readRetry(reader, DEFAULT_RETRY);
  const timeoutMs = reader.duration('timeout', { minMs: 1, maxMs: MAX_DURATION_MS }) ?? null;
  const priority = reader.integer('priority', { min: -1000, max: 1000 }) ?? 0;
  reader.done('defaults (expected retry, timeout, priority)');
  return { retry, timeoutMs, priority };
}
