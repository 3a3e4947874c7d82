/**
 * What the throttles did to a load (--max-rate, --replica/--max-lag,
 * --max-threads-running): the rules it applied and how long it waited for
 * each. Pure: the load stage fills it in, reports print it.
 */
export interface ThrottleReport {
  /** Each throttle as `flatload plan` states it. */
  rules: string[];
  /** Replicas as checked before the load: name, address and what SHOW SLAVE STATUS said then. */
  replicas: Array<{ name: string; address: string; lagSeconds: number | null; state: string }>;
  /** Time with every stream held between chunks by a replica's lag or Threads_running. */
  pausedSeconds: number;
  /** Pauses begun. */
  pauses: number;
  /** Seconds paused per cause (`replica r1 lag`, `Threads_running`); a pause with two causes counts for both. */
  causes: Array<{ cause: string; seconds: number }>;
  /** Time chunks waited to keep to --max-rate, summed over the streams that waited. */
  rateWaitSeconds: number;
}

/** The plan's lines for the throttles: what will slow the load, and what each replica said when checked. */
export function renderThrottleRules(t: ThrottleReport): string {
  return ['throttle:', ...t.rules.map((r) => `  ${r}`)].join('\n');
}

/** The report's line: how long the load paused and why, and how long --max-rate held chunks back. */
export function renderThrottleSummary(t: ThrottleReport): string {
  const causes = t.causes.map((c) => `${c.cause} ${c.seconds.toFixed(1)} s`).join(', ');
  const paused = t.pauses === 0 ? 'never paused' : `paused ${t.pausedSeconds.toFixed(1)} s in ${t.pauses} pause${t.pauses === 1 ? '' : 's'} (${causes})`;
  return `  throttle: ${paused}${t.rateWaitSeconds > 0 ? `; --max-rate held chunks back ${t.rateWaitSeconds.toFixed(1)} s` : ''}`;
}
