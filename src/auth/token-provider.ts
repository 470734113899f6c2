import type { TokenEvent } from '../core/events.js';
import { Deadline, sleep } from '../core/time.js';
import { type PartnerError, withRetryAfter } from '../errors/base.js';
import { AbortError } from '../errors/client-errors.js';
import { InvalidClientError } from '../errors/oauth.js';
import type { SpanRunner } from '../http/tracing.js';
import { ACCESS_TOKEN_PATTERN, MAX_ACCESS_TOKEN_LENGTH } from '../schemas/auth.js';
import { tokenExpiredOnArrival } from './token-endpoint.js';
import type { StoredToken, TokenStore } from './token-store.js';

export interface TokenProviderDeps {
  /** One attempt at the token endpoint; the callers waiting for it retry under their own policy. */
  fetchToken: (signal: AbortSignal) => Promise<StoredToken>;
  store: TokenStore;
  key: string;
  emit: (event: TokenEvent) => void;
  now?: () => number;
  /** Puts each token fetch in a `partner.token` span. */
  span?: SpanRunner;
}

/** After this share of a token's life a background refresh starts. */
const REFRESH_AHEAD_SHARE = 0.8;
/** A token this close to expiry is no longer handed out: a request could outlive it. */
const EXPIRY_MARGIN_MS = 30_000;
/** A failed background refresh is not tried again sooner than this. */
const BACKGROUND_RETRY_MS = 5_000;
/** A shared store slower than this is passed over: the token endpoint is the source of truth. */
const STORE_TIMEOUT_MS = 2_000;
/** How long a process holds the store's fetch lock at most (a crashed holder blocks no longer). */
export const TOKEN_LOCK_TTL_MS = 10_000;
/** How long a process waits for the lock holder's token before it fetches its own. */
export const TOKEN_LOCK_WAIT_MS = 5_000;
/** How often a waiting process looks in the store for the lock holder's token. */
const TOKEN_LOCK_POLL_MS = 50;
/** The first backoff after a credential was found stopped or refused; it doubles per failed probe. */
export const CREDENTIAL_BACKOFF_MIN_MS = 1_000;
/** The longest backoff of a stopped or refused credential. */
export const CREDENTIAL_BACKOFF_MAX_MS = 60_000;

/**
 * Runs one token-store operation. The store is a cache: a store that fails, hangs or holds
 * something that is not a token counts as empty, and the client carries on with its own token.
 */
async function storeOp<T>(operation: () => Promise<T>): Promise<T | undefined> {
  // A hung store must not keep a process alive whose calls are over: the timer is unref'd.
  const deadline = new Deadline(STORE_TIMEOUT_MS, undefined, NO_ERRORS, { unref: true });
  try {
    return await deadline.race(Promise.resolve(operation()));
  } catch {
    return undefined;
  } finally {
    deadline.clear();
  }
}

const NO_ERRORS = { timedOut: () => undefined, aborted: () => undefined };

/** Waits `ms`, or less when `signal` aborts; the timer never keeps a process alive. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal, () => undefined, { unref: true }).catch(() => {});
}

function isStoredToken(value: unknown): value is StoredToken {
  if (typeof value !== 'object' || value === null) return false;
  const token = value as Partial<StoredToken>;
  return (
    typeof token.accessToken === 'string' &&
    token.accessToken.length <= MAX_ACCESS_TOKEN_LENGTH &&
    ACCESS_TOKEN_PATTERN.test(token.accessToken) &&
    Number.isFinite(token.expiresAt) &&
    Number.isFinite(token.issuedAt) &&
    Array.isArray(token.scopes) &&
    token.scopes.every((scope) => typeof scope === 'string')
  );
}

/** One call's dealings with the provider, from `begin` to `end`. */
export interface TokenCall {
  /** The last token fetch whose failure this call has seen (a sequence number). */
  seenFailure: number;
  /** True for the one call that tries a stopped credential again when its backoff is over. */
  probe: boolean;
}

interface Flight {
  seq: number;
  promise: Promise<StoredToken>;
  controller: AbortController;
  /** A refresh ahead of expiry, started by a call that did not wait for it. */
  background: boolean;
}

interface Stop {
  /** What every refused call throws again, with the time left as `retryAfterMs`. */
  error: PartnerError;
  /** `refused`: the token endpoint said invalid_client; `stopped`: a token fetched after a 401 got a 401. */
  reason: 'refused' | 'stopped';
  windowMs: number;
  since: number;
  until: number;
  probing: boolean;
}

/**
 * Client-credentials token cache: one token endpoint call for any number of concurrent callers,
 * refresh ahead of expiry in the background, no caller waiting while a valid token is cached, and
 * a backoff instead of a token request per call once the credential is stopped.
 *
 * A fetch runs for the calls that wait for it: each caller bounds its own wait (the transport), and
 * when no call of the client is left the fetch is aborted. A background refresh is the exception:
 * the service may have issued its token already, so it runs to its end, bounded by the token
 * request's own `timeoutMs` and the store's bounds, all on timers that keep no process alive.
 */
export class TokenProvider {
  readonly #deps: TokenProviderDeps;
  readonly #now: () => number;
  #current: StoredToken | undefined;
  #inflight: Flight | undefined;
  #seq = 0;
  #lastFailure: { seq: number; error: unknown } | undefined;
  #active = 0;
  #stop: Stop | undefined;
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
   * A call starts: fetches stay alive while at least one call is under way. `call` is the object
   * that carries its lease (a data call's own), or a new one.
   */
  begin(call?: TokenCall): TokenCall {
    this.#active++;
    if (!call) return { seenFailure: this.#seq, probe: false };
    call.seenFailure = this.#seq;
    call.probe = false;
    return call;
  }

  /**
   * A call is over, whatever its outcome. The last one out aborts a fetch nobody waits for, but not
   * a background refresh: aborting it after the service issued its token would waste that token,
   * and the next call would ask for another.
   */
  end(call: TokenCall): void {
    this.#active--;
    if (call.probe && this.#stop?.probing) this.#stop.probing = false;
    call.probe = false;
    if (this.#active === 0 && this.#inflight && !this.#inflight.background) {
      this.#inflight.controller.abort();
      // Forgotten at once: a call that starts before the aborted fetch has unwound would join it
      // and fail with an AbortError that nobody asked for.
      this.#inflight = undefined;
    }
  }

  /**
   * The cached token when it is usable, without waiting (a refresh starts in the background when
   * one is due); undefined when a caller has to wait for `get`.
   */
  peek(): StoredToken | undefined {
    const now = this.#now();
    const cached = this.#current;
    if (!this.#usable(cached, now)) return undefined;
    if (this.#refreshDue(cached, now)) this.#refreshInBackground(now);
    return cached;
  }

  /**
   * A usable token: the cached one when valid, else the shared store's, else a new one. During a
   * stopped credential's backoff it throws the stopping error at once.
   */
  async get(call: TokenCall): Promise<StoredToken> {
    const cached = this.peek();
    if (cached) return cached;
    this.#admit(call);
    const flight = this.#inflight;
    if (!flight) {
      // A fetch started since this call last failed has failed too (this call was backing off):
      // its answer is this attempt's, rather than one more request per waiting caller.
      const failure = this.#lastFailure;
      if (failure && failure.seq > call.seenFailure) {
        call.seenFailure = failure.seq;
        throw failure.error;
      }
    }
    const joined = flight ?? this.#acquire('fetched');
    try {
      return await joined.promise;
    } catch (error) {
      call.seenFailure = Math.max(call.seenFailure, joined.seq);
      throw error;
    }
  }

  /** Throws during a backoff; when it is over, lets exactly one call through to probe. */
  #admit(call: TokenCall): void {
    const stop = this.#stop;
    if (!stop || call.probe) return;
    const now = this.#now();
    if (now < stop.until || stop.probing) throw withRetryAfter(stop.error, Math.max(0, stop.until - now));
    stop.probing = true;
    call.probe = true;
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

  /** A data call was answered without a 401: a token issued since the credential stopped works. */
  accepted(token: StoredToken): void {
    if (this.#stop && token.issuedAt >= this.#stop.since) this.#stop = undefined;
  }

  /**
   * Records that the credential is stopped (or refused): starts the backoff, or doubles it when the
   * probe failed. Returns `error` with the backoff as its `retryAfterMs`.
   */
  stopped<E extends PartnerError>(call: TokenCall | undefined, error: E, reason: Stop['reason']): E {
    const now = this.#now();
    const stop = this.#stop;
    // Calls that were under way when another concluded add nothing: one conclusion per window.
    if (stop && call && !call.probe) return withRetryAfter(error, Math.max(0, stop.until - now));
    const windowMs = stop
      ? Math.min(stop.windowMs * 2, CREDENTIAL_BACKOFF_MAX_MS)
      : CREDENTIAL_BACKOFF_MIN_MS;
    const stamped = withRetryAfter(error, windowMs);
    this.#stop = {
      error: stamped,
      reason,
      windowMs,
      since: stop?.since ?? now,
      until: now + windowMs,
      probing: false,
    };
    if (call) call.probe = false;
    if (reason === 'stopped') {
      this.#deps.emit({
        action: 'failed',
        scopes: undefined,
        expiresInSec: undefined,
        elapsedMs: 0,
        error: error.name,
        retryAfterMs: windowMs,
      });
    }
    return stamped;
  }

  #refreshInBackground(now: number): void {
    if (this.#inflight || this.#stop || now - this.#backgroundFailedAt < BACKGROUND_RETRY_MS) return;
    this.#acquire('refreshed').promise.catch(() => {
      this.#backgroundFailedAt = this.#now();
    });
  }

  /** The store's token when another process just put a fresh one there. */
  async #storedFresh(): Promise<StoredToken | undefined> {
    const stored = await this.#storeGet();
    const at = this.#now();
    const fresh =
      this.#usable(stored, at) && !this.#refreshDue(stored, at) && stored.accessToken !== this.#rejected;
    return fresh ? stored : undefined;
  }

  /**
   * One token for the fleet: with a store that locks, the process that takes the lock fetches and
   * the others wait (bounded) for its token in the store. Whatever goes wrong with the store, the
   * process fetches its own: the lock saves requests, it is never needed for a call to go on.
   */
  async #fetchOnce(signal: AbortSignal, now: number): Promise<StoredToken> {
    const { store, key } = this.#deps;
    if (typeof store.lock !== 'function') return this.#deps.fetchToken(signal);
    const lock = await storeOp(() => (store.lock as NonNullable<TokenStore['lock']>)(key, TOKEN_LOCK_TTL_MS));
    if (signal.aborted) throw new AbortError();
    if (lock?.acquired === true) {
      try {
        // Another process may have stored a token between our look and our lock.
        const stored = await this.#storedFresh();
        if (stored) return stored;
        const token = await this.#deps.fetchToken(signal);
        // Stored before the lock goes: a process arriving in between would find neither and fetch.
        await storeOp(() => store.set(key, token));
        return token;
      } finally {
        void storeOp(() => lock.release());
      }
    }
    if (lock?.acquired === false) {
      const deadline = now + TOKEN_LOCK_WAIT_MS;
      while (this.#now() < deadline) {
        await pause(TOKEN_LOCK_POLL_MS, signal);
        const stored = await this.#storedFresh();
        if (signal.aborted) throw new AbortError();
        if (stored) return stored;
      }
    }
    return this.#deps.fetchToken(signal);
  }

  /**
   * The one path to a new token, shared by every concurrent caller: first the store (another
   * process may have refreshed already), then one attempt at the token endpoint.
   */
  #acquire(action: 'fetched' | 'refreshed'): Flight {
    const generation = this.#generation;
    const started = this.#now();
    const seq = ++this.#seq;
    const controller = new AbortController();
    const run = async (): Promise<StoredToken> => {
      await null;
      try {
        const stored = await this.#storeGet();
        if (controller.signal.aborted) throw new AbortError();
        const now = this.#now();
        if (
          this.#usable(stored, now) &&
          !this.#refreshDue(stored, now) &&
          stored.accessToken !== this.#rejected &&
          stored.accessToken !== this.#current?.accessToken
        ) {
          if (generation === this.#generation) this.#current = stored;
          return stored;
        }
        const token = await this.#fetchOnce(controller.signal, now);
        // A fetch that began before an invalidation still returns a new token, so it is safe to use;
        // it is only kept when nothing newer has been put in place meanwhile.
        if (generation === this.#generation || !this.#current) {
          this.#current = token;
          await storeOp(() => this.#deps.store.set(this.#deps.key, token));
        }
        if (this.#stop?.reason === 'refused') this.#stop = undefined;
        // `expires_in` is authoritative: a token already dead is never handed to a call.
        if (this.#now() >= token.expiresAt) throw tokenExpiredOnArrival(token);
        this.#deps.emit({
          action,
          scopes: [...token.scopes],
          expiresInSec: Math.round((token.expiresAt - token.issuedAt) / 1000),
          elapsedMs: this.#now() - started,
          error: undefined,
          retryAfterMs: undefined,
        });
        return token;
      } catch (caught) {
        // Aborted because no call waits any more: nobody to tell.
        if (controller.signal.aborted) throw caught;
        let error = caught;
        let retryAfterMs: number | undefined;
        if (error instanceof InvalidClientError && action === 'fetched') {
          error = this.stopped(undefined, error, 'refused');
          retryAfterMs = (error as InvalidClientError).retryAfterMs;
        }
        this.#lastFailure = { seq, error };
        this.#deps.emit({
          action: 'failed',
          scopes: undefined,
          expiresInSec: undefined,
          elapsedMs: this.#now() - started,
          error: error instanceof Error ? error.name : 'Error',
          retryAfterMs,
        });
        throw error;
      } finally {
        if (this.#inflight?.seq === seq) this.#inflight = undefined;
      }
    };
    // The span is the fetch's, under the call that started it; the calls that join it wait in theirs.
    const flight: Flight = {
      seq,
      controller,
      background: action === 'refreshed',
      promise: this.#deps.span ? this.#deps.span('partner.token', run) : run(),
    };
    // Callers may all have left (each bounds its own wait): the outcome must not go unhandled.
    flight.promise.catch(() => {});
    this.#inflight = flight;
    return flight;
  }
}
