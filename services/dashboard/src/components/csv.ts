/**
 * CSV of what a table shows (RFC 4180: comma-separated, CRLF between records, a field quoted
 * when it holds a quote, a comma or a line break, its quotes doubled).
 *
 * A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is one a spreadsheet
 * would run as a formula (CSV injection: a farmer named `=HYPERLINK(…)` exported and opened in a
 * spreadsheet), so it is written after a single quote, which spreadsheets show as text. Amounts
 * are never negative in the partner API, so the guard costs no number its meaning.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: string): string {
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}

export function toCsv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return `${[header, ...rows].map((row) => row.map(csvCell).join(',')).join('\r\n')}\r\n`;
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
