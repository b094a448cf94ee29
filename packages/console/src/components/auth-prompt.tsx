import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { apiKey, onAuthRequired, setApiKey } from '../api/session.js';
import { Dialog } from './dialog.js';

/**
 * The API key: asked for when the server answers 401 (or from the header's button), kept for this
 * browser session only, and sent as a bearer token on every request and on live streams.
 */
export function AuthPrompt() {
  const queries = useQueryClient();
  const [open, setOpen] = useState(false);
  const [refused, setRefused] = useState(false);
  const [key, setKey] = useState('');
  const inputId = useId();
  useEffect(
    () =>
      onAuthRequired(() => {
        setRefused(apiKey() !== null);
        setOpen(true);
      }),
    [],
  );
  const hasKey = apiKey() !== null;
  return (
    <>
      <button type="button" className="ghost" onClick={() => setOpen(true)}>
        {hasKey ? 'API key ✓' : 'API key'}
      </button>
      <Dialog open={open} title="API key" onClose={() => setOpen(false)}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setApiKey(key);
            setKey('');
            setOpen(false);
            setRefused(false);
            void queries.invalidateQueries();
          }}
        >
          <p>
            {refused
              ? 'The server refused the key. Enter a valid API key.'
              : 'This server asks for an API key. It is kept for this browser session only.'}
          </p>
          <label htmlFor={inputId}>API key</label>
          <input
            id={inputId}
            type="password"
            autoComplete="off"
            value={key}
            onChange={(event) => setKey(event.target.value)}
          />
          <div className="actions">
            <button type="submit">Use this key</button>
            {hasKey && (
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  setApiKey('');
                  setOpen(false);
                  void queries.invalidateQueries();
                }}
              >
                Forget the key
              </button>
            )}
          </div>
        </form>
      </Dialog>
    </>
  );
}
