import { useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { type Column, DataTable, Table, type TableColumn } from '../components/DataTable';
import { EnumFilter, Filters, type FilterValues, filterQuery } from '../components/Filters';
import { formatDate, formatDecimal } from '../format';
import { api } from '../session';
import { t } from '../strings';
import { messageOf, useLoad } from '../useApi';

type Attempt = components['schemas']['PayoutAttempt'];
/** The detail is the list's row and its `attemptHistory`. */
type PayoutDetail = components['schemas']['PayoutDetail'];
type Payout = components['schemas']['Payout'];

const STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
/** Reasons of a payout that failed before anything was sent: the API refuses their retry (409). */
const NOT_RETRYABLE = new Set(['BELOW_PROVIDER_MINIMUM', 'UNSUPPORTED_CURRENCY']);

const ATTEMPT_COLUMNS: readonly TableColumn<Attempt>[] = [
  { header: t('colWhen'), cell: (a) => formatDate(a.at) },
  { header: t('colPartAttempt'), cell: (a) => `${a.part} / ${a.attempt}` },
  { header: t('colKind'), cell: (a) => a.kind },
  {
    header: t('colAmount'),
    cell: (a) => (a.amountKES ? formatDecimal(a.amountKES, 'KES') : '—'),
    className: 'amount',
  },
  {
    header: t('colResult'),
    cell: (a) => [a.resultCode, a.resultDescription, a.receipt].filter((x) => x != null).join(' · ') || '—',
  },
];

const COLUMNS: readonly Column<Payout>[] = [
  {
    header: t('colStatus'),
    cell: (p) => <a href={`#/payouts/${p.payoutId}`}>{p.status}</a>,
    csv: (p) => p.status,
  },
  {
    header: t('colAmount'),
    cell: (p) => formatDecimal(p.amountKES, p.currency),
    csv: (p) => `${p.amountKES} ${p.currency}`,
    className: 'amount',
  },
  { header: t('colPhone'), cell: (p) => p.phoneNumber, csv: (p) => p.phoneNumber },
  { header: t('colAttempts'), cell: (p) => String(p.attempts), csv: (p) => String(p.attempts) },
  { header: t('colReason'), cell: (p) => p.reason ?? '—', csv: (p) => p.reason ?? '' },
  {
    header: t('colPolicy'),
    cell: (p) => <a href={`#/policies/${p.policyId}`}>{p.policyId.slice(0, 8)}</a>,
    csv: (p) => p.policyId,
  },
  { header: t('colUpdated'), cell: (p) => formatDate(p.updatedAt), csv: (p) => p.updatedAt },
];

export function PayoutsList() {
  const [filters, setFilters] = useState<FilterValues>({ status: '' });
  return (
    <>
      <h1>{t('payoutsTitle')}</h1>
      <DataTable
        path={`/payouts?${filterQuery(filters)}`}
        columns={COLUMNS}
        rowKey={(p) => p.payoutId}
        rowClass={(p) => (p.status === 'FAILED' ? 'overdue' : undefined)}
        caption={t('payoutsTitle')}
        csvName="payouts"
        empty={t('noPayouts')}
        filters={
          <Filters onApply={setFilters}>
            <EnumFilter name="status" label={t('colStatus')} values={STATUSES} value={filters.status ?? ''} />
          </Filters>
        }
      />
    </>
  );
}

export function PayoutDetail({ id, can }: { id: string; can: (capability: string) => boolean }) {
  const [version, setVersion] = useState(0);
  const [retry, setRetry] = useState<{ busy: boolean; message?: string }>({ busy: false });
  const loaded = useLoad(
    `${id}:${version}`,
    async () => (await api<{ data: PayoutDetail }>(`/payouts/${id}`)).data,
  );

  async function retryPayout() {
    setRetry({ busy: true });
    try {
      await api(`/payouts/${id}/retry`, 'POST');
      setRetry({ busy: false, message: t('retryQueued') });
      setVersion((v) => v + 1);
    } catch (error) {
      setRetry({ busy: false, message: messageOf(error) });
    }
  }

  return (
    <>
      <p>
        <a href="#/payouts">{t('backToPayouts')}</a>
      </p>
      <h1>{t('payoutTitle', { id })}</h1>
      {retry.message && <p role="status">{retry.message}</p>}
      {loaded.state === 'loading' && <p>{t('loading')}</p>}
      {loaded.state === 'error' && <p role="alert">{loaded.message}</p>}
      {loaded.state === 'done' && (
        <>
          <dl className="fields">
            <dt>{t('colStatus')}</dt>
            <dd>{loaded.value.status}</dd>
            <dt>{t('colAmount')}</dt>
            <dd className="amount">{formatDecimal(loaded.value.amountKES, loaded.value.currency)}</dd>
            <dt>{t('owed')}</dt>
            <dd className="amount">{formatDecimal(loaded.value.owedKES, loaded.value.currency)}</dd>
            <dt>{t('colPhone')}</dt>
            <dd>{loaded.value.phoneNumber}</dd>
            <dt>{t('colReason')}</dt>
            <dd>{loaded.value.reason ?? '—'}</dd>
            <dt>{t('mobileMoneyRef')}</dt>
            <dd>{loaded.value.mobileMoneyRef ?? '—'}</dd>
            <dt>{t('nextAttempt')}</dt>
            <dd>{formatDate(loaded.value.nextAttemptAt)}</dd>
            <dt>{t('colPolicy')}</dt>
            <dd>
              <a href={`#/policies/${loaded.value.policyId}`}>{loaded.value.policyId}</a>
            </dd>
            <dt>{t('determination')}</dt>
            <dd>
              <a href={`#/determinations/${loaded.value.determinationId}`}>{loaded.value.determinationId}</a>
            </dd>
          </dl>
          {can('payout:write') &&
            loaded.value.status === 'FAILED' &&
            !NOT_RETRYABLE.has(loaded.value.reason ?? '') && (
              <button type="button" disabled={retry.busy} onClick={() => void retryPayout()}>
                {t('retryPayout')}
              </button>
            )}
          <h2>{t('attemptHistory')}</h2>
          {loaded.value.attemptHistory.length === 0 ? (
            <p>{t('noAttempts')}</p>
          ) : (
            <Table
              columns={ATTEMPT_COLUMNS}
              rows={loaded.value.attemptHistory}
              rowKey={(a) => `${a.at}-${a.part}-${a.attempt}-${a.kind}`}
              caption={t('attemptHistory')}
            />
          )}
        </>
      )}
    </>
  );
}
