import { randomBytes } from 'node:crypto';

/** A fresh id as the service makes them: a prefix naming the kind, then 16 hex digits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/**
 * The simulator's time: the real clock plus whatever tests added, so that tokens, quotes and
 * intents expire without anyone waiting for them.
 */
export class SimClock {
  #offsetMs = 0;

  now(): number {
    return Date.now() + this.#offsetMs;
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}
