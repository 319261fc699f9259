import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '../auth/api-keys.service';
import { newId } from '../common/ids/ids';
import { presentSite, SiteResponse } from '../sites/site.presenter';
import { SitesService } from '../sites/sites.service';
import { OrganizationsRepository } from './organizations.repository';

export interface CreatedOrganization {
  organization: { id: string; name: string; createdAt: string };
  site: SiteResponse;
  apiKey: { id: string; secret: string };
}

@Injectable()
export class OrganizationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsRepository,
    private readonly sites: SitesService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /** An organization always has a site: both are created together, with a first API key. */
  async create(input: {
    name: string;
    siteName: string;
    origin: string;
    keyName?: string;
  }): Promise<CreatedOrganization> {
    return this.dataSource.transaction(async (manager) => {
      const organization = await this.organizations.insert({ id: newId('org'), name: input.name }, manager);
      const site = await this.sites.create(
        organization.id,
        { name: input.siteName, origin: input.origin },
        manager,
      );
      const { key, secret } = await this.apiKeys.create(
        { organizationId: organization.id, name: input.keyName ?? 'default' },
        manager,
      );
      return {
        organization: {
          id: organization.id,
          name: organization.name,
          createdAt: organization.createdAt.toISOString(),
        },
        site: presentSite(site),
        apiKey: { id: key.id, secret },
      };
    });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.organizations.find(id)) !== undefined;
  }
}
