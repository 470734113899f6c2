import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { readArgs } from '../core/args.js';
import { type BodyErrors, type BodyLimits, decodeText, readNodeBytes, withinBytes } from '../core/body.js';
import { type Delivery, type DeliveryAnswer, type DeliveryHandler, internalError } from './handler.js';

/** A node:http request, with the body Express's `raw()`, `text()` or `json()` may have read already. */
export type NodeRequest = IncomingMessage & { body?: unknown };

/**
 * Adapts the web-shaped handler to node:http, in the shape of Hono's `getRequestListener`: the
 * request is presented without building a `Request` (nor a `Headers`, unless an `authenticate`
 * hook asks), the body is read straight from the stream, and the answer is written directly.
 *
 * @example
 * const nodeHandler = nodeListener(handle, { withHeaders: true, onWriteError: report });
 * http.createServer(nodeHandler).listen(8080);
 */
export function nodeListener(
  handle: DeliveryHandler,
  options: { withHeaders: boolean; onWriteError: (error: unknown) => void },
): (req: NodeRequest, res: ServerResponse) => void {
  const { withHeaders, onWriteError } = options;
  return (req, res) => {
    const delivery = readArgs('CallbackRouter.nodeHandler', () => nodeDelivery(req, withHeaders));
    const send = (answer: DeliveryAnswer) => {
      try {
        write(req, res, answer);
      } catch (error) {
        // A response object that cannot be written has nobody to answer; the partner still hears of it.
        onWriteError(error);
      }
    };
    handle(delivery, send).catch(() => send(internalError));
  };
}

function write(req: NodeRequest, res: ServerResponse, { status, body, headers }: DeliveryAnswer): void {
  if (res.headersSent) return;
  // The rest of an oversized or stalled body is not read: close rather than leave it half consumed.
  const cut = (status === 413 || status === 408) && !req.readableEnded;
  if (cut) res.once('finish', () => req.destroy());
  res.writeHead(status, cut ? { ...headers, connection: 'close' } : headers);
  res.end(body);
}

/** A header's value as `Headers` would hold it: repeated values joined, anything else absent. */
function headerValue(value: string | string[] | undefined): string | undefined {
  if (typeof value === 'string') return value;
  return Array.isArray(value) ? value.join(', ') : undefined;
}

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(raw)) {
    const text = headerValue(value);
    if (text !== undefined) headers.set(key, text);
  }
  return headers;
}

/**
 * The declared content-length. Node builds `req.headers` from `rawHeaders` on first read, so
 * without an `authenticate` hook the length is looked up in `rawHeaders` and the object is never
 * built; a request without `rawHeaders` (a test double) is read through `headers`.
 */
function declaredLength(req: NodeRequest): number {
  const raw = req.rawHeaders;
  if (!Array.isArray(raw)) return Number(headerValue(req.headers['content-length']) ?? Number.NaN);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 14 && name.toLowerCase() === 'content-length') return Number(raw[i + 1]);
  }
  return Number.NaN;
}

function nodeDelivery(req: NodeRequest, withHeaders: boolean): Delivery {
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  // Read up front only for an `authenticate` hook, the one reader of the headers and the peer.
  const headers = withHeaders ? toHeaders(req.headers) : undefined;
  const remoteAddress = withHeaders ? req.socket?.remoteAddress : undefined;
  return {
    method,
    declaredBytes: headers ? Number(headers.get('content-length') ?? Number.NaN) : declaredLength(req),
    read: (limits, errors) => readNodeText(req, limits, errors),
    describe: (body) => ({
      method,
      url,
      headers: headers ?? toHeaders(req.headers),
      body,
      remoteAddress,
      raw: req,
    }),
  };
}

async function readNodeText(
  req: NodeRequest,
  limits: BodyLimits,
  errors: BodyErrors,
): Promise<string | undefined> {
  const given = req.body;
  // Express 4 without a body parser leaves `{}`; any parser's result is used as it is, `{}` too
  // once a parser has consumed the stream (express.json on a body of `{}`).
  if (
    given !== undefined &&
    given !== null &&
    (req.readableEnded ||
      !(typeof given === 'object' && Object.keys(given).length === 0 && !(given instanceof Uint8Array)))
  ) {
    const text =
      typeof given === 'string'
        ? given
        : given instanceof Uint8Array
          ? decodeText(given)
          : JSON.stringify(given);
    return withinBytes(text, limits.maxBytes) ? text : undefined;
  }
  // node:http calls the handler at the end of the headers and parses the rest of what arrived
  // after it: by the end of this turn of the event loop, a body that came with its headers is
  // whole in the request's buffer. Taken from there it needs neither listeners nor a timer; a
  // body still on its way is read from the stream, within the bounds.
  if (req.complete === false) {
    await new Promise((resolve) => setImmediate(resolve));
    // Closed meanwhile: its 'close' is gone, so the stream read below would wait for the deadline.
    if (req.destroyed && !req.complete)
      throw errors.broken(new Error('the request closed before its body ended'));
  }
  if (req.complete === true && req.readableFlowing === null && req.readableEncoding === null) {
    if (req.readableLength > limits.maxBytes) return undefined;
    const whole: Uint8Array | null = req.read();
    return whole === null ? '' : decodeText(whole);
  }
  const bytes = await readNodeBytes(req, limits, errors);
  return bytes === undefined ? undefined : decodeText(bytes);
}
