import type {
  ApiError,
  ErrorCode,
  InsufficientBalanceError,
  IntentNotFoundError,
  KnownErrorCode,
  UserNotFoundError,
  ValidationFailedError,
  WalletNotLinkedError,
} from './api-error.js';
import { API_ERROR_BRAND, hasBrand, isPartnerError } from './base.js';

/** The class of the error each known code is answered with. */
export interface ApiErrorByCode {
  VALIDATION_FAILED: ValidationFailedError;
  USER_NOT_FOUND: UserNotFoundError;
  WALLET_NOT_LINKED: WalletNotLinkedError;
  INTENT_NOT_FOUND: IntentNotFoundError;
  INSUFFICIENT_BALANCE: InsufficientBalanceError;
}

/**
 * What `isApiError(e, code)` narrows to: the code's class when it is known, else an `ApiError`
 * whose `code` is a string (it matched one).
 */
export type ApiErrorFor<C extends ErrorCode> = C extends KnownErrorCode
  ? ApiErrorByCode[C]
  : ApiError & { readonly code: string };

/**
 * True for an error answer of a data endpoint, optionally with a given `code`; with a known code it
 * narrows to that code's class, so `e.shortfall` or `e.errors` type-check after it. Works across
 * duplicate copies of the package, where `instanceof` does not.
 *
 * @example
 * if (isApiError(e, 'INSUFFICIENT_BALANCE')) console.log(`short by ${e.shortfall}`);
 * if (isApiError(e) && e.status === 503) scheduleRetry();
 */
export function isApiError(error: unknown): error is ApiError;
export function isApiError<C extends ErrorCode>(error: unknown, code: C): error is ApiErrorFor<C>;
export function isApiError(error: unknown, code?: ErrorCode): error is ApiError {
  if (!isPartnerError(error) || !hasBrand(error, API_ERROR_BRAND)) return false;
  // The SDK's own errors have plain fields; a branded look-alike whose `code` throws is not one.
  try {
    return code === undefined || (error as ApiError).code === code;
  } catch {
    return false;
  }
}
