import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { SitesRepository } from './sites.repository';
import { SitesService } from './sites.service';
import { SitesController } from './sites.controller';

/** Sites as other features use them (SitesService); their routes are SitesRoutesModule. */
@Module({
  imports: [AuthModule],
  providers: [SitesRepository, SitesService],
  exports: [SitesService],
})
export class SitesModule {}

/** `/api/v1/sites` (the HTTP app only). */
@Module({ imports: [SitesModule], controllers: [SitesController] })
export class SitesRoutesModule {}
