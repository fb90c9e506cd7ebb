import { useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { type Column, DataTable } from '../components/DataTable';
import { EnumFilter, Filters, type FilterValues, filterQuery } from '../components/Filters';
import { formatAmount, formatBasisPoints, formatDate } from '../format';
import { api, publicJson } from '../session';
import { t } from '../strings';
import { useLoad } from '../useApi';
import { verifyDetermination } from '../verify';
import { type Report, SettlementReports } from './Settlement';

type Determination = components['schemas']['Determination'];

const SETTLEMENT_STATUSES = ['PENDING', 'REPORTED', 'OVERDUE', 'NOT_REQUIRED', 'NOT_APPLICABLE'] as const;

function AmountOwed({ determination }: { determination: Determination }) {
  if (determination.amountOwed) return <>{formatAmount(determination.amountOwed)}</>;
  const reason = determination.amountOwedUnavailableReason;
  return <>{reason ? t('amountUnavailable', { reason }) : t('none')}</>;
}

const COLUMNS: readonly Column<Determination>[] = [
  {
    header: t('colPolicy'),
    cell: (d) => <a href={`#/determinations/${d.determinationId}`}>{d.policyNumber}</a>,
    csv: (d) => d.policyNumber,
  },
  { header: t('colKind'), cell: (d) => d.kind, csv: (d) => d.kind },
  {
    header: t('colTriggered'),
    cell: (d) => (d.triggered ? t('yes') : t('no')),
    csv: (d) => String(d.triggered),
  },
  {
    header: t('colDamage'),
    cell: (d) => formatBasisPoints(d.damagePercentBp),
    csv: (d) => String(d.damagePercentBp),
  },
  {
    header: t('colAmountOwed'),
    cell: (d) => <AmountOwed determination={d} />,
    csv: (d) => (d.amountOwed ? `${d.amountOwed.amount} ${d.amountOwed.currency}` : ''),
    className: 'amount',
  },
  {
    header: t('colSettlement'),
    cell: (d) => d.partnerSettlementStatus,
    csv: (d) => d.partnerSettlementStatus,
  },
  { header: t('colIssued'), cell: (d) => formatDate(d.issuedAt), csv: (d) => d.issuedAt },
];

export function DeterminationsList() {
  const [filters, setFilters] = useState<FilterValues>({});
  return (
    <>
      <h1>{t('determinationsTitle')}</h1>
      <DataTable
        path={`/determinations?${filterQuery(filters)}`}
        columns={COLUMNS}
        rowKey={(d) => d.determinationId}
        rowClass={(d) => (d.partnerSettlementStatus === 'OVERDUE' ? 'overdue' : undefined)}
        caption={t('determinationsTitle')}
        csvName="determinations"
        empty={t('noDeterminations')}
        filters={
          <Filters onApply={setFilters}>
            <EnumFilter
              name="partnerSettlementStatus"
              label={t('filterSettlement')}
              values={SETTLEMENT_STATUSES}
              value={filters.partnerSettlementStatus ?? ''}
            />
            <EnumFilter
              name="triggered"
              label={t('filterTriggered')}
              values={['true', 'false']}
              value={filters.triggered ?? ''}
              show={(v) => (v === 'true' ? t('yes') : t('no'))}
            />
          </Filters>
        }
      />
    </>
  );
}

function SignatureBadge({ record }: { record: unknown }) {
  const result = useLoad(JSON.stringify(record), async () =>
    // Sandbox keys sign only a sandbox organization's own test determinations (a live
    // organization has no door to them); the badge says so when one did.
    verifyDetermination(record, await publicJson('/.well-known/jwks.json'), { acceptSandbox: true }),
  );
  if (result.state === 'loading')
    return (
      <p className="badge checking" role="status">
        {t('signatureChecking')}
      </p>
    );
  if (result.state === 'error' || !result.value.valid)
    return (
      <div className="badge invalid" role="status" data-testid="signature-badge" data-valid="false">
        <strong>{t('signatureInvalid')}</strong>
        <span>
          {t('signatureInvalidDetail', {
            reason: result.state === 'error' ? result.message : result.value.valid ? '' : result.value.reason,
          })}
        </span>
      </div>
    );
  return (
    <div className="badge verified" role="status" data-testid="signature-badge" data-valid="true">
      <strong>{t('signatureVerified')}</strong>
      <span>{t('signatureVerifiedDetail', { kid: result.value.kid })}</span>
      {result.value.sandbox && <span>{t('signatureSandbox')}</span>}
    </div>
  );
}

export function DeterminationDetail({ id, can }: { id: string; can: (capability: string) => boolean }) {
  const [version, setVersion] = useState(0);
  const loaded = useLoad(`${id}:${version}`, async () => {
    const [record, evidence, reports] = await Promise.all([
      api<{ data: Determination }>(`/determinations/${id}`),
      api<{ data: { evidence: unknown } }>(`/determinations/${id}/evidence`),
      api<{ data: { reports: Report[] } }>(`/determinations/${id}/settlement-report`),
    ]);
    return { record: record.data, evidence: evidence.data.evidence, reports: reports.data.reports };
  });

  return (
    <>
      <p>
        <a href="#/determinations">{t('backToList')}</a>
      </p>
      <h1>{t('determinationTitle', { id })}</h1>
      {loaded.state === 'loading' && <p>{t('loading')}</p>}
      {loaded.state === 'error' && <p role="alert">{loaded.message}</p>}
      {loaded.state === 'done' && (
        <>
          <h2>{t('signature')}</h2>
          <SignatureBadge record={loaded.value.record} />
          <dl className="fields">
            <dt>{t('colPolicy')}</dt>
            <dd>{loaded.value.record.policyNumber}</dd>
            <dt>{t('colKind')}</dt>
            <dd>{loaded.value.record.kind}</dd>
            <dt>{t('methodology')}</dt>
            <dd>{loaded.value.record.methodologyVersion}</dd>
            <dt>{t('assessedAt')}</dt>
            <dd>{formatDate(loaded.value.record.assessedAt)}</dd>
            <dt>{t('colTriggered')}</dt>
            <dd>{loaded.value.record.triggered ? t('yes') : t('no')}</dd>
            <dt>{t('colDamage')}</dt>
            <dd>{formatBasisPoints(loaded.value.record.damagePercentBp)}</dd>
            <dt>{t('colAmountOwed')}</dt>
            <dd className="amount" data-testid="amount-owed">
              <AmountOwed determination={loaded.value.record} />
            </dd>
            {loaded.value.record.amountOwed && (
              <>
                <dt>{t('amountBasis')}</dt>
                <dd>{loaded.value.record.amountOwed.basis}</dd>
              </>
            )}
            <dt>{t('settlementMode')}</dt>
            <dd>{loaded.value.record.settlementMode}</dd>
            <dt>{t('colSettlement')}</dt>
            <dd>{loaded.value.record.partnerSettlementStatus}</dd>
            <dt>{t('colDue')}</dt>
            <dd>{formatDate(loaded.value.record.dueAt)}</dd>
          </dl>
          <SettlementReports
            determinationId={id}
            owed={loaded.value.record.amountOwed}
            reports={loaded.value.reports}
            canWrite={
              can('settlement-report:write') && loaded.value.record.settlementMode === 'DETERMINATION'
            }
            onChanged={() => setVersion((v) => v + 1)}
          />
          <h2>{t('evidence')}</h2>
          <pre className="evidence">{JSON.stringify(loaded.value.evidence, null, 2)}</pre>
        </>
      )}
    </>
  );
}
