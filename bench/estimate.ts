/**
 * A rough duration for each bench mode, printed before it starts so a quiet
 * window can be planned. The per-row costs are loose figures from runs on a
 * 2-core machine (settling between runs included); they are for planning,
 * never results.
 */
import type { ScenarioId } from './comparison.js';
import { scaleEstimate } from './scale.js';

export type Mode = 'comparison' | 'strategies' | 'cluster' | 'engines' | 'export' | 'memory' | 'scale';

/** Seconds per row of one round of each scenario (every competitor once, writing back its dirty pages included). */
const SCENARIO_ROUND: Record<ScenarioId, number> = { innodb: 23e-6, 'innodb-small': 90e-6, myrocks: 16e-6, user3: 21e-6 };
/** Competitors per round in each scenario, without a --baseline. */
const SCENARIO_RUNS: Record<ScenarioId, number> = { innodb: 6, 'innodb-small': 6, myrocks: 5, user3: 6 };
/** Seconds every run costs whatever its rows: settling (a second of an idle server, sync) and the tool's start-up. */
const RUN_FIXED = 4;
/** One flatload run per row, for the back-to-back pair and a --baseline competitor. */
const FLATLOAD_RUN = 4e-6;

export interface EstimateInput {
  mode: Mode;
  rows: number;
  repeat: number;
  only: ScenarioId[];
  baseline: boolean;
  naiveSeconds: number;
  memoryGB: number;
}

export function estimateSeconds(e: EstimateInput): number {
  const serverStart = 15;
  switch (e.mode) {
    case 'comparison': {
      // Two input files generated, then per scenario its rounds (a baseline adds two flatload runs each) and the back-to-back pair.
      const perScenario = (id: ScenarioId): number => {
        const runs = e.repeat * (SCENARIO_RUNS[id] + (e.baseline ? 2 : 0)) + 2;
        return runs * RUN_FIXED + e.rows * (e.repeat * (SCENARIO_ROUND[id] + (e.baseline ? 2 * FLATLOAD_RUN : 0)) + 2 * FLATLOAD_RUN);
      };
      return 2 * serverStart + (2 * e.rows) / 1.5e6 + e.only.reduce((a, id) => a + perScenario(id), 0);
    }
    case 'export':
      return serverStart + (2 * e.rows) / 1.5e6 + e.repeat * ((3 + (e.baseline ? 1 : 0)) * RUN_FIXED + e.rows * (13e-6 + (e.baseline ? FLATLOAD_RUN + 2e-6 : 0)));
    case 'strategies':
      // 11 scenarios of 5–8 contenders each.
      return serverStart + e.repeat * (70 * RUN_FIXED + e.rows * 400e-6);
    case 'cluster':
      return 3 * serverStart + e.repeat * (3 * 2 + e.rows * 35e-6);
    case 'engines':
      return serverStart + e.rows * 60e-6;
    case 'memory':
      return serverStart + ((e.memoryGB * 1e9) / 37.4) * 2 * FLATLOAD_RUN * 2;
    case 'scale':
      return scaleEstimate(e.rows, e.repeat, e.naiveSeconds, { file: false, sorted: false });
  }
}
