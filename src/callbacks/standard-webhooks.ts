import * as z from 'zod';
import { parseArgs } from '../core/args.js';
import { DEFAULTS, withDefaults } from '../core/defaults.js';
import type { CallbackRequest } from './outcomes.js';

/**
 * The Standard Webhooks scheme (standardwebhooks.com), opt-in: the specification shows no delivery
 * authentication, so the router takes a hook, and this is one for services that sign that way.
 * Everything runs on Web Crypto (`crypto.subtle`), which Node, Bun, Deno and workers all have;
 * node:crypto's `timingSafeEqual` is not everywhere the SDK runs.
 */

/** Options of {@link standardWebhooks}: `secret` or `secrets`, and the tolerance. */
export interface StandardWebhooksOptions {
  /**
   * The endpoint's signing secret as the sending service shows it: `whsec_` then base64. Give it,
   * or `secrets` during a rotation.
   *
   * @example
   * standardWebhooks({ secret: process.env.WEBHOOK_SECRET! }); // 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
   */
  secret?: string;
  /**
   * Several secrets while one is being rotated: a delivery carrying a valid signature by any of
   * them is accepted (a rotating sender signs with both, space-separated).
   *
   * @example
   * standardWebhooks({ secrets: [process.env.WEBHOOK_SECRET_NEW!, process.env.WEBHOOK_SECRET_OLD!] });
   */
  secrets?: readonly string[];
  /**
   * How far the signed `webhook-timestamp` may be from this machine's clock, past or future, in
   * seconds. A captured delivery can be replayed only within it, and within it each `webhook-id`
   * is remembered (see `standardWebhooks`).
   *
   * @default DEFAULTS.callbacks.webhookToleranceSec (300)
   * @example
   * standardWebhooks({ secret, toleranceSec: 60 });
   */
  toleranceSec?: number;
}

const PREFIX = 'whsec_';
/** Standard base64 with its padding, as the scheme writes secrets and signatures. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const TIMESTAMP = /^[0-9]{1,15}$/;
/** An HMAC-SHA256, the length every `v1` signature has. */
const MAC_BYTES = 32;

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!BASE64.test(text)) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The key bytes of a `whsec_<base64>` secret; `undefined` when it is not one. */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> | undefined {
  if (!secret.startsWith(PREFIX)) return undefined;
  const bytes = fromBase64(secret.slice(PREFIX.length));
  return bytes && bytes.length > 0 ? bytes : undefined;
}

/**
 * A secret in the scheme's form. The message never repeats the value: it is a secret.
 *
 * @example
 * webhookSecretSchema().parse('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
 */
export const webhookSecretSchema = () =>
  z
    .string({ error: 'must be a string' })
    .refine(
      (value) => secretBytes(value) !== undefined,
      "must be a Standard Webhooks secret: 'whsec_' followed by non-empty base64",
    );

/**
 * The `secret` and `secrets` fields, for a `z.strictObject`; give it `exactlyOneSecret` as its
 * `superRefine`. Shared with the simulator's `callbackSigning`, which signs as these verify.
 *
 * @example
 * z.strictObject(secretsShape()).superRefine(exactlyOneSecret);
 */
export const secretsShape = () => ({
  secret: webhookSecretSchema().optional(),
  secrets: z.array(webhookSecretSchema(), { error: 'must be an array of secrets' }).optional(),
});

/**
 * One of `secret` and `secrets` (not both), and at least one secret.
 *
 * @example
 * z.strictObject(secretsShape()).superRefine(exactlyOneSecret);
 */
export function exactlyOneSecret(
  options: { secret?: string | undefined; secrets?: readonly string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  const given = Number(options.secret !== undefined) + Number(options.secrets !== undefined);
  if (given !== 1)
    ctx.addIssue({ code: 'custom', message: 'give exactly one of secret or secrets', path: [] });
  else if (options.secrets?.length === 0)
    ctx.addIssue({ code: 'custom', message: 'must hold at least one secret', path: ['secrets'] });
}

// Built on the first standardWebhooks, not at import.
const optionsSchema = z.lazy(() =>
  z
    .strictObject({
      ...secretsShape(),
      toleranceSec: z
        .number({ error: 'must be a number of seconds' })
        .nonnegative('must not be negative')
        .refine(Number.isFinite, 'must be finite')
        .optional(),
    })
    .superRefine(exactlyOneSecret),
);

const encoder = new TextEncoder();

/**
 * The HMAC-SHA256 key of a `whsec_` secret, checked already: not extractable, so nothing holding
 * it can print the secret.
 *
 * @example
 * const key = await webhookKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
 */
export function webhookKey(secret: string): Promise<CryptoKey> {
  const bytes = secretBytes(secret);
  if (!bytes) return Promise.reject(new TypeError('not a whsec_ secret'));
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

/** The signed content, `${id}.${timestamp}.${body}` in UTF-8, and the body's own bytes. */
function signedContent(
  id: string,
  timestamp: string,
  body: string,
): { content: Uint8Array<ArrayBuffer>; body: Uint8Array<ArrayBuffer> } {
  const head = encoder.encode(`${id}.${timestamp}.`);
  const bytes = encoder.encode(body);
  const content = new Uint8Array(head.length + bytes.length);
  content.set(head);
  content.set(bytes, head.length);
  return { content, body: bytes };
}

async function macs(keys: readonly CryptoKey[], content: Uint8Array<ArrayBuffer>): Promise<Uint8Array[]> {
  const signed = await Promise.all(keys.map((key) => crypto.subtle.sign('HMAC', key, content)));
  return signed.map((mac) => new Uint8Array(mac));
}

/**
 * The `webhook-signature` header for one delivery: a `v1,<base64>` signature per key,
 * space-separated, as a sender rotating its secret writes it.
 *
 * @example
 * const signature = await signWebhook([await webhookKey(secret)], 'msg_1', '1700000000', body);
 */
export async function signWebhook(
  keys: readonly CryptoKey[],
  id: string,
  timestamp: string,
  body: string,
): Promise<string> {
  const signatures = await macs(keys, signedContent(id, timestamp, body).content);
  return signatures.map((mac) => `v1,${toBase64(mac)}`).join(' ');
}

/**
 * Compares two MACs without an early exit, so the time taken says nothing of where they differ.
 * Lengths are public (every `v1` signature is 32 bytes).
 */
function sameMac(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/** The `v1` signatures of a `webhook-signature` header, decoded; others (`v1a`, …) are skipped. */
function v1Signatures(header: string): Uint8Array[] {
  const found: Uint8Array[] = [];
  for (const part of header.split(' ')) {
    if (!part.startsWith('v1,')) continue;
    const mac = fromBase64(part.slice(3));
    if (mac?.length === MAC_BYTES) found.push(mac);
  }
  return found;
}

/**
 * The `webhook-id`s of authentic deliveries whose timestamps are within the tolerance, each with a
 * digest of its body, in a Map that forgets the oldest first: bounded by the capacity, and by time
 * as entries are added (the timestamps of entries added later are rarely earlier).
 */
class SeenIds {
  readonly #entries = new Map<string, { digest: string; untilSec: number }>();
  constructor(readonly capacity: number) {}

  /** False when `id` was seen within the window with another body; else remembers it. */
  admit(id: string, digest: string, untilSec: number, nowSec: number): boolean {
    const held = this.#entries.get(id);
    const live = held !== undefined && held.untilSec >= nowSec;
    if (live && held.digest !== digest) return false;
    this.#entries.delete(id);
    this.#entries.set(id, { digest, untilSec: live ? Math.max(untilSec, held.untilSec) : untilSec });
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.capacity && entry.untilSec >= nowSec) break;
      this.#entries.delete(oldest);
    }
    return true;
  }
}

/**
 * An `authenticate` for `createCallbackRouter` that checks Standard Webhooks signatures: the
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` headers, an HMAC-SHA256 (`v1`) of
 * `${id}.${timestamp}.${body}` over the exact body received, by any of the secrets, with the
 * timestamp within `toleranceSec` of this machine's clock. Anything else is refused: answered 401,
 * reported on `rejected`, and shown to no listener.
 *
 * A replay within the tolerance never reaches a listener twice: the same id with the same body is
 * the same transfer state, which the router's store drops as a duplicate (or dispatches again when
 * its first delivery was not recorded: a listener failed, so the service's retry is what at least
 * once needs); the same id with another body is refused. Ids are remembered in this process
 * (`DEFAULTS.callbacks.webhookIdCapacity` of them); across a fleet, the router's shared store
 * still drops a replayed body as a duplicate state.
 *
 * Give the handler the body as it was sent: `express.json()` in front of `nodeHandler` shows the
 * check a re-serialized body, and every delivery is refused (use `express.raw()`, or no parser).
 *
 * @throws ArgumentError when a secret is not in the `whsec_<base64>` form, both or neither of
 *   `secret` and `secrets` is given, or `toleranceSec` is negative (the message names no secret).
 * @example
 * const router = createCallbackRouter({ authenticate: standardWebhooks({ secret: process.env.WEBHOOK_SECRET! }) });
 * router.on('bridge_transfer_delivered', (transfer) => credit(transfer.userId, transfer.destination.amount));
 */
export function standardWebhooks(
  options: StandardWebhooksOptions,
): (request: CallbackRequest) => Promise<boolean> {
  const checked = parseArgs(optionsSchema, options, 'standardWebhooks');
  const secrets = checked.secrets ?? [checked.secret!];
  const { toleranceSec } = withDefaults({ toleranceSec: DEFAULTS.callbacks.webhookToleranceSec }, checked);
  const seen = new SeenIds(DEFAULTS.callbacks.webhookIdCapacity);
  let keys: Promise<CryptoKey[]> | undefined;
  return async (request) => {
    const id = request.headers.get('webhook-id');
    const timestamp = request.headers.get('webhook-timestamp');
    const signature = request.headers.get('webhook-signature');
    if (!id || !timestamp || !signature || !TIMESTAMP.test(timestamp)) return false;
    const nowSec = Math.floor(Date.now() / 1000);
    const signedSec = Number(timestamp);
    if (Math.abs(nowSec - signedSec) > toleranceSec) return false;
    const given = v1Signatures(signature);
    if (given.length === 0) return false;
    keys ??= Promise.all(secrets.map(webhookKey));
    const { content, body } = signedContent(id, timestamp, request.body);
    // One MAC per secret whatever the header holds, each compared with every signature given.
    const expected = await macs(await keys, content);
    if (!expected.some((mac) => given.some((candidate) => sameMac(mac, candidate)))) return false;
    const digest = toBase64(new Uint8Array(await crypto.subtle.digest('SHA-256', body)));
    return seen.admit(id, digest, signedSec + toleranceSec, nowSec);
  };
}
