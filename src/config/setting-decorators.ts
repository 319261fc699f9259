import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  return value;
};

/** The decorators applied as if stacked in this order above the property (the last runs first). */
function stacked(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => {
    for (const decorator of [...decorators].reverse()) decorator(target, key);
  };
}

/** A whole number read from its decimal text, at least `min` and, when given, at most `max`. */
export function IntSetting({ min, max }: { min: number; max?: number }): PropertyDecorator {
  return stacked(Transform(toInt), IsInt(), Min(min), ...(max === undefined ? [] : [Max(max)]));
}

/** On or off: true/1/yes/on, false/0/no/off (any case; empty is off). */
export function FlagSetting(): PropertyDecorator {
  return stacked(Transform(toBool), IsBoolean());
}

/** An optional absolute http(s) URL. */
export function OptionalHttpUrl(): PropertyDecorator {
  return stacked(IsOptional(), Matches(/^https?:\/\/\S+$/, { message: 'must be an absolute http(s) URL' }));
}

/** An optional secret of at least 32 characters. */
export function OptionalSecret(): PropertyDecorator {
  return stacked(IsOptional(), IsString(), MinLength(32, { message: 'must be at least 32 characters' }));
}
