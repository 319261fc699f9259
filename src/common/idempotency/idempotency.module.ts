import { Module } from '@nestjs/common';
import { IdempotencyKeySweep } from './idempotency-key-sweep';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotentTransaction } from './idempotent-transaction';

/**
 * What a feature module imports to use @Idempotent() routes and IdempotentTransaction; on worker
 * processes it also sweeps expired keys (IdempotencyKeySweep).
 */
@Module({
  providers: [IdempotencyKeysRepository, IdempotencyInterceptor, IdempotentTransaction, IdempotencyKeySweep],
  exports: [IdempotencyKeysRepository, IdempotencyInterceptor, IdempotentTransaction],
})
export class IdempotencyModule {}
