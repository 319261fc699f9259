import { hostname } from 'node:os';
import { randomBase62 } from '../ids/ids';

/**
 * This process's name as the holder of a lease (exports, page imports): host, pid and a random
 * part, so a lease row tells which process holds it and a restarted pid is another holder.
 */
export const WORKER_ID = `${hostname()}:${process.pid}:${randomBase62(6)}`;
