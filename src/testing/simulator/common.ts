import { createHash, randomBytes } from 'node:crypto';

/**
 * Where the simulator's ids, secrets, tokens, keys and hashes come from: the system's random bytes,
 * or, with a seed, a SHA-256 counter stream, so that a stand-alone simulator started twice with the
 * same `--seed` hands out the same demo credentials, wallet and ids (a partner's fixtures can name
 * them). A seeded stream is predictable by design: it is for tests only.
 */
export class SimRandom {
  readonly #seed: string | undefined;
  #counter = 0;

  constructor(seed?: number) {
    this.#seed = seed === undefined ? undefined : String(seed);
  }

  bytes(length: number): Buffer {
    if (this.#seed === undefined) return randomBytes(length);
    const chunks: Buffer[] = [];
    let have = 0;
    while (have < length) {
      const chunk = createHash('sha256')
        .update(`${this.#seed}:${this.#counter++}`)
        .digest();
      chunks.push(chunk);
      have += chunk.length;
    }
    return Buffer.concat(chunks).subarray(0, length);
  }

  /** A fresh id as the service makes them: a prefix naming the kind, then 16 hex digits. */
  id(prefix: string): string {
    return `${prefix}_${this.bytes(8).toString('hex')}`;
  }

  /**
   * A client secret: `sec_` and 144 random bits in base64url, so only `[A-Za-z0-9_-]`. Such a
   * secret needs no encoding anywhere (`curl -u "$ID:$SECRET"`, a form body typed by hand), and
   * reads the same before and after the form decoding RFC 6749 2.3.1 asks of a Basic credential.
   */
  secret(): string {
    return `sec_${this.bytes(18).toString('base64url')}`;
  }
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
