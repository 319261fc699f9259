import { applyDecorators, Body, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { Type as TransformType } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsObject,
  registerDecorator,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ApiError, ProblemEntry } from '../errors/api-error';

const CODE_BY_CONSTRAINT: Record<string, string> = {
  whitelistValidation: 'unknown_field',
  isDefined: 'required',
  isNotEmpty: 'required',
  isString: 'invalid_type',
  isInt: 'invalid_type',
  isNumber: 'invalid_type',
  isBoolean: 'invalid_type',
  isArray: 'invalid_type',
  isObject: 'invalid_type',
  nestedValidation: 'invalid_type',
  isIn: 'invalid_value',
  isEnum: 'invalid_value',
  maxLength: 'too_long',
  arrayMaxSize: 'too_long',
  minLength: 'too_short',
  arrayMinSize: 'too_short',
  min: 'out_of_range',
  max: 'out_of_range',
  matches: 'invalid_format',
  isUrl: 'invalid_format',
  isISO8601: 'invalid_format',
  eachIsObject: 'invalid_type',
};

function isPlainObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The check of one item, carried in the context of an EachItem constraint. */
interface ItemCheck {
  eachItem: (item: unknown) => boolean;
}

/**
 * Every item of an array property passes `check`, each item at fault reported at its own pointer
 * (`/events/1`, see validationEntries): class-validator's `{ each: true }` names only the array.
 * `name` is the constraint's, as CODE_BY_CONSTRAINT maps it to an entry code (`isIn`,
 * `maxLength` …); `message` says what an item must be. A value that is not an array passes:
 * `IsArray()` reports it.
 */
export function EachItem(
  name: string,
  check: (item: unknown) => boolean,
  message: string,
): PropertyDecorator {
  const context: ItemCheck = { eachItem: check };
  return (target, propertyName) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message, context },
      validator: { validate: (value: unknown) => !Array.isArray(value) || value.every(check) },
    });
}

/**
 * Every item of an array property is a JSON object. `@ValidateNested({ each: true })` alone lets
 * an array item through (it validates the items of the inner array, and `[]` has none), so
 * `{"messages": [[]]}` reached the service. Reported as one `invalid_type` entry per item at fault.
 */
export function EachIsObject(): PropertyDecorator {
  return EachItem('eachIsObject', isPlainObject, 'The item must be a JSON object.');
}

/**
 * A field that may be left out but, when given, must be valid: unlike `@IsOptional()`, which
 * lets `null` through unchecked, `null` is validated (and refused by the field's type check) like
 * any other value. For fields whose resource value is never null.
 */
export function Omittable(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}

// Listed in the order they apply (as they would stack above the property, bottom first):
// class-validator reports a bad value's constraints in that order.

/** A JSON object validated as a `type` (a DTO class). */
export function NestedObject(type: () => Type<unknown>): PropertyDecorator {
  return applyDecorators(TransformType(type), ValidateNested(), IsObject());
}

/** An array of at most `maxItems` JSON objects, each validated as a `type` (a DTO class). */
export function NestedList(type: () => Type<unknown>, maxItems: number): PropertyDecorator {
  return applyDecorators(
    TransformType(type),
    ValidateNested({ each: true }),
    EachIsObject(),
    ArrayMaxSize(maxItems),
    IsArray(),
  );
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The entry of a field (or an array item) that failed `constraints`, in class-validator's order:
 * a wrong type alone (it makes the other constraints meaningless), else the first one's code with
 * every message.
 */
function entryOf(
  constraints: Array<[name: string, message: string]>,
  value: unknown,
  field: string,
  pointer: string,
): ProblemEntry {
  const names = constraints.map(([name]) => name);
  const typeFault = constraints.find(([name]) => CODE_BY_CONSTRAINT[name] === 'invalid_type');
  const code =
    value === undefined && !names.includes('whitelistValidation')
      ? 'required'
      : typeFault
        ? 'invalid_type'
        : (CODE_BY_CONSTRAINT[names[0]] ?? 'invalid_value');
  const detail =
    code === 'required'
      ? `${field} is required.`
      : code === 'unknown_field'
        ? `${field} is not a known field.`
        : typeFault
          ? typeFault[1]
          : constraints.map(([, message]) => message).join('; ');
  return { code, detail, pointer };
}

/**
 * Flattens class-validator's tree into one entry per field at fault, located by JSON Pointer; the
 * faults of an EachItem constraint at each item at fault (`/aliases/2`), not at the array.
 */
export function validationEntries(errors: ValidationError[], base = ''): ProblemEntry[] {
  const entries: ProblemEntry[] = [];
  for (const error of errors) {
    const pointer = `${base}/${escapePointer(error.property)}`;
    const checkOf = (name: string) => (error.contexts?.[name] as Partial<ItemCheck> | undefined)?.eachItem;
    const constraints = Object.entries(error.constraints ?? {});
    const itemConstraints = constraints.filter(([name]) => checkOf(name));
    if (itemConstraints.length > 0 && Array.isArray(error.value)) {
      error.value.forEach((item: unknown, i: number) => {
        const failed = itemConstraints.filter(([name]) => !checkOf(name)!(item));
        if (failed.length > 0) entries.push(entryOf(failed, item, `item ${i}`, `${pointer}/${i}`));
      });
    }
    const fieldConstraints = constraints.filter(([name]) => !checkOf(name));
    if (fieldConstraints.length > 0)
      entries.push(entryOf(fieldConstraints, error.value, error.property, pointer));
    if (error.children && error.children.length > 0)
      entries.push(...validationEntries(error.children, pointer));
  }
  return entries;
}

/** An item that is not an object is reported by EachIsObject and by nested validation: keep one entry. */
function uniqueEntries(entries: ProblemEntry[]): ProblemEntry[] {
  const seen = new Set<string>();
  return entries.filter((e) => {
    const key = `${e.code} ${'pointer' in e ? e.pointer : e.parameter}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Body validation: unknown fields refused, every field at fault listed in one invalid_request. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    // Kept on errors with children too (Nest strips it), so EachItem can name the items at fault.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => ApiError.invalidRequest(uniqueEntries(validationEntries(errors))),
  });
}

/** The body validation of every DTO body: one pipe, stateless, shared. */
const BODY_VALIDATION = createValidationPipe();

/**
 * A request body validated against its DTO class (createValidationPipe): what `@Body()` with a
 * global ValidationPipe did, bound where a DTO is declared instead of around every parameter of
 * every route. A global pipe ran for each path parameter, query object and `@Auth()` value of
 * every request (a chain of promises each, none of them validated), so the listing paid it three
 * times a page (docs/request-cost.md, session 30). src/common/http/body-validation.spec.ts checks
 * that every DTO body of every route is bound this way.
 */
export const ValidBody = (): ParameterDecorator => Body(BODY_VALIDATION);
