import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { CacheInvalidation } from '../auth/cache-invalidation';
import { FreshCache } from '../auth/fresh-cache';
import {
  CreateSiteDto,
  DEFAULT_ATTRIBUTION_WINDOW_HOURS,
  DEFAULT_PAGE_LIMIT,
  UpdateSiteDto,
} from './dto/site.dto';
import { normalizeHost, normalizeOrigin } from './site-address';
import { RecordingSettings, SiteRecord, SitesRepository } from './sites.repository';

const SITE_ORDER = newestFirst('createdAt', 'site');

@Injectable()
export class SitesService {
  /**
   * Which organization owns each live site, at most FRESH_FOR_MS old: the conversation routes
   * check ownership without a query per request, and a deleted site is refused on every
   * instance within that time. Keyed by site id; the value is the owner.
   */
  private readonly owners = new FreshCache<{ organizationId: string }>((siteId) =>
    this.sites.findOwner(siteId),
  );

  constructor(
    private readonly dataSource: DataSource,
    private readonly sites: SitesRepository,
    private readonly paging: KeysetPaging,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onInvalidate(() => this.owners.clear());
  }

  /** The organization's live site; 404 not_found for absent, deleted or another organization's. */
  async getOwned(organizationId: string, siteId: string, manager?: EntityManager): Promise<SiteRecord> {
    const site = await this.sites.findOwned(organizationId, siteId, manager);
    if (!site) throw ApiError.notFound('site');
    return site;
  }

  /**
   * Throws 404 not_found unless the organization owns this live site, as getOwned does, from the
   * ownership cache: for routes that need the site to exist, not its current fields.
   */
  async assertOwned(organizationId: string, siteId: string, manager?: EntityManager): Promise<void> {
    // In a transaction (an idempotent write holding its key), read on its own connection: a
    // cache miss must not wait for a second pooled connection while the key's lock is held.
    const owner = manager ? await this.sites.findOwner(siteId, manager) : await this.owners.get(siteId);
    if (owner?.organizationId !== organizationId) throw ApiError.notFound('site');
  }

  /**
   * What recording into the site needs (its write-time redaction), read in the recording's
   * transaction so a change of the site's patterns applies to the very next write; 404 not_found
   * as assertOwned.
   */
  async recordingSettings(
    organizationId: string,
    siteId: string,
    manager: EntityManager,
  ): Promise<RecordingSettings> {
    const settings = await this.sites.findRecordingSettings(siteId, manager);
    if (settings?.organizationId !== organizationId) throw ApiError.notFound('site');
    return settings;
  }

  /** A page of the organization's live sites, newest first. */
  async list(organizationId: string, request: PageRequest): Promise<KeysetPage<SiteRecord>> {
    return this.paging.pageInScope('sites', organizationId, SITE_ORDER, request, (limit, after) =>
      this.sites.listOwned(organizationId, limit, after),
    );
  }

  async create(organizationId: string, input: CreateSiteDto, manager?: EntityManager): Promise<SiteRecord> {
    return this.sites.insert(
      {
        id: newId('site'),
        organizationId,
        name: input.name.trim(),
        origin: normalizeOrigin(input.origin)!,
        aliases: normalizeAliases(input.aliases ?? []),
        pageLimit: input.pageLimit ?? DEFAULT_PAGE_LIMIT,
        exclusions: [...new Set(input.exclusions ?? [])],
        retentionDays: input.retentionDays ?? null,
        attributionWindowHours: input.attributionWindowHours ?? DEFAULT_ATTRIBUTION_WINDOW_HOURS,
        redactionPatterns: [...new Set(input.redaction?.patterns ?? [])],
      },
      manager,
    );
  }

  async update(organizationId: string, siteId: string, input: UpdateSiteDto): Promise<SiteRecord> {
    const site = await this.sites.update(organizationId, siteId, {
      name: input.name?.trim(),
      origin: input.origin === undefined ? undefined : normalizeOrigin(input.origin),
      aliases: input.aliases === undefined ? undefined : normalizeAliases(input.aliases),
      pageLimit: input.pageLimit,
      exclusions: input.exclusions === undefined ? undefined : [...new Set(input.exclusions)],
      retentionDays: input.retentionDays,
      attributionWindowHours: input.attributionWindowHours,
      redactionPatterns: input.redaction === undefined ? undefined : [...new Set(input.redaction.patterns)],
    });
    if (!site) throw ApiError.notFound('site');
    return site;
  }

  /**
   * Deletes a site unless it is the organization's only one (409 last_site, nothing changed).
   * The organization row is locked, so concurrent deletes of its last two sites leave one.
   */
  async delete(organizationId: string, siteId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.sites.lockOrganization(organizationId, manager);
      await this.getOwned(organizationId, siteId, manager);
      if ((await this.sites.countLive(organizationId, manager)) <= 1) {
        throw new ApiError(
          'last_site',
          "This is the organization's only site; create another site before deleting it.",
        );
      }
      await this.sites.markDeleted(siteId, manager);
    });
    await this.invalidation.publish();
  }
}

function normalizeAliases(aliases: string[]): string[] {
  return [...new Set(aliases.map((alias) => normalizeHost(alias)!))];
}
