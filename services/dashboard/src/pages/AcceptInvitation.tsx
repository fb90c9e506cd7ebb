import { type FormEvent, useState } from 'react';
import { ApiError, acceptInvitation } from '../session';
import { t } from '../strings';
import { messageOf } from '../useApi';

/** Why the API refused an acceptance, in the person's words. */
function explain(error: unknown): string {
  if (error instanceof ApiError && error.details.some((d) => d.field === 'token'))
    return t('invitationInvalid');
  const password = error instanceof ApiError ? error.details.find((d) => d.field === 'password') : undefined;
  if (password) return t('passwordRefused', { reason: password.message });
  return messageOf(error);
}

/**
 * The page an invitation link opens (`#/accept-invitation/{token}`): the invited person sets a
 * password and is signed in. The token travels in the URL's fragment, which a browser never
 * sends to a server, so it reaches no log; once redeemed it is taken out of the address bar.
 */
export function AcceptInvitation({ token, onAccepted }: { token: string; onAccepted: () => Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = String(form.get('password') ?? '');
    if (password !== String(form.get('confirm') ?? '')) {
      setError(t('passwordsDiffer'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await acceptInvitation(token, password);
      await onAccepted();
      // Replaces the link's history entry: Back does not return to a spent token.
      location.replace('#/');
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>{t('acceptTitle')}</h1>
      <p>{t('acceptIntro')}</p>
      <form onSubmit={submit}>
        <label htmlFor="password">{t('newPassword')}</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={12}
          maxLength={256}
          required
          aria-describedby="password-rules"
        />
        <p id="password-rules" className="hint">
          {t('passwordRules')}
        </p>
        <label htmlFor="confirm">{t('confirmPassword')}</label>
        <input id="confirm" name="confirm" type="password" autoComplete="new-password" required />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? t('accepting') : t('acceptInvitation')}
        </button>
      </form>
    </main>
  );
}
