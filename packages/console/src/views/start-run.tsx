import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../api/endpoints.js';
import type { Json } from '../api/types.js';
import { Dialog } from '../components/dialog.js';
import { ErrorNote } from '../components/error-note.js';

/** Starts a run of a definition version with JSON input, then opens it. */
export function StartRun(props: { definition: string; version: number }) {
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [input, setInput] = useState('{}');
  const [error, setError] = useState<unknown>(null);
  const start = async () => {
    setError(null);
    let parsed: Json;
    try {
      parsed = JSON.parse(input || '{}') as Json;
    } catch (e) {
      setError(new Error(`the input is not valid JSON: ${(e as Error).message}`));
      return;
    }
    try {
      const run = await api.startRun(props.definition, parsed, props.version);
      setOpen(false);
      navigate(`/runs/${run.id}`);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Start a run
      </button>
      <Dialog
        open={open}
        title={`Start ${props.definition} v${props.version}`}
        onClose={() => setOpen(false)}
      >
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void start();
          }}
        >
          <label>
            Input (JSON)
            <textarea className="mono" rows={6} value={input} onChange={(e) => setInput(e.target.value)} />
          </label>
          <ErrorNote error={error} />
          <div className="actions">
            <button type="submit">Start</button>
            <button type="button" className="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}
