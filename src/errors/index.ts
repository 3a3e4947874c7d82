export { EXIT, ERROR_CODES, FlatloadError, isFlatloadError } from './codes.js';
export type { ErrorCode, ErrorContext, ExitCode } from './codes.js';
export { formatError, describeLocation, errorReport } from './format.js';
export type { ErrorReport } from './format.js';
export { maskInputUrl, maskUrlSecrets } from './mask.js';
