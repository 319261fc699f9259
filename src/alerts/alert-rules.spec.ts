import { describe, expect, it } from '@jest/globals';
import { emptyFilter } from '../search/listing/conversation-filter';
import { decideAlert, transitionEventType, windowFilter } from './alert-rules';

const base = { score: null, comparison: 'above' as const, threshold: 10, minConversations: 20 };

describe('alert values over the window (workflows-v1 §4)', () => {
  it('count is the number matching, and a count alert is never insufficient_data', () => {
    expect(decideAlert({ ...base, metric: 'count' }, { total: 11, scores: {} }, undefined)).toEqual({
      state: 'firing',
      value: 11,
    });
    expect(decideAlert({ ...base, metric: 'count' }, { total: 0, scores: {} }, undefined)).toEqual({
      state: 'ok',
      value: 0,
    });
  });

  it('share is matching ÷ all the site’s conversations; fewer than minConversations in the denominator → insufficient_data', () => {
    const alert = { ...base, metric: 'share' as const, threshold: 0.3 };
    expect(decideAlert(alert, { total: 8, scores: {} }, { total: 20, scores: {} })).toEqual({
      state: 'firing',
      value: 0.4,
    });
    expect(decideAlert(alert, { total: 6, scores: {} }, { total: 20, scores: {} })).toEqual({
      state: 'ok',
      value: 0.3,
    });
    expect(decideAlert(alert, { total: 8, scores: {} }, { total: 19, scores: {} })).toEqual({
      state: 'insufficient_data',
      value: 8 / 19,
    });
    expect(
      decideAlert({ ...alert, minConversations: 0 }, { total: 0, scores: {} }, { total: 0, scores: {} }),
    ).toEqual({
      state: 'insufficient_data',
      value: null,
    });
  });

  it('conversion (outcomes-v1 §3) is the share of matching conversations that converted; fewer than minConversations matching → insufficient_data', () => {
    const alert = { ...base, metric: 'conversion' as const, threshold: 0.1, comparison: 'below' as const };
    expect(decideAlert(alert, { total: 40, scores: {} }, undefined, { total: 2, scores: {} })).toEqual({
      state: 'firing',
      value: 0.05,
    });
    expect(decideAlert(alert, { total: 40, scores: {} }, undefined, { total: 8, scores: {} })).toEqual({
      state: 'ok',
      value: 0.2,
    });
    expect(decideAlert(alert, { total: 19, scores: {} }, undefined, { total: 1, scores: {} })).toEqual({
      state: 'insufficient_data',
      value: 1 / 19,
    });
    // A filter with converted=false plans no converted request: none of its matches converted.
    expect(decideAlert(alert, { total: 40, scores: {} }, undefined, undefined)).toEqual({
      state: 'firing',
      value: 0,
    });
    expect(decideAlert({ ...alert, minConversations: 0 }, { total: 0, scores: {} }, undefined)).toEqual({
      state: 'insufficient_data',
      value: null,
    });
  });

  it('mean is over the matching conversations with the score; fewer than minConversations with it → insufficient_data', () => {
    const alert = {
      ...base,
      metric: 'mean' as const,
      score: 'quality' as const,
      comparison: 'below' as const,
      threshold: 0.5,
    };
    expect(
      decideAlert(alert, { total: 50, scores: { quality: { count: 20, mean: 0.4 } } }, undefined),
    ).toEqual({
      state: 'firing',
      value: 0.4,
    });
    expect(
      decideAlert(alert, { total: 50, scores: { quality: { count: 19, mean: 0.4 } } }, undefined).state,
    ).toBe('insufficient_data');
  });

  it('firing when strictly above (below) the threshold', () => {
    expect(
      decideAlert({ ...base, metric: 'count', minConversations: 0 }, { total: 10, scores: {} }, undefined)
        .state,
    ).toBe('ok');
    expect(
      decideAlert({ ...base, metric: 'count', comparison: 'below' }, { total: 9, scores: {} }, undefined)
        .state,
    ).toBe('firing');
  });

  it('each change of state has its event type', () => {
    expect(['firing', 'ok', 'insufficient_data'].map((s) => transitionEventType(s as 'ok'))).toEqual([
      'alert.firing',
      'alert.resolved',
      'alert.insufficient_data',
    ]);
  });
});

describe('the window: conversations created in [now − window, now)', () => {
  const now = new Date('2026-11-20T10:00:00.000Z');
  it('sets from and to', () => {
    expect(windowFilter(emptyFilter(), '1h', now)).toMatchObject({
      from: '2026-11-20T09:00:00.000Z',
      to: '2026-11-20T10:00:00.000Z',
    });
  });
  it("keeps the later start and the earlier end of a view's own from and to", () => {
    const f = windowFilter(
      { ...emptyFilter(), from: '2026-11-20T09:30:00Z', to: '2026-11-21T00:00:00Z' },
      '1h',
      now,
    );
    expect(f).toMatchObject({ from: '2026-11-20T09:30:00.000Z', to: '2026-11-20T10:00:00.000Z' });
  });
});
