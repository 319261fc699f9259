import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { createServiceLogger, ServiceLogger } from './request-logging';

/** The service's logger (ServiceLogger), one per application, at the configured level. */
@Module({})
export class LoggingModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      global: true,
      providers: [
        { provide: ServiceLogger, useFactory: () => new ServiceLogger(createServiceLogger(config.logLevel)) },
      ],
      exports: [ServiceLogger],
    };
  }
}
