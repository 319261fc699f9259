import { Foundation1763700000000 } from './1763700000000-Foundation';
import { Conversations1763710000001 } from './1763710000001-Conversations';
import { SearchOutbox1763740000001 } from './1763740000001-SearchOutbox';

/** Every migration, in order. A feature adds its own file and one line here. */
export const MIGRATIONS = [Foundation1763700000000, Conversations1763710000001, SearchOutbox1763740000001];
