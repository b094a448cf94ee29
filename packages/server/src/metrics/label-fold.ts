/** The label value that stands for every value past a label's limit. */
export const OTHER_LABEL = '(other)';

/**
 * Keeps a label's cardinality bounded: the first `limit` distinct values seen keep their own series; any
 * value after them is counted as `(other)`. Values seen once keep their series for the life of the process,
 * so a series never changes its meaning.
 */
export class LabelFold {
  private readonly seen = new Set<string>();

  constructor(readonly limit: number) {}

  /** The value to label with: `value` itself, or `(other)` once the limit is reached. */
  value(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.limit) return OTHER_LABEL;
    this.seen.add(value);
    return value;
  }
}

/** The label limits of Weft's metrics (documented in docs/reference/metrics.md). */
export const LABEL_LIMITS = {
  namespace: 50,
  definition: 200,
  taskType: 200,
  destination: 50,
} as const;

/** One fold per kind of label, shared by every metric that carries it. */
export interface LabelFolds {
  readonly namespace: LabelFold;
  readonly definition: LabelFold;
  readonly taskType: LabelFold;
  readonly destination: LabelFold;
}

/** Fresh folds with Weft's limits. */
export function labelFolds(): LabelFolds {
  return {
    namespace: new LabelFold(LABEL_LIMITS.namespace),
    definition: new LabelFold(LABEL_LIMITS.definition),
    taskType: new LabelFold(LABEL_LIMITS.taskType),
    destination: new LabelFold(LABEL_LIMITS.destination),
  };
}
