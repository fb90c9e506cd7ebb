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
  if (error instanceof ApiError && error.status === 403) return t('forbidden', { message: error.message });
  if (error instanceof ApiError && error.status === 404) return t('notFound');
  if (error instanceof ApiError) return t('errorGeneric', { message: error.message });
  return t('networkError');
}
