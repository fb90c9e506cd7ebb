import { useCallback, useEffect, useState } from 'react';
import { ApiError } from './session';
import { t } from './strings';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; message: string }
  | { state: 'done'; value: T };

/**
 * Runs `load` when `key` changes; the message of a failure is the catalogue's. With `keep`, what was loaded stays shown while a new key loads: a list reloaded after an
 * action on one of its rows keeps its place, and the focus stays on the control used.
 */
export function useLoad<T>(key: string, load: () => Promise<T>, keep = false): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names what `load` reads
  useEffect(() => {
    let current = true;
    setLoaded((before) => (keep && before.state === 'done' ? before : { state: 'loading' }));
    load().then(
      (value) => current && setLoaded({ state: 'done', value }),
      (error: unknown) => current && setLoaded({ state: 'error', message: messageOf(error) }),
    );
    return () => {
      current = false;
    };
  }, [key]);
  return loaded;
}

export function messageOf(error: unknown): string {
  // A 403 is the role's (FORBIDDEN) or the organization's: a tier or settlement mode that does
  // not have the action (TIER_NOT_ENTITLED, NOT_PARTNER_SETTLED; docs/api.md, "Errors").
  if (error instanceof ApiError && error.status === 403)
    return error.code === 'FORBIDDEN'
      ? t('forbidden', { message: error.message })
      : t('notEntitled', { message: error.message });
  if (error instanceof ApiError && error.status === 404) return t('notFound');
  if (error instanceof ApiError && error.status === 429)
    return t('rateLimited', { seconds: error.retryAfter ?? 60 });
  if (error instanceof ApiError && error.details.length > 0)
    return t('errorGeneric', {
      message: `${error.message}: ${error.details.map((d) => (d.field ? `${d.field} ${d.message}` : d.message)).join('; ')}`,
    });
  if (error instanceof ApiError) return t('errorGeneric', { message: error.message });
  return t('networkError');
}

export interface Action {
  busy: boolean;
  /** What the last run said: its outcome, or why it failed. */
  outcome: { ok: boolean; message: string } | null;
  /**
   * Runs a write: `work` answers the message to show on success (or null for none). A failure
   * shows `explain`'s message for it when it has one (a rule of the API said plainly), else the
   * catalogue's. Answers whether it succeeded.
   */
  run: (
    work: () => Promise<string | null>,
    explain?: (error: unknown) => string | undefined,
  ) => Promise<boolean>;
}

/** The state of a form's or a button's write: busy while it runs, then its outcome. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Action['outcome']>(null);
  const run = useCallback<Action['run']>(async (work, explain) => {
    setBusy(true);
    setOutcome(null);
    try {
      const message = await work();
      setOutcome(message === null ? null : { ok: true, message });
      return true;
    } catch (error) {
      setOutcome({ ok: false, message: explain?.(error) ?? messageOf(error) });
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, outcome, run };
}
