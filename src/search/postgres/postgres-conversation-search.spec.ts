import { describe, expect, it } from '@jest/globals';
import { keywordTermsEstimate } from './postgres-conversation-search';

describe('keywordTermsEstimate (title terms the plan chooser weighs)', () => {
  it("spells a word's term and a phrase's adjacent pairs as conversation_keyword_terms does", () => {
    expect(keywordTermsEstimate('s', ['Retour', 'Red  running shoes'])).toEqual([
      's|w:retour',
      's|p:red running',
      's|p:running shoes',
    ]);
  });

  it('gives up on keywords the parser splits in its own way (punctuation, hyphens) and on none', () => {
    expect(keywordTermsEstimate('s', ['e-mail'])).toBeUndefined();
    expect(keywordTermsEstimate('s', ['ok', 'size 4.5'])).toBeUndefined();
    expect(keywordTermsEstimate('s', ['!!!'])).toBeUndefined();
    expect(keywordTermsEstimate('s', [])).toBeUndefined();
  });
});
