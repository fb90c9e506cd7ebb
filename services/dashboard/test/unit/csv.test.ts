import { csvCell, toCsv } from '../../src/components/csv';

/** The dashboard's CSV export (services/dashboard/src/components/csv.ts): escaping and the formula guard. */

it('leaves a plain cell as it is', () => {
  expect(csvCell('Wanjiru Kamau')).toBe('Wanjiru Kamau');
  expect(csvCell('12500.50')).toBe('12500.50');
  expect(csvCell('')).toBe('');
});

it.each([
  ['a comma', 'Nakuru, Rift Valley', '"Nakuru, Rift Valley"'],
  ['a quote', 'the "river" field', '"the ""river"" field"'],
  ['a line feed', 'line one\nline two', '"line one\nline two"'],
  ['a carriage return', 'one\rtwo', '"one\rtwo"'],
])('quotes a cell holding %s, doubling its quotes', (_what, value, written) => {
  expect(csvCell(value)).toBe(written);
});

it.each([
  ['=HYPERLINK("http://x.example","open")', `"'=HYPERLINK(""http://x.example"",""open"")"`],
  ['+254712398762', "'+254712398762"],
  ['-2+3', "'-2+3"],
  ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
  ['\tcmd', "'\tcmd"],
  ['\r=1', `"'\r=1"`],
])('writes %j as text, not a formula', (value, written) => {
  expect(csvCell(value)).toBe(written);
});

it('guards only the start of a cell', () => {
  expect(csvCell('a=b')).toBe('a=b');
  expect(csvCell('x-y@z')).toBe('x-y@z');
});

it('joins a header and rows with commas and CRLF, ending with CRLF', () => {
  expect(
    toCsv(
      ['Policy', 'Farmer', 'Amount'],
      [
        ['POL-1', 'Kamau, Wanjiru', '100.00'],
        ['POL-2', 'Otieno', '=1+1'],
      ],
    ),
  ).toBe('Policy,Farmer,Amount\r\nPOL-1,"Kamau, Wanjiru",100.00\r\nPOL-2,Otieno,\'=1+1\r\n');
});

it('writes a header alone when there are no rows', () => {
  expect(toCsv(['a', 'b'], [])).toBe('a,b\r\n');
});
