import { describe, expect, it } from '@jest/globals';
import { ImportSettings } from '../config/app-config';
import { ImportBudget } from './import-budget';

const settings: ImportSettings = {
  maxDocumentBytes: 1000,
  maxTotalBytes: 2500,
  maxDocuments: 3,
  maxUrls: 2,
  maxDepth: 2,
  maxRedirects: 5,
  requestTimeoutMs: 1000,
  maxDurationMs: 60_000,
  concurrency: 1,
  leaseMs: 60_000,
  queueTimeoutMs: 100,
};

describe('import budget: each bound spent and recorded once reached', () => {
  it('bytes: hands out what is left of the import-wide budget', () => {
    const budget = new ImportBudget(settings);
    budget.addBytes(500);
    expect(budget.takeBytes(1500)).toBe(1500);
    expect(budget.takeBytes(1500)).toBe(500);
    expect(budget.takeBytes(10)).toBe(0);
  });

  it('documents: max_documents once they are all taken, queued ones included', () => {
    const budget = new ImportBudget(settings);
    expect(budget.mayQueue(1, 2)).toBe(true);
    expect(budget.mayQueue(1, 3)).toBe(false);
    expect(budget.boundsReached()).toEqual(['max_documents']);
    expect([budget.takeDocument(), budget.takeDocument(), budget.takeDocument()]).toEqual([true, true, true]);
    expect(budget.takeDocument()).toBe(false);
  });

  it('depth: max_depth for a sitemap deeper than the bound', () => {
    const budget = new ImportBudget(settings);
    expect(budget.mayQueue(2, 0)).toBe(true);
    expect(budget.mayQueue(3, 0)).toBe(false);
    expect(budget.boundsReached()).toEqual(['max_depth']);
  });

  it('URLs: max_urls after the bound', () => {
    const budget = new ImportBudget(settings);
    expect([budget.takeUrl(), budget.takeUrl(), budget.takeUrl()]).toEqual([true, true, false]);
    expect(budget.has('max_urls')).toBe(true);
  });

  it("pages: no more than the room under the site's page limit", () => {
    const budget = new ImportBudget(settings);
    budget.setPageRoom(2);
    expect(budget.pagesThatFit(5)).toBe(2);
    budget.usePage();
    expect(budget.pagesThatFit(5)).toBe(1);
    budget.setPageRoom(-3);
    expect(budget.pagesThatFit(5)).toBe(0);
  });

  it('time: max_duration once the deadline has passed', () => {
    const budget = new ImportBudget(settings, Date.now() - 61_000);
    expect(budget.timeLeft()).toBe(false);
    expect(budget.boundsReached()).toEqual(['max_duration']);
    expect(new ImportBudget(settings).timeLeft()).toBe(true);
  });
});
