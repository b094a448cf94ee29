import { useQuery } from '@tanstack/react-query';
import { diffLines } from 'diff';
import { useState } from 'react';
import { api } from '../api/endpoints.js';
import { useNamespace } from '../lib/namespace-context.js';

/** The YAML of two versions of a definition, line by line: what was removed, what was added. */
export function VersionDiff(props: { name: string; versions: number[]; to: number }) {
  const ns = useNamespace();
  const others = props.versions.filter((v) => v !== props.to);
  // The version picked to compare with, unless the page has since moved to that very version: then the
  // one before the shown version again (never a version against itself).
  const [picked, setFrom] = useState<number | null>(null);
  const from =
    picked !== null && others.includes(picked)
      ? picked
      : (others.filter((v) => v < props.to).at(-1) ?? others[0]!);
  const read = (v: number) => ({
    queryKey: ['definition', ns, props.name, v],
    queryFn: () => api.definitionVersion(props.name, v),
    staleTime: Number.POSITIVE_INFINITY,
  });
  const a = useQuery(read(from));
  const b = useQuery(read(props.to));
  const parts = a.data && b.data ? diffLines(a.data.source, b.data.source) : [];
  // Each part keyed by where it starts in the diff's lines.
  const starts = parts.reduce<number[]>((acc, _part, i) => {
    acc.push(i === 0 ? 0 : acc[i - 1]! + (parts[i - 1]!.count ?? 0));
    return acc;
  }, []);
  return (
    <section aria-labelledby="diff-title" className="panel">
      <h2 id="diff-title">
        Changes from{' '}
        <select
          aria-label="Compare with version"
          value={from}
          onChange={(e) => setFrom(Number(e.target.value))}
        >
          {others.map((v) => (
            <option key={v} value={v}>
              v{v}
            </option>
          ))}
        </select>{' '}
        to v{props.to}
      </h2>
      <figure className="diff-figure">
        <figcaption className="visually-hidden">{`Differences between v${from} and v${props.to}`}</figcaption>
        <pre className="diff">
          {parts.map((part, i) => {
            const sign = part.added ? '+' : part.removed ? '-' : ' ';
            const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
            const lines = part.value.replace(/\n$/, '').split('\n');
            return (
              <span key={`${starts[i]}:${kind}`} className={`diff-${kind}`}>
                {part.added && <span className="visually-hidden">Added lines:</span>}
                {part.removed && <span className="visually-hidden">Removed lines:</span>}
                {lines.map((line) => `${sign} ${line}\n`).join('')}
              </span>
            );
          })}
          {parts.length > 0 &&
            parts.every((p) => !p.added && !p.removed) &&
            'The two versions have the same YAML.'}
        </pre>
      </figure>
    </section>
  );
}
