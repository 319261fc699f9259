import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
} from 'class-validator';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
const toNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d+(\.\d+)?(e-?\d+)?$/i.test(value.trim()) ? Number(value.trim()) : value;
const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  return value;
};

// Each setting's decorators are listed in the order they apply (as they would stack above the
// property, bottom first): class-validator reports a bad value's constraints in that order.

/** A whole number read from its decimal text, at least `min` and, when given, at most `max`. */
export function IntSetting({ min, max }: { min: number; max?: number }): PropertyDecorator {
  return applyDecorators(...(max === undefined ? [] : [Max(max)]), Min(min), IsInt(), Transform(toInt));
}

/** A decimal number (e.g. 0.5 or 1e-3) read from its text, from `min` to `max`. */
export function NumberSetting({ min, max }: { min: number; max: number }): PropertyDecorator {
  return applyDecorators(Max(max), Min(min), IsNumber(), Transform(toNumber));
}

/** On or off: true/1/yes/on, false/0/no/off (any case; empty is off). */
export function FlagSetting(): PropertyDecorator {
  return applyDecorators(IsBoolean(), Transform(toBool));
}

/** An optional absolute http(s) URL. */
export function OptionalHttpUrl(): PropertyDecorator {
  return applyDecorators(
    Matches(/^https?:\/\/\S+$/, { message: 'must be an absolute http(s) URL' }),
    IsOptional(),
  );
}

/** An optional secret of at least 32 characters. */
export function OptionalSecret(): PropertyDecorator {
  return applyDecorators(
    MinLength(32, { message: 'must be at least 32 characters' }),
    IsString(),
    IsOptional(),
  );
}
