import { Injectable } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { AppConfig } from '../config/app-config';

/**
 * The keyed hash of a visitor id (outcomes-v1 §1): HMAC-SHA-256 under VISITOR_ID_KEY. It is all
 * that conversations and orders store of a visitor id; the id itself is never stored, logged or
 * answered, and equal ids give equal hashes, which is all attribution compares.
 */
@Injectable()
export class VisitorIdHasher {
  constructor(private readonly config: AppConfig) {}

  hash(visitorId: string): Buffer {
    return createHmac('sha256', this.config.attribution.visitorIdKey).update(visitorId, 'utf8').digest();
  }
}
