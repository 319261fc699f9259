import { Module } from '@nestjs/common';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { CacheInvalidation } from './cache-invalidation';

@Module({
  providers: [ApiKeysRepository, ApiKeysService, CacheInvalidation],
  exports: [ApiKeysService, CacheInvalidation],
})
export class AuthModule {}
