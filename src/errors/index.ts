export { EXIT, ERROR_CODES, FlatloadError, isFlatloadError } from './codes.js';
export type { ErrorCode, ErrorContext, ExitCode } from './codes.js';
export { formatError, describeLocation } from './format.js';
