import type { Queue } from 'bull';

/**
 * Adds the job `name` of the interval of `everyMs` that `now` falls in. Its id names the interval,
 * so when every worker process ticks in the same interval the queue holds the job once; a few
 * finished ones are kept so that a late tick of that interval still finds the id taken.
 */
export async function addOncePerInterval(
  queue: Queue,
  name: string,
  everyMs: number,
  now: Date,
): Promise<void> {
  await queue.add(
    name,
    {},
    {
      jobId: `${name}:${Math.floor(now.getTime() / everyMs)}`,
      removeOnComplete: 10,
      removeOnFail: 10,
      attempts: 1,
    },
  );
}
