import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import type Redis from 'ioredis';

/** One counter a request spends: its key, window and allowance. */
export interface CounterCheck {
  name: string;
  key: string;
  ttl: number;
  limit: number;
  blockDuration: number;
}

/**
 * A store that spends several counters of one request together, in order, stopping at the first
 * one over its allowance: the later ones are not spent (an address over its limit does not spend
 * the key's allowance). `incrementAll` returns one record per counter spent; the throttler's
 * single `increment` is the same with one counter.
 */
export abstract class CountersStorage implements ThrottlerStorage {
  abstract incrementAll(checks: CounterCheck[]): Promise<ThrottlerStorageRecord[]>;

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const [record] = await this.incrementAll([{ name: throttlerName, key, ttl, limit, blockDuration }]);
    return record;
  }
}

/**
 * The counting of @nest-lab/throttler-storage-redis (same keys, same fixed-window and block
 * logic), for every counter of a request in one script: one Redis round trip per request
 * instead of one per counter. Sent with EVALSHA (ioredis falls back to EVAL once when Redis
 * does not hold the script yet), so the script's text is not sent on every request. The keys
 * of one request are in different hash slots: this needs one Redis (or a primary), not a cluster.
 */
const SCRIPT = `
local out = {}
for i = 1, #KEYS / 2 do
  local hitKey = KEYS[2 * i - 1]
  local blockKey = KEYS[2 * i]
  local ttl = tonumber(ARGV[3 * i - 2])
  local limit = tonumber(ARGV[3 * i - 1])
  local blockDuration = tonumber(ARGV[3 * i])
  local totalHits = redis.call('INCR', hitKey)
  local timeToExpire = redis.call('PTTL', hitKey)
  if timeToExpire <= 0 then
    redis.call('PEXPIRE', hitKey, ttl)
    timeToExpire = ttl
  end
  local isBlocked = redis.call('GET', blockKey)
  local timeToBlockExpire = 0
  if isBlocked then
    timeToBlockExpire = redis.call('PTTL', blockKey)
  elseif totalHits > limit then
    redis.call('SET', blockKey, 1, 'PX', blockDuration)
    isBlocked = '1'
    timeToBlockExpire = blockDuration
  end
  if isBlocked and timeToBlockExpire <= 0 then
    redis.call('DEL', blockKey)
    redis.call('SET', hitKey, 1, 'PX', ttl)
    totalHits = 1
    timeToExpire = ttl
    isBlocked = false
  end
  table.insert(out, totalHits)
  table.insert(out, timeToExpire)
  table.insert(out, isBlocked and 1 or 0)
  table.insert(out, timeToBlockExpire)
  if isBlocked then
    return out
  end
end
return out
`;

type WithCounters = Redis & { rateLimitCounters(...args: (string | number)[]): Promise<unknown> };

export class RedisCountersStorage extends CountersStorage {
  private readonly redis: WithCounters;

  constructor(redis: Redis) {
    super();
    if (!('rateLimitCounters' in redis)) redis.defineCommand('rateLimitCounters', { lua: SCRIPT });
    this.redis = redis as WithCounters;
  }

  async incrementAll(checks: CounterCheck[]): Promise<ThrottlerStorageRecord[]> {
    if (checks.length === 0) return [];
    const keys = checks.flatMap((c) => [`{${c.key}:${c.name}}:hits`, `{${c.key}:${c.name}}:blocked`]);
    const args = checks.flatMap((c) => [c.ttl, c.limit, c.blockDuration]);
    const result = await this.redis.rateLimitCounters(keys.length, ...keys, ...args);
    if (!Array.isArray(result) || result.length === 0 || result.length % 4 !== 0)
      throw new TypeError(`unexpected rate-limit script answer: ${JSON.stringify(result)}`);
    const records: ThrottlerStorageRecord[] = [];
    for (let i = 0; i < result.length; i += 4) {
      const [totalHits, timeToExpire, isBlocked, timeToBlockExpire] = result.slice(i, i + 4) as number[];
      records.push({
        totalHits,
        timeToExpire: Math.ceil(timeToExpire / 1000),
        isBlocked: isBlocked === 1,
        timeToBlockExpire: Math.ceil(timeToBlockExpire / 1000),
      });
    }
    return records;
  }
}
