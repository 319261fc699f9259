/**
 * Resolves with `promise`, or rejects after `ms`: for calls that can wait forever on a dependency
 * that stopped answering (Bull's add() while Redis is down, a health or metrics probe).
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}
