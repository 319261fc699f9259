import { DynamicModule, Module } from '@nestjs/common';
import { backgroundModules, infrastructureModules } from './app.module';
import { AppConfig } from './config/app-config';

/** The background processors with the infrastructure they need, and no HTTP server (src/worker.ts). */
@Module({})
export class WorkerModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...infrastructureModules(config), ...backgroundModules(config)],
    };
  }
}
