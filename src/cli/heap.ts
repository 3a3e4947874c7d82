/**
 * Imported first by main.ts, so it runs before the other modules load: V8's
 * young generation then stays at its first size instead of growing to 32 MiB
 * during start-up, and that memory goes to the sort's budget instead
 * (docs/ordering.md#the-default-budget). On the node command line the same
 * flag does not take; set here it does.
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
