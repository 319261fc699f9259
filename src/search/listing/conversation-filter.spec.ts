import { describe, expect, it } from '@jest/globals';
import { ParamFault } from '../../common/query/query-params';
import { parseTimestampWithOffset } from './conversation-filter';

describe('parseTimestampWithOffset', () => {
  it.each([
    '2026-11-20T10:00:00Z',
    '2026-11-20T10:00Z',
    '2026-11-20T10:00:00.123456+05:30',
    '2024-02-29T00:00:00-08:00',
  ])('accepts %s', (v) => {
    expect(parseTimestampWithOffset(v)).not.toBeInstanceOf(ParamFault);
  });
  it.each([
    '2026-11-20T10:00:00',
    '2026-11-20',
    '2026-02-30T00:00:00Z',
    '2026-11-20T24:00:00Z',
    '2026-11-20 10:00:00Z',
    'yesterday',
    '2026-11-20T10:00:00+25:00',
  ])('refuses %s', (v) => {
    expect(parseTimestampWithOffset(v)).toBeInstanceOf(ParamFault);
  });
});
