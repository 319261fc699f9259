import { Module } from '@nestjs/common';
import { SeedService } from './seed.service';

/** The seed command's service (SeedService), in the CLI and beside the conversations it writes. */
@Module({ providers: [SeedService], exports: [SeedService] })
export class SeedModule {}
