/**
 * Where the router remembers the last state it dispatched for each transfer. Plug in a shared one
 * (Redis, a database) so that several processes behind a load balancer drop the same duplicates.
 *
 * @example
 * const store: CallbackStore = {
 *   get: async (transferId) => (await redis.get(`cb:${transferId}`)) ?? undefined,
 *   set: async (transferId, status) => { await redis.set(`cb:${transferId}`, status, 'EX', 7 * 86400); },
 * };
 */
export interface CallbackStore {
  get(transferId: string): Promise<string | undefined>;
  set(transferId: string, status: string): Promise<void>;
}

/**
 * The default store: this process's memory, holding the most recently seen transfers only.
 *
 * @example
 * const router = createCallbackRouter({ store: new MemoryCallbackStore(200_000) });
 */
export class MemoryCallbackStore implements CallbackStore {
  readonly #states = new Map<string, string>();
  readonly #capacity: number;

  /** @param capacity transfers remembered; the least recently updated is forgotten first. */
  constructor(capacity = 50_000) {
    this.#capacity = capacity;
  }

  async get(transferId: string): Promise<string | undefined> {
    return this.#states.get(transferId);
  }

  async set(transferId: string, status: string): Promise<void> {
    this.#states.delete(transferId);
    this.#states.set(transferId, status);
    if (this.#states.size > this.#capacity) this.#states.delete(this.#states.keys().next().value as string);
  }

  get size(): number {
    return this.#states.size;
  }
}
