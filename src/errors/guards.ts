import type { ApiError, ErrorCode } from './api-error.js';
import { API_ERROR_BRAND, isPartnerError } from './base.js';

/**
 * True for an error answer of a data endpoint, optionally with a given `code`. Works across
 * duplicate copies of the package, where `instanceof` does not.
 *
 * @example
 * if (isApiError(e, 'INSUFFICIENT_BALANCE')) retryWithMaxAmount();
 * if (isApiError(e) && e.status === 503) scheduleRetry();
 */
export function isApiError(error: unknown, code?: ErrorCode): error is ApiError {
  if (!isPartnerError(error) || (error as unknown as Record<symbol, unknown>)[API_ERROR_BRAND] !== true)
    return false;
  return code === undefined || (error as ApiError).code === code;
}
