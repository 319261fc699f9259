/**
 * OpenAPI 3.0.3 reads `nullable: true` as adding null to the `type` beside it, and nothing else
 * ("other constraints retain their defined behavior, and therefore may disallow null"). Two shapes
 * @nestjs/swagger emits for a nullable property therefore refuse null to a validator that reads
 * the document strictly (Ajv, and the validators built on it):
 *
 * - `@ApiProperty({ type: Model, nullable: true })` gives `{ nullable, type: object, allOf: [$ref] }`:
 *   the referenced schema is an object, so null fails the allOf. Written instead as
 *   `oneOf: [$ref, <null>]`, the second branch `{ type: object, nullable: true, enum: [null] }`
 *   admitting null alone.
 * - `@ApiProperty({ enum: [...], nullable: true })` gives an enum without null: null is added to it.
 *
 * Applied to the whole document once it is generated, so every nullable property, in every
 * feature's schemas, says what its answers hold.
 */

type Schema = Record<string, unknown>;

/** A schema that admits null and nothing else, in OpenAPI 3.0 terms. */
export const NULL_ONLY = { type: 'object', nullable: true, enum: [null] } as const;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function admitNull(schema: Schema): Schema {
  if (schema.nullable !== true) return schema;
  const refs = schema.allOf;
  if (Array.isArray(refs) && refs.length === 1 && isSchema(refs[0]) && typeof refs[0].$ref === 'string') {
    const { nullable: _nullable, type: _type, allOf: _allOf, ...annotations } = schema;
    return { ...annotations, oneOf: [refs[0], { ...NULL_ONLY }] };
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(null))
    return { ...schema, enum: [...schema.enum, null] };
  return schema;
}

/** Every nullable schema of `document` rewritten to admit null (see above); the document is changed in place. */
export function nullableSchemas<T extends object>(document: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isSchema(node)) return node;
    const rewritten = admitNull(node);
    for (const [key, value] of Object.entries(rewritten)) rewritten[key] = visit(value);
    return rewritten;
  };
  for (const [key, value] of Object.entries(document)) (document as Schema)[key] = visit(value);
  return document;
}
