import { elapsedMs } from './stats';

/**
 * A closed loop on each of `loops` (its connections, say): `turn` runs on a loop again as soon as
 * its previous turn is over, until `seconds` have passed; the wall time (ms), the last turns
 * included.
 */
export async function closedLoops<T>(
  loops: T[],
  seconds: number,
  turn: (loop: T) => Promise<void>,
): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  const start = process.hrtime.bigint();
  await Promise.all(
    loops.map(async (loop) => {
      while (Date.now() < deadline) await turn(loop);
    }),
  );
  return elapsedMs(start);
}
