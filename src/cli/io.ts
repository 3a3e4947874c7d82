/** The process edges a command may touch, so tests and main wire them. */
export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Arguments after the program name, as typed. */
  argv: string[];
  /** Calls `first` on the first Ctrl-C/SIGTERM; a second one exits at once. Returns an unsubscribe. */
  onInterrupt(first: () => void): () => void;
}
