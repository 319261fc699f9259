import { BullModule } from '@nestjs/bull';
import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';

/**
 * Bull's connection to Redis, shared by every queue (REDIS_URL, keys under REDIS_KEY_PREFIX).
 * Features register their queues with BullModule.registerQueue.
 */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        url: config.redisUrl,
        prefix: `${config.redisKeyPrefix}bull`,
      }),
    }),
  ],
  exports: [BullModule],
})
export class QueueModule {}
