import { Module } from '@nestjs/common';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotentTransaction } from './idempotent-transaction';

/** What a feature module imports to use @Idempotent() routes and IdempotentTransaction. */
@Module({
  providers: [IdempotencyKeysRepository, IdempotencyInterceptor, IdempotentTransaction],
  exports: [IdempotencyKeysRepository, IdempotencyInterceptor, IdempotentTransaction],
})
export class IdempotencyModule {}
