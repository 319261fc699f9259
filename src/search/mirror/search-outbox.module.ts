import { Module } from '@nestjs/common';
import { SearchOutboxRepository } from './search-outbox.repository';

/** The outbox's SQL, for the mirror and for the health check's lag. */
@Module({ providers: [SearchOutboxRepository], exports: [SearchOutboxRepository] })
export class SearchOutboxModule {}
