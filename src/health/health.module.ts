import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SearchOutboxModule } from '../search/mirror/search-outbox.module';
import { MirrorIndexCheckModule } from '../search/mirror/mirror-index-check';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), SearchOutboxModule, MirrorIndexCheckModule],
  controllers: [HealthController],
})
export class HealthModule {}
