import { endpointText, type Endpoint } from '../config/connection.js';

/**
 * Which node of a list new connections go to. All connections of a load go
 * to one node (every Galera node applies every write-set, so spreading gains
 * nothing: docs/scale-out.md#chunked-loads-one-node-or-spread);
 * when a connection to it fails, or it says it is not ready (1047), every
 * later connection goes to the next node, wrapping around so that a node
 * restarted meanwhile is tried again.
 */
export class NodeRouter {
  private index = 0;
  private readonly used: string[] = [];
  private readonly lost: string[] = [];

  private readonly listeners: Array<(lost: string, next: string) => void> = [];

  constructor(readonly nodes: readonly Endpoint[]) {}

  /**
   * Told each time the current node is given up: which one, and where
   * connections go now. Returns the way to stop listening (a load sharing an
   * export's router stops at its end).
   */
  onFailover(fn: (lost: string, next: string) => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  get current(): Endpoint {
    return this.nodes[this.index]!;
  }

  get clustered(): boolean {
    return this.nodes.length > 1;
  }

  /** A connection to `node` was opened. */
  connected(node: Endpoint): void {
    const key = endpointText(node);
    if (!this.used.includes(key)) this.used.push(key);
  }

  /**
   * `node` refused a connection, dropped one, or is not ready. Only a failure
   * of the current node moves on: several connections reporting the same
   * failure must not skip the next node too.
   */
  failed(node: Endpoint): void {
    const key = endpointText(node);
    if (!this.lost.includes(key)) this.lost.push(key);
    if (endpointText(this.current) !== key) return;
    this.index = (this.index + 1) % this.nodes.length;
    for (const fn of this.listeners) fn(key, endpointText(this.current));
  }

  /** Nodes connected to, and nodes lost, in the order it happened. */
  report(): { used: string[]; lost: string[] } {
    return { used: [...this.used], lost: [...this.lost] };
  }
}
