import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { preProcessFile } from 'typescript';

/**
 * The folder rule of the layout (README "Code layout"): no folder of src/ imports a folder that
 * imports it back, directly or round a longer loop. A loop means neither folder can be read,
 * tested or moved without the other; the fix is to move what both need below both of them.
 */

/** Folder → the folders it imports, each with the imports that make the arrow ("file -> specifier"). */
type FolderGraph = Map<string, Map<string, string[]>>;

/** The part of src/ a file belongs to: its top-level folder, or the file itself at the top. */
function folderOf(srcRoot: string, file: string): string {
  const parts = relative(srcRoot, file).split(sep);
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.ts$/, '');
}

/**
 * The folder graph of the given sources (path → text): every relative import, `export … from`,
 * `import('…')` and `require('…')` that reaches another folder of `srcRoot`.
 */
function folderGraph(srcRoot: string, sources: Map<string, string>): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const [file, text] of sources) {
    const from = folderOf(srcRoot, file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const { fileName } of preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName);
      if (relative(srcRoot, target).startsWith('..')) continue;
      const to = folderOf(srcRoot, target);
      if (to === from) continue;
      const arrows = graph.get(from)!;
      arrows.set(to, [...(arrows.get(to) ?? []), `${relative(srcRoot, file)} -> ${fileName}`]);
    }
  }
  return graph;
}

/**
 * The loops of a graph: its strongly connected components of more than one node (Tarjan), each
 * sorted, listed in order of their first node. A mutual pair is a component of two.
 */
function folderCycles(graph: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles.sort((a, b) => a[0].localeCompare(b[0]));
}

/** A loop as a reader fixes it: every arrow inside it, with the imports that make it. */
function describeCycle(graph: FolderGraph, cycle: string[]): string {
  const members = new Set(cycle);
  const arrows = cycle.flatMap((from) =>
    [...(graph.get(from) ?? new Map<string, string[]>())]
      .filter(([to]) => members.has(to))
      .map(([to, imports]) => `  ${from} -> ${to}:\n${imports.map((i) => `    ${i}`).join('\n')}`),
  );
  return [`loop of ${cycle.join(', ')}`, ...arrows].join('\n');
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const graphOf = (edges: Record<string, string[]>) =>
  new Map(Object.entries(edges).map(([from, tos]) => [from, new Map(tos.map((to) => [to, []]))]));

describe('the loop finder', () => {
  it('finds a mutual pair', () => {
    expect(folderCycles(graphOf({ a: ['b'], b: ['a', 'c'], c: [] }))).toEqual([['a', 'b']]);
  });

  it('finds a longer loop, and every separate loop', () => {
    const graph = graphOf({ a: ['b'], b: ['c'], c: ['a'], d: ['e', 'a'], e: ['d'], f: ['a'] });
    expect(folderCycles(graph)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
  });

  it('finds none in a layered graph, however many arrows run down', () => {
    expect(folderCycles(graphOf({ top: ['mid', 'low'], mid: ['low'], low: [], alone: [] }))).toEqual([]);
  });
});

describe('the folder graph', () => {
  const root = resolve('/project/src');
  const at = (path: string) => join(root, path);

  it('reads static, re-exported, dynamic and type-only imports, to folders and files at the top', () => {
    const graph = folderGraph(
      root,
      new Map([
        [at('a/x.ts'), `import { y } from '../b/y';\nexport { z } from '../c/deep/z';`],
        [at('b/y.ts'), `export const y = () => import('../a/x');\nimport type { T } from '../app.module';`],
        [at('c/deep/z.ts'), `import { q } from './q';\nimport { w } from 'some-package';`],
      ]),
    );
    expect(Object.fromEntries([...graph].map(([from, arrows]) => [from, [...arrows.keys()].sort()]))).toEqual(
      {
        a: ['b', 'c'],
        b: ['a', 'app.module'],
        c: [],
      },
    );
    const cycles = folderCycles(graph);
    expect(cycles).toEqual([['a', 'b']]);
    expect(describeCycle(graph, cycles[0])).toBe(
      ['loop of a, b', '  a -> b:', '    a/x.ts -> ../b/y', '  b -> a:', '    b/y.ts -> ../a/x'].join('\n'),
    );
  });
});

/** This tree: src/ and its sources. */
const srcRoot = resolve(__dirname);
const sources = new Map(typeScriptFiles(srcRoot).map((file) => [file, readFileSync(file, 'utf8')]));

describe('the folders of src/', () => {
  const graph = folderGraph(srcRoot, sources);

  it('import no folder that imports them back, directly or round a longer loop', () => {
    // The check reads the real tree: the layout has its many folders and arrows.
    expect(graph.size).toBeGreaterThan(20);
    expect(graph.get('conversations')?.has('search')).toBe(true);
    expect(graph.get('search')?.has('labels')).toBe(true);
    expect(folderCycles(graph).map((cycle) => describeCycle(graph, cycle))).toEqual([]);
  });

  it('labels/, what a label is (taxonomy, outcomes, judges, label-record SQL), imports no folder but common/', () => {
    const imports = [...(graph.get('labels') ?? new Map<string, string[]>())]
      .filter(([to]) => to !== 'common')
      .flatMap(([, arrows]) => arrows);
    expect(imports).toEqual([]);
  });
});

/** The engines' insides: what only src/search/ itself imports (the rest of the service reads its public files). */
const ENGINE_INSIDES = /^search\/(postgres|opensearch|stats\/postgres|stats\/opensearch)\//;

describe('the search engines', () => {
  it('no file outside src/search imports the insides of an engine (postgres/, opensearch/, stats/postgres/, stats/opensearch/)', () => {
    const inSrc = (path: string) => relative(srcRoot, path).split(sep).join('/');
    const importers = [...sources].flatMap(([file, text]) => {
      const from = inSrc(file);
      // The house's own specs at the top of src/ (this one, the filter registry's) read every floor.
      if (from.startsWith('search/') || (!from.includes('/') && from.endsWith('.spec.ts'))) return [];
      return preProcessFile(text, true, true)
        .importedFiles.filter(({ fileName }) => fileName.startsWith('.'))
        .filter(({ fileName }) => ENGINE_INSIDES.test(inSrc(resolve(dirname(file), fileName))))
        .map(({ fileName }) => `${from} -> ${fileName}`);
    });
    expect(importers).toEqual([]);
  });
});

/** A migration: src/database/migrations/<timestamp>-<Name>.ts (index.ts is their list). */
const MIGRATION = /^database\/migrations\/\d+-[^/]+$/;

describe('migrations', () => {
  it('no file outside src/database/migrations imports a migration: what running code needs of one lives in src/database/', () => {
    const inSrc = (path: string) => relative(srcRoot, path).split(sep).join('/');
    const importers = [...sources].flatMap(([file, text]) => {
      const from = inSrc(file);
      if (from.startsWith('database/migrations/')) return [];
      return preProcessFile(text, true, true)
        .importedFiles.filter(({ fileName }) => fileName.startsWith('.'))
        .filter(({ fileName }) => MIGRATION.test(inSrc(resolve(dirname(file), fileName))))
        .map(({ fileName }) => `${from} -> ${fileName}`);
    });
    expect(importers).toEqual([]);
  });

  it('a migration imports nothing but typeorm and other migrations: it is frozen, whatever the live code becomes', () => {
    const inSrc = (path: string) => relative(srcRoot, path).split(sep).join('/');
    const outside = [...sources].flatMap(([file, text]) => {
      const from = inSrc(file);
      if (!from.startsWith('database/migrations/')) return [];
      return preProcessFile(text, true, true)
        .importedFiles.map(({ fileName }) => fileName)
        .filter((fileName) =>
          fileName.startsWith('.')
            ? !inSrc(resolve(dirname(file), fileName)).startsWith('database/migrations/')
            : fileName !== 'typeorm',
        )
        .map((fileName) => `${from} -> ${fileName}`);
    });
    // The check reads the real migrations.
    expect(
      [...sources.keys()].filter((file) => MIGRATION.test(inSrc(file).replace(/\.ts$/, ''))).length,
    ).toBeGreaterThan(20);
    expect(outside).toEqual([]);
  });
});
