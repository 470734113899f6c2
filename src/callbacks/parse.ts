import { CallbackParseError } from '../errors/bridge-errors.js';
import { type BridgeTransfer, bridgeSchemas } from '../schemas/bridge.js';

/** The callback kinds of the specification, one per state that sends a callback. */
export const CALLBACK_KINDS = [
  'bridge_transfer_submitted',
  'bridge_transfer_source_confirmed',
  'bridge_transfer_delivered',
  'bridge_transfer_refund_pending',
  'bridge_transfer_refunded',
  'bridge_transfer_failed',
] as const;
/** A callback kind: `bridge_transfer_<status>` for each state that sends a callback. */
export type BridgeCallbackKind = (typeof CALLBACK_KINDS)[number];

const KINDS: ReadonlySet<string> = new Set(CALLBACK_KINDS);

/** What a callback body turned out to be. */
export type ParsedCallback =
  /** A bridge transfer entering a state that sends a callback. */
  | { kind: BridgeCallbackKind; transfer: BridgeTransfer }
  /**
   * A bridge transfer in a state without a known callback kind: `pending` and `expired` send none,
   * and a state added by the service later is not known yet. Reported, not dispatched as a kind.
   */
  | { kind: 'unexpected_state'; transfer: BridgeTransfer }
  /** Not a bridge transfer: portfolio callbacks share the endpoint. Passed on as it came. */
  | { kind: 'unknown'; body: unknown };

function decode(body: unknown): unknown {
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) {
    const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: false }).decode(body);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CallbackParseError('The callback body is not JSON', [], { cause: error });
    }
  }
  return body;
}

/** A bridge transfer carries these; a body without them is some other kind of callback. */
function looksLikeBridgeTransfer(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    'transferId' in value &&
    'routeId' in value &&
    'status' in value
  );
}

/**
 * Reads a callback body (the raw text, bytes, or an already parsed object). A bridge transfer is
 * validated with the same schema as `transfers.get`; its kind follows from its status.
 *
 * @throws CallbackParseError for broken JSON, or a bridge transfer with missing or mistyped fields.
 * @example
 * const parsed = parseBridgeCallback(await request.text());
 * if (parsed.kind === 'bridge_transfer_delivered') markDelivered(parsed.transfer);
 */
export function parseBridgeCallback(body: unknown, options: { strict?: boolean } = {}): ParsedCallback {
  const value = decode(body);
  if (!looksLikeBridgeTransfer(value)) return { kind: 'unknown', body: value };
  const result = bridgeSchemas(options.strict ?? false).transfer.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    throw new CallbackParseError(
      `The bridge callback does not fit a transfer: ${issues
        .slice(0, 3)
        .map((issue) => `${issue.path}: ${issue.message}`)
        .join('; ')}`,
      issues,
    );
  }
  const transfer = result.data;
  const kind = `bridge_transfer_${transfer.status}`;
  return KINDS.has(kind)
    ? { kind: kind as BridgeCallbackKind, transfer }
    : { kind: 'unexpected_state', transfer };
}
