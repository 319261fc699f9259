import { describe, expect, it } from '@jest/globals';
import { ValidationPipe } from '@nestjs/common';
import { CONTROLLER_WATERMARK, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { getMetadataStorage } from 'class-validator';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * There is no global ValidationPipe (src/common/http/validation.ts, ValidBody): a DTO is
 * validated only where its parameter binds the pipe. Every parameter of every route whose type is
 * a class with validation rules must therefore carry one, or its body would reach the service
 * unchecked.
 */

type Constructor = abstract new (...args: never[]) => unknown;

function controllerFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return controllerFiles(path);
    return entry.name.endsWith('.controller.ts') ? [path] : [];
  });
}

async function controllers(): Promise<Constructor[]> {
  const modules = await Promise.all(
    controllerFiles(join(__dirname, '../..')).map((file) => import(file) as Promise<Record<string, unknown>>),
  );
  return modules.flatMap((exported) =>
    Object.values(exported).filter(
      (value): value is Constructor =>
        typeof value === 'function' && Reflect.getMetadata(CONTROLLER_WATERMARK, value) === true,
    ),
  );
}

const hasRules = (type: unknown): boolean =>
  typeof type === 'function' &&
  getMetadataStorage().getTargetValidationMetadatas(type, '', false, false).length > 0;

/** Every parameter of a route whose class has validation rules, and whether it is validated. */
async function validatedParameters(): Promise<Array<{ where: string; validated: boolean }>> {
  const found: Array<{ where: string; validated: boolean }> = [];
  for (const controller of await controllers()) {
    const proto = controller.prototype as Record<string, unknown>;
    for (const method of Object.getOwnPropertyNames(proto)) {
      const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) as
        Record<string, { index: number; pipes: unknown[] }> | undefined;
      if (!args) continue;
      const types = (Reflect.getMetadata('design:paramtypes', proto, method) ?? []) as unknown[];
      for (const [key, { index, pipes }] of Object.entries(args)) {
        const kind = Number(key.split(':')[0]);
        if (![RouteParamtypes.BODY, RouteParamtypes.QUERY, RouteParamtypes.PARAM].includes(kind)) continue;
        if (!hasRules(types[index])) continue;
        found.push({
          where: `${controller.name}.${method} #${index} (${(types[index] as Constructor).name})`,
          validated: pipes.some((pipe) => pipe instanceof ValidationPipe),
        });
      }
    }
  }
  return found;
}

describe('DTO validation without a global pipe', () => {
  it('binds the validation pipe to every DTO parameter of every route', async () => {
    const parameters = await validatedParameters();
    // The recording, site, webhook and page-import bodies, at least: the scan found the routes.
    expect(parameters.length).toBeGreaterThanOrEqual(10);
    expect(parameters.filter((p) => !p.validated).map((p) => p.where)).toEqual([]);
  });
});
