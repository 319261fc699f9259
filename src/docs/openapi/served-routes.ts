import type { INestApplication } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { Application } from 'express';

export interface ServedRoute {
  /** Upper-case HTTP method. */
  method: string;
  /** OpenAPI path template: `/api/v1/sites/{siteId}`. */
  path: string;
  /** The status Nest answers with unless the handler sets another (@HttpCode, else 201 for POST, 200). */
  defaultStatus?: number;
}

interface ExpressLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Express `:name` segments as OpenAPI `{name}`. */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function joinPath(...parts: string[]): string {
  const joined = `/${parts.join('/')}`.replace(/\/+/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

/** `METHOD path` → default status of every Nest controller handler of the app. */
function handlerStatuses(app: INestApplication): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller?.prototype) continue;
      const base = [Reflect.getMetadata(PATH_METADATA, controller) ?? ''].flat() as string[];
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (requestMethod === undefined) continue;
        const method = RequestMethod[requestMethod];
        const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
        const status = code ?? (method === 'POST' ? 201 : 200);
        const paths = [Reflect.getMetadata(PATH_METADATA, handler) ?? '/'].flat() as string[];
        for (const b of base)
          for (const p of paths) statuses.set(`${method} ${toOpenApiPath(joinPath(b, p))}`, status);
      }
    }
  }
  return statuses;
}

/**
 * Every route the app's Express router serves (method and path), with the default status of the
 * Nest handler behind it when there is one. Read from the running app, so a route added anywhere
 * shows up here whether or not it is documented.
 */
export function servedRoutes(app: INestApplication): ServedRoute[] {
  const express = app.getHttpAdapter().getInstance() as Application;
  const router = (express as unknown as { router?: { stack: ExpressLayer[] } }).router;
  const statuses = handlerStatuses(app);
  const routes = new Map<string, ServedRoute>();
  for (const layer of router?.stack ?? []) {
    if (!layer.route || typeof layer.route.path !== 'string' || layer.route.path.includes('*')) continue;
    const path = toOpenApiPath(layer.route.path);
    for (const [m, on] of Object.entries(layer.route.methods)) {
      if (!on || m === '_all') continue;
      const method = m.toUpperCase();
      const key = `${method} ${path}`;
      routes.set(key, { method, path, defaultStatus: statuses.get(key) });
    }
  }
  return [...routes.values()];
}
