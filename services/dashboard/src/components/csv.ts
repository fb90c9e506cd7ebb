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
