import { PartnerError } from './base.js';

/**
 * The token endpoint refused to issue a token (`{error, error_description}`, RFC 6749 5.2).
 * `error` is the OAuth code; unknown codes keep their string.
 *
 * @example
 * catch (e) { if (e instanceof OAuthError) log.error(`token refused: ${e.error}`, e.errorDescription); }
 */
export class OAuthError extends PartnerError {
  override name: string = 'OAuthError';
  readonly status: number;
  readonly error: string;
  readonly errorDescription: string | undefined;
  /**
   * On an `InvalidClientError`: how long from now every call fails at once with this error and
   * sends nothing (the backoff starts at 1 s and doubles to 60 s while the credential is refused).
   */
  readonly retryAfterMs: number | undefined = undefined;

  constructor({
    status,
    error,
    errorDescription,
  }: {
    status: number;
    error: string;
    errorDescription?: string | undefined;
  }) {
    super(`Token request failed (${status} ${error})${errorDescription ? `: ${errorDescription}` : ''}`);
    this.status = status;
    this.error = error;
    this.errorDescription = errorDescription;
  }
}

/**
 * 401 `invalid_client`: unknown client id, wrong secret, or the credential or organisation is not active.
 *
 * @example
 * catch (e) { if (e instanceof InvalidClientError) alerts.page(`check the credential; next try in ${e.retryAfterMs} ms`); }
 */
export class InvalidClientError extends OAuthError {
  override name = 'InvalidClientError';
}

/**
 * 400 `invalid_scope`: a requested scope (or wildcard) is not fully held by the credential.
 *
 * @example
 * catch (e) { if (e instanceof InvalidScopeError) log.error('the credential lacks a scope of `scope`', e.errorDescription); }
 */
export class InvalidScopeError extends OAuthError {
  override name = 'InvalidScopeError';
}

/**
 * 400 `unsupported_grant_type`: the token endpoint does not take client credentials.
 *
 * @example
 * catch (e) { if (e instanceof UnsupportedGrantTypeError) log.error('baseUrl is not a Partner Service Interface'); }
 */
export class UnsupportedGrantTypeError extends OAuthError {
  override name = 'UnsupportedGrantTypeError';
}

/**
 * 400 `invalid_request`: missing or malformed parameters.
 *
 * @example
 * catch (e) { if (e instanceof InvalidRequestError) log.error('token request refused', e.errorDescription); }
 */
export class InvalidRequestError extends OAuthError {
  override name = 'InvalidRequestError';
}

const OAUTH_CLASSES: Record<string, typeof OAuthError> = {
  invalid_client: InvalidClientError,
  invalid_scope: InvalidScopeError,
  unsupported_grant_type: UnsupportedGrantTypeError,
  invalid_request: InvalidRequestError,
};

export function oauthErrorFor(status: number, error: string, errorDescription?: string): OAuthError {
  const Class = OAUTH_CLASSES[error] ?? OAuthError;
  return new Class({ status, error, errorDescription });
}
