import { type FormEvent, useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { type Amount, decimalOf, formatAmount, formatDate, minorUnits, parseToMinor } from '../format';
import { ApiError, api } from '../session';
import { amountProblem, OUTCOMES, type Outcome } from '../settlement';
import { t } from '../strings';
import { messageOf } from '../useApi';

export type Report = components['schemas']['SettlementReport'];

const METHODS = ['MOBILE_MONEY', 'BANK_TRANSFER', 'CASH', 'OTHER'] as const;

/** A date-time input's value (local time, to the minute) for `date`. */
function localInput(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

function money(minor: string, currency: string, exponent: number): string {
  return formatAmount({ currency, exponent, amount: decimalOf(minor, exponent) });
}

/** The reports of one determination, oldest first, each correction after what it corrects. */
function ReportTimeline({ reports, exponent }: { reports: readonly Report[]; exponent: number }) {
  const byId = new Map(reports.map((report) => [report.id, report]));
  return (
    <ol className="timeline" data-testid="report-timeline">
      {[...reports]
        .sort((a, b) => a.reportedAt.localeCompare(b.reportedAt))
        .map((report) => {
          const corrected = report.supersedesReportId ? byId.get(report.supersedesReportId) : undefined;
          return (
            <li
              key={report.id}
              className={report.supersededByReportId ? 'superseded' : 'current'}
              data-report-id={report.id}
            >
              <strong>
                {report.outcome} · {money(report.settledAmountMinor, report.settlementCurrency, exponent)}
              </strong>{' '}
              {t('reportLine', {
                method: report.method,
                date: formatDate(report.settledAt),
                reference: report.partnerReference,
                reported: formatDate(report.reportedAt),
              })}
              {corrected && <span> · {t('corrects', { reference: corrected.partnerReference })}</span>}
              <span className="report-state">
                {' '}
                · {report.supersededByReportId ? t('superseded') : t('currentReport')}
              </span>
              {report.notes && <p className="notes">{report.notes}</p>}
            </li>
          );
        })}
    </ol>
  );
}

interface FormProps {
  determinationId: string;
  owed: Amount;
  current: Report | null;
  onSaved: () => void;
}

/** A first report, or a correction of the current one (a new report naming it in `supersedesReportId`). */
function ReportForm({ determinationId, owed, current, onSaved }: FormProps) {
  const owedMinor = BigInt(minorUnits(owed.amount));
  const [outcome, setOutcome] = useState<Outcome>('SETTLED_FULL');
  const [amount, setAmount] = useState(owed.amount);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const correcting = current !== null;

  function choose(next: Outcome) {
    setOutcome(next);
    // The amount each outcome allows, filled in; a partial one is the person's to type.
    if (next === 'SETTLED_FULL') setAmount(owed.amount);
    if (next === 'NOT_SETTLED') setAmount(decimalOf('0', owed.exponent));
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const minor = parseToMinor(amount, owed.exponent);
    const found: string[] = [];
    if (minor === null) found.push(t('ruleAmountFormat', { exponent: owed.exponent }));
    else {
      const problem = amountProblem(outcome, BigInt(minor), owedMinor, owed.currency);
      if (problem) found.push(problem);
    }
    const settledAt = new Date(String(form.get('settledAt') ?? ''));
    if (Number.isNaN(settledAt.getTime())) found.push(t('ruleSettledAt'));
    setProblems(found);
    if (found.length > 0 || minor === null) return;
    const notes = String(form.get('notes') ?? '').trim();
    setBusy(true);
    try {
      await api(`/determinations/${determinationId}/settlement-report`, 'POST', {
        partnerReference: String(form.get('partnerReference') ?? '').trim(),
        outcome,
        method: String(form.get('method')),
        settledAmountMinor: minor,
        settlementCurrency: owed.currency,
        settledAt: settledAt.toISOString(),
        ...(current ? { supersedesReportId: current.id } : {}),
        ...(notes ? { notes } : {}),
      });
      onSaved();
    } catch (error) {
      // The API's refusal as it said it: its message, then each field's problem.
      setProblems(
        error instanceof ApiError
          ? [error.message, ...error.details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message))]
          : [messageOf(error)],
      );
    } finally {
      setBusy(false);
    }
  }

  const title = correcting ? t('correctReport') : t('recordReport');
  return (
    <form className="report-form" onSubmit={submit} aria-label={title} noValidate>
      <h3>{title}</h3>
      <p>
        {t('amountOwedIs', { amount: formatAmount(owed), minor: String(owedMinor) })}
        {current && ` ${t('correctingReport', { reference: current.partnerReference })}`}
      </p>
      {problems.length > 0 && (
        <div role="alert" className="problems" data-testid="report-problems">
          <ul>
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </div>
      )}
      <div className="form-grid">
        <label htmlFor="partnerReference">{t('partnerReference')}</label>
        <input id="partnerReference" name="partnerReference" required maxLength={200} autoComplete="off" />
        <label htmlFor="outcome">{t('outcome')}</label>
        <select id="outcome" value={outcome} onChange={(e) => choose(e.target.value as Outcome)}>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
        <label htmlFor="method">{t('method')}</label>
        <select id="method" name="method" defaultValue="MOBILE_MONEY">
          {METHODS.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <label htmlFor="settledAmount">{t('settledAmount', { currency: owed.currency })}</label>
        <input
          id="settledAmount"
          inputMode="decimal"
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          readOnly={outcome !== 'SETTLED_PARTIAL'}
          aria-describedby="settledAmountHint"
        />
        <span id="settledAmountHint" className="hint">
          {t('settledAmountHint')}
        </span>
        <label htmlFor="settledAt">{t('settledAt')}</label>
        <input id="settledAt" name="settledAt" type="datetime-local" defaultValue={localInput(new Date())} />
        <label htmlFor="notes">{t('notes')}</label>
        <textarea id="notes" name="notes" maxLength={2000} rows={2} />
      </div>
      <button type="submit" disabled={busy}>
        {busy ? t('saving') : title}
      </button>
    </form>
  );
}

interface Props {
  determinationId: string;
  /** Null when the determination owes nothing the partner settles (Tier 2, not triggered). */
  owed: Amount | null;
  reports: readonly Report[];
  canWrite: boolean;
  onChanged: () => void;
}

/** Settlement reports of a determination: the chain of corrections, and the form for the next. */
export function SettlementReports({ determinationId, owed, reports, canWrite, onChanged }: Props) {
  const current = reports.find((report) => report.supersededByReportId === null) ?? null;
  return (
    <>
      <h2>{t('settlementReports')}</h2>
      {reports.length === 0 && <p>{t('noReports')}</p>}
      {/* Reports are in the determination's currency, whose exponent the amount owed gives. */}
      {reports.length > 0 && <ReportTimeline reports={reports} exponent={owed?.exponent ?? 0} />}
      {canWrite && owed && (
        <ReportForm
          key={current?.id ?? 'first'}
          determinationId={determinationId}
          owed={owed}
          current={current}
          onSaved={onChanged}
        />
      )}
    </>
  );
}
