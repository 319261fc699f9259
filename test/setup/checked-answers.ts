import type request from 'supertest';
import type { Response } from 'supertest';
import type { Exchange, ResponseContract } from '../support/response-contract';

type Client = ReturnType<typeof request>;
type Test = ReturnType<Client['get']>;
type Done = (error: Error | null, res?: Response) => void;

/** supertest runs a request's assertions in `assert`, once the answer is in (end() and await alike). */
interface Asserting {
  assert(error: Error | null, res: Response | undefined, done?: Done): void;
}

/** A JSON body a test read as bytes (a download's problem answer), parsed as supertest would have. */
function jsonOf(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes.toString('utf8'); // not JSON: the schema check says so
  }
}

function exchangeOf(method: string, res: Response): Exchange {
  const sent = (res as unknown as { req?: { path?: string } }).req?.path ?? new URL(res.request.url).pathname;
  const text = (res as { text?: string }).text;
  const contentType = res.headers['content-type'];
  const bytes = Buffer.isBuffer(res.body) ? res.body : undefined;
  return {
    method: method.toUpperCase(),
    path: sent.split('?')[0],
    status: res.status,
    contentType,
    body: bytes && /[/+]json\b/i.test(contentType ?? '') ? jsonOf(bytes) : res.body,
    hasBody: (text?.length ?? 0) > 0 || (bytes?.length ?? 0) > 0,
  };
}

/**
 * The request, whose answer is checked against the document after the test's own assertions
 * (theirs fail first): a violation fails the request as a failed `.expect` would, with where the
 * request was made, the pointer into the body and the reason.
 */
function checked(test: Test, method: string, contract: ResponseContract): Test {
  const madeAt = new Error('made at').stack?.split('\n').slice(2).join('\n') ?? '';
  const asserting = test as unknown as Asserting;
  const assert = asserting.assert.bind(test);
  asserting.assert = (error, res, done) =>
    assert(error, res, (failure, answered) => {
      let fault = failure;
      try {
        const violation = !failure && answered ? contract.violation(exchangeOf(method, answered)) : undefined;
        if (violation) {
          fault = new Error(`The answer is not one the OpenAPI document allows: ${violation}`);
          fault.stack = `${fault.message}\n${madeAt}`;
        }
      } catch (thrown) {
        fault = thrown as Error; // e.g. a schema of the document Ajv cannot compile
      }
      done?.call(test, fault, answered);
    });
  return test;
}

/** `client` with every request it makes checked against the document by `contract`. */
export function checkedAgainstDocument(client: Client, contract: ResponseContract): Client {
  return Object.fromEntries(
    Object.entries(client).map(([method, make]) => [
      method,
      (url: string) =>
        checked((make as (url: string) => Test)(url), method === 'del' ? 'delete' : method, contract),
    ]),
  ) as unknown as Client;
}
