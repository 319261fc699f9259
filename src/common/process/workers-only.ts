import type { Type } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';

/**
 * Modules of background work only (a queue processor, a periodic job): `modules` where
 * WORKERS=on, none on HTTP-only processes.
 */
export function workersOnly(config: AppConfig, ...modules: Type[]): Type[] {
  return config.workers ? modules : [];
}
