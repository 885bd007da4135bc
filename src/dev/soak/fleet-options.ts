import { BadInputError } from '../../errors';
import { count, parseSoakArgs, type CommonSoakOptions } from './args';
import { MAX_COHORTS } from './cohorts';

/** How the fleet soak runs: its size, its faults and its ports. `kills` are SIGKILLs of a random casework process (server, console or worker), each restarted. */
export interface FleetSoakOptions extends CommonSoakOptions {
  /** Desk tickets opened, one investigation each. */
  cases: number;
  /** Seconds over which the tickets are opened; the faults fall in this window. */
  spreadSeconds: number;
}

/** The usage line of `npm run soak -- --fleet`. */
export const FLEET_USAGE =
  'usage: npm run soak -- --fleet [--cases N=15] [--spread SECONDS=90] [--kills K=8] [--outage-seconds 10-20] [--server-down-seconds 5-10] ' +
  '[--seed S] [--timeout MINUTES=15] [--keep] [--temporal-port 7490] [--ui-port 8490] [--postgres postgres://postgres@127.0.0.1:5432/postgres]';

/** Parses the fleet soak's command line (after --fleet). */
export function parseFleetOptions(argv: string[]): FleetSoakOptions {
  const args = parseSoakArgs(
    argv.filter((a) => a !== '--fleet'),
    ['cases', 'spread'],
    { kills: 8, outageSeconds: [10, 20], serverDownSeconds: [5, 10], timeoutMinutes: 15, temporalPort: 7490, uiPort: 8490 },
  );
  const { own } = args;
  const cases = count('cases', own.cases, 15, MAX_COHORTS);
  if (cases < 1) throw new BadInputError('--cases must be at least 1');
  const timeoutMs = args.timeoutMs();
  const spreadSeconds = count('spread', own.spread, 90, 3_600);
  if (spreadSeconds < 30) throw new BadInputError('--spread must be at least 30 seconds: the rollout, the outage and the dev-server restart fall inside it');
  return {
    cases,
    spreadSeconds,
    kills: args.kills(),
    outageSeconds: args.outageSeconds(),
    serverDownSeconds: args.serverDownSeconds(),
    seed: args.seed(),
    timeoutMs,
    keep: args.keep(),
    temporalPort: args.temporalPort(),
    uiPort: args.uiPort(),
    postgresUrl: args.postgresUrl(),
  };
}
