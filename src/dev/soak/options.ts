import { parseArgs } from 'node:util';
import { BadInputError } from '../../errors';
import { MAX_COHORTS } from './cohorts';

/** How a soak runs: how much load, how many faults of each kind, and for how long at most. */
export interface SoakOptions {
  investigations: number;
  kills: number;
  /** Postgres outages; they alternate between "just after approvals" and "at a refund request". */
  outages: number;
  /** Each outage lasts a random number of seconds in this range. */
  outageSeconds: [number, number];
  /** Dev-server restarts (stop, wait, start on the same database file). */
  /** How an outage drops open connections: reset (a crash), close (a shutdown), or alternate, starting with reset. */
  cutMode: 'reset' | 'close' | 'alternate';
  serverRestarts: number;
  serverDownSeconds: [number, number];
  seed: number;
  /** The whole soak stops (and fails) after this long. */
  timeoutMs: number;
  /** Keep the database, the dev server's file and the logs for inspection. */
  keep: boolean;
  temporalPort: number;
  uiPort: number;
  proxyPort: number;
  postgresUrl: string;
}

/** The usage line of `npm run soak`. */
export const SOAK_USAGE =
  'usage: npm run soak -- [--investigations N=30] [--kills K=20] [--outages O=2] [--outage-seconds 20-60] ' +
  '[--cut-mode reset|close|alternate] [--server-restarts R=2] [--server-down-seconds 5-20] [--seed S] [--timeout MINUTES=20] [--keep] ' +
  '[--temporal-port 7308] [--ui-port 8308] [--proxy-port 17301] [--postgres postgres://postgres@127.0.0.1:5432/postgres]';

export function count(name: string, text: string | undefined, fallback: number, max = 10_000): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new BadInputError(`--${name} must be a whole number from 0 to ${max}, not "${text}"`);
  return n;
}

export function range(name: string, text: string | undefined, fallback: [number, number]): [number, number] {
  if (text === undefined) return fallback;
  const m = /^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?$/.exec(text);
  if (!m) throw new BadInputError(`--${name} must be seconds ("20") or a range ("20-60"), not "${text}"`);
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : Number(m[2]);
  if (max < min) throw new BadInputError(`--${name}: ${max} is less than ${min}`);
  return [min, max];
}

/** Parses the soak's command line. */
export function parseSoakOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      investigations: { type: 'string' },
      kills: { type: 'string' },
      outages: { type: 'string' },
      'outage-seconds': { type: 'string' },
      'cut-mode': { type: 'string' },
      'server-restarts': { type: 'string' },
      'server-down-seconds': { type: 'string' },
      seed: { type: 'string' },
      timeout: { type: 'string' },
      keep: { type: 'boolean' },
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      'proxy-port': { type: 'string' },
      postgres: { type: 'string' },
    },
  });
  const investigations = count('investigations', values.investigations, 30, MAX_COHORTS);
  if (investigations < 1) throw new BadInputError('--investigations must be at least 1');
  const timeoutMinutes = Number(values.timeout ?? 20);
  if (!(timeoutMinutes > 0)) throw new BadInputError(`--timeout must be a positive number of minutes, not "${values.timeout}"`);
  const cutMode = values['cut-mode'] ?? 'alternate';
  if (cutMode !== 'reset' && cutMode !== 'close' && cutMode !== 'alternate') throw new BadInputError(`--cut-mode must be reset, close or alternate, not "${cutMode}"`);
  return {
    investigations,
    cutMode,
    kills: count('kills', values.kills, 20),
    outages: count('outages', values.outages, 2),
    outageSeconds: range('outage-seconds', values['outage-seconds'], [20, 60]),
    serverRestarts: count('server-restarts', values['server-restarts'], 2),
    serverDownSeconds: range('server-down-seconds', values['server-down-seconds'], [5, 20]),
    seed: count('seed', values.seed, Math.floor(Math.random() * 1_000_000), 2 ** 31),
    timeoutMs: timeoutMinutes * 60_000,
    keep: Boolean(values.keep),
    temporalPort: count('temporal-port', values['temporal-port'], 7308, 65_535),
    uiPort: count('ui-port', values['ui-port'], 8308, 65_535),
    proxyPort: count('proxy-port', values['proxy-port'], 17301, 65_535),
    postgresUrl: values.postgres ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}
