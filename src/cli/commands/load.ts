import { writeFileSync } from 'node:fs';
import { toLoadOptions, type LoadArgs } from '../../config/loadOptions.js';
import { EXIT, FlatloadError, type ExitCode } from '../../errors/index.js';
import { runLoad } from '../../job/run.js';
import { renderChart } from '../../report/chart.js';
import { EventHub } from '../../report/events.js';
import { makeReporter } from '../../report/reporters.js';
import { renderSummary } from '../../report/summary.js';
import { renderThrottleRules } from '../../report/throttle.js';
import { planJson, renderPlan } from '../../plan/explain.js';
import { renderRoute } from '../../plan/route.js';
import { connectionFromArgs, type ConnectionArgs } from '../connection.js';
import type { CliIo } from '../io.js';
import { resumeCommandLine } from '../resumeCommand.js';

export async function loadCommand(args: LoadArgs & ConnectionArgs & { include?: unknown; exclude?: unknown; rename?: unknown }, io: CliIo): Promise<ExitCode> {
  for (const flag of ['include', 'exclude', 'rename'] as const) {
    if (args[flag] !== undefined) throw new FlatloadError('USAGE', `--${flag} chooses tables of an export; a load with --table loads one file into one table`);
  }
  const options = toLoadOptions(args);
  const { options: conn, warnings } = await connectionFromArgs(args, io.cwd, io.env);
  for (const w of warnings) io.stderr.write(`warning: ${w}\n`);

  const events = new EventHub();
  const reporter = makeReporter(options.json && options.progress === 'auto' ? 'lines' : options.progress, io.stderr);
  events.on((e) => reporter.onEvent(e));
  const stop = new AbortController();
  const offSignals = io.onInterrupt(() => stop.abort());
  let result;
  try {
    result = await runLoad(options, conn, events, stop.signal, resumeCommandLine(io.argv, io.cwd));
  } finally {
    offSignals();
    reporter.close();
  }
  const { report, error, route } = result;
  if (options.dryRun) {
    if (options.json) io.stdout.write(`${JSON.stringify({ ...report, plan: planJson(result.plan, result.facts, result.sql), ...(route ? { route: route.plan } : {}) })}\n`);
    else {
      if (route) io.stdout.write(`${renderRoute(route.plan, route.map)}\n${route.plan.route === 'direct' ? `each backend's share is planned on its backend; the plan for ${route.plan.backends[0]!.server ?? route.plan.backends[0]!.key}'s:\n` : ''}\n`);
      // The plan lists its own warnings; only notes from elsewhere (input, connection) follow it.
      const notes = report.notes.filter((n) => !result.plan.warnings.includes(n));
      io.stdout.write(`${renderPlan(result.plan, result.facts, result.sql)}\n${report.throttle ? `${renderThrottleRules(report.throttle)}\n` : ''}${notes.map((n) => `note: ${n}\n`).join('')}`);
    }
    return EXIT.ok;
  }
  report.timeline = reporter.state.timeline;
  if (options.chartPath) {
    writeFileSync(options.chartPath, renderChart([{ name: report.table, points: report.timeline }], { title: `flatload: ${report.table}` }));
  }
  const text = renderSummary(report);
  if (options.json) {
    // The plan that ran goes with the outcome, so a nightly job's log says how each load was done.
    io.stdout.write(`${JSON.stringify({ ...report, plan: planJson(result.plan, result.facts, result.sql), ...(route ? { route: route.plan } : {}) })}\n`);
    io.stderr.write(`${text}\n`);
  } else {
    io.stdout.write(`${text}\n`);
  }
  if (error) throw error;
  if (report.status === 'rejected-within-budget') return EXIT.rejectedWithinBudget;
  if (report.status === 'stopped') throw new FlatloadError('INTERNAL', 'load stopped without an error');
  return EXIT.ok;
}
