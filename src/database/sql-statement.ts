/** One SQL statement and its positional parameters. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** Collects positional parameters for one statement. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}

/** The arrays `unnest($1, $2, …)` takes for `rows`: one per key, in order, that field of every row. */
export function unnestColumns<T>(rows: readonly T[], keys: ReadonlyArray<keyof T>): unknown[][] {
  return keys.map((key) => rows.map((row) => row[key]));
}
