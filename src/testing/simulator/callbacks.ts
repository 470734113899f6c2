import { signWebhook, webhookKey } from '../../callbacks/standard-webhooks.js';
import type { BridgeTransfer } from '../../schemas/bridge.js';

/** Where callbacks go: a URL (POSTed as JSON) or a function given the exact body. */
export type CallbackTarget = string | ((body: BridgeTransfer) => void | Promise<void>);

/**
 * The simulator's `callbackSigning`: one `whsec_` secret, or several during a rotation.
 *
 * @example
 * const signing: CallbackSigning = { secrets: [newSecret, oldSecret] };
 */
export interface CallbackSigning {
  /** The secret the receiver checks with `standardWebhooks`, `whsec_<base64>`. */
  secret?: string;
  /** Several secrets: one signature each, space-separated. */
  secrets?: readonly string[];
}

/**
 * Signs deliveries the Standard Webhooks way, as `standardWebhooks` checks them: each try signed
 * anew at the real clock (the receiver's clock is real, whatever `advanceClock` did), under the
 * delivery's one id.
 */
export class WebhookSigner {
  #keys: Promise<CryptoKey[]> | undefined;

  constructor(
    readonly secrets: readonly string[],
    readonly newId: () => string,
  ) {}

  async headers(id: string, body: string): Promise<Record<string, string>> {
    this.#keys ??= Promise.all(this.secrets.map(webhookKey));
    const timestamp = String(Math.floor(Date.now() / 1000));
    return {
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': await signWebhook(await this.#keys, id, timestamp, body),
    };
  }
}

/** One callback and how its delivery went, as the admin API lists it. */
export interface CallbackDelivery {
  transferId: string;
  status: BridgeTransfer['status'];
  /** The URL it went to; `null` for a function target, or when no target was set. */
  url: string | null;
  /** `pending` while tries remain, `delivered` on a 2xx (or a function that returned), `failed` after the last try. */
  state: 'pending' | 'delivered' | 'failed' | 'undelivered';
  attempts: number;
  /** The HTTP status of the last try, `null` when none answered. */
  lastStatus: number | null;
  /** Why the last try failed, `null` when it did not. */
  lastError: string | null;
}

/**
 * How a service retries a callback nobody accepted: 5 tries in all, 1 s, 2 s, 4 s, 8 s apart.
 * Bounded, so that a receiver that is down does not keep a simulator busy for ever.
 */
export const CALLBACK_RETRY = { attempts: 5, firstDelayMs: 1000 } as const;

/**
 * Callback delivery: every body is logged, then sent to the target of the moment, if any. A failed
 * delivery (a thrown error, a non-2xx answer) is recorded on its entry in `deliveries` and tried
 * again with exponential backoff, as a partner's receiver sees from the real service.
 */
export class SimCallbacks {
  /** Every callback body sent so far, in order. */
  readonly log: BridgeTransfer[] = [];
  /** Every delivery, in the order of `log`, with its attempts. */
  readonly deliveries: CallbackDelivery[] = [];
  readonly #headers: Record<string, string>;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(
    public target: CallbackTarget | undefined,
    headers: Record<string, string> | undefined,
    private readonly retry: { attempts: number; firstDelayMs: number } = CALLBACK_RETRY,
    private readonly signer?: WebhookSigner,
  ) {
    this.#headers = { ...headers };
  }

  send(body: BridgeTransfer): void {
    this.log.push(body);
    const target = this.target;
    const delivery: CallbackDelivery = {
      transferId: body.transferId,
      status: body.status,
      url: typeof target === 'string' ? target : null,
      state: target ? 'pending' : 'undelivered',
      attempts: 0,
      lastStatus: null,
      lastError: null,
    };
    this.deliveries.push(delivery);
    // The id travels with the delivery's tries: a receiver tells a retry from a new message by it.
    if (target) void this.#attempt(target, body, delivery, this.signer?.newId());
  }

  /** Stops pending retries (the simulator is closing or resetting); their entries stay `pending`. */
  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  async #attempt(
    target: CallbackTarget,
    body: BridgeTransfer,
    delivery: CallbackDelivery,
    webhookId: string | undefined,
  ): Promise<void> {
    delivery.attempts += 1;
    try {
      if (typeof target === 'function') {
        await target(body);
      } else {
        const text = JSON.stringify(body);
        const signed = this.signer && webhookId ? await this.signer.headers(webhookId, text) : undefined;
        const response = await fetch(target, {
          method: 'POST',
          headers: { ...this.#headers, ...signed, 'content-type': 'application/json' },
          body: text,
        });
        delivery.lastStatus = response.status;
        // The body is not needed; cancelling frees the connection.
        await response.body?.cancel().catch(() => {});
        if (!response.ok) throw new Error(`the receiver answered ${response.status}`);
      }
      delivery.state = 'delivered';
      delivery.lastError = null;
    } catch (error) {
      // fetch says only "fetch failed"; the cause's code (ECONNREFUSED, …) is what an operator needs.
      const code = (error as { cause?: { code?: unknown } })?.cause?.code;
      const message = error instanceof Error ? error.message : String(error);
      delivery.lastError = typeof code === 'string' ? `${message} (${code})` : message;
      if (delivery.attempts >= this.retry.attempts) {
        delivery.state = 'failed';
        return;
      }
      const delay = this.retry.firstDelayMs * 2 ** (delivery.attempts - 1);
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        void this.#attempt(target, body, delivery, webhookId);
      }, delay);
      // A retry waiting must not keep a test process (or a closing CLI) alive.
      timer.unref();
      this.#timers.add(timer);
    }
  }
}
