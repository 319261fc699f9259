import { canonicalHost, hostAddress, isLoopbackAddress, isPublicAddress } from '../common/net/address-guard';

export interface WebhookUrlPolicy {
  allowHttp: boolean;
  allowLoopback: boolean;
}

/**
 * Why `value` cannot be a webhook URL (a sentence for the problem document's `/url` entry), or
 * undefined when it can: an absolute https URL (http only with WEBHOOK_ALLOW_HTTP), no
 * credentials, no fragment, port 443 or 80 (as the address guard allows), and a host that is not
 * an address literal in a blocked range. Names are resolved at every delivery instead, since
 * what they resolve to may change.
 */
export function webhookUrlFault(value: string, policy: WebhookUrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL, e.g. https://example.com/webhooks.';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    return policy.allowHttp ? 'must be an http(s) URL.' : 'must be an https:// URL.';
  if (url.username || url.password) return 'must not carry credentials.';
  if (url.hash) return 'must not have a fragment.';
  const host = canonicalHost(url.hostname)?.replace(/\.$/, '');
  if (!host) return 'has no valid host.';
  const literal = hostAddress(host);
  const loopbackAllowed =
    policy.allowLoopback && (literal ? isLoopbackAddress(literal) : host === 'localhost');
  if (literal && !loopbackAllowed && !isPublicAddress(literal))
    return 'points to a loopback, private, link-local or otherwise non-public address.';
  if (!literal && !loopbackAllowed && (host === 'localhost' || host.endsWith('.localhost')))
    return 'points to a loopback, private, link-local or otherwise non-public address.';
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!loopbackAllowed && port !== 443 && port !== 80) return 'must use port 443 (or 80).';
  return undefined;
}
