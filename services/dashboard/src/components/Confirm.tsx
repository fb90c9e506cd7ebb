import { type ReactNode, useId, useRef } from 'react';
import { t } from '../strings';

/**
 * A button whose action runs only once confirmed in a modal dialog (the browser's own
 * `<dialog>`: it holds the focus, Escape cancels, and the focus returns to the button after).
 * For what cannot be undone: rotating or revoking a key, rotating a secret, deactivating a user.
 */
export function ConfirmButton({
  label,
  title,
  children,
  confirmLabel,
  disabled,
  onConfirm,
}: {
  label: string;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  disabled?: boolean;
  onConfirm: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const heading = useId();
  return (
    <>
      <button
        type="button"
        className="secondary"
        disabled={disabled}
        onClick={() => dialog.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={heading} className="confirm">
        <h2 id={heading}>{title}</h2>
        {children}
        <div className="actions">
          {/* Cancel first and focused: Enter on a dialog that opened by mistake does nothing. */}
          {/* biome-ignore lint/a11y/noAutofocus: a modal dialog moves the focus into itself */}
          <button type="button" className="secondary" autoFocus onClick={() => dialog.current?.close()}>
            {t('cancel')}
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => {
              dialog.current?.close();
              onConfirm();
            }}
          >
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
