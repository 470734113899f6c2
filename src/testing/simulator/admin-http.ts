import { createHash, timingSafeEqual } from 'node:crypto';
import { ArgumentError } from '../../errors/client-errors.js';
import type { SimAdmin } from './admin.js';
import { BIGINT_MESSAGE, CALLBACK_TARGET_MESSAGE } from './args.js';
import type { CallbackDelivery } from './callbacks.js';
import { HttpFailure, validation } from './envelope.js';
import type { Mount, SimRequest } from './http.js';
import { jsonObject } from './json.js';

/*
 * The admin HTTP API: the second mount of the simulator's fetch, for partners whose tests are not
 * written in JavaScript. `POST /__admin/v1/<operation>` takes the operation's arguments as a JSON
 * object named as the simulator method's parameters and hands them to `SimAdmin.run`, so an HTTP
 * call is checked by the very schemas (args.ts) that check a method call, and a
 * mistake comes back in the service's own error envelope (400 VALIDATION_FAILED, every issue).
 */

/** The reserved prefix: outside /api/v1/s2s, so no partner path can ever collide with it. */
export const ADMIN_PREFIX = '/__admin/v1';

/** The operations the admin API exposes, by the name of their schema and simulator method. */
export const ADMIN_OPERATIONS = [
  'advanceClock',
  'createOrganisation',
  'withdrawOrganisationScope',
  'setOrganisationActive',
  'createCredential',
  'revokeCredential',
  'rotateCredential',
  'createUser',
  'fund',
  'balance',
  'configureRoute',
  'setCallbacks',
  'transfer',
  'advance',
] as const satisfies readonly Parameters<SimAdmin['run']>[0][];

/**
 * Amount fields that the schemas take as bigints. JSON has no bigint, and a JSON number above 2^53
 * is already rounded when parsed, so they travel as decimal strings and become bigints here.
 */
const BIGINT_FIELDS = new Set([
  'raw',
  'gasFeeRaw',
  'providerFeeBps',
  'feeCeilingBps',
  'minAmountRaw',
  'maxAmountRaw',
]);

function withBigints(value: unknown, key?: string): unknown {
  if (typeof value === 'string' && key !== undefined && BIGINT_FIELDS.has(key) && /^\d+$/.test(value))
    return BigInt(value);
  if (Array.isArray(value)) return value.map((item) => withBigints(item));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withBigints(v, k)]));
  return value;
}

/**
 * An issue as the admin API states it. The schemas speak of JavaScript values (a bigint, a
 * function); over HTTP the same mistake is said in JSON's words.
 */
function inJsonWords(path: string, message: string): string {
  const field = path.slice(path.lastIndexOf('.') + 1);
  let said = message;
  if (message === BIGINT_MESSAGE) {
    said = field.endsWith('Bps')
      ? 'must be a string of digits (basis points), e.g. "12"'
      : 'must be a string of digits (base units), e.g. "1000000"';
  } else if (message === CALLBACK_TARGET_MESSAGE) {
    said = 'must be an http(s) URL';
  }
  return path ? `${path}: ${said}` : said;
}

/** A result as JSON: bigints as decimal strings (the way they came in), `undefined` as `null`. */
function dataResponse(data: unknown, status = 200): Response {
  return new Response(
    JSON.stringify({ data: data ?? null }, (_key, value) =>
      typeof value === 'bigint' ? value.toString() : value,
    ),
    { status, headers: { 'content-type': 'application/json' } },
  );
}

/**
 * A name or address a browser can only have reached through loopback: `localhost` and its
 * subdomains (RFC 6761), 127.0.0.0/8 and [::1]. Parsed as a URL first, so that `127.1` or
 * `[0::1]` read as what they are, and `localhost@evil.example` as evil.example.
 */
function isLoopbackHost(host: string): boolean {
  if (!/^[\w.:[\]-]+$/.test(host)) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d+\.\d+\.\d+$/.test(hostname)
  );
}

/** True when `given` is `expected`, in a time that does not tell how much of it matched. */
function sameToken(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * What a web page must never get through: a page the partner's browser opens can send requests to
 * 127.0.0.1, and a name the attacker rebinds to 127.0.0.1 makes its reads same-origin. So a Host
 * that is not loopback (rebinding), an `Origin` not the simulator's own (cross-site), and a body
 * that is not `application/json` (the only kind a page sends without asking first) are refused;
 * with a token, so is a call without it.
 */
function guard(request: SimRequest, token: string | undefined): void {
  if (!isLoopbackHost(request.host))
    throw new HttpFailure(
      403,
      'FORBIDDEN',
      'the admin API answers only requests addressed to a loopback name or address (localhost, 127.0.0.1, [::1])',
    );
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== new URL(`http://${request.host}`).origin)
    throw new HttpFailure(403, 'FORBIDDEN', 'the admin API refuses cross-origin requests');
  if (token !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.get('authorization') ?? '');
    if (!match || !sameToken(match[1]!, token))
      throw new HttpFailure(
        401,
        'UNAUTHORIZED',
        'the admin API needs Authorization: Bearer <the admin token>',
        {},
        { 'www-authenticate': 'Bearer realm="partner-simulator-admin"' },
      );
  }
  if (request.method === 'GET' || request.method === 'HEAD') return;
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    throw new HttpFailure(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'the admin API takes application/json only: send content-type: application/json',
    );
}

/** What the admin mount needs of the simulator; getters, because `reset` replaces the state. */
export interface AdminHost {
  admin(): SimAdmin;
  deliveries(): readonly CallbackDelivery[];
  routes(): unknown[];
  /** Starts again from nothing (plus the demo data); returns the demo the simulator now holds. */
  reset(): unknown;
  /** With it, every admin call needs `Authorization: Bearer <adminToken>`. */
  adminToken?: string | undefined;
}

export function adminApi(host: AdminHost): Mount {
  return {
    prefix: ADMIN_PREFIX,
    handle: (request) => {
      guard(request, host.adminToken);
      const { method, path, body } = request;
      const name = path.replace(/^\//, '');
      if (name === 'callbacks' || name === 'routes') {
        if (method !== 'GET')
          throw new HttpFailure(405, 'METHOD_NOT_ALLOWED', 'use GET', {}, { allow: 'GET' });
        return dataResponse(name === 'callbacks' ? host.deliveries() : host.routes());
      }
      if (method !== 'POST' && (name === 'reset' || ADMIN_OPERATIONS.includes(name as never)))
        throw new HttpFailure(405, 'METHOD_NOT_ALLOWED', 'use POST', {}, { allow: 'POST' });
      if (name === 'reset') return dataResponse(host.reset());
      if (!ADMIN_OPERATIONS.includes(name as never))
        throw new HttpFailure(404, 'NOT_FOUND', `no admin operation ${JSON.stringify(name.slice(0, 80))}`);
      const args = withBigints(body === '' ? {} : jsonObject(body)) as Record<string, unknown>;
      try {
        return dataResponse(host.admin().run(name as (typeof ADMIN_OPERATIONS)[number], args));
      } catch (error) {
        if (error instanceof ArgumentError)
          throw validation(error.issues.map(({ path, message }) => inJsonWords(path, message)));
        throw error;
      }
    },
  };
}
