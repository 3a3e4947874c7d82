/**
 * Every load is a job (docs/jobs.md): open the control connection and the
 * input, read the server's and the table's facts once, resolve the target
 * from them, and let the target run the ladder.
 */
import type { ConnectionOptions } from '../config/connection.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openConnection, openSession } from '../db/connect.js';
import { ControlConnection } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { openAnyInput } from '../input/open.js';
import { prepareLoad } from '../introspect/target.js';
import type { EventHub } from '../report/events.js';
import { resolveTarget } from './targets/resolve.js';
import type { InExport, JobRequest, JobResult, LoadTarget } from './types.js';

/** One job: `routed` false for a backend's share, which is loaded as the table it is. */
async function runJob(req: JobRequest, routed: boolean): Promise<JobResult> {
  const source = await openAnyInput(req.o.file, req.o.s3);
  const ex = req.inExport;
  const { session, conn: first } = ex ? { session: ex.session, conn: await openConnection(ex.session) } : await openSession(req.conn, { localInfile: false });
  const control = new ControlConnection(first, session);
  let target: LoadTarget;
  try {
    const prep = await prepareLoad(req.o, session, control.connection, source);
    target = await resolveTarget(req, { session, control, source, prep }, routed, (share) => runJob(share, false));
  } catch (err) {
    await control.end();
    throw toFlatloadError(err, 'loading');
  }
  return byChunksIfBulkGivenUp(req, await target.load(), (again) => runJob(again, routed));
}

/**
 * MariaDB's bulk insert given up (a row it would skip or change, a duplicate
 * found when it built the indexes) rolled back the whole load, so the table is as it was: the same
 * load runs again without it, by chunks, where bad rows are isolated and
 * named (or go to the reject file). Its run is discarded (--restart); the
 * report's time counts both attempts.
 */
async function byChunksIfBulkGivenUp(req: JobRequest, first: JobResult, again: (req: JobRequest) => Promise<JobResult>): Promise<JobResult> {
  if (first.error?.code !== 'BULK_ABANDONED') return first;
  const note = `${first.error.message.split('\n')[0]} (${first.report.seconds.toFixed(2)} s in); the table was left as it was, and the load ran again by chunks`;
  req.events.emit({ type: 'note', message: note });
  const second = await again({ ...req, o: { ...req.o, bulkInsert: 'off', restart: true } });
  const r = second.report;
  r.notes.unshift(note);
  const slower = r.seconds / (r.seconds + first.report.seconds);
  r.seconds += first.report.seconds;
  r.rowsPerSec *= slower;
  r.mbPerSec *= slower;
  return second;
}

/**
 * Any load into one table: a single-file load, a table of an export
 * (`inExport`), on one server, a Galera cluster or a Spider table.
 */
export function runLoad(o: LoadOptions, conn: ConnectionOptions, events: EventHub, signal?: AbortSignal, resumeCommand = '', inExport?: InExport): Promise<JobResult> {
  return runJob({ o, conn, events, signal, resumeCommand, inExport }, true);
}
