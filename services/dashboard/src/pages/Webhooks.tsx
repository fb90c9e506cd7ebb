import { type FormEvent, useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { ConfirmButton } from '../components/Confirm';
import { type Column, DataTable, type ListPage, Table, type TableColumn } from '../components/DataTable';
import { EnumFilter, Filters, type FilterValues, filterQuery } from '../components/Filters';
import { Outcome } from '../components/Outcome';
import { formatDate } from '../format';
import { api } from '../session';
import { t } from '../strings';
import { useAction, useLoad } from '../useApi';

/** The events a test delivery can be of: the catalogue of docs/webhooks.md, "Events". */
const EVENTS: readonly components['schemas']['WebhookTestEventRequest']['event'][] = [
  'policy.activated',
  'determination.delivered',
  'determination.settlement_report_recorded',
  'determination.settlement_report_overdue',
  'payout.completed',
  'payout.failed',
  'kyb.verified',
  'kyb.rejected',
];
const DELIVERY_STATUSES: readonly Delivery['status'][] = ['PENDING', 'DELIVERED', 'FAILED'];

type Delivery = components['schemas']['WebhookDelivery'];
type Attempt = components['schemas']['WebhookDeliveryAttempt'];
type Endpoint = components['schemas']['WebhookConfig'];

const ATTEMPT_COLUMNS: readonly TableColumn<Attempt>[] = [
  { header: t('cycle'), cell: (a) => a.cycle },
  { header: t('attempt'), cell: (a) => a.attempt },
  { header: t('attemptedAt'), cell: (a) => formatDate(a.attemptedAt) },
  { header: t('webhookUrl'), cell: (a) => a.url ?? '—' },
  { header: t('responseStatus'), cell: (a) => a.responseStatus ?? '—' },
  { header: t('error'), cell: (a) => a.error ?? '—' },
  { header: t('duration'), cell: (a) => t('milliseconds', { ms: a.durationMs }) },
];

const retry = (id: string) =>
  api<{ data: Delivery }>(`/organizations/me/webhook/deliveries/${id}/retry`, 'POST');

/** The URL form. The answer's secret is not kept: it is shown only when asked for. */
function EndpointForm({ url, onSaved }: { url: string | null; onSaved: (url: string) => void }) {
  const action = useAction();
  function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const next = String(new FormData(event.currentTarget).get('url') ?? '');
    void action.run(async () => {
      const saved = await api<{ data: Endpoint }>('/organizations/me/webhook', 'PUT', { url: next });
      onSaved(saved.data.url ?? next);
      return t('webhookSaved');
    });
  }
  return (
    <form className="stacked" onSubmit={save}>
      <label htmlFor="webhook-url">{t('webhookUrl')}</label>
      <input
        id="webhook-url"
        name="url"
        type="url"
        required
        maxLength={2048}
        defaultValue={url ?? ''}
        placeholder="https://"
        aria-describedby="webhook-url-rules"
      />
      <p id="webhook-url-rules" className="hint">
        {t('webhookUrlRules')}
      </p>
      <Outcome action={action} />
      <button type="submit" disabled={action.busy}>
        {t('save')}
      </button>
    </form>
  );
}

/** The signing secret: fetched only when revealed, hidden again on demand; rotated once confirmed. */
function Secret({ secretSet }: { secretSet: boolean }) {
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  if (!secretSet) return <p>{t('secretNotYet')}</p>;
  return (
    <>
      {secret ? (
        <p>
          <code className="secret" data-testid="webhook-secret">
            {secret}
          </code>
        </p>
      ) : (
        <p>{t('secretHidden')}</p>
      )}
      <div className="row-actions">
        <button
          type="button"
          className="secondary"
          disabled={action.busy}
          aria-expanded={secret !== null}
          onClick={() =>
            secret
              ? setSecret(null)
              : void action.run(async () => {
                  setSecret((await api<{ data: Endpoint }>('/organizations/me/webhook')).data.secret);
                  return null;
                })
          }
        >
          {secret ? t('hideSecret') : t('revealSecret')}
        </button>
        <ConfirmButton
          label={t('rotateSecret')}
          title={t('rotateSecretTitle')}
          confirmLabel={t('rotateSecret')}
          disabled={action.busy}
          onConfirm={() =>
            void action.run(async () => {
              const rotated = await api<{ data: { secret: string } }>(
                '/organizations/me/webhook/rotate-secret',
                'POST',
              );
              setSecret(rotated.data.secret);
              return t('secretRotated');
            })
          }
        >
          <p>{t('rotateSecretWarning')}</p>
        </ConfirmButton>
      </div>
      <Outcome action={action} />
    </>
  );
}

function TestEvent({ onSent }: { onSent: () => void }) {
  const action = useAction();
  function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get('event'));
    void action.run(async () => {
      const sent = await api<{ data: Delivery }>('/organizations/me/webhook/test', 'POST', { event: name });
      onSent();
      return t('testSent', { event: sent.data.event, id: sent.data.id });
    });
  }
  return (
    <form className="filters" onSubmit={send}>
      <label htmlFor="test-event">{t('testEvent')}</label>
      <select id="test-event" name="event" defaultValue="determination.delivered">
        {EVENTS.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      <button type="submit" className="secondary" disabled={action.busy}>
        {t('sendTest')}
      </button>
      <Outcome action={action} />
    </form>
  );
}

function RetryButton({ delivery, onRetried }: { delivery: Delivery; onRetried: () => void }) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        className="secondary"
        disabled={action.busy}
        aria-label={t('retryDelivery', { event: delivery.event, id: delivery.id })}
        onClick={() =>
          void action.run(async () => {
            await retry(delivery.id);
            onRetried();
            return null;
          })
        }
      >
        {t('retry')}
      </button>
      <Outcome action={action} />
    </>
  );
}

interface LogPage {
  data: { deliveries: Delivery[]; total: number; page: number; limit: number };
}

/** The delivery log's envelope (`data: { deliveries, total, page, limit }`) as a list page. */
async function readLog(path: string): Promise<ListPage<Delivery>> {
  const { deliveries, total, page, limit } = (await api<LogPage>(path)).data;
  return { data: deliveries, pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
}

/** The log, read again when the page's `version` changes (a test event sent) or its own (Refresh, a retry). */
function DeliveryLog({ version }: { version: number }) {
  const [filters, setFilters] = useState<FilterValues>({ status: '' });
  const [retried, setRetried] = useState(false);
  const [own, setOwn] = useState(0);
  const reread = () => setOwn((n) => n + 1);
  const columns: readonly Column<Delivery>[] = [
    {
      header: t('event'),
      cell: (d) => (
        <>
          <a href={`#/webhooks/deliveries/${d.id}`}>{d.event}</a>
          {d.test && ` (${t('test')})`}
        </>
      ),
      csv: (d) => d.event,
    },
    {
      header: t('status'),
      cell: (d) => <span data-testid="delivery-status">{d.status}</span>,
      csv: (d) => d.status,
    },
    { header: t('attempts'), cell: (d) => String(d.attempts), csv: (d) => String(d.attempts) },
    {
      header: t('lastAnswer'),
      cell: (d) => d.lastError ?? d.responseStatus ?? '—',
      csv: (d) => d.lastError ?? String(d.responseStatus ?? ''),
    },
    { header: t('created'), cell: (d) => formatDate(d.createdAt), csv: (d) => d.createdAt },
    {
      header: t('actions'),
      cell: (d) =>
        d.status === 'FAILED' && (
          <RetryButton
            delivery={d}
            onRetried={() => {
              setRetried(true);
              reread();
            }}
          />
        ),
    },
  ];
  return (
    <>
      {retried && (
        <p className="notice" role="status">
          {t('retried')}
        </p>
      )}
      <DataTable
        path={`/organizations/me/webhook/deliveries?${filterQuery(filters)}`}
        load={readLog}
        columns={columns}
        rowKey={(d) => d.id}
        rowClass={(d) => (d.status === 'FAILED' ? 'overdue' : undefined)}
        caption={t('deliveryLog')}
        csvName="webhook-deliveries"
        empty={t('noDeliveries')}
        version={version + own}
        filters={
          <Filters onApply={setFilters}>
            <EnumFilter
              name="status"
              label={t('status')}
              values={DELIVERY_STATUSES}
              value={filters.status ?? ''}
            />
            <button type="button" className="secondary" onClick={reread}>
              {t('refresh')}
            </button>
          </Filters>
        }
      />
    </>
  );
}

export function Webhooks() {
  const [version, setVersion] = useState(0);
  const endpoint = useLoad(
    `endpoint#${version}`,
    async () => {
      const { url, secretSet } = (await api<{ data: Endpoint }>('/organizations/me/webhook')).data;
      return { url, secretSet };
    },
    true,
  );
  const changed = () => setVersion((v) => v + 1);
  return (
    <>
      <h1>{t('webhooksTitle')}</h1>
      {endpoint.state === 'loading' && <p>{t('loading')}</p>}
      {endpoint.state === 'error' && <p role="alert">{endpoint.message}</p>}
      {endpoint.state === 'done' && (
        <>
          <h2>{t('webhookEndpoint')}</h2>
          <EndpointForm url={endpoint.value.url} onSaved={changed} />
          <h2>{t('signingSecret')}</h2>
          <Secret secretSet={endpoint.value.secretSet} />
          {endpoint.value.url && (
            <>
              <h2>{t('testEvents')}</h2>
              <TestEvent onSent={changed} />
            </>
          )}
        </>
      )}
      <h2>{t('deliveryLog')}</h2>
      <DeliveryLog version={version} />
    </>
  );
}

export function DeliveryDetail({ id }: { id: string }) {
  const [version, setVersion] = useState(0);
  const loaded = useLoad(
    `${id}#${version}`,
    () =>
      api<{ data: components['schemas']['WebhookDeliveryDetail'] }>(
        `/organizations/me/webhook/deliveries/${id}`,
      ),
    true,
  );
  return (
    <>
      <p>
        <a href="#/webhooks">{t('backToWebhooks')}</a>
      </p>
      <h1>{t('deliveryTitle', { id })}</h1>
      {loaded.state === 'loading' && <p>{t('loading')}</p>}
      {loaded.state === 'error' && <p role="alert">{loaded.message}</p>}
      {loaded.state === 'done' && (
        <>
          <dl className="fields">
            <dt>{t('event')}</dt>
            <dd>
              {loaded.value.data.event}
              {loaded.value.data.test && ` (${t('test')})`}
            </dd>
            <dt>{t('status')}</dt>
            <dd data-testid="delivery-status">{loaded.value.data.status}</dd>
            <dt>{t('webhookUrl')}</dt>
            <dd>{loaded.value.data.url ?? '—'}</dd>
            <dt>{t('created')}</dt>
            <dd>{formatDate(loaded.value.data.createdAt)}</dd>
            <dt>{t('deliveredAt')}</dt>
            <dd>{formatDate(loaded.value.data.deliveredAt)}</dd>
          </dl>
          <div className="row-actions">
            <RetryButton delivery={loaded.value.data} onRetried={() => setVersion((v) => v + 1)} />
            <button type="button" className="secondary" onClick={() => setVersion((v) => v + 1)}>
              {t('refresh')}
            </button>
          </div>
          <h2>{t('attemptHistory')}</h2>
          {loaded.value.data.attemptHistory.length === 0 ? (
            <p>{t('noAttempts')}</p>
          ) : (
            <Table
              columns={ATTEMPT_COLUMNS}
              rows={loaded.value.data.attemptHistory}
              rowKey={(a) => `${a.cycle}.${a.attempt}`}
              caption={t('attemptHistory')}
            />
          )}
        </>
      )}
    </>
  );
}
