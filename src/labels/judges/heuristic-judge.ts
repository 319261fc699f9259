import type { CriterionResult } from '../taxonomy';
import type { Judge, JudgeInput, JudgeMessage, JudgeVerdict } from './judge';

/**
 * Phrases the rules look for, lowercase, in the six panel languages (fr, en, de, it, es, nl).
 * Matched as whole words or phrases, case-insensitively, in text blocks only.
 */
export const HEURISTIC_PHRASES = {
  thanks: [
    'thank',
    'thanks',
    'perfect',
    'great',
    'that helps',
    'merci',
    'parfait',
    'super',
    'danke',
    'perfekt',
    'grazie',
    'perfetto',
    'gracias',
    'perfecto',
    'genial',
    'bedankt',
    'dank je',
    'dank u',
  ],
  frustration: [
    'useless',
    'not helpful',
    'unhelpful',
    'annoying',
    'ridiculous',
    'frustrated',
    'frustrating',
    'waste of time',
    "doesn't work",
    'does not work',
    'nul',
    'inutile',
    'ça ne marche pas',
    'nutzlos',
    'funktioniert nicht',
    'ärgerlich',
    'non funziona',
    'no funciona',
    'inútil',
    'nutteloos',
    'werkt niet',
  ],
  humanRequest: [
    'human',
    'real person',
    'a person',
    'customer service',
    'speak to someone',
    'talk to someone',
    'live agent',
    'un humain',
    'conseiller',
    'service client',
    'mitarbeiter',
    'echten menschen',
    'kundenservice',
    'operatore',
    'persona reale',
    'servizio clienti',
    'persona real',
    'atención al cliente',
    'medewerker',
    'klantenservice',
    'echt persoon',
  ],
  purchase: [
    'buy',
    'order',
    'purchase',
    'add to cart',
    'checkout',
    'acheter',
    'commander',
    'panier',
    'kaufen',
    'bestellen',
    'warenkorb',
    'comprare',
    'ordinare',
    'carrello',
    'comprar',
    'pedido',
    'carrito',
    'kopen',
    'winkelwagen',
  ],
  policy: [
    'refund',
    'return',
    'returns',
    'warranty',
    'guarantee',
    'shipping cost',
    'delivery time',
    'privacy',
    'remboursement',
    'retour',
    'garantie',
    'livraison',
    'rückerstattung',
    'rückgabe',
    'versand',
    'rimborso',
    'reso',
    'garanzia',
    'spedizione',
    'reembolso',
    'devolución',
    'garantía',
    'envío',
    'terugbetaling',
    'retourneren',
    'verzending',
  ],
  abusive: [
    'idiot',
    'stupid',
    'shut up',
    'moron',
    'dumb',
    'crap',
    'connard',
    'débile',
    'ta gueule',
    'dummkopf',
    'halt die klappe',
    'blöd',
    'idiota',
    'stupido',
    'stai zitto',
    'estúpido',
    'cállate',
    'gilipollas',
    'idioot',
    'hou je mond',
    'klootzak',
  ],
  outOfScope: [
    "can't help with that",
    'cannot help with that',
    'only help with',
    'outside of what i can',
    'not able to help with',
    'je ne peux pas vous aider',
    'kann ich nicht helfen',
    'non posso aiutarti',
    'no puedo ayudarte',
    'kan ik niet helpen',
  ],
} as const;

const RESOLUTION_SCORE: Record<string, number> = {
  resolved: 1,
  partially_resolved: 0.6,
  abandoned: 0.4,
  unresolved: 0.2,
};
const TRUST_CRITERIA = ['grounded', 'product_accuracy', 'policy_compliant', 'safe_response'];
const SHOUTING = /\b[A-Z]{3,}(?:\s+[A-Z]{3,}){3,}\b/;

function textOf(message: JudgeMessage): string {
  return message.blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

function hasProducts(message: JudgeMessage): boolean {
  return message.blocks.some(
    (b) => b.type === 'product_cards' && Array.isArray(b.products) && b.products.length > 0,
  );
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const patterns = Object.fromEntries(
  Object.entries(HEURISTIC_PHRASES).map(([name, list]) => [
    name,
    new RegExp(`(?<![\\p{L}\\p{N}])(?:${list.map(escape).join('|')})(?![\\p{L}\\p{N}])`, 'iu'),
  ]),
) as Record<keyof typeof HEURISTIC_PHRASES, RegExp>;

function mentions(texts: string[], kind: keyof typeof HEURISTIC_PHRASES): boolean {
  return texts.some((t) => patterns[kind].test(t));
}

const round2 = (n: number) => Math.round(Math.min(1, Math.max(0, n)) * 100) / 100;

/**
 * Deterministic rules over the transcript, the ratings and the product engagement, so the whole
 * system labels conversations with no model. The same input always gives the same verdict.
 * The rules are written out in README.md ("The heuristic judge"); keep both in step.
 */
export class HeuristicJudge implements Judge {
  readonly kind = 'heuristic' as const;
  static readonly VERSION = '1';

  async judge({ conversation, messages }: JudgeInput): Promise<JudgeVerdict> {
    const shopper = messages.filter((m) => m.role === 'shopper');
    const agent = messages.filter((m) => m.role === 'agent');
    const shopperTexts = shopper.map(textOf);
    const agentTexts = agent.map(textOf);
    const lastShopper = shopper.length ? shopper[shopper.length - 1] : undefined;
    const lastShopperIndex = lastShopper ? messages.lastIndexOf(lastShopper) : -1;
    const thanked = lastShopper ? mentions([textOf(lastShopper)], 'thanks') : false;
    // A closing thank-you needs no answer: then any agent reply after the first shopper message counts.
    const answerFrom = thanked ? messages.indexOf(shopper[0]) : lastShopperIndex;
    const answered = answerFrom >= 0 && messages.slice(answerFrom + 1).some((m) => m.role === 'agent');
    const positive = agent.filter((m) => m.rating === 'positive').length;
    const negative = agent.filter((m) => m.rating === 'negative').length;
    const negativeOnProducts = agent.some((m) => m.rating === 'negative' && hasProducts(m));
    const showedProducts = agent.some(hasProducts);
    const clicks = conversation.productEngagement?.clicks ?? 0;

    const abusive = mentions(shopperTexts, 'abusive');
    const frustrated = mentions(shopperTexts, 'frustration') || negative >= 2;
    const humanRequested = mentions(shopperTexts, 'humanRequest');
    const purchaseIntent = clicks > 0 || mentions(shopperTexts, 'purchase');
    const outOfScope = mentions(agentTexts, 'outOfScope');
    const policyTopic = mentions(shopperTexts, 'policy');

    let resolution: string;
    let why: string;
    if (agent.length === 0 || !answered) {
      resolution = 'unresolved';
      why = 'the last shopper message got no answer';
    } else if (negative > 0 && positive === 0 && !thanked) {
      resolution = 'unresolved';
      why = 'answers were rated negatively and never positively';
    } else if (positive > 0 && negative > 0) {
      resolution = 'partially_resolved';
      why = 'answers were rated both positively and negatively';
    } else if (frustrated || humanRequested) {
      resolution = 'partially_resolved';
      why = frustrated ? 'the shopper showed frustration' : 'the shopper asked for a human';
    } else if (positive > 0 || thanked || clicks > 0) {
      resolution = 'resolved';
      why =
        positive > 0
          ? 'answers were rated positively'
          : thanked
            ? 'the shopper thanked the assistant'
            : 'the shopper clicked a product';
    } else if (shopper.length <= 1) {
      resolution = 'abandoned';
      why = 'the shopper left after the first answer without any reaction';
    } else {
      resolution = 'partially_resolved';
      why = 'several turns without a clear sign of success';
    }

    let reviewReason: string;
    if (abusive) reviewReason = 'safety';
    else if (agent.length === 0 || !answered) reviewReason = 'technical';
    else if (negativeOnProducts) reviewReason = 'product';
    else if (policyTopic && (negative > 0 || resolution === 'unresolved')) reviewReason = 'policy';
    else if (frustrated || humanRequested || negative > 0) reviewReason = 'service';
    else reviewReason = 'none';

    const noAgent = agent.length === 0;
    const criteria: Record<string, CriterionResult> = {
      grounded: !showedProducts ? 'not_applicable' : negativeOnProducts ? 'fail' : 'pass',
      answered_question:
        shopper.length === 0 ? 'not_applicable' : answered && resolution !== 'unresolved' ? 'pass' : 'fail',
      product_accuracy: !showedProducts ? 'not_applicable' : negativeOnProducts ? 'fail' : 'pass',
      policy_compliant: noAgent || !policyTopic ? 'not_applicable' : negative > 0 ? 'fail' : 'pass',
      on_brand: noAgent
        ? 'not_applicable'
        : agentTexts.some((t) => SHOUTING.test(t)) || agentTexts.every((t) => t.trim() === '')
          ? 'fail'
          : 'pass',
      safe_response: noAgent ? 'not_applicable' : mentions(agentTexts, 'abusive') ? 'fail' : 'pass',
    };

    const resolutionScore = RESOLUTION_SCORE[resolution];
    const passRate = (names: string[], otherwise: number) => {
      const applicable = names.filter((n) => criteria[n] !== 'not_applicable');
      return applicable.length
        ? applicable.filter((n) => criteria[n] === 'pass').length / applicable.length
        : otherwise;
    };
    const scores = {
      quality: round2(0.5 * passRate(Object.keys(criteria), resolutionScore) + 0.5 * resolutionScore),
      service: round2(
        resolutionScore +
          0.1 * Math.min(positive, 3) -
          0.15 * Math.min(negative, 3) -
          (frustrated ? 0.2 : 0) -
          (humanRequested ? 0.1 : 0),
      ),
      trust: round2(passRate(TRUST_CRITERIA, 1) - 0.1 * Math.min(negative, 3) - (abusive ? 0.1 : 0)),
    };

    const failed = Object.keys(criteria).filter((n) => criteria[n] === 'fail');
    const rationale =
      `${resolution} because ${why}. ${shopper.length} shopper and ${agent.length} agent messages; ` +
      `ratings +${positive}/-${negative}; ${clicks} product clicks` +
      (failed.length ? `; failed: ${failed.join(', ')}.` : '.');

    return {
      resolution,
      reviewReason,
      flags: {
        visitor_frustrated: frustrated,
        human_requested: humanRequested,
        purchase_intent: purchaseIntent,
        out_of_scope: outOfScope,
        abusive_visitor: abusive,
      },
      criteria,
      scores,
      rationale,
      judge: { kind: 'heuristic', model: null, version: HeuristicJudge.VERSION },
    };
  }
}
