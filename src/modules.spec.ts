import { describe, expect, it } from '@jest/globals';
import type { DynamicModule, Provider, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { AppModule } from './app.module';
import { CliModule } from './cli/cli.module';
import { loadConfig } from './config/config';
import { WorkerModule } from './worker.module';

/**
 * One owner each: every module of a process is reached once from its root module's list, the
 * worker serves no routes, and every provider is provided by one module.
 */

type ModuleRef = Type<unknown> | DynamicModule | Promise<DynamicModule> | { forwardRef: () => unknown };

interface ModuleFacts {
  name: string;
  controllers: string[];
  providers: string[];
  imports: ModuleRef[];
}

function tokenName(provider: Provider): string {
  const token = typeof provider === 'function' ? provider : provider.provide;
  if (typeof token === 'function') return token.name;
  return String(token);
}

function facts(ref: ModuleRef): ModuleFacts | undefined {
  if (ref instanceof Promise || 'forwardRef' in ref) return undefined;
  const type = ('module' in ref ? ref.module : ref) as Type<unknown>;
  const dynamic: Partial<DynamicModule> = 'module' in ref ? ref : {};
  const read = <T>(key: string, own?: T[]): T[] => [
    ...((Reflect.getMetadata(key, type) as T[] | undefined) ?? []),
    ...(own ?? []),
  ];
  return {
    name: type.name,
    controllers: read<Type<unknown>>(MODULE_METADATA.CONTROLLERS, dynamic.controllers).map((c) => c.name),
    providers: read<Provider>(MODULE_METADATA.PROVIDERS, dynamic.providers).map(tokenName),
    imports: read<ModuleRef>(MODULE_METADATA.IMPORTS, dynamic.imports),
  };
}

/** Every module reachable from `root`, by name (a module's facts merged over its registrations). */
function reachable(root: DynamicModule): Map<string, ModuleFacts> {
  const seen = new Map<string, ModuleFacts>();
  const visit = (ref: ModuleRef) => {
    const found = facts(ref);
    if (!found) return;
    const known = seen.get(found.name);
    if (known) {
      for (const c of found.controllers) if (!known.controllers.includes(c)) known.controllers.push(c);
      for (const p of found.providers) if (!known.providers.includes(p)) known.providers.push(p);
      return;
    }
    seen.set(found.name, found);
    found.imports.forEach(visit);
  };
  visit(root);
  return seen;
}

const config = loadConfig({ ...process.env, WORKERS: 'on', OPENSEARCH_URL: 'http://127.0.0.1:9200' });

describe('one owner each', () => {
  it('the worker process registers no controllers', () => {
    const withControllers = [...reachable(WorkerModule.register(config)).values()]
      .filter((m) => m.controllers.length > 0)
      .map((m) => `${m.name}: ${m.controllers.join(', ')}`);
    expect(withControllers).toEqual([]);
  });

  it.each([
    ['the HTTP app', () => AppModule.register(config)],
    ['the worker', () => WorkerModule.register(config)],
  ])('%s lists each module once', (_name, root) => {
    const names = (root().imports ?? []).map((ref) => facts(ref as ModuleRef)?.name);
    const twice = names.filter((name, i) => names.indexOf(name) !== i);
    expect(twice).toEqual([]);
  });

  it('every provider is provided by one module of the HTTP app, the worker and the CLI', () => {
    const owners = new Map<string, Set<string>>();
    const roots = [AppModule.register(config), WorkerModule.register(config), CliModule.register(config)];
    for (const m of roots.flatMap((root) => [...reachable(root).values()])) {
      for (const p of m.providers) owners.set(p, (owners.get(p) ?? new Set()).add(m.name));
    }
    const shared = [...owners]
      .filter(([, modules]) => modules.size > 1)
      .map(([p, modules]) => `${p}: ${[...modules].join(', ')}`);
    expect(shared).toEqual([]);
  });
});
