import { ValidationError, ValidationPipe } from '@nestjs/common';
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
};

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Flattens class-validator's tree into one entry per field at fault, located by JSON Pointer. */
export function validationEntries(errors: ValidationError[], base = ''): ProblemEntry[] {
  const entries: ProblemEntry[] = [];
  for (const error of errors) {
    const pointer = `${base}/${escapePointer(error.property)}`;
    const constraints = Object.entries(error.constraints ?? {});
    if (constraints.length > 0) {
      const names = constraints.map(([name]) => name);
      // A wrong type makes the other constraints meaningless: report it alone.
      const typeFault = constraints.find(([name]) => CODE_BY_CONSTRAINT[name] === 'invalid_type');
      const code =
        error.value === undefined && !names.includes('whitelistValidation')
          ? 'required'
          : typeFault
            ? 'invalid_type'
            : (CODE_BY_CONSTRAINT[names[0]] ?? 'invalid_value');
      const detail =
        code === 'required'
          ? `${error.property} is required.`
          : code === 'unknown_field'
            ? `${error.property} is not a known field.`
            : typeFault
              ? typeFault[1]
              : constraints.map(([, message]) => message).join('; ');
      entries.push({ code, detail, pointer });
    }
    if (error.children && error.children.length > 0)
      entries.push(...validationEntries(error.children, pointer));
  }
  return entries;
}

/** Body validation: unknown fields refused, every field at fault listed in one invalid_request. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    exceptionFactory: (errors) => ApiError.invalidRequest(validationEntries(errors)),
  });
}
