export * from './api-error.js';
export { isPartnerError, PartnerError } from './base.js';
export * from './bridge-errors.js';
export * from './callback-errors.js';
export * from './client-errors.js';
export { type ApiErrorByCode, type ApiErrorFor, isApiError } from './guards.js';
export {
  InvalidClientError,
  InvalidRequestError,
  InvalidScopeError,
  OAuthError,
  UnsupportedGrantTypeError,
} from './oauth.js';
export { TrackerError, type TrackerErrorStage } from './tracker-errors.js';
