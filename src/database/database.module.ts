import { Global, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { createDataSource } from './data-source';
import { installQueryDeadlines } from './pg-timeouts';

/**
 * Provides the one DataSource (a pg pool) to every repository, with the timeouts of
 * AppConfig.database: a partition gives an error within seconds, never a hang (pg-timeouts.ts).
 */
@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      inject: [AppConfig],
      useFactory: async (config: AppConfig) => {
        const dataSource = await createDataSource(config.databaseUrl, {
          timeouts: config.database,
        }).initialize();
        installQueryDeadlines(
          (dataSource.driver as PostgresDriver).master,
          config.database.statementTimeoutMs,
        );
        return dataSource;
      },
    },
  ],
  exports: [DataSource],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
