/** One thing wrong with a definition, with where it is. */
export interface DefinitionProblem {
  /** 1-based line in the YAML source (0 when the definition was built in code). */
  readonly line: number;
  /** 1-based column, for a YAML syntax error (the message names it too). */
  readonly column?: number;
  /** The node the problem belongs to, when there is one. */
  readonly node?: string;
  /** Where in the document: `nodes[2].retry.max_attempts`, `edges[0].to`. */
  readonly path: string;
  readonly message: string;
}

/** Formats a problem on one line: `line 12, node "charge": retry.max_attempts: must be at least 1`. */
export function formatProblem(problem: DefinitionProblem): string {
  const where = [problem.line > 0 ? `line ${problem.line}` : '', problem.node ? `node "${problem.node}"` : '']
    .filter(Boolean)
    .join(', ');
  return `${where ? `${where}: ` : ''}${problem.message}`;
}

/** Suggests the closest of `options` to a misspelt `word`, or nothing when none is close. */
export function suggest(word: string, options: readonly string[]): string | undefined {
  if (word.length < 3) return undefined;
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  const lower = word.toLowerCase();
  for (const option of options) {
    const other = option.toLowerCase();
    if (lower.length >= 4 && other.length >= 4 && lower.slice(0, 4) === other.slice(0, 4)) return option;
    const d = distance(lower, other);
    if (d < bestDistance) {
      best = option;
      bestDistance = d;
    }
  }
  return best;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}
