import { type ReactNode, useEffect, useId, useRef } from 'react';

/**
 * A modal dialog on the browser's own <dialog>: it traps focus, closes on Escape, and gives focus back
 * to what had it when it closes.
 */
export function Dialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      className={props.wide ? 'dialog wide' : 'dialog'}
      onClose={props.onClose}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      {props.open && (
        <>
          <header className="dialog-head">
            <h2 id={titleId}>{props.title}</h2>
            <button type="button" className="ghost" aria-label="Close" onClick={props.onClose}>
              ×
            </button>
          </header>
          <div className="dialog-body">{props.children}</div>
        </>
      )}
    </dialog>
  );
}
