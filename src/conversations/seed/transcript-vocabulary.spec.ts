import { describe, expect, it } from '@jest/globals';
import { SEED_LANGUAGES } from './seed-vocabulary';
import { BRANDS, transcriptVocabulary } from './transcript-vocabulary';

const v = transcriptVocabulary(SEED_LANGUAGES);
const head = (language: string) => {
  const i = SEED_LANGUAGES.indexOf(language as (typeof SEED_LANGUAGES)[number]);
  return v.head.slice(i * v.headStride, i * v.headStride + v.headSizes[i]);
};

describe('the transcript vocabulary', () => {
  it('has, in every language, a head of distinct words with plurals and verb forms', () => {
    const forms: Record<string, string[]> = {
      fr: ['livraison', 'livraisons', 'livrer', 'livré', 'livrée', 'commande', 'commandes'],
      en: ['shoe', 'shoes', 'deliver', 'delivered', 'delivering', 'order', 'orders', 'ordered'],
      de: ['Lieferung', 'Lieferungen', 'liefern', 'geliefert', 'Bestellung', 'Bestellungen', 'bestellt'],
      it: ['consegna', 'consegne', 'consegnare', 'consegnato', 'consegnata', 'ordine', 'ordini'],
      es: ['pedido', 'pedidos', 'entregar', 'entregado', 'entregada', 'entregas', 'envío', 'envíos'],
      nl: ['levering', 'leveringen', 'leveren', 'geleverd', 'bestelling', 'bestellingen', 'besteld'],
    };
    for (const language of SEED_LANGUAGES) {
      const words = head(language);
      expect(new Set(words).size).toBe(words.length);
      expect(words.length).toBeGreaterThan(140);
      expect(words).toEqual(expect.arrayContaining(forms[language]));
      // Accented words in every language but English, which has a few loanwords.
      expect(words.filter((w) => /[^\u0000-\u007f]/.test(w)).length).toBeGreaterThan(2);
    }
  });

  it('shares phrases per language, the return policy and the order number among them', () => {
    expect(v.phrases).toEqual(
      expect.arrayContaining([
        '30-day return policy',
        'politique de retour de 30 jours',
        '30-tägiges Rückgaberecht',
        'politica di reso di 30 giorni',
        'política de devolución de 30 días',
        '30 dagen retourbeleid',
        'order number',
        'numéro de commande',
        'Bestellnummer',
      ]),
    );
    expect(v.phrases).toHaveLength(v.phraseCount * SEED_LANGUAGES.length);
    expect(v.phraseWords).toEqual(v.phrases.map((p) => p.split(' ').length));
    // A message inserts at most one phrase and one product name (3 words) into its 5 to 80 words.
    expect(Math.max(...v.phraseWords) + 3).toBeLessThanOrEqual(80);
  });

  it('makes the tail from 48 syllables and 4 forms per language, and single-word brands', () => {
    expect(v.syllables).toHaveLength(48 * SEED_LANGUAGES.length);
    expect(v.forms).toHaveLength(4 * SEED_LANGUAGES.length);
    expect(BRANDS.every((b) => /^[\p{L}]+$/u.test(b))).toBe(true);
  });
});
