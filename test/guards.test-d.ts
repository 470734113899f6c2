/**
 * `isApiError(e, code)` narrows to the class of a known code, so the fields that code carries
 * type-check after the guard; an unknown code narrows to `ApiError` with its `code: string`.
 * Checked by `npm run typecheck` (tsconfig includes test/).
 */
import { expectTypeOf } from 'vitest';
import {
  type ApiError,
  type InsufficientBalanceError,
  type IntentNotFoundError,
  isApiError,
  type UserNotFoundError,
  type ValidationFailedError,
  type WalletNotLinkedError,
} from '../src/index.js';

declare const error: unknown;

if (isApiError(error, 'INSUFFICIENT_BALANCE')) {
  expectTypeOf(error).toEqualTypeOf<InsufficientBalanceError>();
  expectTypeOf(error.shortfall).toEqualTypeOf<bigint>();
}
if (isApiError(error, 'VALIDATION_FAILED')) {
  expectTypeOf(error).toEqualTypeOf<ValidationFailedError>();
  expectTypeOf(error.errors).toEqualTypeOf<string[]>();
}
if (isApiError(error, 'USER_NOT_FOUND')) expectTypeOf(error).toEqualTypeOf<UserNotFoundError>();
if (isApiError(error, 'WALLET_NOT_LINKED')) expectTypeOf(error).toEqualTypeOf<WalletNotLinkedError>();
if (isApiError(error, 'INTENT_NOT_FOUND')) expectTypeOf(error).toEqualTypeOf<IntentNotFoundError>();
if (isApiError(error, 'ROUTE_PAUSED')) {
  expectTypeOf(error).toExtend<ApiError>();
  expectTypeOf(error.code).toEqualTypeOf<string>();
}
if (isApiError(error)) expectTypeOf(error).toEqualTypeOf<ApiError>();
