import { useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { type Column, DataTable, Table, type TableColumn } from '../components/DataTable';
import { EnumFilter, Filters, type FilterValues, filterQuery } from '../components/Filters';
import { formatBasisPoints, formatDate, formatDecimal } from '../format';
import { api } from '../session';
import { t } from '../strings';
import { useLoad } from '../useApi';

type Policy = components['schemas']['Policy'];

const STATUSES = ['PENDING', 'ACTIVE', 'EXPIRED', 'CANCELLED'] as const;

const ASSESSMENT_COLUMNS: readonly TableColumn<Policy['damageAssessments'][number]>[] = [
  {
    header: t('colIssued'),
    cell: (d) => <a href={`#/determinations/${d.determinationId}`}>{formatDate(d.issuedAt)}</a>,
  },
  { header: t('colTriggered'), cell: (d) => (d.triggered ? t('yes') : t('no')) },
  { header: t('colDamage'), cell: (d) => formatBasisPoints(d.damagePercentBp) },
  { header: t('colSettlement'), cell: (d) => d.partnerSettlementStatus },
  { header: t('colDue'), cell: (d) => formatDate(d.dueAt) },
];

const PAYOUT_COLUMNS: readonly TableColumn<Policy['payouts'][number]>[] = [
  { header: t('colStatus'), cell: (p) => <a href={`#/payouts/${p.payoutId}`}>{p.status}</a> },
  { header: t('colAmount'), cell: (p) => formatDecimal(p.amount, p.currency), className: 'amount' },
  { header: t('colUpdated'), cell: (p) => formatDate(p.updatedAt) },
];
const PRODUCT_TYPES = ['CROP', 'LIVESTOCK'] as const;
const SETTLEMENT_MODES = ['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT'] as const;

const COLUMNS: readonly Column<Policy>[] = [
  {
    header: t('colPolicy'),
    cell: (p) => <a href={`#/policies/${p.id}`}>{p.policyNumber}</a>,
    csv: (p) => p.policyNumber,
  },
  { header: t('colStatus'), cell: (p) => p.status, csv: (p) => p.status },
  { header: t('colProduct'), cell: (p) => p.productType, csv: (p) => p.productType },
  { header: t('colCoverage'), cell: (p) => p.coverageType, csv: (p) => p.coverageType },
  {
    header: t('colSumInsured'),
    cell: (p) => `${p.sumInsured} ${p.currency}`,
    csv: (p) => `${p.sumInsured} ${p.currency}`,
    className: 'amount',
  },
  { header: t('settlementMode'), cell: (p) => p.settlementMode, csv: (p) => p.settlementMode },
  {
    header: t('colFarmer'),
    cell: (p) => <a href={`#/farmers/${p.farmerId}`}>{p.farmerId.slice(0, 8)}</a>,
    csv: (p) => p.farmerId,
  },
  { header: t('colCoverEnds'), cell: (p) => formatDate(p.coverEndsAt), csv: (p) => p.coverEndsAt ?? '' },
];

/** `#/policies?farmerId=…` (from a farmer's page) opens the list filtered to that farmer. */
export function PoliciesList({ farmerId = '' }: { farmerId?: string }) {
  const [filters, setFilters] = useState<FilterValues>({ farmerId });
  return (
    <>
      <h1>{t('policiesTitle')}</h1>
      <DataTable
        path={`/policies?${filterQuery(filters)}`}
        columns={COLUMNS}
        rowKey={(p) => p.id}
        caption={t('policiesTitle')}
        csvName="policies"
        empty={t('noPolicies')}
        filters={
          <Filters onApply={setFilters}>
            <EnumFilter name="status" label={t('colStatus')} values={STATUSES} value={filters.status ?? ''} />
            <EnumFilter
              name="productType"
              label={t('colProduct')}
              values={PRODUCT_TYPES}
              value={filters.productType ?? ''}
            />
            <EnumFilter
              name="settlementMode"
              label={t('settlementMode')}
              values={SETTLEMENT_MODES}
              value={filters.settlementMode ?? ''}
            />
            <label htmlFor="farmerId">{t('filterFarmerId')}</label>
            <input id="farmerId" name="farmerId" defaultValue={filters.farmerId} size={36} />
          </Filters>
        }
      />
    </>
  );
}

export function PolicyDetail({ id }: { id: string }) {
  const loaded = useLoad(id, async () => (await api<{ data: Policy }>(`/policies/${id}`)).data);
  return (
    <>
      <p>
        <a href="#/policies">{t('backToPolicies')}</a>
      </p>
      {loaded.state === 'loading' && <p>{t('loading')}</p>}
      {loaded.state === 'error' && <p role="alert">{loaded.message}</p>}
      {loaded.state === 'done' && <PolicyFields policy={loaded.value} />}
    </>
  );
}

function PolicyFields({ policy }: { policy: Policy }) {
  return (
    <>
      <h1>{t('policyTitle', { number: policy.policyNumber })}</h1>
      <dl className="fields">
        <dt>{t('colStatus')}</dt>
        <dd data-testid="policy-status">{policy.status}</dd>
        <dt>{t('colProduct')}</dt>
        <dd>{policy.productType}</dd>
        <dt>{t('colCoverage')}</dt>
        <dd>{policy.coverageType}</dd>
        <dt>{t('colSumInsured')}</dt>
        <dd className="amount">{`${policy.sumInsured} ${policy.currency}`}</dd>
        <dt>{t('premium')}</dt>
        <dd className="amount">
          {`${policy.premium} ${policy.currency}`} · {policy.premiumPaid ? t('paid') : t('unpaid')}
        </dd>
        <dt>{t('settlementMode')}</dt>
        <dd>{policy.settlementMode}</dd>
        <dt>{t('colFarmer')}</dt>
        <dd>
          <a href={`#/farmers/${policy.farmerId}`}>{policy.farmerId}</a>
        </dd>
        {policy.season && (
          <>
            <dt>{t('season')}</dt>
            <dd>{policy.season}</dd>
          </>
        )}
        <dt>{t('duration')}</dt>
        <dd>{t('durationDays', { days: policy.durationDays, remaining: policy.daysRemaining })}</dd>
        <dt>{t('onChain')}</dt>
        <dd>{policy.onChainPolicyId ?? t('none')}</dd>
      </dl>

      {/* The API keeps no status log; these are the dates each step of the lifecycle happened. */}
      <h2>{t('statusHistory')}</h2>
      <ol className="timeline" data-testid="policy-history">
        <li>{t('historyCreated', { date: formatDate(policy.createdAt) })}</li>
        {policy.activatedAt && <li>{t('historyActivated', { date: formatDate(policy.activatedAt) })}</li>}
        {policy.coverStartsAt && (
          <li>{t('historyCoverStarts', { date: formatDate(policy.coverStartsAt) })}</li>
        )}
        {policy.coverEndsAt && <li>{t('historyCoverEnds', { date: formatDate(policy.coverEndsAt) })}</li>}
        <li>{t('historyNow', { status: policy.status })}</li>
      </ol>

      <h2>{t('navDeterminations')}</h2>
      {policy.damageAssessments.length === 0 ? (
        <p>{t('noDeterminations')}</p>
      ) : (
        <Table
          columns={ASSESSMENT_COLUMNS}
          rows={policy.damageAssessments}
          rowKey={(d) => d.determinationId}
          caption={t('navDeterminations')}
        />
      )}

      <h2>{t('navPayouts')}</h2>
      {policy.payouts.length === 0 ? (
        <p>{t('noPayouts')}</p>
      ) : (
        <Table
          columns={PAYOUT_COLUMNS}
          rows={policy.payouts}
          rowKey={(p) => p.payoutId}
          caption={t('navPayouts')}
        />
      )}
    </>
  );
}
