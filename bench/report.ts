import { cpus, totalmem } from 'node:os';

export function machineDescription(serverVersion: string): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${serverVersion}`;
}
