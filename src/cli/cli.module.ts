import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CommonModule } from '../common/common.module';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { SeedModule } from '../conversations/seed/seed.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { SearchMirrorModule } from '../search/search-mirror.module';

/** What the admin commands need: the database and the services they call, no HTTP. */
@Module({})
export class CliModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forConfig(config),
        CommonModule,
        DatabaseModule,
        AuthModule,
        OrganizationsModule,
        SearchMirrorModule.register(config, { processors: false, controllers: false }),
        SeedModule,
      ],
    };
  }
}
