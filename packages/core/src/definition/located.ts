import { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { Json } from '../json.js';

/** A YAML value with the line it starts on, so that every problem can point at the source. */
export type Located =
  | { readonly kind: 'map'; readonly line: number; readonly entries: readonly LocatedEntry[] }
  | { readonly kind: 'seq'; readonly line: number; readonly items: readonly Located[] }
  | { readonly kind: 'scalar'; readonly line: number; readonly value: string | number | boolean | null };

/** One `key: value` of a YAML map. */
export interface LocatedEntry {
  readonly key: string;
  readonly line: number;
  readonly value: Located;
}

/** A YAML problem: a syntax error (the text cannot be read as YAML) or a key repeated in one map. */
export interface SyntaxProblem {
  readonly line: number;
  /** 1-based column where the problem starts; absent for a repeated key (the line says where). */
  readonly column?: number;
  readonly message: string;
  /** True for a syntax error: nothing of the document can be trusted. A repeated key leaves the rest. */
  readonly fatal: boolean;
}

/**
 * Parses YAML text into a located tree. A syntax error gives no tree and every syntax problem, each at its
 * own line and column; a key repeated in one map is a problem too, but the tree is still built (with the
 * key's first value), so the rest of the document can be checked.
 */
export function parseLocated(text: string): { tree: Located | null; problems: SyntaxProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false });
  const problems: SyntaxProblem[] = doc.errors.map((e) => {
    // Without prettyErrors the error carries only its offsets: place them with the line counter.
    const at = lineCounter.linePos(e.pos[0]);
    return { line: at.line, column: at.col, message: e.message.split('\n')[0] ?? e.message, fatal: true };
  });
  if (problems.length > 0) return { tree: null, problems };
  if (doc.contents == null)
    return { tree: null, problems: [{ line: 1, message: 'the document is empty', fatal: true }] };
  try {
    return { tree: locate(doc, lineCounter, problems), problems };
  } catch (e) {
    if (!(e instanceof Unreadable)) throw e;
    return { tree: null, problems: [{ line: 1, message: e.message, fatal: true }] };
  }
}

/** The located tree of a parsed document; keys repeated in a map are added to `problems`. */
function locate(doc: Document, lineCounter: LineCounter, problems: SyntaxProblem[]): Located {
  const lineOf = (node: Node | null | undefined): number =>
    node?.range ? lineCounter.linePos(node.range[0]).line : 1;
  // An alias inside the node it names would expand forever, and aliases of aliases can expand a short text
  // into billions of nodes: both are refused as problems rather than exhausting the stack or memory.
  const expanding = new Set<unknown>();
  let nodes = 0;
  const convert = (node: unknown): Located => {
    if (++nodes > MAX_NODES) throw new Unreadable(`the document expands to more than ${MAX_NODES} values`);
    if (isAlias(node)) {
      const target = node.resolve(doc);
      if (expanding.has(target))
        throw new Unreadable(`the alias *${node.source} is inside the value it names`);
      expanding.add(target);
      try {
        return convert(target);
      } finally {
        expanding.delete(target);
      }
    }
    if (isMap(node)) {
      const entries: LocatedEntry[] = [];
      const first = new Map<string, number>();
      for (const pair of node.items) {
        const keyNode = pair.key as Node | null;
        const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
        const line = lineOf(keyNode);
        const earlier = first.get(key);
        if (earlier !== undefined) {
          problems.push({
            line,
            message: `the key "${key}" appears twice in one map (first on line ${earlier})`,
            fatal: false,
          });
          continue;
        }
        first.set(key, line);
        entries.push({
          key,
          line,
          value: pair.value == null ? { kind: 'scalar', line, value: null } : convert(pair.value),
        });
      }
      return { kind: 'map', line: lineOf(node), entries };
    }
    if (isSeq(node)) return { kind: 'seq', line: lineOf(node), items: node.items.map(convert) };
    if (isScalar(node)) {
      const v = node.value;
      const value =
        v === undefined || v === null
          ? null
          : typeof v === 'object'
            ? String(v)
            : (v as string | number | boolean);
      return { kind: 'scalar', line: lineOf(node), value };
    }
    return { kind: 'scalar', line: 1, value: null };
  };
  return convert(doc.contents);
}

/** Most values a document may expand to (aliases counted at every use). */
const MAX_NODES = 100_000;

class Unreadable extends Error {}

/** Turns a located tree back into plain JSON. */
export function toJson(node: Located): Json {
  switch (node.kind) {
    case 'scalar':
      return node.value;
    case 'seq':
      return node.items.map(toJson);
    case 'map': {
      const out: { [key: string]: Json } = {};
      for (const entry of node.entries) out[entry.key] = toJson(entry.value);
      return out;
    }
  }
}

/** Describes a located value for error messages: `a list`, `text "x"`, `the number 3`. */
export function describeLocated(node: Located): string {
  if (node.kind === 'map') return 'a map';
  if (node.kind === 'seq') return 'a list';
  if (node.value === null) return 'empty';
  if (typeof node.value === 'string') return `text ${JSON.stringify(node.value)}`;
  return `${typeof node.value} ${String(node.value)}`;
}
