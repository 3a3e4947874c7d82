import { availableParallelism } from 'node:os';
import { EXIT, FlatloadError, type ExitCode } from '../../errors/index.js';
import { renderExportReport } from '../../export/report.js';
import { renderThrottleRules } from '../../report/throttle.js';
import type { ExportArgs } from '../../export/stages.js';
import { executeExport } from '../../job/export.js';
import { connectionFromArgs, type ConnectionArgs } from '../connection.js';
import type { CliIo } from '../io.js';
import { resumeCommandLine } from '../resumeCommand.js';

export interface LoadCommandArgs extends Omit<ExportArgs, 'files'> {
  file?: string;
  more?: string[];
}

/**
 * Whether the command names a whole export rather than one file into one
 * table: several files, a manifest, or one input without --table — a
 * directory, a glob, or a file (its table is its name, as with mysqlimport).
 * One input with --table is the single-file load (which says so when that
 * input is a directory).
 */
export function isExportCommand(a: LoadCommandArgs): boolean {
  if (a.manifest !== undefined || (a.more?.length ?? 0) > 0) return true;
  return a.file !== undefined && a.file !== '-' && a.table === undefined;
}

export async function exportCommand(a: LoadCommandArgs & ConnectionArgs, io: CliIo): Promise<ExitCode> {
  if (a.table !== undefined) {
    throw new FlatloadError('USAGE', '--table names the one table of a single-file load; an export takes its tables from the file names or a --manifest');
  }
  if (a.chart !== undefined) throw new FlatloadError('USAGE', '--chart is for a single-file load');
  if (a.expectRows !== undefined || a.expectChecksum !== undefined) {
    throw new FlatloadError('USAGE', '--expect-rows and --expect-checksum are for a single-file load: an export checks each table against its manifest\'s "rows" and "checksum" or mydumper\'s metadata file');
  }
  if (a.rejectFile !== undefined) throw new FlatloadError('USAGE', 'an export writes one reject file per table: use --reject-dir');
  const files = a.file === undefined ? [] : [a.file, ...(a.more ?? [])];
  if (files.includes('-')) throw new FlatloadError('USAGE', 'standard input (-) cannot be part of an export');
  const { options: conn, warnings } = await connectionFromArgs(a, io.cwd, io.env);
  for (const w of warnings) io.stderr.write(`warning: ${w}\n`);
  const stop = new AbortController();
  const offSignals = io.onInterrupt(() => stop.abort());
  let result;
  try {
    result = await executeExport({ ...a, files }, conn, {
      cwd: io.cwd,
      stderr: io.stderr,
      signal: stop.signal,
      resumeCommand: resumeCommandLine(io.argv, io.cwd),
      clientCpus: availableParallelism(),
    });
  } finally {
    offSignals();
  }
  const { report, plans, error } = result;
  if (report.status === 'dry-run') {
    if (a.json) io.stdout.write(`${JSON.stringify({ ...report, plans: plans.map((p) => ({ table: p.table, plan: p.json, text: p.json === null ? p.text : undefined })) })}\n`);
    else io.stdout.write(`${plans.map((p) => p.text).join('\n\n')}\n\n${report.throttle ? `${renderThrottleRules(report.throttle)}\n` : ''}${report.notes.map((n) => `note: ${n}\n`).join('')}`);
    return EXIT.ok;
  }
  const text = renderExportReport(report);
  if (a.json) {
    io.stdout.write(`${JSON.stringify(report)}\n`);
    io.stderr.write(`${text}\n`);
  } else io.stdout.write(`${text}\n`);
  if (error) throw error;
  return report.status === 'rejected-within-budget' ? EXIT.rejectedWithinBudget : EXIT.ok;
}
