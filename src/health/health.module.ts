import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SearchOutboxModule } from '../search/mirror/search-outbox.module';
import { OpenSearchClientsModule } from '../search/opensearch/opensearch-clients.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), SearchOutboxModule, OpenSearchClientsModule],
  controllers: [HealthController],
})
export class HealthModule {}
