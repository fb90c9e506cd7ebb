import { api } from '../session';
import { t } from '../strings';
import { messageOf, useLoad } from '../useApi';

interface Page {
  pagination: { total: number };
}

const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;

/**
 * How many items a list holds, from its pagination (one item fetched); null if the role may not
 * list it; the message when the list could not be read (one card's failure spares the others).
 */
async function count(allowed: boolean, path: string): Promise<number | null | string> {
  if (!allowed) return null;
  try {
    return (await api<Page>(`${path}${path.includes('?') ? '&' : '?'}limit=1`)).pagination.total;
  } catch (error) {
    return messageOf(error);
  }
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

  const heading = <h1>{t('overviewTitle')}</h1>;
  if (counts.state === 'loading')
    return (
      <>
        {heading}
        <p>{t('loading')}</p>
      </>
    );
  if (counts.state === 'error')
    return (
      <>
        {heading}
        <p role="alert">{counts.message}</p>
      </>
    );
  const { active, awaiting, overdue, failed, payouts } = counts.value;
  const shown = (value: number | null | string) => (value === null ? t('notAvailable') : String(value));

  return (
    <>
      {heading}
      <dl className="cards">
        <div className="card">
          <dt>{t('activePolicies')}</dt>
          <dd data-testid="count-active-policies">{shown(active)}</dd>
        </div>
        <div className="card">
          <dt>{t('awaitingReport')}</dt>
          <dd>{shown(awaiting)}</dd>
        </div>
        <div className={`card${typeof overdue === 'number' && overdue > 0 ? ' alert' : ''}`}>
          <dt>{t('overdueReports')}</dt>
          <dd>{shown(overdue)}</dd>
        </div>
        <div className={`card${typeof failed === 'number' && failed > 0 ? ' alert' : ''}`}>
          <dt>{t('failedDeliveries')}</dt>
          <dd>{shown(failed)}</dd>
        </div>
        <div className="card wide">
          <dt>{t('payoutsByStatus')}</dt>
          <dd>
            {payouts.every((value) => value === null)
              ? t('notAvailable')
              : PAYOUT_STATUSES.map((status, i) => `${status} ${shown(payouts[i] ?? 0)}`).join(' · ')}
          </dd>
        </div>
      </dl>
    </>
  );
}
