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
