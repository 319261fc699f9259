/**
 * The error `run` throws, which must be an instance of `type` (another error is thrown on); a
 * `run` that throws nothing fails the test with `refusal`, what the caller expected.
 */
export function thrownBy<E extends Error>(
  run: () => unknown,
  type: abstract new (...args: never[]) => E,
  refusal: string,
): E {
  try {
    run();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected ${refusal}`);
}
