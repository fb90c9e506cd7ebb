import { useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { ConfirmButton } from '../components/Confirm';
import { Outcome } from '../components/Outcome';
import { formatDate } from '../format';
import { api } from '../session';
import { t } from '../strings';
import { useAction, useLoad } from '../useApi';

type KeyMetadata = components['schemas']['ApiKeyMetadata'];

/**
 * The organization's API key: its masked metadata, rotation and revocation. A rotation's key and
 * secret are in this page's memory only, shown once: the API keeps only their hashes, and
 * leaving the page forgets them.
 */
export function ApiKey() {
  const [version, setVersion] = useState(0);
  const [issued, setIssued] = useState<{ apiKey: string; apiSecret: string } | null>(null);
  const action = useAction();
  const key = useLoad(`key#${version}`, () => api<{ data: KeyMetadata }>('/organizations/me/api-key'), true);

  const rotate = () =>
    void action.run(async () => {
      const rotated = await api<{ data: { apiKey: string; apiSecret: string } }>(
        '/organizations/me/api-key/rotate',
        'POST',
      );
      setIssued(rotated.data);
      setVersion((v) => v + 1);
      return null;
    });
  const revoke = () =>
    void action.run(async () => {
      await api('/organizations/me/api-key/revoke', 'POST');
      setIssued(null);
      setVersion((v) => v + 1);
      return t('keyRevoked');
    });

  return (
    <>
      <h1>{t('apiKeyTitle')}</h1>
      {key.state === 'loading' && <p>{t('loading')}</p>}
      {key.state === 'error' && <p role="alert">{key.message}</p>}
      {key.state === 'done' && (
        <dl className="fields">
          <dt>{t('apiKey')}</dt>
          <dd>
            <code data-testid="api-key-masked">{key.value.data.masked}</code>
          </dd>
          <dt>{t('status')}</dt>
          <dd data-testid="api-key-status">
            {key.value.data.active ? t('keyActive') : t('keyRevokedState')}
          </dd>
          <dt>{t('created')}</dt>
          <dd>{formatDate(key.value.data.createdAt)}</dd>
          <dt>{t('rotatedAt')}</dt>
          <dd>{formatDate(key.value.data.rotatedAt)}</dd>
        </dl>
      )}
      {issued && (
        <div className="once" data-testid="new-api-key">
          <h2>{t('newKeyTitle')}</h2>
          <p>{t('newKeyOnce')}</p>
          <dl className="fields">
            <dt>{t('apiKey')}</dt>
            <dd>
              <code className="secret" data-testid="new-api-key-value">
                {issued.apiKey}
              </code>
            </dd>
            <dt>{t('apiSecret')}</dt>
            <dd>
              <code className="secret" data-testid="new-api-secret-value">
                {issued.apiSecret}
              </code>
            </dd>
          </dl>
          <button type="button" className="secondary" onClick={() => setIssued(null)}>
            {t('doneCopying')}
          </button>
        </div>
      )}
      <div className="row-actions">
        <ConfirmButton
          label={t('rotateKey')}
          title={t('rotateKeyTitle')}
          confirmLabel={t('rotateKey')}
          disabled={action.busy}
          onConfirm={rotate}
        >
          <p>{t('rotateKeyWarning')}</p>
        </ConfirmButton>
        {key.state === 'done' && key.value.data.active && (
          <ConfirmButton
            label={t('revokeKey')}
            title={t('revokeKeyTitle')}
            confirmLabel={t('revokeKey')}
            disabled={action.busy}
            onConfirm={revoke}
          >
            <p>{t('revokeKeyWarning')}</p>
          </ConfirmButton>
        )}
      </div>
      <Outcome action={action} />
    </>
  );
}
