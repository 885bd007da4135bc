import { BadInputError } from '../errors';

/** The command line was wrong; the CLI prints the message and its usage, exit code 2. */
export class UsageError extends BadInputError {}

/** The one positional argument a command takes, or a UsageError with `message`. */
export function onlyPositional(positionals: string[], message: string): string {
  const [first] = positionals;
  if (positionals.length !== 1 || first === undefined) throw new UsageError(message);
  return first;
}

/** Every casework command, shown by `casework help` and on a usage error. */
export const USAGE = `usage: casework <command>

  ticket <event.json|-> [--wait] [--json]   start an investigation or send it a follow-up
  status <workflowId> [--json] [--steps]     where an investigation stands
  transcript <workflowId> [--json]           the whole conversation, word for word, from the transcript log
  approve <workflowId> --request <id> --approver <name> [--reason <text>]
  deny    <workflowId> --request <id> --approver <name> [--reason <text>]
  resume <workflowId> --by <name> [--note <text>]   a case that needs a person carries on
  reply  <workflowId> --by <name> --text <reply>     a person answers the customer of such a case
  drain-check [--task-queue <q>] [--json]    running investigations that would not replay on this release (docs/deploy.md)
  worker                                     run a worker (Temporal at TEMPORAL_ADDRESS)
  bundle <file>                              prebuild the workflow bundle (CASEWORK_WORKFLOW_BUNDLE)
  serve [--port <n>]                         run the ticket-event HTTP endpoint
  console [--port <n>] [--host <h>]          run the support team's console (docs/console.md)
  codec-server [--port <n>] [--host <h>]     decode payloads for the web UI and temporal --codec-endpoint
  demo                                       the dispute and Priya's two conversations, end to end
  dev [--db-port <n>]                        dev server, Postgres with the demo shop data and a worker, until Ctrl-C
  seed                                       load the demo shop data into DATABASE_URL (or the embedded Postgres)
  desk parked [--all] | desk map --desk <d> --requester <r> --customer <id> --by <name> | desk discard --id <n> --by <name> --reason <text>
  memory show|correct|forget --customer <id> ...
  erase --customer <id> --by <name> [--yes]  delete a customer's memory and destroy their data key (docs/payload-privacy.md)
  export --customer <id> [--out <file>]      everything held about a customer, one JSON document (subject access)
  keys rewrap                                re-wrap customer data keys under the newest master key
  schedules apply                            create or update the retention schedule (docs/operations.md)
  bench context [--json] | bench memory [--customers <n>] [--notes <n>] [--json]
  bench desk [--deliveries <n>] [--replies <n>] [--concurrency 1,8] [--json] | bench desk --storm [--deliveries <n per desk>] [--json]
  bench overhead [--steps <n>] [--repeats <n>] | bench history [--steps 30,200,500] [--breakdown] [--json]
  bench capacity [--cases <n>] [--cache-size <n>] [--sample <n>] [--concurrency <n>] [--workers <n>] [--small-cache-only] [--json]`;
