import type { DynamicModule, Type } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';

/**
 * The module of background work (a queue processor, a periodic job) as its `register(config)`
 * gives it: `metadata` (imports, providers) where WORKERS=on, nothing on HTTP-only processes.
 */
export function workersOnly(
  config: AppConfig,
  module: Type,
  metadata: Omit<DynamicModule, 'module'>,
): DynamicModule {
  return config.workers ? { module, ...metadata } : { module };
}
