import { parse } from 'csv-parse/sync';
import { CSV_COLUMNS, CSV_HEADER, csvCell, csvText } from './export-rows';

describe('CSV cells: a cell that starts with =, +, -, @, tab or carriage return is prefixed with a quote', () => {
  it.each(['=1+1', '+33 6 12', '-2', '@SUM(A1)', '\tx', '\rx'])('%j gets a leading apostrophe', (text) => {
    expect(csvCell(text)).toBe(`'${text}`);
  });

  it('other cells are left as they are; null is empty; lists are joined with |', () => {
    expect(csvCell('Where is my order?')).toBe('Where is my order?');
    expect(csvCell(' =x')).toBe(' =x');
    expect(csvCell(null)).toBe('');
    expect(csvCell(0.75)).toBe('0.75');
    expect(csvCell(['a:b', 'c:true'])).toBe('a:b|c:true');
    expect(csvCell([])).toBe('');
  });
});

describe('CSV text: RFC 4180 with CRLF line ends', () => {
  it('the header is the columns in order, ended by CRLF', () => {
    expect(CSV_HEADER).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });

  it('quotes commas, quotes and line breaks, and reads back to the same cells', () => {
    const rows = [['a,b', 'say "hi"', 'two\nlines', 'plain']];
    const text = csvText(rows);
    expect(text).toBe('"a,b","say ""hi""","two\nlines",plain\r\n');
    expect(parse(text, { record_delimiter: '\r\n' })).toEqual(rows);
  });
});
