/** A secret long enough for every setting that takes one. */
export const PRODUCTION_SECRET = 'a-production-secret-of-sufficient-length-0123';

/** NODE_ENV=production with the secrets it requires, so that a test's own setting is what decides. */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  CURSOR_SECRET: PRODUCTION_SECRET,
  WEBHOOK_SECRET_KEY: PRODUCTION_SECRET,
  VISITOR_ID_KEY: PRODUCTION_SECRET,
};
