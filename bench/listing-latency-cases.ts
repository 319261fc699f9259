import { DataSource } from 'typeorm';

const days = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

/** The hard cases of the listing, on a database filled by `npm run cli -- seed`. */
export async function CASES(
  ds: DataSource,
  site: string,
): Promise<Record<string, Record<string, string | string[]>>> {
  // A rare title word: one that appears in a handful of titles of the site.
  const [rare] = await ds.query(
    `SELECT word FROM ts_stat($$SELECT title_tsv FROM conversations TABLESAMPLE SYSTEM (1) WHERE site_id = '${site.replace(/'/g, '')}'$$) WHERE ndoc = 1 AND length(word) > 6 LIMIT 1`,
  );
  return {
    'no filter': {},
    'channel=playground': { channel: 'playground' },
    'date window deep in the past (1 day, 80 days ago)': { from: days(81), to: days(80) },
    'two common tokens': { 'labels.all': ['resolution:resolved', 'grounded:pass'] },
    'rare token (safe_response:fail)': { 'labels.all': 'safe_response:fail' },
    'three rare tokens': {
      'labels.all': ['abusive_visitor:true', 'safe_response:fail', 'review_reason:safety'],
    },
    'two dense tokens, empty intersection': { 'labels.all': ['resolution:resolved', 'resolution:abandoned'] },
    'labels.any two groups': {
      'labels.any': [
        'resolution:unresolved|resolution:abandoned',
        'review_reason:service|review_reason:product',
      ],
    },
    'labels.none + from (30 days)': {
      'labels.none': 'visitor_frustrated:true',
      'labels.all': 'purchase_intent:true',
      from: days(30),
    },
    'quality in a 2% band': { 'quality.min': '0.5', 'quality.max': '0.52' },
    'keyword common (order)': { keywords: 'order' },
    'keyword rare': { keywords: rare.word },
    'keyword matching nothing': { keywords: 'zzqxnothing' },
    'keyword ~dense (head word, 2 words phrase)': { keywords: ['commande'] },
    'rare combination of scalar filters': {
      agentId: 'agt_SeedAgent17',
      language: 'nl',
      channel: 'playground',
      feedback: 'negative',
      'quality.min': '0.9',
    },
    'labelStatus=failed': { labelStatus: 'failed' },
    'keyword + token + channel': {
      keywords: 'order',
      'labels.all': 'visitor_frustrated:true',
      channel: 'hosted',
    },
  };
}
