import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Who made a scratch directory (a spooled input, a sort's spill directory):
 * a marker file in it names the host, the boot, the process id and that
 * process's start time. A later run removes a directory whose owner is
 * gone — same host, and another boot, or no such process, or a process of
 * that id started at another time (the id was reused). A directory of
 * another host, without a marker, or of a live owner is never touched.
 */
export interface ScratchOwner {
  host: string;
  /** /proc/sys/kernel/random/boot_id, where there is one. */
  boot: string | null;
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat), where there is one. */
  start: string | null;
}

export const OWNER_FILE = '.flatload-owner';
/** The names of flatload's scratch directories: spooled inputs, spill directories, and ones being removed. */
const SCRATCH = /^flatload-(spool|order|chunks|stale)-/;

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
export function processStart(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

let self: ScratchOwner | undefined;

export function thisProcess(): ScratchOwner {
  self ??= { host: hostname(), boot: readText('/proc/sys/kernel/random/boot_id'), pid: process.pid, start: processStart(process.pid) };
  return self;
}

/** Marks `dir` as this process's. */
export function writeOwner(dir: string): void {
  writeFileSync(join(dir, OWNER_FILE), `${JSON.stringify(thisProcess())}\n`, { mode: 0o600 });
}

export function readOwner(dir: string): ScratchOwner | undefined {
  const text = readText(join(dir, OWNER_FILE));
  if (text === null) return undefined;
  try {
    const o = JSON.parse(text) as Partial<ScratchOwner>;
    if (typeof o.host !== 'string' || typeof o.pid !== 'number' || !Number.isInteger(o.pid) || o.pid <= 0) return undefined;
    return { host: o.host, boot: typeof o.boot === 'string' ? o.boot : null, pid: o.pid, start: typeof o.start === 'string' ? o.start : null };
  } catch {
    return undefined;
  }
}

export interface ProcessProbe {
  /** Whether a process of this id exists (one of another user counts). */
  alive(pid: number): boolean;
  /** Its start time, as ScratchOwner.start, or null when it cannot be read. */
  start(pid: number): string | null;
}

export const systemProbe: ProcessProbe = {
  alive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  start: processStart,
};

/** Whether the owner of a directory is certainly gone. Pure but for the probe; in doubt, no. */
export function ownerGone(owner: ScratchOwner | undefined, here: Pick<ScratchOwner, 'host' | 'boot'>, probe: ProcessProbe): boolean {
  if (owner === undefined || owner.host !== here.host) return false;
  if (owner.boot !== null && here.boot !== null && owner.boot !== here.boot) return true;
  if (!probe.alive(owner.pid)) return true;
  const now = owner.start === null ? null : probe.start(owner.pid);
  return owner.start !== null && now !== null && now !== owner.start;
}

function ownedDirectory(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && (process.getuid === undefined || st.uid === process.getuid());
  } catch {
    return false;
  }
}

/**
 * Removes the scratch directories in `parent` whose owner is gone, but those
 * `kept` names (the runs this very job's killed run left, which it reuses);
 * returns their paths. Each is first renamed aside (atomic: a rerun that
 * claims the same directory at the same moment wins or loses whole) and its
 * marker read again there; a directory claimed meanwhile is put back.
 */
export function removeStaleScratch(parent: string, probe: ProcessProbe = systemProbe, kept: (name: string) => boolean = () => false): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const here = thisProcess();
  const removed: string[] = [];
  for (const name of names) {
    const path = join(parent, name);
    if (!SCRATCH.test(name) || kept(name) || !ownedDirectory(path) || !ownerGone(readOwner(path), here, probe)) continue;
    // A spill directory being taken over (spillDir.ts) still holds the old owner's marker: its claimer's id is in the name.
    const claimer = /\.claim-(\d+)$/.exec(name);
    if (claimer && probe.alive(Number(claimer[1]))) continue;
    const aside = join(parent, `flatload-stale-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      renameSync(path, aside);
    } catch {
      continue;
    }
    if (!ownerGone(readOwner(aside), here, probe)) {
      try {
        renameSync(aside, path);
      } catch {
        // The name was taken meanwhile: what is aside belongs to a live process that made another; leave it be.
      }
      continue;
    }
    rmSync(aside, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}
