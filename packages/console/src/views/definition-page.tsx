import { useQuery } from '@tanstack/react-query';
import { useParams, useSearchParams } from 'react-router';
import { api } from '../api/endpoints.js';
import { ErrorNote } from '../components/error-note.js';
import { GraphView } from '../components/graph-view.js';
import { YamlEditor } from '../components/yaml-editor.js';
import { formatTime } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';
import { StartRun } from './start-run.js';
import { VersionDiff } from './version-diff.js';

/** One definition: its versions, the chosen version's YAML beside its graph, a diff between two versions. */
export function DefinitionPage() {
  const { name = '' } = useParams();
  const ns = useNamespace();
  const [params, setParams] = useSearchParams();
  const versions = useQuery({
    queryKey: ['versions', ns, name],
    queryFn: () => api.definitionVersions(name),
  });
  const list = versions.data?.versions ?? [];
  const latest = list.at(-1)?.version;
  const chosen = Number(params.get('version')) || latest;
  const version = useQuery({
    queryKey: ['definition', ns, name, chosen],
    queryFn: () => api.definitionVersion(name, chosen!),
    enabled: chosen !== undefined,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const pick = (v: number) => {
    const next = new URLSearchParams(params);
    next.set('version', String(v));
    setParams(next);
  };
  return (
    <section aria-labelledby="definition-title">
      <div className="page-head">
        <h1 id="definition-title">{name}</h1>
        {version.data && <StartRun definition={name} version={version.data.version} />}
      </div>
      <ErrorNote error={versions.error ?? version.error} what={`Definition ${name}`} />
      <div className="version-bar">
        <label>
          Version
          <select value={chosen ?? ''} onChange={(e) => pick(Number(e.target.value))}>
            {[...list].reverse().map((v) => (
              <option key={v.version} value={v.version}>
                v{v.version} · {formatTime(v.created_at)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {version.data && (
        <div className="side-by-side">
          <div>
            <h2>YAML</h2>
            <YamlEditor
              value={version.data.source}
              readOnly
              label={`YAML of ${name} v${version.data.version}`}
            />
          </div>
          <div>
            <h2>Graph</h2>
            <GraphView
              nodes={version.data.definition.nodes}
              edges={version.data.definition.edges}
              label={`Graph of ${name} v${version.data.version}`}
              height={420}
            />
          </div>
        </div>
      )}
      {list.length > 1 && chosen !== undefined && (
        <VersionDiff name={name} versions={list.map((v) => v.version)} to={chosen} />
      )}
    </section>
  );
}
