import type { Test } from 'supertest';
import { eventually } from '../setup/isolated-database';
import type { TestApp } from '../setup/test-app';

/** What the export helpers need of an organization (createOrganization's result). */
interface SiteOrg {
  site: { id: string };
  auth: Record<string, string>;
}

/** The site's exports collection: /api/v1/sites/{siteId}/conversations/exports. */
export const exportsPath = (org: SiteOrg) => `/api/v1/sites/${org.site.id}/conversations/exports`;

/** POST …/exports with `body` (and extra headers, e.g. Idempotency-Key); the answer as it comes. */
export function postExport(t: TestApp, org: SiteOrg, body: unknown, headers: Record<string, string> = {}) {
  return t
    .http()
    .post(exportsPath(org))
    .set({ ...org.auth, ...headers })
    .send(body as object);
}

/** POST …/exports; throws unless the answer is 202, returns the export resource. */
export async function createExport(t: TestApp, org: SiteOrg, body: Record<string, unknown>) {
  const res = await postExport(t, org, body);
  if (res.status !== 202) throw new Error(`export not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; [key: string]: unknown };
}

/** Polls GET …/exports/{id} until the export is completed or failed; returns the resource. */
export function finishedExport(t: TestApp, org: SiteOrg, id: string, timeoutMs = 30_000) {
  return eventually(
    async () => {
      const res = await getExport(t, org, id);
      return ['completed', 'failed'].includes(res.body.data?.state) ? res.body.data : undefined;
    },
    `export ${id} finished`,
    timeoutMs,
  );
}

/** A request whose answer body is read whole as bytes (a download: `res.body` is a Buffer). */
export function asBytes(req: Test): Test {
  return req.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
}

/** GET …/exports/{id}/download, its answer parsed as any (a problem document is JSON). */
export function downloadRequest(t: TestApp, org: SiteOrg, id: string, headers: Record<string, string> = {}) {
  return t
    .http()
    .get(`${exportsPath(org)}/${id}/download`)
    .set({ ...org.auth, ...headers });
}

/** GET …/exports/{id}/download, the body as bytes. */
export function downloadExport(t: TestApp, org: SiteOrg, id: string, headers: Record<string, string> = {}) {
  return asBytes(downloadRequest(t, org, id, headers));
}

/**
 * The records of a finished export's file, read through its download: its text without the last
 * line break, split at `separator` (NDJSON lines; CSV rows end with CRLF).
 */
export async function downloadedRecords(t: TestApp, org: SiteOrg, id: string, separator = '\n') {
  const file = await downloadExport(t, org, id);
  return (file.body as Buffer).toString('utf8').trim().split(separator);
}

/** GET …/exports/{id}. */
export function getExport(t: TestApp, org: SiteOrg, id: string) {
  return t
    .http()
    .get(`${exportsPath(org)}/${id}`)
    .set(org.auth);
}

/** DELETE …/exports/{id}. */
export function deleteExport(t: TestApp, org: SiteOrg, id: string) {
  return t
    .http()
    .delete(`${exportsPath(org)}/${id}`)
    .set(org.auth);
}
