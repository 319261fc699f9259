import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SearchOutboxModule } from '../search/mirror/search-outbox.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), SearchOutboxModule],
  controllers: [HealthController],
})
export class HealthModule {}
