import { jsonDepthExceeds, MAX_JSON_DEPTH, unstorableTextEntries } from './body-parsing';

const bytes = (text: string) => Buffer.from(text);

describe('jsonDepthExceeds: the depth of a JSON text, read from its bytes before parsing', () => {
  it('counts objects and arrays, the body being level 1', () => {
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 2)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(bytes(`{"a":"${'[{'.repeat(100)}\\"[[["}`), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a\\\\":[[1]]}'), 2)).toBe(true);
  });

  it('stops at the bound on a 100,000-level body', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(jsonDepthExceeds(bytes(deep), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('unstorableTextEntries: one invalid_character entry per string PostgreSQL cannot store', () => {
  it('finds NUL and lone surrogates in values and keys, in document order, not well-formed pairs', () => {
    const body = JSON.parse(
      '{"a":"ok \\ud83d\\ude00","b":["x\\u0000"],"c\\ud800":{"d":"\\udfff"},"e":"\\udfff"}',
    );
    expect(unstorableTextEntries(body).map((e) => ('pointer' in e ? e.pointer : ''))).toEqual([
      '/b/0',
      '/c\ud800',
      '/e',
    ]);
  });

  it('walks without recursion: 100,000 levels do not overflow the stack', () => {
    let value: unknown = 'a\u0000';
    for (let i = 0; i < 100_000; i++) value = [value];
    expect(unstorableTextEntries(value)).toHaveLength(1);
  });
});
