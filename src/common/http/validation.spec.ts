import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, IsArray, validateSync, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EachItem, validationEntries } from './validation';

const SRC = join(__dirname, '../..');

/** Every request body DTO module: src/<feature>/dto/*.ts. */
function dtoFiles(): string[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((feature) => {
      const dir = join(SRC, feature.name, 'dto');
      try {
        return readdirSync(dir)
          .filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))
          .map((name) => join(dir, name));
      } catch {
        return [];
      }
    });
}

class Tags {
  @EachItem('maxLength', (item) => typeof item !== 'string' || item.length <= 3, 'at most 3 characters')
  @EachItem('isString', (item) => typeof item === 'string', 'must be a string')
  @IsArray()
  tags!: unknown;
}

const entriesOf = (body: object) => validationEntries(validateSync(plainToInstance(Tags, body)));

describe('EachItem: a fault of an array item is reported at the item', () => {
  it('one entry per item at fault, at /field/index; a wrong type reported alone', () => {
    expect(entriesOf({ tags: ['ok', 'toolong', 7] })).toEqual([
      { code: 'too_long', detail: 'at most 3 characters', pointer: '/tags/1' },
      { code: 'invalid_type', detail: 'must be a string', pointer: '/tags/2' },
    ]);
  });

  it('a value that is not an array is the field at fault, once', () => {
    expect(entriesOf({ tags: 'ok' })).toEqual([
      { code: 'invalid_type', detail: expect.any(String), pointer: '/tags' },
    ]);
  });

  it("no body DTO validates array items with class-validator's { each: true }, which names the array", async () => {
    await Promise.all(dtoFiles().map((file) => import(file)));
    const storage = getMetadataStorage() as unknown as {
      validationMetadatas: Map<unknown, ValidationMetadata[]>;
    };
    const found = [...storage.validationMetadatas.values()]
      .flat()
      .filter((m) => m.each && m.type !== ValidationTypes.NESTED_VALIDATION)
      .map((m) => `${(m.target as { name: string }).name}.${m.propertyName}`);
    expect(dtoFiles().length).toBeGreaterThanOrEqual(4);
    expect(found).toEqual([]);
  });
});
