import { FlatloadError } from '../errors/index.js';

/**
 * The --max-errors budget, shared by every connection. A chunk reserves its
 * rejects just before it commits, so two chunks cannot both slip under the
 * limit; a chunk that fails after reserving gives its reservation back.
 */
export class ErrorBudget {
  private used: number;
  constructor(
    readonly max: number,
    alreadyUsed = 0,
  ) {
    this.used = alreadyUsed;
  }

  get rejected(): number {
    return this.used;
  }

  /** Reserves n rejects or throws ROWS_REJECTED when that would exceed the budget. */
  reserve(n: number, where: { file: string; chunk: number; line?: number; byteOffset?: number }, detail: string): () => void {
    if (n === 0) return () => undefined;
    if (this.used + n > this.max) {
      throw new FlatloadError(
        'ROWS_REJECTED',
        `${this.used + n} rejected row(s) exceed --max-errors ${this.max}; the chunk was rolled back and the load stopped${detail ? `:\n${detail}` : ''}`,
        { ...where, hint: 'fix the rows (see the reject file for those already rejected) or raise --max-errors, then rerun to resume' },
      );
    }
    this.used += n;
    let released = false;
    return () => {
      if (!released) this.used -= n;
      released = true;
    };
  }
}
