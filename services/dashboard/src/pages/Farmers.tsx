import { useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import { type Column, DataTable } from '../components/DataTable';
import { EnumFilter, Filters, type FilterValues, filterQuery } from '../components/Filters';
import { formatDate } from '../format';
import { api } from '../session';
import { t } from '../strings';
import { useLoad } from '../useApi';

type Farmer = components['schemas']['Farmer'];
type Plot = components['schemas']['Plot'];
type Herd = components['schemas']['Herd'];

const KYC_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;

const FARMER_COLUMNS: readonly Column<Farmer>[] = [
  {
    header: t('colName'),
    cell: (f) => <a href={`#/farmers/${f.id}`}>{`${f.firstName} ${f.lastName}`}</a>,
    csv: (f) => `${f.firstName} ${f.lastName}`,
  },
  { header: t('colPhone'), cell: (f) => f.phoneNumber, csv: (f) => f.phoneNumber },
  { header: t('colRegion'), cell: (f) => f.region, csv: (f) => f.region },
  { header: t('colKyc'), cell: (f) => f.kycStatus, csv: (f) => f.kycStatus },
  { header: t('colCreated'), cell: (f) => formatDate(f.createdAt), csv: (f) => f.createdAt },
];

const place = (p: { latitude: number; longitude: number }) => `${p.latitude}, ${p.longitude}`;

const PLOT_COLUMNS: readonly Column<Plot>[] = [
  { header: t('colName'), cell: (p) => p.name, csv: (p) => p.name },
  { header: t('colCrop'), cell: (p) => p.cropType, csv: (p) => p.cropType },
  { header: t('colArea'), cell: (p) => String(p.areaHectares), csv: (p) => String(p.areaHectares) },
  { header: t('colLocation'), cell: place, csv: place },
];

const HERD_COLUMNS: readonly Column<Herd>[] = [
  { header: t('colName'), cell: (h) => h.name, csv: (h) => h.name },
  { header: t('colHeadCount'), cell: (h) => String(h.headCount), csv: (h) => String(h.headCount) },
  {
    header: t('colEstimatedValue'),
    cell: (h) => String(h.estimatedValue),
    csv: (h) => String(h.estimatedValue),
    className: 'amount',
  },
  { header: t('colLocation'), cell: place, csv: place },
];

export function FarmersList() {
  const [filters, setFilters] = useState<FilterValues>({ kycStatus: '' });
  return (
    <>
      <h1>{t('farmersTitle')}</h1>
      <DataTable
        path={`/farmers?${filterQuery(filters)}`}
        columns={FARMER_COLUMNS}
        rowKey={(f) => f.id}
        caption={t('farmersTitle')}
        csvName="farmers"
        empty={t('noFarmers')}
        filters={
          <Filters onApply={setFilters}>
            <EnumFilter
              name="kycStatus"
              label={t('colKyc')}
              values={KYC_STATUSES}
              value={filters.kycStatus ?? ''}
            />
          </Filters>
        }
      />
    </>
  );
}

/** A farmer, and their plots and herds (each a paginated list of the API). */
export function FarmerDetail({ id, can }: { id: string; can: (capability: string) => boolean }) {
  const farmer = useLoad(id, async () => (await api<{ data: Farmer }>(`/farmers/${id}`)).data);
  return (
    <>
      <p>
        <a href="#/farmers">{t('backToFarmers')}</a>
      </p>
      {farmer.state === 'loading' && <p>{t('loading')}</p>}
      {farmer.state === 'error' && <p role="alert">{farmer.message}</p>}
      {farmer.state === 'done' && (
        <>
          <h1>{`${farmer.value.firstName} ${farmer.value.lastName}`}</h1>
          <dl className="fields">
            <dt>{t('colPhone')}</dt>
            <dd>{farmer.value.phoneNumber}</dd>
            <dt>{t('nationalId')}</dt>
            <dd>{farmer.value.nationalId}</dd>
            <dt>{t('colRegion')}</dt>
            <dd>{farmer.value.region}</dd>
            <dt>{t('colKyc')}</dt>
            <dd>{farmer.value.kycStatus}</dd>
          </dl>
          {can('policy:read') && (
            <p>
              <a href={`#/policies?farmerId=${id}`}>{t('farmerPolicies')}</a>
            </p>
          )}
          <h2>{t('plots')}</h2>
          <DataTable
            path={`/farmers/${id}/plots`}
            columns={PLOT_COLUMNS}
            rowKey={(p) => p.id}
            caption={t('plots')}
            csvName={`plots-${id}`}
            empty={t('noPlots')}
          />
          <h2>{t('herds')}</h2>
          <DataTable
            path={`/farmers/${id}/herds`}
            columns={HERD_COLUMNS}
            rowKey={(h) => h.id}
            caption={t('herds')}
            csvName={`herds-${id}`}
            empty={t('noHerds')}
          />
        </>
      )}
    </>
  );
}
