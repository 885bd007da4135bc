import type { Config } from '../../config';
import { endpointCommand } from './serve';

type Out = (line: string) => void;

/**
 * `casework console [--port N] [--host H] [--open]`: the support team's console on its own
 * (docs/console.md): the /console pages and /healthz, none of the JSON routes, on
 * CASEWORK_CONSOLE_PORT (8090). Sign-in takes the same API keys as `casework serve`
 * (CASEWORK_API_KEYS), so it refuses to start without them unless open local mode is asked for.
 */
export function consoleCommand(args: string[], config: Config, out: Out): Promise<number> {
  return endpointCommand(args, config, out, {
    name: 'casework console',
    port: config.CASEWORK_CONSOLE_PORT,
    host: config.CASEWORK_CONSOLE_HOST,
    routes: 'console',
    whileDown: 'the inbox and timelines answer 503 until it does (customer memory still works)',
  });
}
