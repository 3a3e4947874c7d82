/**
 * One progress display for a whole export: every table's load emits its own
 * events; this listens to all of them and shows the export's committed bytes
 * and rows, tables done, and each table in flight — one line every few
 * seconds (cron, logs), or on a terminal one bar for the export and one per
 * table loading. Notes and warnings print in every mode, prefixed with the
 * table, as for one file.
 */
import cliProgress from 'cli-progress';
import { EventHub } from '../report/events.js';
import { fmtInt, fmtMB } from '../report/format.js';

interface TableProgress {
  bytes: number;
  rows: number;
  totalBytes: number;
  state: 'waiting' | 'loading' | 'done' | 'stopped';
  bar?: cliProgress.SingleBar;
}

export type ExportProgressMode = 'bar' | 'lines' | 'none';

export class ExportProgress {
  private readonly tables = new Map<string, TableProgress>();
  private timer: NodeJS.Timeout | undefined;
  private readonly multi: cliProgress.MultiBar | undefined;
  private readonly overall: cliProgress.SingleBar | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    mode: ExportProgressMode,
    tables: ReadonlyArray<{ key: string; sizeBytes: number }>,
    everyMs = 5000,
  ) {
    for (const t of tables) this.tables.set(t.key, { bytes: 0, rows: 0, totalBytes: t.sizeBytes, state: 'waiting' });
    if (mode === 'bar') {
      this.multi = new cliProgress.MultiBar(
        { stream: out, format: '{name} {bar} {pct} | {detail}', hideCursor: true, clearOnComplete: false, barsize: 30, fps: 5 },
        cliProgress.Presets.shades_classic,
      );
      this.overall = this.multi.create(Math.max(1, this.totalBytes()), 0, this.overallPayload());
      this.timer = setInterval(() => this.refresh(), 500);
      this.timer.unref();
    } else if (mode === 'lines') {
      this.timer = setInterval(() => out.write(`progress: ${this.line()}\n`), everyMs);
      this.timer.unref();
    }
  }

  private totalBytes(): number {
    let n = 0;
    for (const t of this.tables.values()) n += t.totalBytes;
    return n;
  }

  private width(): number {
    return Math.max(6, ...[...this.tables.keys()].map((k) => k.length));
  }

  private overallPayload(): Record<string, string> {
    const { bytes, total, pct, rows, done } = this.totals();
    return { name: 'export'.padEnd(this.width()), pct, detail: `${fmtMB(bytes)}/${fmtMB(total)} | ${fmtInt(rows)} rows | tables ${done}/${this.tables.size} done` };
  }

  private tablePayload(key: string, t: TableProgress): Record<string, string> {
    return { name: key.padEnd(this.width()), pct: pctOf(t.bytes, t.totalBytes), detail: `${fmtInt(t.rows)} rows` };
  }

  private write(text: string): void {
    if (this.multi) this.multi.log(text);
    else this.out.write(text);
  }

  /** The event hub one of the table's loads reports to. */
  hubFor(key: string): EventHub {
    const hub = new EventHub();
    const t = this.tables.get(key)!;
    hub.on((e) => {
      if (e.type === 'start') {
        t.state = 'loading';
        t.bytes += e.resumedBytes;
        t.rows += e.resumedRows;
        if (this.multi && !t.bar) t.bar = this.multi.create(Math.max(1, t.totalBytes), 0, this.tablePayload(key, t));
      } else if (e.type === 'chunk-committed') {
        t.bytes += e.bytes;
        t.rows += e.rowsLoaded;
      } else if (e.type === 'note' || e.type === 'warning') {
        this.write(`${e.type === 'warning' ? 'warning: ' : ''}${key}: ${e.message}\n`);
      }
    });
    return hub;
  }

  /** The hub the export's one throttle reports its pauses to: they hold every table, so they print without one. */
  throttleHub(): EventHub {
    const hub = new EventHub();
    hub.on((e) => {
      if (e.type === 'throttle') this.write(e.state === 'paused' ? `paused: ${e.reason}\n` : 'resumed\n');
    });
    return hub;
  }

  finished(key: string, ok: boolean, rows: number): void {
    const t = this.tables.get(key)!;
    t.state = ok ? 'done' : 'stopped';
    t.rows = rows;
    if (ok) t.bytes = Math.max(t.bytes, t.totalBytes);
    if (t.bar) {
      this.multi!.remove(t.bar);
      t.bar = undefined;
    }
    this.write(`${key}: ${ok ? 'done' : 'stopped'}, ${fmtInt(rows)} rows\n`);
    this.refresh();
  }

  private refresh(): void {
    if (!this.multi) return;
    this.overall!.update(Math.min(this.totals().bytes, this.totalBytes()), this.overallPayload());
    for (const [key, t] of this.tables) t.bar?.update(Math.min(t.bytes, t.totalBytes), this.tablePayload(key, t));
  }

  private totals(): { bytes: number; total: number; pct: string; rows: number; done: number } {
    let bytes = 0;
    let rows = 0;
    let done = 0;
    for (const t of this.tables.values()) {
      bytes += Math.min(t.bytes, t.totalBytes);
      rows += t.rows;
      if (t.state === 'done') done++;
    }
    const total = this.totalBytes();
    return { bytes, total, pct: pctOf(bytes, total), rows, done };
  }

  /** `37.5% (12.0 MB of 32.0 MB), 120,000 rows, tables 2/5 done; loading: orders 40%, users 5%`. */
  line(): string {
    const { bytes, total, pct, rows, done } = this.totals();
    const loading = [...this.tables].filter(([, t]) => t.state === 'loading').map(([key, t]) => `${key} ${pctOf(t.bytes, t.totalBytes)}`);
    return `${pct} (${fmtMB(bytes)} of ${fmtMB(total)}), ${fmtInt(rows)} rows, tables ${done}/${this.tables.size} done${loading.length ? `; loading: ${loading.join(', ')}` : ''}`;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.multi) {
      this.refresh();
      this.multi.stop();
    }
  }
}

/** Compressed inputs are counted by their compressed size, so a share is capped at 100%. */
function pctOf(bytes: number, total: number): string {
  return `${total > 0 ? Math.min(100, (100 * bytes) / total).toFixed(1) : '0.0'}%`;
}
