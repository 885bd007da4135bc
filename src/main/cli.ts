import { loadConfig, type Config } from '../config';
import { exitCodeOf, kindOf } from '../errors';
import { USAGE, UsageError } from './usage';

// The casework CLI, and the container's entry point. Each command's module is loaded only when
// that command runs, so `casework worker` loads neither the demo nor the benches.

type Out = (line: string) => void;
type Command = (args: string[], config: Config, out: Out) => Promise<number>;

// require() rather than import(): casework compiles to CommonJS, where a lazy require is the
// plain way to load a module on first use.

const COMMANDS: Record<string, () => Command> = {
  ticket: () => (require('./commands/investigation') as typeof import('./commands/investigation')).ticketCommand,
  status: () => (require('./commands/investigation') as typeof import('./commands/investigation')).statusCommand,
  transcript: () => (require('./commands/transcript') as typeof import('./commands/transcript')).transcriptCommand,
  'drain-check': () => (require('./commands/drain-check') as typeof import('./commands/drain-check')).drainCheckCommand,
  approve: () => {
    const { decideCommand } = require('./commands/investigation') as typeof import('./commands/investigation');
    return (args, config, out) => decideCommand('approved', args, config, out);
  },
  deny: () => {
    const { decideCommand } = require('./commands/investigation') as typeof import('./commands/investigation');
    return (args, config, out) => decideCommand('denied', args, config, out);
  },
  resume: () => (require('./commands/hand-off') as typeof import('./commands/hand-off')).resumeCommand,
  reply: () => (require('./commands/hand-off') as typeof import('./commands/hand-off')).replyCommand,
  worker: () => {
    const { runWorker } = require('../worker') as typeof import('../worker');
    return async (_args, config, out) => {
      await runWorker(config, out);
      return 0;
    };
  },
  bundle: () => {
    const { writeWorkflowBundle } = require('../worker') as typeof import('../worker');
    return async (args, _config, out) => {
      const [path, ...extra] = args;
      if (!path || extra.length) throw new UsageError('bundle needs one output file, e.g. casework bundle dist/workflow-bundle.js');
      await writeWorkflowBundle(path);
      out(`workflow bundle written to ${path}; run workers with CASEWORK_WORKFLOW_BUNDLE=${path}`);
      return 0;
    };
  },
  serve: () => (require('./commands/serve') as typeof import('./commands/serve')).serveCommand,
  console: () => (require('./commands/console') as typeof import('./commands/console')).consoleCommand,
  'codec-server': () => (require('./commands/codec-server') as typeof import('./commands/codec-server')).codecServerCommand,
  demo: () => {
    const { demoShopOf, runDemo } = require('../dev/demo/run') as typeof import('../dev/demo/run');
    return async (args, config, out) => {
      await runDemo(config, out, { keepRunning: process.stdout.isTTY && !process.env.CI, shop: demoShopOf(args) });
      return 0;
    };
  },
  desk: () => (require('./commands/desk') as typeof import('./commands/desk')).deskCommand,
  seed: () => (require('./commands/seed') as typeof import('./commands/seed')).seedCommand,
  dev: () => (require('./commands/dev') as typeof import('./commands/dev')).devCommand,
  memory: () => (require('./commands/memory') as typeof import('./commands/memory')).memoryCommand,
  erase: () => (require('./commands/erasure') as typeof import('./commands/erasure')).eraseCommand,
  export: () => (require('./commands/erasure') as typeof import('./commands/erasure')).exportCommand,
  keys: () => (require('./commands/erasure') as typeof import('./commands/erasure')).keysCommand,
  schedules: () => (require('./commands/schedules') as typeof import('./commands/schedules')).schedulesCommand,
  bench: () => (require('./commands/bench') as typeof import('./commands/bench')).benchCommand,
};

/** True for a command-line mistake: the usage is printed after the message. */
function isUsageMistake(error: unknown): boolean {
  const e = error as { name?: string; code?: string };
  return e.name === 'UsageError' || Boolean(e.code?.startsWith('ERR_PARSE_ARGS'));
}

/** Runs one casework command; returns its exit code (0 done, 1 casework could not do it, 2 the request was wrong). */
export async function main(argv: string[], out: Out = console.log, err: Out = console.error): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === 'help' || command === '--help') {
    out(USAGE);
    return command ? 0 : 2;
  }
  try {
    const load = COMMANDS[command];
    if (!load) {
      err(`error: unknown command "${command}"`);
      err(USAGE);
      return 2;
    }
    const config = loadConfig();
    return await load()(args, config, out);
  } catch (error) {
    // Only the message's own lines: a library's message can carry a stack, which no user should read.
    err(
      `error: ${String((error as Error)?.message ?? error)
        .split('\n')
        .filter((line) => !/^\s+at /.test(line))
        .join('\n')}`,
    );
    if (isUsageMistake(error)) {
      err(USAGE);
      return 2;
    }
    // A bug, not a mistake of the caller's: the stack is for whoever reads the log.
    if (kindOf(error) === undefined && process.env.CASEWORK_DEBUG === 'true') err((error as Error).stack ?? '');
    return exitCodeOf(error);
  }
}

if (require.main === module) {
  // Started by bin/casework with an IPC channel: when the wrapper dies, even by SIGKILL, the
  // channel closes, and this process stops as if told to (a worker drains, then exits).
  // The channel itself must not keep a finished command alive.
  if (process.send) {
    process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
    process.channel?.unref();
  }
  // A reader that stops early (`casework status … | head -5`) closes the pipe: what is left to
  // print has no one to read it, so the command ends here with 0, and the exit hooks stop what it
  // started (a dev server: src/dev/env/dev-server.ts). Without a listener the EPIPE would crash it.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
