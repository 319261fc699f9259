import { describe, expect, it } from '@jest/globals';
import { thrownBy } from '../../test/support/thrown';
import { ApiError } from '../common/errors/api-error';
import { parseFilterObject } from '../search/listing/filter-object';
import { emptyFilter } from '../search/listing/conversation-filter';
import { combineWithView, ViewFilter } from './view-combination';

const parsed = (filters: Record<string, unknown>) => parseFilterObject(filters);
const view = (filters: Record<string, unknown>, id = 'view_A'): ViewFilter => ({
  id,
  filter: parsed(filters),
});

const refusal = (run: () => unknown) => thrownBy(run, ApiError, 'an ApiError');

describe("view=: the view's filters AND the request's own", () => {
  it('takes the filters of both sides', () => {
    const { filter } = combineWithView(
      view({ channel: 'web', 'quality.min': 0.2 }),
      parsed({ language: 'fr', 'quality.max': 0.8 }),
    );
    expect(filter).toMatchObject({
      channel: 'web',
      language: 'fr',
      scores: { quality: { min: 0.2, max: 0.8 } },
    });
  });

  it('a view alone, with no filter of the request, is the view', () => {
    const v = view({ channel: 'web', keywords: ['refund'], q: 'late OR delayed' });
    expect(combineWithView(v, emptyFilter()).filter).toEqual(v.filter);
  });
});

describe('a single-valued filter in both → 400 invalid_filter naming it, even with the same value', () => {
  it.each([
    ['channel', 'web', 'web'],
    ['channel', 'web', 'hosted'],
    ['from', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z'],
    ['quality.min', 0.5, 0.5],
    ['labelStatus', 'labeled', 'labeled'],
    ['q', 'refund', 'refund'],
  ])('%s in the view and in the request (%p, %p)', (name, a, b) => {
    const error = refusal(() => combineWithView(view({ [name]: a }), parsed({ [name]: b })));
    expect(error.code).toBe('invalid_filter');
    expect(error.errors).toEqual([expect.objectContaining({ code: 'invalid_filter', parameter: name })]);
  });

  it('names every filter set twice, located by pointer for a body', () => {
    const error = refusal(() =>
      combineWithView(view({ channel: 'web', language: 'fr' }), parsed({ channel: 'web', language: 'fr' }), {
        pointerBase: '/filters',
      }),
    );
    expect(error.errors?.map((e) => ('pointer' in e ? e.pointer : undefined))).toEqual([
      '/filters/channel',
      '/filters/language',
    ]);
  });

  it('a min in one and the max of the same score in the other are two filters', () => {
    const { filter } = combineWithView(view({ 'trust.min': 0.1 }), parsed({ 'trust.max': 0.9 }));
    expect(filter.scores.trust).toEqual({ min: 0.1, max: 0.9 });
  });
});

describe('repeatable ones add up: keywords, labels.all, each labels.any group, labels.none', () => {
  it('adds every one, each once', () => {
    const v = view({
      keywords: ['refund', 'late'],
      'labels.all': ['resolution:unresolved'],
      'labels.any': ['visitor_frustrated:true|human_requested:true'],
      'labels.none': ['abusive_visitor:true'],
    });
    const { filter } = combineWithView(
      v,
      parsed({
        keywords: ['late', 'parcel'],
        'labels.all': ['resolution:unresolved', 'grounded:fail'],
        'labels.any': [
          'review_reason:service|review_reason:policy',
          'human_requested:true|visitor_frustrated:true',
        ],
        'labels.none': ['out_of_scope:true'],
      }),
    );
    expect(filter.keywords).toEqual(['refund', 'late', 'parcel']);
    expect(filter.labelsAll).toEqual(['resolution:unresolved', 'grounded:fail']);
    expect(filter.labelsAny).toEqual([
      ['visitor_frustrated:true', 'human_requested:true'],
      ['review_reason:service', 'review_reason:policy'],
    ]);
    expect(filter.labelsNone).toEqual(['abusive_visitor:true', 'out_of_scope:true']);
  });

  it('more than 20 keywords together → 400 invalid_request (too_many_values) naming keywords', () => {
    const words = (prefix: string) => Array.from({ length: 12 }, (_, i) => `${prefix}${i}`);
    const error = refusal(() =>
      combineWithView(view({ keywords: words('a') }), parsed({ keywords: words('b') })),
    );
    expect(error.code).toBe('invalid_request');
    expect(error.errors).toEqual([
      expect.objectContaining({ code: 'too_many_values', parameter: 'keywords' }),
    ]);
  });

  it('labelStatus pending from one side with a label filter from the other → invalid_filter naming labelStatus', () => {
    const error = refusal(() =>
      combineWithView(view({ labelStatus: 'pending' }), parsed({ 'labels.all': ['resolution:resolved'] })),
    );
    expect(error.errors).toEqual([expect.objectContaining({ parameter: 'labelStatus' })]);
  });
});

describe("a cursor binds to the filters as they were, the view's included", () => {
  const own = parsed({ keywords: ['refund'] });

  it('the same view and request give the same binding', () => {
    expect(combineWithView(view({ channel: 'web' }), own).cursorFilters).toBe(
      combineWithView(view({ channel: 'web' }), parsed({ keywords: ['refund'] })).cursorFilters,
    );
  });

  it("changes when the view's filters change, even if the combination does not", () => {
    const before = combineWithView(view({ keywords: ['refund', 'late'] }), parsed({ keywords: ['late'] }));
    const after = combineWithView(view({ keywords: ['refund'] }), parsed({ keywords: ['late'] }));
    expect(after.filter.keywords.sort()).toEqual(before.filter.keywords.sort());
    expect(after.cursorFilters).not.toBe(before.cursorFilters);
  });

  it('differs from the same filters sent without the view, and from another view', () => {
    const withView = combineWithView(view({ channel: 'web' }), own);
    const other = combineWithView(view({ channel: 'web' }, 'view_B'), own);
    expect(other.cursorFilters).not.toBe(withView.cursorFilters);
  });
});
