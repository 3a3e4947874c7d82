/**
 * One progress display for a whole export: every table's load emits its own
 * events; this listens to all of them and prints one line every few seconds
 * — the export's committed bytes and rows, tables done, and each table in
 * flight — plus the tables' notes and warnings, prefixed with the table.
 */
import { EventHub } from '../report/events.js';
import { fmtInt, fmtMB } from '../report/format.js';

interface TableProgress {
  bytes: number;
  rows: number;
  totalBytes: number;
  state: 'waiting' | 'loading' | 'done' | 'stopped';
}

export class ExportProgress {
  private readonly tables = new Map<string, TableProgress>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream | undefined,
    tables: ReadonlyArray<{ key: string; sizeBytes: number }>,
    everyMs = 5000,
  ) {
    for (const t of tables) this.tables.set(t.key, { bytes: 0, rows: 0, totalBytes: t.sizeBytes, state: 'waiting' });
    if (out) {
      this.timer = setInterval(() => out.write(`progress: ${this.line()}\n`), everyMs);
      this.timer.unref();
    }
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
      } else if (e.type === 'chunk-committed') {
        t.bytes += e.bytes;
        t.rows += e.rowsLoaded;
      } else if (e.type === 'note' || e.type === 'warning') {
        this.out?.write(`${e.type === 'warning' ? 'warning: ' : ''}${key}: ${e.message}\n`);
      }
    });
    return hub;
  }

  finished(key: string, ok: boolean, rows: number): void {
    const t = this.tables.get(key)!;
    t.state = ok ? 'done' : 'stopped';
    t.rows = rows;
    t.bytes = Math.max(t.bytes, t.totalBytes);
    this.out?.write(`${key}: ${ok ? 'done' : 'stopped'}, ${fmtInt(rows)} rows\n`);
  }

  /** `37.5% (12.0 MB of 32.0 MB), 120,000 rows, tables 2/5 done; loading: orders 40%, users 5%`. */
  line(): string {
    let bytes = 0;
    let total = 0;
    let rows = 0;
    let done = 0;
    const loading: string[] = [];
    for (const [key, t] of this.tables) {
      bytes += Math.min(t.bytes, t.totalBytes);
      total += t.totalBytes;
      rows += t.rows;
      if (t.state === 'done') done++;
      if (t.state === 'loading') loading.push(`${key} ${t.totalBytes > 0 ? Math.min(100, (100 * t.bytes) / t.totalBytes).toFixed(0) : '0'}%`);
    }
    const pct = total > 0 ? ((100 * bytes) / total).toFixed(1) : '0.0';
    return `${pct}% (${fmtMB(bytes)} of ${fmtMB(total)}), ${fmtInt(rows)} rows, tables ${done}/${this.tables.size} done${loading.length ? `; loading: ${loading.join(', ')}` : ''}`;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
