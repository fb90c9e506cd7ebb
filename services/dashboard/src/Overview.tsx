import { api } from './session';
import { t } from './strings';
import { useLoad } from './useApi';

interface Page {
  pagination: { total: number };
}

const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;

/** How many items a list holds, from its pagination (one item fetched), or null if the role may not list it. */
async function count(allowed: boolean, path: string): Promise<number | null> {
  if (!allowed) return null;
  return (await api<Page>(`${path}${path.includes('?') ? '&' : '?'}limit=1`)).pagination.total;
}

export function Overview({ can }: { can: (capability: string) => boolean }) {
  const counts = useLoad('overview', async () => {
    const [active, awaiting, overdue, failed, ...payouts] = await Promise.all([
      count(can('policy:read'), '/policies?status=ACTIVE'),
      count(can('determination:read'), '/determinations?partnerSettlementStatus=PENDING'),
      count(can('determination:read'), '/determinations?partnerSettlementStatus=OVERDUE'),
      count(can('webhook:manage'), '/organizations/me/webhook/deliveries?status=FAILED'),
      ...PAYOUT_STATUSES.map((status) => count(can('payout:read'), `/payouts?status=${status}`)),
    ]);
    return { active, awaiting, overdue, failed, payouts };
  });

  if (counts.state === 'loading') return <p>{t('loading')}</p>;
  if (counts.state === 'error') return <p role="alert">{counts.message}</p>;
  const { active, awaiting, overdue, failed, payouts } = counts.value;
  const shown = (value: number | null) => (value === null ? t('notAvailable') : String(value));

  return (
    <>
      <h1>{t('overviewTitle')}</h1>
      <dl className="cards">
        <div className="card">
          <dt>{t('activePolicies')}</dt>
          <dd data-testid="count-active-policies">{shown(active)}</dd>
        </div>
        <div className="card">
          <dt>{t('awaitingReport')}</dt>
          <dd>{shown(awaiting)}</dd>
        </div>
        <div className={`card${overdue ? ' alert' : ''}`}>
          <dt>{t('overdueReports')}</dt>
          <dd>{shown(overdue)}</dd>
        </div>
        <div className={`card${failed ? ' alert' : ''}`}>
          <dt>{t('failedDeliveries')}</dt>
          <dd>{shown(failed)}</dd>
        </div>
        <div className="card wide">
          <dt>{t('payoutsByStatus')}</dt>
          <dd>
            {payouts.every((value) => value === null)
              ? t('notAvailable')
              : PAYOUT_STATUSES.map((status, i) => `${status} ${payouts[i] ?? 0}`).join(' · ')}
          </dd>
        </div>
      </dl>
    </>
  );
}
