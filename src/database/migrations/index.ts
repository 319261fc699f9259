import { Foundation1763700000000 } from './1763700000000-Foundation';

/** Every migration, in order. A feature adds its own file and one line here. */
export const MIGRATIONS = [Foundation1763700000000];
