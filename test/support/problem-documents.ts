import { expect } from '@jest/globals';
import { ERROR_CODES, type ErrorCode } from '../../src/common/errors/error-codes';

/**
 * The answer is the problem document of `code`: its status and its exact title. `errors`, when
 * given, is what its `errors` list must equal (a matcher such as expect.arrayContaining works).
 */
export function expectProblemOf(
  res: { status: number; body: Record<string, unknown> },
  code: ErrorCode,
  errors?: unknown,
): void {
  expect(res.status).toBe(ERROR_CODES[code].status);
  expect(res.body).toMatchObject({ code, title: ERROR_CODES[code].title });
  if (errors !== undefined) expect(res.body.errors).toEqual(errors);
}
