import type { Application } from 'express';

interface ExpressLayer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * The methods that the express routes registered for `path` answer. Used to tell a path no route
 * serves (404) from a method a path does not support (405 with Allow).
 */
export function allowedMethods(app: Application, path: string): string[] {
  const router = (app as unknown as { router?: { stack: ExpressLayer[] } }).router;
  const methods = new Set<string>();
  for (const layer of router?.stack ?? []) {
    // Wildcard routes are middleware mounted for every path (e.g. the request logger), not endpoints.
    if (!layer.route || layer.route.path.includes('*')) continue;
    let matches = false;
    try {
      matches = layer.match(path);
    } catch {
      matches = false;
    }
    if (!matches) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
