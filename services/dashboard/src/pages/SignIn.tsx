import { type FormEvent, useState } from 'react';
import { ApiError, signIn } from '../session';
import { t } from '../strings';

export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await signIn(String(form.get('email') ?? ''), String(form.get('password') ?? ''));
      await onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError(t('badCredentials'));
      else if (err instanceof ApiError && err.status === 429)
        setError(t('tooManyAttempts', { seconds: err.retryAfter ?? 60 }));
      else if (err instanceof ApiError) setError(t('errorGeneric', { message: err.message }));
      else setError(t('networkError'));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>{t('signInTitle')}</h1>
      <p>{t('signInIntro')}</p>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <label htmlFor="email">{t('email')}</label>
        <input id="email" name="email" type="email" autoComplete="username" required />
        <label htmlFor="password">{t('password')}</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? t('signingIn') : t('signIn')}
        </button>
      </form>
    </main>
  );
}
