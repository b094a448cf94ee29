import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api/endpoints.js';
import { ErrorNote } from '../components/error-note.js';
import { formatTime } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';

/** Every definition of the namespace with its latest version, and the way to deploy one. */
export function DefinitionsPage() {
  const ns = useNamespace();
  const list = useQuery({ queryKey: ['definitions', ns], queryFn: api.definitions });
  return (
    <section aria-labelledby="definitions-title">
      <div className="page-head">
        <h1 id="definitions-title">Definitions</h1>
        <Link className="button" to="/deploy">
          Deploy a definition
        </Link>
      </div>
      <ErrorNote error={list.error} what="Could not list definitions" />
      <table className="grid">
        <caption className="visually-hidden">Definitions of the namespace</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Latest version</th>
            <th scope="col">Versions</th>
            <th scope="col">Last deployed</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((d) => (
            <tr key={d.name}>
              <td>
                <Link to={`/definitions/${encodeURIComponent(d.name)}`}>{d.name}</Link>
              </td>
              <td>v{d.latest_version}</td>
              <td>{d.versions}</td>
              <td>{formatTime(d.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data?.items.length === 0 && <p className="empty">Nothing is deployed in this namespace yet.</p>}
    </section>
  );
}
