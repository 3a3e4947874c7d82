/** One engine variant's load in `flatload bench`: what it loaded, how fast, how big. */
export interface BenchResult {
  variant: string;
  engine: string;
  strategy: string;
  planned: boolean;
  rows: number;
  seconds: number;
  rowsPerSec: number;
  mbPerSec: number;
  onDiskBytes: number | null;
  onDiskSource: string;
  ratio: number | null;
  ok: boolean;
  error: string | null;
  timeline: Array<[number, number]>;
}
