import { emptyFilter, type ConversationFilter } from '../listing/conversation-filter';
import { parseTextQuery } from '../text-query/text-query-parser';
import type { TextQuery } from '../text-query/text-query';
import { walksTranscripts } from './transcript-sql';

const text = (q: string) => parseTextQuery(q) as TextQuery;
/** Whether a page of `filter` walks the transcripts in the listing order (walksTranscripts). */
const walks = (filter: Partial<ConversationFilter>) => walksTranscripts({ ...emptyFilter(), ...filter });

describe('walksTranscripts: filters whose every condition the transcripts hold', () => {
  it('q alone, with q.in, a language or a time range', () => {
    expect(walks({ text: text('commande') })).toBe(true);
    expect(walks({ text: parseTextQuery('"free shipping"', 'shopper') as TextQuery })).toBe(true);
    expect(walks({ text: text('commande'), language: 'fr' })).toBe(true);
    expect(
      walks({ text: text('commande'), from: '2026-09-01T00:00:00.000Z', to: '2026-10-01T00:00:00.000Z' }),
    ).toBe(true);
  });

  it('not without q, nor with any condition on the conversation itself', () => {
    expect(walks({})).toBe(false);
    expect(walks({ language: 'fr' })).toBe(false);
    for (const extra of [
      { channel: 'web' },
      { agentId: 'agt_x' },
      { keywords: ['retour'] },
      { labelStatus: 'labeled' },
      { labelsAll: ['resolution:resolved'] },
      { feedback: 'negative' },
      { scores: { quality: { min: 0.5 } } },
      { converted: true },
      { reviewStatus: 'current' },
    ] as Array<Partial<ConversationFilter>>)
      expect(walks({ text: text('commande'), ...extra })).toBe(false);
  });
});
