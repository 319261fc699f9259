import { Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A DataSource that is never connected: for specs of modules that open connections on first use only. */
export const unconnectedDataSource = {
  options: { type: 'postgres', poolSize: 2 },
  query: async () => [],
} as unknown as DataSource;

/** A global module providing the unconnected DataSource, for a testing module built without a database. */
@Global()
@Module({ providers: [{ provide: DataSource, useValue: unconnectedDataSource }], exports: [DataSource] })
export class NoDatabase {}
