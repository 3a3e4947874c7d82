import type { JobIdentity } from '../checkpoint/identity.js';
import type { ConnectionOptions } from '../config/connection.js';
import type { LoadOptions } from '../config/loadOptions.js';
import type { Session } from '../db/connect.js';
import type { ControlConnection } from '../db/control.js';
import type { FlatloadError } from '../errors/index.js';
import type { InputSource } from '../input/source.js';
import type { Prepared } from '../introspect/target.js';
import type { ExecuteResult } from '../load/execute.js';
import type { StreamGate } from '../load/runner.js';
import type { SharedConnections } from '../load/sharedConnections.js';
import type { Throttle } from '../load/throttle.js';
import type { LoadPlan } from '../plan/types.js';
import type { RoutePlan } from '../plan/route.js';
import type { EventHub } from '../report/events.js';
import type { LoadReport } from '../report/summary.js';
import type { ShardMap } from '../shard/map.js';

/**
 * A table of an export. Being one changes three things: the connections
 * come from the export's session (TLS settled once for every table, one
 * node list whose failovers every table follows), the export has already
 * fitted the streams to the account's connection limit (this table's plan
 * does not again), and other tables share this thread (an in-memory sort
 * goes to the sort worker).
 */
export interface InExport {
  session: Session;
  /** The loading streams the tables share chunk by chunk; absent when nothing loads (`flatload plan DIR`). */
  streams?: { gate: StreamGate; connections: SharedConnections } | undefined;
  /** The export's one throttle, spanning every table (the export reports it). */
  throttle?: Throttle | undefined;
  /** How many times the export listed this file for this table before (a part of its own each time). */
  repeat?: number | undefined;
}

/** One load as a job is asked for: the options, where to connect, and what it is part of. */
export interface JobRequest {
  o: LoadOptions;
  conn: ConnectionOptions;
  events: EventHub;
  signal: AbortSignal | undefined;
  /** The command line that resumes this load (credentials removed). */
  resumeCommand: string;
  /** A table of an export, if it is one. */
  inExport?: InExport | undefined;
  /** The job's identity from the load's own: a routed share's also names the shard map and its backend. */
  identityOf?: ((own: JobIdentity) => JobIdentity) | undefined;
}

/** What the job reads before anything else, once: its control connection, its input, the server's and the table's facts. */
export interface Opened {
  session: Session;
  control: ControlConnection;
  source: InputSource;
  prep: Prepared;
}

export interface JobResult extends ExecuteResult {
  /** For a Spider table: how its rows reached the backends, and its shard map. */
  route?: { plan: RoutePlan; map: ShardMap };
}

export type TargetKind = 'single' | 'galera' | 'spider-front' | 'spider-direct';

/**
 * Where a table's rows go, resolved once from the table's facts. The ladder
 * (table.ts) calls `prepare` before the job is held, `load` to run it,
 * `report` and `verify` once the rows are in; `close` at the end, always.
 */
export interface LoadTarget {
  readonly kind: TargetKind;
  /** Before the job is held, on its control connection (a Galera node reads causally). */
  prepare(): Promise<void>;
  /** The whole job: the table ladder (single, Galera, Spider front) or the routed one (direct). */
  load(): Promise<JobResult>;
  /** What the target adds to the report of rows loaded (a cluster's nodes); `reachable`: the server still answers. */
  report(report: LoadReport, reachable: boolean): Promise<void>;
  /** --verify, once the rows are in: an error when the copies disagree. */
  verify(report: LoadReport, plan: LoadPlan): Promise<FlatloadError | undefined>;
  close(): void;
}
