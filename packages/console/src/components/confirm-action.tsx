import { type ReactNode, useState } from 'react';
import { Dialog } from './dialog.js';
import { ErrorNote } from './error-note.js';

/**
 * An operator action behind a confirmation: the dialog says what will happen, asks for a reason (kept in
 * the run's history), and shows the server's refusal when there is one. `hidden` hides the button when
 * the action does not apply; a dialog already open stays open, so a page updated live (the run changed
 * meanwhile) does not take away what the operator was typing, and a confirm then shows the refusal.
 */
export function ConfirmAction(props: {
  label: string;
  title: string;
  explain: ReactNode;
  reasonRequired?: boolean;
  danger?: boolean;
  disabled?: boolean;
  hidden?: boolean;
  children?: ReactNode;
  /** Does the action with the reason; a thrown error is shown in the dialog. */
  act: (reason: string) => Promise<unknown>;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.act(reason.trim());
      setOpen(false);
      setReason('');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const missing = props.reasonRequired && reason.trim() === '';
  return (
    <>
      {!props.hidden && (
        <button
          type="button"
          className={props.danger ? 'danger' : 'secondary'}
          disabled={props.disabled}
          onClick={() => setOpen(true)}
        >
          {props.label}
        </button>
      )}
      <Dialog open={open} title={props.title} onClose={() => setOpen(false)}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void confirm();
          }}
        >
          <div>{props.explain}</div>
          {props.children}
          <label>
            Reason {props.reasonRequired ? '(required)' : '(optional)'}, kept in the run's history
            <textarea value={reason} rows={2} onChange={(e) => setReason(e.target.value)} />
          </label>
          <ErrorNote error={error} />
          <div className="actions">
            <button type="submit" className={props.danger ? 'danger' : ''} disabled={busy || missing}>
              Confirm: {props.label}
            </button>
            <button type="button" className="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}
