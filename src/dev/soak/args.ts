import { parseArgs } from 'node:util';
import { BadInputError } from '../../errors';

// The command line both soaks share (`npm run soak` and `npm run soak -- --fleet`): the flags
// each takes for its faults, seed, time bound, kept files and where its dev server and Postgres
// are, read and checked in one place; each soak adds its own flags and defaults.

/** A whole number flag, from 0 to `max`; `fallback` when absent. */
export function count(name: string, text: string | undefined, fallback: number, max = 10_000): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new BadInputError(`--${name} must be a whole number from 0 to ${max}, not "${text}"`);
  return n;
}

/** A length in seconds ("20") or a range of them ("20-60"); `fallback` when absent. */
export function range(name: string, text: string | undefined, fallback: [number, number]): [number, number] {
  if (text === undefined) return fallback;
  const m = /^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?$/.exec(text);
  if (!m) throw new BadInputError(`--${name} must be seconds ("20") or a range ("20-60"), not "${text}"`);
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : Number(m[2]);
  if (max < min) throw new BadInputError(`--${name}: ${max} is less than ${min}`);
  return [min, max];
}

/** What every soak's command line sets. */
export interface CommonSoakOptions {
  kills: number;
  /** Each Postgres outage lasts a random number of seconds in this range. */
  outageSeconds: [number, number];
  /** How long the dev server stays down when it is restarted. */
  serverDownSeconds: [number, number];
  seed: number;
  /** The whole soak stops (and fails) after this long. */
  timeoutMs: number;
  /** Keep the database, the dev server's file and the logs for inspection. */
  keep: boolean;
  temporalPort: number;
  uiPort: number;
  postgresUrl: string;
}

/** A soak's defaults for the common flags. */
export interface CommonSoakDefaults {
  kills: number;
  outageSeconds: [number, number];
  serverDownSeconds: [number, number];
  timeoutMinutes: number;
  temporalPort: number;
  uiPort: number;
}

/** A parsed command line: each common option read and checked when asked for (a soak asks in the order it reports errors), and the soak's own flags as given. */
export type SoakArgs<K extends string> = { [F in keyof CommonSoakOptions]: () => CommonSoakOptions[F] } & { own: Partial<Record<K, string>> };

/**
 * Reads `argv`: the common flags with `defaults`, and the soak's `own` flags (each a string, for
 * the soak to check). A flag neither names is refused, as parseArgs refuses it.
 */
export function parseSoakArgs<K extends string>(argv: string[], own: readonly K[], defaults: CommonSoakDefaults): SoakArgs<K> {
  const { values }: { values: Record<string, string | boolean | undefined> } = parseArgs({
    args: argv,
    options: {
      ...Object.fromEntries(own.map((name) => [name, { type: 'string' as const }])),
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
  const text = (name: string) => values[name] as string | undefined;
  const ownValues: Partial<Record<K, string>> = {};
  for (const name of own) if (text(name) !== undefined) ownValues[name] = text(name);
  return {
    own: ownValues,
    kills: () => count('kills', text('kills'), defaults.kills),
    outageSeconds: () => range('outage-seconds', text('outage-seconds'), defaults.outageSeconds),
    serverDownSeconds: () => range('server-down-seconds', text('server-down-seconds'), defaults.serverDownSeconds),
    seed: () => count('seed', text('seed'), Math.floor(Math.random() * 1_000_000), 2 ** 31),
    timeoutMs: () => {
      const minutes = Number(text('timeout') ?? defaults.timeoutMinutes);
      if (!(minutes > 0)) throw new BadInputError(`--timeout must be a positive number of minutes, not "${text('timeout')}"`);
      return minutes * 60_000;
    },
    keep: () => Boolean(values.keep),
    temporalPort: () => count('temporal-port', text('temporal-port'), defaults.temporalPort, 65_535),
    uiPort: () => count('ui-port', text('ui-port'), defaults.uiPort, 65_535),
    postgresUrl: () => text('postgres') ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}
