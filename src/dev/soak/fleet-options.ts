import { parseArgs } from 'node:util';
import { BadInputError } from '../../errors';
import { MAX_COHORTS } from './cohorts';
import { count, range } from './options';

/** How the fleet soak runs: its size, its faults and its ports. */
export interface FleetSoakOptions {
  /** Desk tickets opened, one investigation each. */
  cases: number;
  /** Seconds over which the tickets are opened; the faults fall in this window. */
  spreadSeconds: number;
  /** SIGKILLs of a random casework process (server, console or worker), each restarted. */
  kills: number;
  /** The Postgres outage's length in seconds (a random value in the range). */
  outageSeconds: [number, number];
  /** How long the dev server stays down when it is restarted. */
  serverDownSeconds: [number, number];
  seed: number;
  /** The whole soak stops (and fails) after this long. */
  timeoutMs: number;
  keep: boolean;
  temporalPort: number;
  uiPort: number;
  postgresUrl: string;
}

/** The usage line of `npm run soak -- --fleet`. */
export const FLEET_USAGE =
  'usage: npm run soak -- --fleet [--cases N=15] [--spread SECONDS=90] [--kills K=8] [--outage-seconds 10-20] [--server-down-seconds 5-10] ' +
  '[--seed S] [--timeout MINUTES=15] [--keep] [--temporal-port 7490] [--ui-port 8490] [--postgres postgres://postgres@127.0.0.1:5432/postgres]';

/** Parses the fleet soak's command line (after --fleet). */
export function parseFleetOptions(argv: string[]): FleetSoakOptions {
  const { values } = parseArgs({
    args: argv.filter((a) => a !== '--fleet'),
    options: {
      cases: { type: 'string' },
      spread: { type: 'string' },
      kills: { type: 'string' },
      'outage-seconds': { type: 'string' },
      'server-down-seconds': { type: 'string' },
      seed: { type: 'string' },
      timeout: { type: 'string' },
      keep: { type: 'boolean' },
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      postgres: { type: 'string' },
    },
  });
  const cases = count('cases', values.cases, 15, MAX_COHORTS);
  if (cases < 1) throw new BadInputError('--cases must be at least 1');
  const timeoutMinutes = Number(values.timeout ?? 15);
  if (!(timeoutMinutes > 0)) throw new BadInputError(`--timeout must be a positive number of minutes, not "${values.timeout}"`);
  const spreadSeconds = count('spread', values.spread, 90, 3_600);
  if (spreadSeconds < 30) throw new BadInputError('--spread must be at least 30 seconds: the rollout, the outage and the dev-server restart fall inside it');
  return {
    cases,
    spreadSeconds,
    kills: count('kills', values.kills, 8),
    outageSeconds: range('outage-seconds', values['outage-seconds'], [10, 20]),
    serverDownSeconds: range('server-down-seconds', values['server-down-seconds'], [5, 10]),
    seed: count('seed', values.seed, Math.floor(Math.random() * 1_000_000), 2 ** 31),
    timeoutMs: timeoutMinutes * 60_000,
    keep: Boolean(values.keep),
    temporalPort: count('temporal-port', values['temporal-port'], 7490, 65_535),
    uiPort: count('ui-port', values['ui-port'], 8490, 65_535),
    postgresUrl: values.postgres ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}
