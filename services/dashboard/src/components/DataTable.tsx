import { type ReactNode, useState } from 'react';
import { api } from '../session';
import { t } from '../strings';
import { messageOf, useLoad } from '../useApi';
import { toCsv } from './csv';

/** The partner API's list envelope (docs/api.md, "Pagination"). */
export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}
export interface ListPage<T> {
  data: T[];
  pagination: Pagination;
}

export interface TableColumn<T> {
  header: string;
  /** What the table shows. */
  cell: (row: T) => ReactNode;
  className?: string;
}
export interface Column<T> extends TableColumn<T> {
  /**
   * What the CSV holds: the API's value as text (amounts as their exact decimal strings). Without
   * it the column is left out of the CSV (a column of buttons).
   */
  csv?: (row: T) => string;
}

interface TableProps<T> {
  columns: readonly TableColumn<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  rowClass?: (row: T) => string | undefined;
  /** The table's accessible name (the heading above says it to sighted readers). */
  caption: string;
}

/** Rows as a table that scrolls sideways in its own box on a narrow screen. */
export function Table<T>({ columns, rows, rowKey, rowClass, caption }: TableProps<T>) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={rowClass?.(row)}>
              {columns.map((column) => (
                <td key={column.header} className={column.className}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export const PAGE_SIZE = 20;
/**
 * "Export CSV" writes every row the filter matches, read at the API's largest page (100), up to
 * EXPORT_PAGES pages: the organization's rate limit (100 requests a minute, shared with its API
 * key) is not worth spending on more. Past that the file holds the first EXPORT_PAGES × 100 rows
 * and the page says so.
 */
export const EXPORT_PAGE_SIZE = 100;
export const EXPORT_PAGES = 5;

interface Props<T> {
  /** The list's API path, with its filters as a query (no `page` or `limit`): `/policies?status=ACTIVE`. */
  path: string;
  columns: readonly Column<T>[];
  rowKey: (row: T) => string;
  rowClass?: (row: T) => string | undefined;
  /** The table's accessible name, and the exported file's name (`<csvName>.csv`). */
  caption: string;
  csvName: string;
  empty: string;
  /** The page's filter form, shown above the table. */
  filters?: ReactNode;
  /** A list whose envelope is not the standard one: read a page of it. */
  load?: (path: string) => Promise<ListPage<T>>;
  /**
   * Changed by the page after an action on a row (or a Refresh): the current page is read again,
   * its rows staying in place meanwhile so the focus stays on the control used.
   */
  version?: number;
}

/** Offers `text` as a file download named `name` (a blob URL: no request leaves the browser). */
export function downloadCsv(name: string, text: string): void {
  // The byte-order mark makes spreadsheets read the file as UTF-8 (names with accents).
  const url = URL.createObjectURL(new Blob(['\uFEFF', text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

function withPage(path: string, page: number, limit: number): string {
  return `${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=${limit}`;
}

/**
 * A paginated list of the partner API as a table: its page from the API's `pagination`, a pager,
 * a filter slot, and "Export CSV". A change of `path` (a new filter) returns to page 1.
 */
export function DataTable<T>({
  path,
  columns,
  rowKey,
  rowClass,
  caption,
  csvName,
  empty,
  filters,
  load = (url) => api<ListPage<T>>(url),
  version,
}: Props<T>) {
  const [paging, setPaging] = useState({ path, page: 1 });
  const page = paging.path === path ? paging.page : 1;
  const list = useLoad(
    `${withPage(path, page, PAGE_SIZE)}#${version ?? 0}`,
    () => load(withPage(path, page, PAGE_SIZE)),
    version !== undefined,
  );
  const csvColumns = columns.flatMap((c) => (c.csv ? [{ header: c.header, csv: c.csv }] : []));
  const [exported, setExported] = useState<{ state: 'idle' | 'busy' } | { state: 'note'; text: string }>({
    state: 'idle',
  });

  async function exportCsv() {
    setExported({ state: 'busy' });
    try {
      const rows: T[] = [];
      let total = 0;
      for (let p = 1; p <= EXPORT_PAGES; p++) {
        const got = await load(withPage(path, p, EXPORT_PAGE_SIZE));
        rows.push(...got.data);
        total = got.pagination.total;
        if (p >= got.pagination.totalPages) break;
      }
      downloadCsv(
        `${csvName}.csv`,
        toCsv(
          csvColumns.map((c) => c.header),
          rows.map((row) => csvColumns.map((c) => c.csv(row))),
        ),
      );
      setExported({
        state: 'note',
        text:
          rows.length < total
            ? t('exportTruncated', { rows: rows.length, total })
            : t('exportDone', { rows: rows.length }),
      });
    } catch (error) {
      setExported({ state: 'note', text: messageOf(error) });
    }
  }

  const go = (to: number) => setPaging({ path, page: to });
  return (
    <>
      {filters}
      {list.state === 'loading' && <p>{t('loading')}</p>}
      {list.state === 'error' && <p role="alert">{list.message}</p>}
      {list.state === 'done' && list.value.data.length === 0 && <p>{empty}</p>}
      {list.state === 'done' && list.value.data.length > 0 && (
        <>
          <Table
            columns={columns}
            rows={list.value.data}
            rowKey={rowKey}
            rowClass={rowClass}
            caption={caption}
          />
          <nav className="pager" aria-label={t('pagination', { what: caption })}>
            <button type="button" className="secondary" disabled={page <= 1} onClick={() => go(page - 1)}>
              {t('previous')}
            </button>
            <span>
              {t('pageOf', {
                page: list.value.pagination.page,
                pages: Math.max(1, list.value.pagination.totalPages),
                total: list.value.pagination.total,
              })}
            </span>
            <button
              type="button"
              className="secondary"
              disabled={page >= list.value.pagination.totalPages}
              onClick={() => go(page + 1)}
            >
              {t('next')}
            </button>
            <button
              type="button"
              className="secondary"
              disabled={exported.state === 'busy'}
              onClick={() => void exportCsv()}
            >
              {t('exportCsv')}
            </button>
          </nav>
          {exported.state === 'note' && <p role="status">{exported.text}</p>}
        </>
      )}
    </>
  );
}
