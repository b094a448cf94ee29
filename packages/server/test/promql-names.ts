import { parser } from '@prometheus-io/lezer-promql';

/** Grafana's own variables, replaced by something PromQL parses before an expression is read. */
const GRAFANA_VARIABLES: Readonly<Record<string, string>> = {
  $__rate_interval: '5m',
  $__interval: '1m',
  $__range: '1h',
};

/**
 * The metric names a PromQL expression (as a Grafana panel holds it) selects, read with Prometheus' own
 * grammar. Throws when the expression does not parse.
 */
export function metricNames(expr: string): string[] {
  let text = expr;
  for (const [name, value] of Object.entries(GRAFANA_VARIABLES)) text = text.replaceAll(name, value);
  const tree = parser.parse(text);
  const names: string[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        names.push(text.slice(node.from, node.to));
    },
  });
  if (errors.length > 0) throw new Error(`not PromQL (at ${errors[0]}): ${expr}`);
  return names;
}

/** Every PromQL expression of a Grafana dashboard: its panels' targets and its variables' queries. */
export function dashboardExpressions(dashboard: unknown): string[] {
  const out: string[] = [];
  const visit = (value: unknown, key: string | null) => {
    if (Array.isArray(value)) for (const v of value) visit(v, null);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) visit(v, k);
    else if (typeof value === 'string' && key === 'expr') out.push(value);
    else if (typeof value === 'string' && key === 'query') {
      // A variable's query: label_values(metric, label) names a metric.
      const m = /^label_values\((.+),\s*\w+\)$/.exec(value);
      if (m) out.push(m[1]!);
    }
  };
  visit(dashboard, null);
  return out;
}
