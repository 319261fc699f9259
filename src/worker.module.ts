import { DynamicModule, Module } from '@nestjs/common';
import { backgroundModules, infrastructureModules } from './app.module';
import { AppConfig } from './config/app-config';

/** The background work with the infrastructure it needs: no HTTP server, no controllers (src/worker.ts). */
@Module({})
export class WorkerModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...infrastructureModules(config), ...backgroundModules(config)],
    };
  }
}
