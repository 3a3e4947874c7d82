/**
 * The one error vocabulary. Every expected failure is a FlatloadError with a
 * code from this table; the code decides the exit status, so the README's
 * exit-code table and the code cannot drift apart.
 */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  rejectedWithinBudget: 3,
  stopped: 4,
  input: 5,
  connection: 6,
  target: 7,
  busy: 8,
  mismatch: 9,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const ERROR_CODES = {
  USAGE: EXIT.usage,
  CONFIG: EXIT.usage,
  INPUT_NOT_FOUND: EXIT.input,
  INPUT_UNREADABLE: EXIT.input,
  INPUT_MALFORMED: EXIT.input,
  /** The input changed while it was being loaded. */
  INPUT_CHANGED: EXIT.input,
  /** A file flatload writes (reject file, spooled input) cannot be written. */
  OUTPUT_UNWRITABLE: EXIT.input,
  CONNECTION_REFUSED: EXIT.connection,
  ACCESS_DENIED: EXIT.connection,
  TLS: EXIT.connection,
  UNKNOWN_DATABASE: EXIT.target,
  UNKNOWN_TABLE: EXIT.target,
  UNKNOWN_COLUMN: EXIT.target,
  MISSING_PRIVILEGE: EXIT.target,
  LOCAL_INFILE_DISABLED: EXIT.target,
  UNSUPPORTED: EXIT.target,
  SERVER_ERROR: EXIT.stopped,
  CONNECTION_LOST: EXIT.stopped,
  ROWS_REJECTED: EXIT.stopped,
  INTERRUPTED: EXIT.stopped,
  /**
   * MariaDB's empty-table bulk insert was given up and rolled back whole (a row it would skip or change, a duplicate
   * found when the indexes are built, the path not taken): the job loads again by chunks (job/run.ts), so a user sees it only in a note.
   */
  BULK_ABANDONED: EXIT.stopped,
  /** The spill directory of an out-of-core sort: no room, or a write failed. */
  SPILL: EXIT.stopped,
  /** A throttle's pause (replica lag, Threads_running) outlasted --max-pause. */
  THROTTLED: EXIT.stopped,
  /** Other sessions held a table a quick exclusive statement (TRUNCATE, the swap's RENAME) needed for longer than --max-pause. */
  LOCK_WAIT: EXIT.stopped,
  RESUME_MISMATCH: EXIT.usage,
  /** Another flatload process holds this load's job lock. */
  JOB_RUNNING: EXIT.busy,
  /** A loaded table's row count or checksum differs from what the exporter recorded (--expect-rows, --expect-checksum, export metadata). */
  EXPECTATION_MISMATCH: EXIT.mismatch,
  INTERNAL: EXIT.internal,
} as const satisfies Record<string, ExitCode>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorContext {
  /** Input file as the user named it. */
  file?: string;
  /** 1-based physical line in the input. */
  line?: number;
  /** 0-based byte offset in the (decompressed) input. */
  byteOffset?: number;
  /** Chunk index, 0-based. */
  chunk?: number;
  /** `db`.`table` as written by the user. */
  table?: string;
  /** Server error number, when the server raised it. */
  serverErrno?: number;
  /** What the user can do about it; printed on its own line. */
  hint?: string;
  /** The exact command that resumes a stopped load. */
  resumeCommand?: string;
}

export class FlatloadError extends Error {
  readonly code: ErrorCode;
  readonly context: ErrorContext;

  constructor(code: ErrorCode, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FlatloadError';
    this.code = code;
    this.context = context;
  }

  get exitCode(): ExitCode {
    return ERROR_CODES[this.code];
  }

  withContext(extra: ErrorContext): FlatloadError {
    return new FlatloadError(this.code, this.message, { ...this.context, ...extra }, { cause: this.cause });
  }
}

export function isFlatloadError(err: unknown): err is FlatloadError {
  // A code check rather than instanceof alone: a second copy of this module
  // (tests importing src while the CLI runs dist) must still be recognised.
  return (
    err instanceof FlatloadError ||
    (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'FlatloadError' && 'code' in err)
  );
}
