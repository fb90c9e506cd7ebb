import { useEffect, useState } from 'react';
import { ApiError } from './session';
import { t } from './strings';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; message: string }
  | { state: 'done'; value: T };

/** Runs `load` when `key` changes; the message of a failure is the catalogue's. */
export function useLoad<T>(key: string, load: () => Promise<T>): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names what `load` reads
  useEffect(() => {
    let current = true;
    setLoaded({ state: 'loading' });
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
  if (error instanceof ApiError) return t('errorGeneric', { message: error.message });
  return t('networkError');
}
