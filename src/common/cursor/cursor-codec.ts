import { createHash, createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { ApiError } from '../errors/api-error';

/** What a cursor is bound to: the listing, its scope (site or organization) and its filters. */
export interface CursorBinding {
  /** The listing, e.g. `conversations`. */
  resource: string;
  /** The id the listing is under, e.g. the site id. */
  scope: string;
  /**
   * The filters in a canonical form: equal filters give equal values whatever the order the
   * client sent repeated parameters in (see canonicalFilters). Excludes limit and count.
   */
  filters: string;
}

const FINGERPRINTS_KEPT = 256;

interface Payload {
  v: 1;
  r: string;
  s: string;
  f: string;
  p: unknown[];
}

/**
 * Canonical text of a filter set: keys sorted, empty values dropped, array values sorted, so
 * the order of repeated parameters does not matter. Arrays of arrays (groups) sort each group too.
 */
export function canonicalFilters(filters: Record<string, unknown>): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      return value
        .map(canonical)
        .sort((a, b) =>
          JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0,
        );
    }
    return value;
  };
  const entries = Object.keys(filters)
    .sort()
    .filter(
      (key) =>
        filters[key] !== undefined &&
        filters[key] !== null &&
        !(Array.isArray(filters[key]) && (filters[key] as unknown[]).length === 0),
    )
    .map((key) => [key, canonical(filters[key])]);
  return JSON.stringify(entries);
}

/** 400 invalid_cursor: a cursor the API did not issue, altered, or holding no position of its listing. */
export function invalidCursor(): ApiError {
  return new ApiError(
    'invalid_cursor',
    'The cursor was not issued by the API or was altered; resend it exactly as received, or start without a cursor.',
    {
      errors: [{ code: 'invalid_cursor', detail: 'The cursor is not valid.', parameter: 'cursor' }],
    },
  );
}

function cursorMismatch(): ApiError {
  return new ApiError(
    'cursor_mismatch',
    'The cursor was issued for different filters; repeat the same filters, or start without a cursor.',
    {
      errors: [
        {
          code: 'cursor_mismatch',
          detail: 'The cursor does not match the filters of this request.',
          parameter: 'cursor',
        },
      ],
    },
  );
}

/**
 * Opaque, signed page cursors: base64url(JSON) + "." + HMAC-SHA256 under CURSOR_SECRET. Cursors
 * signed with CURSOR_SECRET_PREVIOUS stay valid, so the secret can be rotated.
 */
@Injectable()
export class CursorCodec {
  /** The secrets as HMAC keys, made once (a string key is imported again on every HMAC). */
  private readonly secrets: readonly KeyObject[];
  /** Fingerprints of recent filter texts: most pages repeat a few filter sets (the first page's is empty). */
  private readonly fingerprints = new Map<string, string>();

  constructor(config: AppConfig) {
    this.secrets = config.cursorSecrets.map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
  }

  encode(binding: CursorBinding, position: unknown[]): string {
    const payload: Payload = {
      v: 1,
      r: binding.resource,
      s: binding.scope,
      f: this.fingerprint(binding.filters),
      p: position,
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body, this.secrets[0])}`;
  }

  /** The position of a cursor; throws invalid_cursor or cursor_mismatch. */
  decode(token: string, binding: CursorBinding): unknown[] {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 4096) throw invalidCursor();
    const body = token.slice(0, dot);
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    if (token.slice(dot + 1) !== signature.toString('base64url')) throw invalidCursor();
    const valid = this.secrets.some((secret) => {
      const expected = Buffer.from(this.sign(body, secret), 'base64url');
      return expected.length === signature.length && timingSafeEqual(expected, signature);
    });
    if (!valid) throw invalidCursor();
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    if (payload?.v !== 1 || !Array.isArray(payload.p)) throw invalidCursor();
    if (
      payload.r !== binding.resource ||
      payload.s !== binding.scope ||
      payload.f !== this.fingerprint(binding.filters)
    ) {
      throw cursorMismatch();
    }
    return payload.p;
  }

  private sign(body: string, secret: KeyObject): string {
    return createHmac('sha256', secret).update(body).digest('base64url');
  }

  private fingerprint(filters: string): string {
    let fingerprint = this.fingerprints.get(filters);
    if (fingerprint === undefined) {
      fingerprint = createHash('sha256').update(filters).digest('base64url').slice(0, 22);
      // Bounded: filter texts come from clients.
      if (this.fingerprints.size >= FINGERPRINTS_KEPT) this.fingerprints.clear();
      if (filters.length <= 1024) this.fingerprints.set(filters, fingerprint);
    }
    return fingerprint;
  }
}
