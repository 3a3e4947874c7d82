/**
 * Progress is events: the loader emits them, reporters listen. The engine
 * never writes to the terminal.
 */
export type ConnectionState = 'idle' | 'loading' | 'checking' | 'committing' | 'isolating' | 'retrying';

export type LoadEvent =
  | {
      type: 'start';
      /** Decompressed input size when known up front (plain files). */
      totalBytes: number | undefined;
      jobs: number;
      table: string;
      strategy: string;
      resumedChunks: number;
      resumedBytes: number;
      resumedRows: number;
    }
  | { type: 'scan'; bytesScanned: number; chunksFound: number; done: boolean; totalBytes?: number }
  | { type: 'connection-state'; slot: number; state: ConnectionState; chunk?: number }
  | { type: 'chunk-start'; chunk: number; slot: number; startByte: number; endByte: number; records: number }
  | { type: 'chunk-bytes'; chunk: number; bytes: number }
  | {
      type: 'chunk-committed';
      chunk: number;
      slot: number;
      records: number;
      rowsLoaded: number;
      rejected: number;
      bytes: number;
      elapsedMs: number;
      atMs: number;
    }
  | { type: 'chunk-retry'; chunk: number; attempt: number; delayMs: number; reason: string }
  | { type: 'chunk-rolled-back'; chunk: number; reason: string }
  /** The streams are held between chunks (a replica lags, the primary is busy), or go on again. */
  | { type: 'throttle'; state: 'paused' | 'resumed'; reason: string; pausedMs: number }
  | { type: 'note'; message: string }
  | { type: 'warning'; message: string }
  | { type: 'done' };

export type LoadEventListener = (e: LoadEvent) => void;

export class EventHub {
  private readonly listeners: LoadEventListener[] = [];
  on(l: LoadEventListener): void {
    this.listeners.push(l);
  }
  emit(e: LoadEvent): void {
    for (const l of this.listeners) l(e);
  }
}
