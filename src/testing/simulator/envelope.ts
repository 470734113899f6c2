/*
 * The service's answers: JSON bodies, the error envelope `{ statusCode, error, code, message }`
 * and the OAuth error body of the token endpoint. Every concern throws an `HttpFailure`; the HTTP
 * surface turns it into the envelope, so an admin API can answer its mistakes the same way.
 */

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  415: 'Unsupported Media Type',
  503: 'Service Unavailable',
};

export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function failure(error: HttpFailure): Response {
  return jsonResponse(
    {
      statusCode: error.status,
      error: STATUS_TEXT[error.status] ?? 'Error',
      code: error.code,
      message: error.message,
      ...error.extra,
    },
    error.status,
    error.headers,
  );
}

export function oauthError(
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse({ error, error_description: description }, status, {
    'cache-control': 'no-store',
    ...headers,
  });
}

/** The 400 VALIDATION_FAILED the service answers to a request it cannot take, listing every reason. */
export function validation(errors: string[]): HttpFailure {
  return new HttpFailure(400, 'VALIDATION_FAILED', errors.join('; '), { errors });
}
