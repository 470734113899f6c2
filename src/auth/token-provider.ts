import type { TokenEvent } from '../core/events.js';
import { ACCESS_TOKEN_PATTERN } from '../schemas/auth.js';
import type { StoredToken, TokenStore } from './token-store.js';

export interface TokenProviderDeps {
  /** Fetches a new token from the token endpoint (retries included). */
  fetchToken: () => Promise<StoredToken>;
  store: TokenStore;
  key: string;
  emit: (event: TokenEvent) => void;
  now?: () => number;
}

/** After this share of a token's life a background refresh starts. */
const REFRESH_AHEAD_SHARE = 0.8;
/** A token this close to expiry is no longer handed out: a request could outlive it. */
const EXPIRY_MARGIN_MS = 30_000;
/** A failed background refresh is not tried again sooner than this. */
const BACKGROUND_RETRY_MS = 5_000;
/** A shared store slower than this is passed over: the token endpoint is the source of truth. */
const STORE_TIMEOUT_MS = 2_000;

/**
 * Runs one token-store operation. The store is a cache: a store that fails, hangs or holds
 * something that is not a token counts as empty, and the client carries on with its own token.
 */
async function storeOp<T>(operation: () => Promise<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      operation(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), STORE_TIMEOUT_MS);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

function isStoredToken(value: unknown): value is StoredToken {
  if (typeof value !== 'object' || value === null) return false;
  const token = value as Partial<StoredToken>;
  return (
    typeof token.accessToken === 'string' &&
    ACCESS_TOKEN_PATTERN.test(token.accessToken) &&
    Number.isFinite(token.expiresAt) &&
    Number.isFinite(token.issuedAt) &&
    Array.isArray(token.scopes) &&
    token.scopes.every((scope) => typeof scope === 'string')
  );
}

export interface LeasedToken {
  token: StoredToken;
  /** True when this caller waited for the token endpoint: a 401 with it is final. */
  fresh: boolean;
}

/**
 * Client-credentials token cache: one token endpoint call for any number of concurrent callers,
 * refresh ahead of expiry in the background, and no caller waiting while a valid token is cached.
 */
export class TokenProvider {
  readonly #deps: TokenProviderDeps;
  readonly #now: () => number;
  #current: StoredToken | undefined;
  #inflight: Promise<LeasedToken> | undefined;
  /** The last token a 401 rejected: never taken back from the store. */
  #rejected: string | undefined;
  #backgroundFailedAt = Number.NEGATIVE_INFINITY;
  /** Bumped by `invalidate`, so a fetch that started before cannot put back what was rejected. */
  #generation = 0;

  constructor(deps: TokenProviderDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  async #storeGet(): Promise<StoredToken | undefined> {
    const stored = await storeOp(() => this.#deps.store.get(this.#deps.key));
    return isStoredToken(stored) ? stored : undefined;
  }

  #usable(token: StoredToken | undefined, now: number): token is StoredToken {
    if (!token) return false;
    const margin = Math.min(EXPIRY_MARGIN_MS, (token.expiresAt - token.issuedAt) * 0.1);
    return now < token.expiresAt - margin;
  }

  #refreshDue(token: StoredToken, now: number): boolean {
    return now >= token.issuedAt + (token.expiresAt - token.issuedAt) * REFRESH_AHEAD_SHARE;
  }

  /**
   * The cached token when it is usable, without waiting (a refresh starts in the background when
   * one is due); undefined when a caller has to wait for `get`.
   */
  peek(): LeasedToken | undefined {
    const now = this.#now();
    const cached = this.#current;
    if (!this.#usable(cached, now)) return undefined;
    if (this.#refreshDue(cached, now)) this.#refreshInBackground(now);
    return { token: cached, fresh: false };
  }

  /** A usable token: the cached one when valid, else the shared store's, else a new one. */
  async get(): Promise<LeasedToken> {
    return this.peek() ?? this.#inflight ?? this.#acquire('fetched');
  }

  /** Drops `rejected` (after a 401) so that the next `get` fetches a new token. */
  async invalidate(rejected: StoredToken): Promise<void> {
    this.#generation++;
    if (this.#current?.accessToken === rejected.accessToken) this.#current = undefined;
    this.#rejected = rejected.accessToken;
    const stored = await this.#storeGet();
    if (stored?.accessToken === rejected.accessToken)
      await storeOp(() => this.#deps.store.delete(this.#deps.key));
  }

  #refreshInBackground(now: number): void {
    if (this.#inflight || now - this.#backgroundFailedAt < BACKGROUND_RETRY_MS) return;
    this.#acquire('refreshed').catch(() => {
      this.#backgroundFailedAt = this.#now();
    });
  }

  /**
   * The one path to a new token, shared by every concurrent caller: first the store (another
   * process may have refreshed already), then the token endpoint.
   */
  #acquire(action: 'fetched' | 'refreshed'): Promise<LeasedToken> {
    const generation = this.#generation;
    const started = this.#now();
    let run: Promise<LeasedToken> | undefined;
    run = (async (): Promise<LeasedToken> => {
      await null;
      try {
        const stored = await this.#storeGet();
        const now = this.#now();
        if (
          this.#usable(stored, now) &&
          !this.#refreshDue(stored, now) &&
          stored.accessToken !== this.#rejected &&
          stored.accessToken !== this.#current?.accessToken
        ) {
          if (generation === this.#generation) this.#current = stored;
          return { token: stored, fresh: false };
        }
        const token = await this.#deps.fetchToken();
        // A fetch that began before an invalidation still returns a new token, so it is safe to use;
        // it is only kept when nothing newer has been put in place meanwhile.
        if (generation === this.#generation || !this.#current) {
          this.#current = token;
          await storeOp(() => this.#deps.store.set(this.#deps.key, token));
        }
        this.#deps.emit({
          action,
          scopes: [...token.scopes],
          expiresInSec: Math.round((token.expiresAt - token.issuedAt) / 1000),
          elapsedMs: this.#now() - started,
          error: undefined,
        });
        return { token, fresh: true };
      } catch (error) {
        this.#deps.emit({
          action: 'failed',
          scopes: undefined,
          expiresInSec: undefined,
          elapsedMs: this.#now() - started,
          error: error instanceof Error ? error.name : 'Error',
        });
        throw error;
      } finally {
        if (this.#inflight === run) this.#inflight = undefined;
      }
    })();
    this.#inflight = run;
    return run;
  }
}
