import type { LoadOptions } from '../config/loadOptions.js';
import type { Prepared } from '../introspect/target.js';
import { decodeRejects, RejectFile, type RejectRecord } from '../report/rejectFile.js';
import type { DoneChunk } from '../checkpoint/store.js';
import { headerBytes } from './header.js';

/**
 * Every rejected row of the load — an earlier run's (from the bookkeeping)
 * and this run's — and the reject file they go to, appended as chunks
 * commit and rewritten in input order at the end.
 */
export class RejectKeeper {
  private file: RejectFile | undefined;
  private readonly all: RejectRecord[] = [];

  constructor(
    private readonly path: string,
    private readonly head: () => Buffer | undefined,
    private readonly o: LoadOptions,
    private readonly prep: Prepared,
    earlier: Iterable<DoneChunk>,
  ) {
    for (const d of earlier) this.all.push(...decodeRejects(d.rejects, d.index));
  }

  private sink(): RejectFile {
    this.file ??= new RejectFile(this.path, headerBytes(this.head(), this.o, this.prep), this.o.format.linesTerminatedBy);
    return this.file;
  }

  keep(recs: RejectRecord[]): void {
    if (recs.length === 0) return;
    this.all.push(...recs);
    this.sink().append(recs);
  }

  get count(): number {
    return this.all.length;
  }

  /** Rewrites the file in input order and flushes it, when any row was rejected; what the report names. */
  finish(): { path: string; log: string; rows: number } | undefined {
    if (!this.file && this.all.length === 0) return undefined;
    this.sink().rewrite(this.all);
    return { path: this.sink().path, log: this.sink().logPath, rows: this.all.length };
  }
}
