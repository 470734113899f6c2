import type { ApiError, ErrorCode } from './api-error.js';
import { API_ERROR_BRAND, hasBrand, isPartnerError } from './base.js';

/**
 * True for an error answer of a data endpoint, optionally with a given `code`. Works across
 * duplicate copies of the package, where `instanceof` does not.
 *
 * @example
 * if (isApiError(e, 'INSUFFICIENT_BALANCE')) retryWithMaxAmount();
 * if (isApiError(e) && e.status === 503) scheduleRetry();
 */
export function isApiError(error: unknown, code?: ErrorCode): error is ApiError {
  if (!isPartnerError(error) || !hasBrand(error, API_ERROR_BRAND)) return false;
  // The SDK's own errors have plain fields; a branded look-alike whose `code` throws is not one.
  try {
    return code === undefined || (error as ApiError).code === code;
  } catch {
    return false;
  }
}
