import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { api } from '../api/endpoints.js';

const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The namespace the console works in: typed, or picked from the namespaces the server knows. */
export function NamespacePicker(props: { value: string; onChange: (value: string) => void }) {
  const [text, setText] = useState(props.value);
  const listId = useId();
  const known = useQuery({ queryKey: ['namespaces'], queryFn: api.namespaces, staleTime: 30_000 });
  useEffect(() => setText(props.value), [props.value]);
  const valid = NAMESPACE.test(text);
  return (
    <form
      className="namespace"
      onSubmit={(event) => {
        event.preventDefault();
        if (valid && text !== props.value) props.onChange(text);
      }}
    >
      <label>
        <span className="tool-label">Namespace</span>
        <input
          aria-label="Namespace"
          list={listId}
          value={text}
          size={12}
          aria-invalid={!valid}
          onChange={(event) => setText(event.target.value.trim())}
          onBlur={() => valid && text !== props.value && props.onChange(text)}
        />
      </label>
      <datalist id={listId}>
        {(known.data?.items ?? []).map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
    </form>
  );
}
