import { useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../api/endpoints.js';
import { ApiError } from '../api/http.js';
import type { DefinitionProblem } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { YamlEditor } from '../components/yaml-editor.js';

const EXAMPLE = `name: hello
nodes:
  - id: greet
    task_type: hello.greet
`;

/** Problems from an error answer (422 with details.problems), or null when it has none. */
function problemsOf(error: unknown): DefinitionProblem[] | null {
  if (!(error instanceof ApiError)) return null;
  const problems = (error.details as { problems?: DefinitionProblem[] } | undefined)?.problems;
  return Array.isArray(problems) ? problems : null;
}

/**
 * Deploys a definition pasted or uploaded as YAML. "Check" asks the server to validate without storing;
 * both show every problem at its line in the editor and in a list that moves the cursor there.
 */
export function DeployPage() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [source, setSource] = useState(EXAMPLE);
  const [problems, setProblems] = useState<DefinitionProblem[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [goTo, setGoTo] = useState<{ line: number } | null>(null);
  const upload = async (event: ChangeEvent<HTMLInputElement>) => {
    const input = event.target;
    const file = input.files?.[0];
    if (!file) return;
    setSource(await file.text());
    setProblems([]);
    setMessage(null);
    // The same file loaded again, after editing, is read again.
    input.value = '';
  };
  const check = async () => {
    setError(null);
    setMessage(null);
    try {
      const result = await api.validate(source);
      setProblems(result.problems);
      setMessage(result.valid ? 'The definition is valid.' : null);
    } catch (e) {
      setError(e);
    }
  };
  const deploy = async () => {
    setError(null);
    setMessage(null);
    try {
      const result = await api.deploy(source);
      setProblems([]);
      void queries.invalidateQueries({ queryKey: ['definitions'] });
      navigate(`/definitions/${encodeURIComponent(result.name)}?version=${result.version}`);
    } catch (e) {
      const found = problemsOf(e);
      if (found) setProblems(found);
      else setError(e);
    }
  };
  return (
    <section aria-labelledby="deploy-title">
      <h1 id="deploy-title">Deploy a definition</h1>
      <p>
        Paste the YAML or load a file. Deploying the same content again gives back the same version; changed
        content gets the next number.
      </p>
      <label className="file-pick">
        Load a YAML file
        <input type="file" accept=".yaml,.yml,text/yaml,application/yaml" onChange={(e) => void upload(e)} />
      </label>
      <YamlEditor
        value={source}
        onChange={setSource}
        problems={problems}
        label="Definition YAML"
        goTo={goTo}
      />
      <div className="actions">
        <button type="button" className="secondary" onClick={() => void check()}>
          Check
        </button>
        <button type="button" onClick={() => void deploy()}>
          Deploy
        </button>
      </div>
      {message && <p role="status">{message}</p>}
      <ErrorNote error={error} what="Could not deploy" />
      <ProblemList problems={problems} onLine={(line) => setGoTo({ line })} />
    </section>
  );
}

/** The problems the server found, each with a button that moves the editor's cursor to its line. */
function ProblemList(props: { problems: DefinitionProblem[]; onLine: (line: number) => void }) {
  if (props.problems.length === 0) return null;
  return (
    <section aria-labelledby="problems-title" className="problems" role="alert">
      <h2 id="problems-title">
        {props.problems.length} problem{props.problems.length === 1 ? '' : 's'}
      </h2>
      <ul>
        {props.problems.map((p) => (
          <li key={`${p.line}:${p.path}:${p.message}`}>
            <button type="button" className="link" onClick={() => props.onLine(p.line)}>
              line {p.line}
            </button>
            {p.node ? ` (node ${p.node})` : ''}: {p.message}
          </li>
        ))}
      </ul>
    </section>
  );
}
