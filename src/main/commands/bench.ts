import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { pricesFromConfig } from '../../settings';
import { withDatabase } from '../database';
import { UsageError } from '../usage';

type Out = (line: string) => void;

function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${flag} must be a positive whole number, got "${value}"`);
  return Number(value);
}

/** `casework bench context|memory|overhead|desk|capacity|history`: the dev benches, loaded only when asked for. */
export async function benchCommand(args: string[], config: Config, out: Out): Promise<number> {
  const [which, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: {
      json: { type: 'boolean' },
      customers: { type: 'string' },
      notes: { type: 'string' },
      samples: { type: 'string' },
      steps: { type: 'string' },
      repeats: { type: 'string' },
      'no-workflow': { type: 'boolean' },
      deliveries: { type: 'string' },
      replies: { type: 'string' },
      cases: { type: 'string' },
      'cache-size': { type: 'string' },
      workers: { type: 'string' },
      'small-cache-only': { type: 'boolean' },
      sample: { type: 'string' },
      breakdown: { type: 'boolean' },
      concurrency: { type: 'string' },
      storm: { type: 'boolean' },
    },
  });
  if (which === 'context') {
    const { runContextBench } = require('../../dev/bench/context') as typeof import('../../dev/bench/context');
    runContextBench({ json: values.json, out, prices: pricesFromConfig(config) });
    if (!values['no-workflow']) {
      const { runWorkflowBench } = require('../../dev/bench/workflow') as typeof import('../../dev/bench/workflow');
      await runWorkflowBench(config, { out, json: values.json });
    }
    return 0;
  }
  if (which === 'memory') {
    const { runMemoryBench } = require('../../dev/bench/memory') as typeof import('../../dev/bench/memory');
    const sizes = { customers: count(values.customers, '--customers'), notesPerCustomer: count(values.notes, '--notes'), samples: count(values.samples, '--samples') };
    await withDatabase(config, (db) => runMemoryBench({ pool: db.admin, appPool: db.app, ...sizes, json: values.json, out }));
    return 0;
  }
  if (which === 'overhead') {
    const { runOverheadBench } = require('../../dev/bench/overhead') as typeof import('../../dev/bench/overhead');
    await runOverheadBench(config, { out, steps: count(values.steps, '--steps'), repeats: count(values.repeats, '--repeats'), json: values.json });
    return 0;
  }
  if (which === 'desk' && values.storm) {
    const { runDeskStorm } = require('../../dev/bench/desk-storm') as typeof import('../../dev/bench/desk-storm');
    await runDeskStorm(config, { out, deliveries: count(values.deliveries, '--deliveries'), json: values.json });
    return 0;
  }
  if (which === 'desk') {
    const { runDeskBench } = require('../../dev/bench/desk') as typeof import('../../dev/bench/desk');
    const concurrency = values.concurrency?.split(',').map((c) => count(c.trim(), '--concurrency') as number);
    await runDeskBench(config, { out, deliveries: count(values.deliveries, '--deliveries'), replies: count(values.replies, '--replies'), concurrency, json: values.json });
    return 0;
  }
  if (which === 'capacity') {
    const { runCapacityBench } = require('../../dev/bench/capacity') as typeof import('../../dev/bench/capacity');
    const cacheSize = count(values['cache-size'], '--cache-size');
    if (cacheSize !== undefined && cacheSize < 2) throw new UsageError(`--cache-size must be at least 2 (the SDK's smallest workflow cache), got ${cacheSize}`);
    await runCapacityBench(config, {
      out,
      cases: count(values.cases, '--cases'),
      cacheSize,
      sample: count(values.sample, '--sample'),
      concurrency: count(values.concurrency, '--concurrency'),
      workers: count(values.workers, '--workers'),
      smallCacheOnly: values['small-cache-only'],
      json: values.json,
    });
    return 0;
  }
  if (which === 'history') {
    const { runHistoryBench } = require('../../dev/bench/history') as typeof import('../../dev/bench/history');
    const steps = values.steps?.split(',').map((v) => count(v.trim(), '--steps') ?? 0);
    await runHistoryBench(config, { out, steps, json: values.json, breakdown: values.breakdown });
    return 0;
  }
  throw new UsageError(
    which ? `unknown benchmark "${which}" (context, memory, overhead, desk, capacity or history)` : 'name a benchmark: context, memory, overhead, desk, capacity or history',
  );
}
