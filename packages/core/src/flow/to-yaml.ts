import { stringify } from 'yaml';
import type { Doc } from './graph-builder.js';

/**
 * Prints a workflow document as YAML in the format `weft deploy` takes: one node per item, flow-style
 * for short maps, no line folding (an expression is never split).
 */
export function toYaml(doc: Doc): string {
  return stringify(doc, { lineWidth: 0, flowCollectionPadding: true, aliasDuplicateObjects: false });
}
