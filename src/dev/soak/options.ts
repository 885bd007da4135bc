import { BadInputError } from '../../errors';
import { count, parseSoakArgs, type CommonSoakOptions } from './args';
import { MAX_COHORTS } from './cohorts';

/** How a soak runs: how much load, how many faults of each kind, and for how long at most. */
export interface SoakOptions extends CommonSoakOptions {
  investigations: number;
  /** Postgres outages; they alternate between "just after approvals" and "at a refund request". */
  outages: number;
  /** How an outage drops open connections: reset (a crash), close (a shutdown), or alternate, starting with reset. */
  cutMode: 'reset' | 'close' | 'alternate';
  /** Dev-server restarts (stop, wait, start on the same database file). */
  serverRestarts: number;
  proxyPort: number;
}

/** The usage line of `npm run soak`. */
export const SOAK_USAGE =
  'usage: npm run soak -- [--investigations N=30] [--kills K=20] [--outages O=2] [--outage-seconds 20-60] ' +
  '[--cut-mode reset|close|alternate] [--server-restarts R=2] [--server-down-seconds 5-20] [--seed S] [--timeout MINUTES=20] [--keep] ' +
  '[--temporal-port 7308] [--ui-port 8308] [--proxy-port 17301] [--postgres postgres://postgres@127.0.0.1:5432/postgres]';

/** Parses the soak's command line. */
export function parseSoakOptions(argv: string[]): SoakOptions {
  const args = parseSoakArgs(argv, ['investigations', 'outages', 'cut-mode', 'server-restarts', 'proxy-port'], {
    kills: 20,
    outageSeconds: [20, 60],
    serverDownSeconds: [5, 20],
    timeoutMinutes: 20,
    temporalPort: 7308,
    uiPort: 8308,
  });
  const { own } = args;
  const investigations = count('investigations', own.investigations, 30, MAX_COHORTS);
  if (investigations < 1) throw new BadInputError('--investigations must be at least 1');
  const timeoutMs = args.timeoutMs();
  const cutMode = own['cut-mode'] ?? 'alternate';
  if (cutMode !== 'reset' && cutMode !== 'close' && cutMode !== 'alternate') throw new BadInputError(`--cut-mode must be reset, close or alternate, not "${cutMode}"`);
  return {
    investigations,
    cutMode,
    kills: args.kills(),
    outages: count('outages', own.outages, 2),
    outageSeconds: args.outageSeconds(),
    serverRestarts: count('server-restarts', own['server-restarts'], 2),
    serverDownSeconds: args.serverDownSeconds(),
    seed: args.seed(),
    timeoutMs,
    keep: args.keep(),
    temporalPort: args.temporalPort(),
    uiPort: args.uiPort(),
    proxyPort: count('proxy-port', own['proxy-port'], 17301, 65_535),
    postgresUrl: args.postgresUrl(),
  };
}
