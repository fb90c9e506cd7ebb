import type { Action } from '../useApi';

/** What an action said: a status when it worked, an alert when it did not. */
export function Outcome({ action }: { action: Action }) {
  if (!action.outcome) return null;
  return action.outcome.ok ? (
    <p className="notice" role="status">
      {action.outcome.message}
    </p>
  ) : (
    <p className="error" role="alert">
      {action.outcome.message}
    </p>
  );
}
