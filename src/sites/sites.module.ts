import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { SitesController } from './sites.controller';
import { SitesRepository } from './sites.repository';
import { SitesService } from './sites.service';

@Module({
  imports: [AuthModule],
  controllers: [SitesController],
  providers: [SitesRepository, SitesService],
  exports: [SitesService],
})
export class SitesModule {}
