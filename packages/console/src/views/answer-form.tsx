import Form from '@rjsf/core';
import type { RJSFSchema } from '@rjsf/utils';
import validator from '@rjsf/validator-ajv8';
import { useState } from 'react';
import { api } from '../api/endpoints.js';
import type { HumanTask, Json } from '../api/types.js';
import { setUserName, userName } from '../lib/user.js';

/**
 * Claiming and answering an open human task: the operator's name, Claim or Release, and a form made from
 * the task's JSON Schema by rjsf, validated as it is filled in (the server checks the answer again).
 */
export function AnswerForm(props: {
  task: HumanTask;
  act: (fn: () => Promise<unknown>, what: string) => Promise<void>;
}) {
  const t = props.task;
  const [user, setUser] = useState(userName());
  const name = user.trim();
  const mine = t.claimed_by !== null && t.claimed_by === name;
  const schema = (t.form && typeof t.form === 'object' ? t.form : { type: 'object' }) as RJSFSchema;
  return (
    <section aria-labelledby="answer-title" className="panel">
      <h2 id="answer-title">Answer</h2>
      <label>
        Your name
        <input value={user} onChange={(e) => setUser(e.target.value)} onBlur={() => setUserName(user)} />
      </label>
      <div className="actions">
        {!mine && (
          <button
            type="button"
            className="secondary"
            disabled={!name}
            onClick={() => void props.act(() => api.claim(t.task_id, name), 'Claimed.')}
          >
            Claim
          </button>
        )}
        {mine && (
          <button
            type="button"
            className="secondary"
            onClick={() => void props.act(() => api.release(t.task_id, name), 'Released.')}
          >
            Release
          </button>
        )}
      </div>
      <Form
        schema={schema}
        validator={validator}
        liveValidate="onChange"
        noHtml5Validate
        showErrorList="top"
        disabled={!name || (t.claimed_by !== null && !mine)}
        onSubmit={({ formData }) => {
          setUserName(user);
          void props.act(
            () => api.complete(t.task_id, name, (formData ?? null) as Json),
            'Answer sent: the run goes on.',
          );
        }}
      >
        <button type="submit">Submit answer</button>
      </Form>
    </section>
  );
}
