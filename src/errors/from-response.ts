import {
  ENVELOPE_FIELDS,
  errorEnvelopeSchema,
  insufficientBalanceSchema,
  validationFailedSchema,
} from '../schemas/errors.js';
import {
  ApiError,
  type ApiErrorInit,
  type AuthChallenge,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InsufficientBalanceError,
  IntentNotFoundError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  UserNotFoundError,
  ValidationFailedError,
  WalletNotLinkedError,
} from './api-error.js';
import { noRedaction, type Redact, redactDeep } from './redact.js';

const ENVELOPE_KEYS: ReadonlySet<string> = new Set(ENVELOPE_FIELDS);

/** Parses `Retry-After` as delta-seconds or an HTTP date; undefined when absent or unusable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Parses the first challenge of a `WWW-Authenticate` header (RFC 7235 auth-params). */
export function parseChallenge(value: string | null): AuthChallenge | undefined {
  if (!value) return undefined;
  const match = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*(.*)$/.exec(value);
  if (!match) return undefined;
  const challenge: AuthChallenge = { scheme: match[1]! };
  const params = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g;
  for (let param = params.exec(match[2]!); param; param = params.exec(match[2]!)) {
    const raw = param[2] !== undefined ? param[2].replace(/\\(.)/g, '$1') : (param[3] ?? '');
    const name = param[1]!.toLowerCase();
    if (name === 'error') challenge.error = raw;
    else if (name === 'error_description') challenge.errorDescription = raw;
  }
  return challenge;
}

export interface ErrorResponse {
  status: number;
  method: string;
  path: string;
  headers: Headers;
  /** The parsed body, or undefined when it was not JSON. */
  body: unknown;
  requiredScopes: readonly string[];
  grantedScopes: readonly string[] | undefined;
  /** Set when the 401 came back for a token fetched after this call's own 401. */
  credentialStopped?: boolean;
  /** Masks the request's secrets in what the server sent back (it may echo the request). */
  redact?: Redact;
  /** The ids the request named (`userId`, `routeId`, …): a 404 names them, as the service does not. */
  ids?: Readonly<Record<string, string>> | undefined;
}

/** ` (userId usr_1, transferId tr_9)`: which of the ids sent may be the one not found. */
function namedIds(ids: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(ids ?? {});
  return entries.length === 0 ? '' : ` (${entries.map(([name, id]) => `${name} ${id}`).join(', ')})`;
}

function defaultMessage(status: number, statusText: string | undefined): string {
  return statusText ? `${status} ${statusText}` : `HTTP ${status}`;
}

/**
 * Chooses the error class for an error answer: by `code` first (the stable identifier), then by
 * status. A body that is not the envelope (an HTML page from a proxy) still gets its status class.
 */
export function apiErrorFromResponse(response: ErrorResponse): ApiError {
  const { status, method, path, headers } = response;
  const redact = response.redact ?? noRedaction;
  const body = redactDeep(response.body, redact);
  const parsed = errorEnvelopeSchema.safeParse(body);
  const envelope = parsed.success ? parsed.data : undefined;
  const code = envelope?.code;
  const statusText = envelope?.error;
  const serverMessage = envelope?.message;
  // The extra fields as sent (the parsed copy would lose an own `__proto__` key).
  const details: Record<string, unknown> = {};
  if (envelope)
    for (const [key, value] of Object.entries(body as object))
      if (!ENVELOPE_KEYS.has(key)) details[key] = value;

  const init: ApiErrorInit = {
    status,
    method,
    path,
    code,
    statusText,
    details,
    message: `${method} ${path}: ${serverMessage ?? defaultMessage(status, statusText)}${code ? ` [${code}]` : ''}${status === 404 ? namedIds(response.ids) : ''}`,
    requestId: headers.get('x-request-id') ?? undefined,
    ...(status === 404 && response.ids ? { ids: response.ids } : {}),
  };

  switch (code) {
    case 'VALIDATION_FAILED': {
      const extra = validationFailedSchema.safeParse(details);
      const errors = extra.success ? extra.data.errors : (serverMessage?.split('; ') ?? []);
      return new ValidationFailedError({ ...init, errors });
    }
    case 'INSUFFICIENT_BALANCE': {
      const fields = insufficientBalanceSchema.safeParse(details);
      if (fields.success) return new InsufficientBalanceError({ ...init, ...fields.data });
      break;
    }
    case 'WALLET_NOT_LINKED':
      return new WalletNotLinkedError(init);
    case 'INTENT_NOT_FOUND':
      return new IntentNotFoundError(init);
    case 'USER_NOT_FOUND':
      return new UserNotFoundError(init);
  }

  if (status >= 300 && status < 400) {
    return new ApiError({
      ...init,
      message: `${init.message} (a redirect, not followed: credentials never go to another address; check baseUrl)`,
    });
  }
  if (status === 400) return new BadRequestError(init);
  if (status === 401) {
    // Redacted before and after parsing: a quoted-string may escape part of a secret.
    const raw = headers.get('www-authenticate');
    const challenge = parseChallenge(raw === null ? null : redact(raw));
    if (challenge?.error !== undefined) challenge.error = redact(challenge.error);
    if (challenge?.errorDescription !== undefined)
      challenge.errorDescription = redact(challenge.errorDescription);
    const stopped = response.credentialStopped ?? false;
    const reason = stopped
      ? 'a freshly issued token was rejected: the credential or its organisation is stopped (revoked or suspended)'
      : challenge?.error === 'invalid_token'
        ? 'the access token was rejected'
        : 'no valid access token was presented';
    return new AuthenticationError({
      ...init,
      message: `${init.message} (${reason})`,
      challenge,
      credentialStopped: stopped,
    });
  }
  if (status === 403) {
    const needs = response.requiredScopes.length > 0 ? response.requiredScopes.join(' and ') : 'a scope';
    const holds =
      response.grantedScopes === undefined
        ? 'unknown'
        : response.grantedScopes.length > 0
          ? response.grantedScopes.join(', ')
          : 'none';
    return new PermissionDeniedError({
      ...init,
      message: `${init.message} (needs ${needs}; the token holds: ${holds})`,
      requiredScopes: response.requiredScopes,
      grantedScopes: response.grantedScopes,
    });
  }
  if (status === 404) return new NotFoundError(init);
  if (status === 409) return new ConflictError(init);
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'));
  if (status === 429) return new RateLimitError({ ...init, retryAfterMs });
  if (status === 503) return new ServiceUnavailableError({ ...init, retryAfterMs });
  if (status >= 500 && status < 600) return new InternalServerError(init);
  return new ApiError(init);
}
