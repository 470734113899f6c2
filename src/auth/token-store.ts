/** A token as the SDK keeps it. Treat it as a secret: it grants the token's scopes until it expires. */
export interface StoredToken {
  accessToken: string;
  /** Milliseconds since the epoch when the token stops working (issue time + `expires_in`). */
  expiresAt: number;
  /** Milliseconds since the epoch when the token was issued. */
  issuedAt: number;
  /** The individual permissions the token carries. */
  scopes: string[];
}

/**
 * Where tokens are kept between calls. Plug in a shared store (Redis, a database) so that several
 * processes use one token instead of each fetching its own. Keys already separate base URLs,
 * client ids and requested scopes. The store is a cache: when it fails, takes longer than two
 * seconds, or returns something that is not a token, the client fetches and keeps its own.
 *
 * @example
 * const tokenStore: TokenStore = {
 *   get: async (key) => JSON.parse((await redis.get(key)) ?? 'null') ?? undefined,
 *   set: async (key, token) => { await redis.set(key, JSON.stringify(token), 'PXAT', token.expiresAt); },
 *   delete: async (key) => { await redis.del(key); },
 * };
 * const client = new PartnerClient({ baseUrl, clientId, clientSecret, tokenStore });
 */
export interface TokenStore {
  get(key: string): Promise<StoredToken | undefined>;
  set(key: string, token: StoredToken): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Optional: takes a short lock on `key` so that, across a fleet, one process fetches a token while
   * the others wait for it to appear in the store (a cold fleet then makes one token request).
   * Answers whether the lock was taken; a lock not released expires after `ttlMs` on its own. The
   * lock only saves requests: a store that fails, hangs or never gets the token lets each waiting
   * process fetch its own once the wait is over.
   *
   * @example
   * lock: async (key, ttlMs) => {
   *   const owner = crypto.randomUUID();
   *   if ((await redis.set(`${key}:lock`, owner, 'PX', ttlMs, 'NX')) !== 'OK') return { acquired: false };
   *   return { acquired: true, release: () => releaseIfOwner(`${key}:lock`, owner) };
   * },
   */
  lock?(key: string, ttlMs: number): Promise<TokenLock>;
}

/** What `TokenStore.lock` answers: the lock and how to give it back, or that another holds it. */
export type TokenLock = { acquired: true; release(): Promise<void> } | { acquired: false };

/**
 * The default store: this process's memory. Its contents never show in `util.inspect`.
 *
 * @example
 * // One store shared by two clients of the same credential: one token between them.
 * const tokenStore = new MemoryTokenStore();
 * const a = new PartnerClient({ baseUrl, clientId, clientSecret, tokenStore });
 * const b = new PartnerClient({ baseUrl, clientId, clientSecret, tokenStore });
 */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, StoredToken>();

  async get(key: string): Promise<StoredToken | undefined> {
    return this.#tokens.get(key);
  }

  async set(key: string, token: StoredToken): Promise<void> {
    this.#tokens.set(key, token);
  }

  async delete(key: string): Promise<void> {
    this.#tokens.delete(key);
  }
}
