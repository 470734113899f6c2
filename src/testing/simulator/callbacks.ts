import type { BridgeTransfer } from '../../schemas/bridge.js';

/** Where callbacks go: a URL (POSTed as JSON) or a function given the exact body. */
export type CallbackTarget = string | ((body: BridgeTransfer) => void | Promise<void>);

/** Callback delivery: every body is logged, then sent to the target of the moment, if any. */
export class SimCallbacks {
  /** Every callback body sent so far, in order. */
  readonly log: BridgeTransfer[] = [];
  readonly #headers: Record<string, string>;

  constructor(
    public target: CallbackTarget | undefined,
    headers: Record<string, string> | undefined,
  ) {
    this.#headers = { ...headers };
  }

  send(body: BridgeTransfer): void {
    this.log.push(body);
    const target = this.target;
    if (!target) return;
    const deliver =
      typeof target === 'function'
        ? async () => target(body)
        : async () => {
            await fetch(target, {
              method: 'POST',
              headers: { ...this.#headers, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
          };
    deliver().catch(() => {
      // Delivery retries are not specified; a failed delivery is dropped, as a partner must tolerate.
    });
  }
}
