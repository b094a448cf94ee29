import { ApiError } from '../api/http.js';

/** An error as the operator should read it: the server's message, and its code for searching the docs. */
export function ErrorNote(props: { error: unknown; what?: string }) {
  if (!props.error) return null;
  const error = props.error;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError ? error.code : null;
  return (
    <div className="error-note" role="alert">
      {props.what && <strong>{props.what}: </strong>}
      <span className="pre-line">{message}</span>
      {code && <code className="error-code">{code}</code>}
    </div>
  );
}
