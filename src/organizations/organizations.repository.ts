import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: Date;
}

@Injectable()
export class OrganizationsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(
    org: { id: string; name: string },
    manager: EntityManager = this.dataSource.manager,
  ): Promise<OrganizationRecord> {
    const rows = await manager.query(
      `INSERT INTO organizations (id, name) VALUES ($1, $2) RETURNING id, name, created_at AS "createdAt"`,
      [org.id, org.name],
    );
    return rows[0];
  }

  async find(id: string): Promise<OrganizationRecord | undefined> {
    const rows = await this.dataSource.query(
      `SELECT id, name, created_at AS "createdAt" FROM organizations WHERE id = $1`,
      [id],
    );
    return rows[0];
  }
}
