import type * as z from 'zod';
import { ResponseValidationError } from '../errors/client-errors.js';
import { oauthErrorFor } from '../errors/oauth.js';
import { Call } from '../http/call.js';
import type { Transport } from '../http/transport.js';
import { parseJson, type RawResponse } from '../http/types.js';
import { tokenResponseSchema } from '../schemas/auth.js';
import { oauthErrorBodySchema } from '../schemas/errors.js';
import type { StoredToken } from './token-store.js';

export const TOKEN_PATH = '/auth/token';
/** The longest token life the SDK relies on; a token said to live longer is refreshed after a day. */
const MAX_TRUSTED_LIFETIME_SEC = 86_400;
/** The specification's default when a token response carries no `expires_in`. */
const DEFAULT_EXPIRES_IN_SEC = 3600;

type TokenResponse = z.output<typeof tokenResponseSchema>;

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  clientAuth: 'body' | 'basic';
  /** Space-delimited scopes to ask for; undefined asks for everything the credential holds. */
  scope: string | undefined;
}

/**
 * The error of a token that died before it could be sent: its `expires_in` was shorter than the
 * token request took (or than storing it did). Sending it would only earn a 401.
 */
export function tokenExpiredOnArrival(token: StoredToken): ResponseValidationError {
  const lifetimeSec = (token.expiresAt - token.issuedAt) / 1000;
  return new ResponseValidationError({
    method: 'POST',
    path: TOKEN_PATH,
    status: 200,
    issues: [
      {
        path: 'expires_in',
        message: `the token expired before it could be used (expires_in ${lifetimeSec} s is shorter than the token request took)`,
      },
    ],
  });
}

/** `application/x-www-form-urlencoded` encoding of one value, as RFC 6749 2.3.1 asks for Basic. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** The HTTP Basic header of RFC 6749 2.3.1: id and secret form-encoded first, then base64. */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`;
}

/**
 * Exchanges the client credentials for a token (client-credentials grant): one attempt, bounded by
 * the client's `timeoutMs` and by `signal`. The calls waiting for the token retry it under their
 * own policy, so that a token wait is never longer than the call that needs it allows. The bound's
 * timer keeps no process alive: a background refresh runs on after the calls that started it.
 */
export async function fetchToken(
  transport: Transport,
  credentials: ClientCredentials,
  signal: AbortSignal,
  now: () => number = Date.now,
): Promise<StoredToken> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (credentials.clientAuth === 'basic') {
    headers.authorization = basicAuthorization(credentials.clientId, credentials.clientSecret);
  } else {
    form.set('client_id', credentials.clientId);
    form.set('client_secret', credentials.clientSecret);
  }
  if (credentials.scope) form.set('scope', credentials.scope);
  const call = new Call<TokenResponse>(
    transport,
    {
      method: 'POST',
      path: TOKEN_PATH,
      headers,
      body: form.toString(),
      scopes: [],
      schema: tokenResponseSchema,
    },
    { signal },
  );

  // The validity counts from before the request: the token may have been issued at its start.
  const issuedAt = now();
  const deadline = call.begin({ unref: true });
  let response: RawResponse;
  try {
    response = await call.send();
  } finally {
    deadline.clear();
  }
  // The OAuth shape is the endpoint's answer to a bad request or credential (400, 401); a 429 or
  // 5xx is an outage, typed by status so that it is retried, whatever its body says.
  if (response.status === 400 || response.status === 401) {
    const json = parseJson(response.text);
    const oauth = oauthErrorBodySchema.safeParse(json.ok ? json.value : undefined);
    if (oauth.success) {
      const redact = call.redaction();
      const { error, error_description: description } = oauth.data;
      throw oauthErrorFor(
        response.status,
        redact(error),
        description === undefined ? undefined : redact(description),
      );
    }
  }
  const answer = await call.settle(response);
  // `expires_in` is authoritative: a short one costs a token request per call, never a token
  // presented after the service said it died. Trusting less than a huge one only costs an
  // earlier refresh; trusting it would put an expiry past what dates and stores hold (1e308 s is
  // Infinity in milliseconds).
  const expiresIn = Math.min(answer.expires_in ?? DEFAULT_EXPIRES_IN_SEC, MAX_TRUSTED_LIFETIME_SEC);
  const scope = answer.scope ?? credentials.scope ?? '';
  return {
    accessToken: answer.access_token,
    issuedAt,
    expiresAt: issuedAt + expiresIn * 1000,
    scopes: scope.split(' ').filter(Boolean),
  };
}
