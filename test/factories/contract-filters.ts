/**
 * The conversation filter parameters as contract-v1 lists them (GET …/conversations; each score
 * row names two). Written out from the contract, not read from src/, so that a filter the code
 * drops or adds shows up in the tests that compare against it.
 */
export const CONTRACT_FILTER_PARAMETERS = [
  'from',
  'to',
  'channel',
  'agentId',
  'language',
  'feedback',
  'keywords',
  'labels.all',
  'labels.any',
  'labels.none',
  'quality.min',
  'quality.max',
  'service.min',
  'service.max',
  'trust.min',
  'trust.max',
  'labelStatus',
] as const;
