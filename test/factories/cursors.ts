import { createHmac } from 'node:crypto';

/**
 * The cursor `token` carries, with its position replaced by `position` and signed again with
 * `secret`, as the API signs cursors (base64url(JSON) + "." + HMAC-SHA256): a genuine cursor
 * for the same listing, scope and filters, holding whatever position the test chooses.
 */
export function resignedCursor(token: string, secret: string, position: unknown): string {
  const [body] = token.split('.');
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  const resigned = Buffer.from(JSON.stringify({ ...payload, p: position })).toString('base64url');
  return `${resigned}.${createHmac('sha256', secret).update(resigned).digest('base64url')}`;
}
