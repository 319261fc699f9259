import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { SecretBox } from '../common/crypto/secret-box';
import { AppConfig } from '../config/app-config';

/** A new signing secret: `whsec_` + base64 of 24 random bytes (Standard Webhooks' form). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The headers of one signed delivery (Standard Webhooks). */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a delivery with every secret given (the current one, and during the 24 h after a
 * rotation the previous one): `webhook-signature` carries one `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` per secret, space-separated, so a receiver holding either verifies.
 * The HMAC is the `standardwebhooks` package's own (the Standard Webhooks reference library).
 */
export function signDelivery(
  eventId: string,
  at: Date,
  body: string,
  secrets: readonly string[],
): SignatureHeaders {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, at, body)).join(' '),
  };
}

/** Seals and opens signing secrets for storage (WEBHOOK_SECRET_KEY); each bound to its webhook's id. */
@Injectable()
export class WebhookSecrets {
  private readonly box: SecretBox;

  constructor(config: AppConfig) {
    this.box = new SecretBox(config.webhooks.secretKey, 'webhook-signing-secrets');
  }

  seal(secret: string, webhookId: string): string {
    return this.box.seal(secret, webhookId);
  }

  open(sealed: string, webhookId: string): string {
    return this.box.open(sealed, webhookId);
  }
}
