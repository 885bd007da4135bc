import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { decideRefund, deliverEvent, readStatus, transcriptLogOf } from '../src/client/investigations';
import { loadConfig, type Config } from '../src/config';
import { migrate } from '../src/db/migrate';
import { openDatabase, type Database } from '../src/db/pool';
import { seedDemoData } from '../src/dev/demo-data/seed';
import { startDevServer, type DevServer } from '../src/dev/env/dev-server';
import { startFaultProxy, type FaultProxy } from '../src/dev/fault-proxy';
import { cohortCustomer, cohortMessage, seedCohorts } from '../src/dev/soak/cohorts';
import { createDatabase, dropDatabase, viaProxy } from '../src/dev/soak/database';
import { readLedger, type Ledger } from '../src/dev/soak/ledger-checks';
import { parseSoakOptions, SOAK_USAGE, type SoakOptions } from '../src/dev/soak/options';
import { runFleetSoak } from '../src/dev/soak/fleet';
import { FLEET_USAGE, parseFleetOptions } from '../src/dev/soak/fleet-options';
import { seededRng } from '../src/dev/rng';
import { scanTranscript, type InfraFinding } from '../src/dev/soak/transcript-scan';
import { superviseWorker, type WorkerProcess } from '../src/dev/soak/worker-process';
import type { TicketEvent } from '../src/schemas/event';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { SA } from '../src/schemas/search-attributes';
import { investigationSettings } from '../src/settings';
import { connectClient } from '../src/temporal/client';

// The crash and fault soak (issue 10): N investigations against a worker run as its own
// process, while the worker is SIGKILLed and restarted, the Temporal dev server is restarted on
// its database file, and Postgres is cut (through a TCP proxy) just after approvals and at a
// refund request. Every refund request is approved as it appears, some twice. Once everything
// has settled it prints a table and exits 1 when an invariant broke. `npm run soak -- --help`.
// With --fleet, the fleet soak instead (src/dev/soak/fleet.ts): every process replicated.

const ROOT = resolve(__dirname, '..');
const STORIES = ['dana-5102', 'double-charge', 'priya-1', 'priya-2', 'wrong-address'] as const;
type Story = (typeof STORIES)[number];
const TERMINAL_FAILURES = new Set(['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const clock = () => `${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s`;
const say = (line: string) => console.log(`[soak ${clock()}] ${line}`);

/** One investigation the driver runs, from its first event to its settled outcome. */
interface Case {
  index: number;
  story: Story;
  ticketId: string;
  customerId: string;
  workflowId: string;
  created: TicketEvent;
  startAt: number;
  delivered: boolean;
  closeSent: boolean;
  busy: boolean;
  /** requestId -> whether the workflow accepted our approval. */
  approvals: Map<string, boolean>;
  approvalsInFlight: Set<string>;
  /** Requests we decided to approve a second time. */
  twice: Set<string>;
  /** Who approved each request first. */
  approvers: Map<string, string>;
  refundRequestSeen: boolean;
  sawNeedsHuman: boolean;
  settled?: { outcome: 'completed' | 'needs_human' | 'failed'; execution: string; at: number; lastReply: string | null };
}

/** What happened to the faults, for the table. */
interface FaultLog {
  kills: number;
  killsAtWorstMoment: number;
  outages: { kind: string; seconds: number; at: number }[];
  serverRestarts: { downSeconds: number; at: number }[];
  secondApprovals: { deduplicated: number; refused: number; accepted: number; failed: number };
  lastFaultEndedAt: number;
}

function exampleEvent(story: Story, index: number, runTag: string): { event: TicketEvent; customerId: string } {
  const raw = JSON.parse(readFileSync(join(ROOT, 'examples/events', `${story}.json`), 'utf8')) as TicketEvent;
  const ticketId = `${raw.ticketId}-${runTag}-${index}`;
  const customerId = cohortCustomer(index, raw.customerId);
  return {
    customerId,
    event: { ...raw, eventId: `evt-${ticketId}-1`, ticketId, customerId, message: cohortMessage(index, raw.message), receivedAt: new Date().toISOString() },
  };
}

/** Runs `fn` with a client deadline; any failure (server down, worker down) is `undefined`. */
async function attempt<T>(client: Client, ms: number, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await client.withDeadline(Date.now() + ms, fn);
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const options = parseSoakOptions(process.argv.slice(2));
  const rng = seededRng(options.seed);
  const runTag = `s${options.seed.toString(36)}`;
  const workflowPrefix = 'investigation-';
  const dbName = `casework_soak_${options.seed}_${process.pid}`;
  const scratch = mkdtempSync(join(tmpdir(), 'casework-soak-'));
  say(
    `seed ${options.seed}: ${options.investigations} investigations, ${options.kills} worker kills, ${options.outages} Postgres outages of ` +
      `${options.outageSeconds.join('-')} s, ${options.serverRestarts} dev-server restarts; timeout ${options.timeoutMs / 60_000} min; files in ${scratch}`,
  );

  const cleanups: (() => Promise<unknown>)[] = [];
  let server: DevServer | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    say(`${signal}: stopping`);
    void runCleanups().finally(() => process.exit(130));
  };
  let cleaned = false;
  const runCleanups = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const c of cleanups.reverse()) await c().catch((e: Error) => say(`cleanup: ${e.message}`));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A crash between here and the cleanups still stops the dev server (SIGTERM is sent synchronously).
  process.on('exit', () => void server?.stop());

  try {
    // ---- Postgres: a fresh database of our own, migrated and seeded, behind the fault proxy.
    const directUrl = await createDatabase(options.postgresUrl, dbName);
    cleanups.push(() => (options.keep ? Promise.resolve(say(`kept database ${dbName}`)) : dropDatabase(options.postgresUrl, dbName)));
    const base: Config = loadConfig({ ...process.env, DATABASE_URL: directUrl });
    const db: Database = await openDatabase(base);
    cleanups.push(() => db.close());
    await migrate(db.admin);
    await seedDemoData(db.admin);
    await seedCohorts(db.admin, options.investigations);
    const target = new URL(directUrl);
    const proxy: FaultProxy = await startFaultProxy({ port: options.proxyPort, target: { host: target.hostname, port: Number(target.port || 5432) } });
    cleanups.push(() => proxy.close());
    say(`database ${dbName} seeded (${options.investigations} cohorts); fault proxy on 127.0.0.1:${proxy.port}`);

    // ---- Temporal: a dev server on a database file, so it can be restarted without losing history.
    const dbFile = join(scratch, 'temporal.db');
    const startServer = async () => {
      const started = await startDevServer({ port: options.temporalPort, uiPort: options.uiPort, dbFile });
      if (!started.startedHere) throw new Error(`something already listens on ${started.address}; stop it or pass --temporal-port`);
      return started;
    };
    server = await startServer();
    cleanups.push(() => server?.stop() ?? Promise.resolve());
    say(`dev server at ${server.address} (UI ${server.uiUrl}), history in ${dbFile}`);

    // ---- The worker: its own process, from a prebuilt bundle so restarts take seconds.
    const bundle = join(scratch, 'workflow-bundle.js');
    const built = spawnSync(process.execPath, [join(ROOT, 'bin/casework'), 'bundle', bundle], { cwd: ROOT, encoding: 'utf8', env: process.env });
    if (built.status !== 0) throw new Error(`casework bundle failed: ${built.stderr || built.stdout}`);
    const taskQueue = `casework-soak-${runTag}`;
    const workerEnv: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: viaProxy(directUrl, proxy.port),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      CASEWORK_WORKFLOW_BUNDLE: bundle,
      CASEWORK_LOG_FORMAT: 'json',
      CASEWORK_LOG_LEVEL: 'warn',
      CASEWORK_METRICS_PORT: '0',
    };
    // The offline investigator is the model: no key, no network.
    delete workerEnv.ANTHROPIC_API_KEY;
    const workerLog = join(scratch, 'worker.log');
    const worker: WorkerProcess = superviseWorker(workerEnv, workerLog);
    cleanups.push(() => worker.stop());
    await worker.waitReady(120_000);
    say(`worker polling on "${taskQueue}" (log ${workerLog})`);

    const config: Config = { ...base, TEMPORAL_ADDRESS: server.address, TEMPORAL_TASK_QUEUE: taskQueue };
    const temporal = await connectClient(config, { pool: db.app });
    cleanups.push(() => temporal.close());
    const client = temporal.client;
    const settings = investigationSettings(config);

    // ---- The plan: starts spread out so the kills land while investigations are running.
    const spacingMs = Math.min(8_000, Math.max(500, (options.kills * 9_000) / options.investigations));
    const cases: Case[] = Array.from({ length: options.investigations }, (_, index) => {
      const story = STORIES[index % STORIES.length]!;
      const { event, customerId } = exampleEvent(story, index, runTag);
      return {
        index,
        story,
        ticketId: event.ticketId,
        customerId,
        workflowId: investigationId(event.ticketId),
        created: event,
        startAt: Date.now() + index * spacingMs,
        delivered: false,
        closeSent: false,
        busy: false,
        approvals: new Map(),
        approvalsInFlight: new Set(),
        twice: new Set(),
        approvers: new Map(),
        refundRequestSeen: false,
        sawNeedsHuman: false,
      };
    });
    const deadline = t0 + options.timeoutMs;
    const faults: FaultLog = {
      kills: 0,
      killsAtWorstMoment: 0,
      outages: [],
      serverRestarts: [],
      secondApprovals: { deduplicated: 0, refused: 0, accepted: 0, failed: 0 },
      lastFaultEndedAt: Date.now(),
    };
    const active = () => cases.some((c) => !c.settled);
    const outageKinds: string[] = Array.from({ length: options.outages }, (_, i) => (i % 2 === 0 ? 'after approvals' : 'at a refund request'));
    let outageInProgress = false;
    let serverDown = false;
    const pendingOutages = [...outageKinds];

    const cutPostgres = async (kind: string) => {
      if (outageInProgress) return;
      const i = pendingOutages.indexOf(kind);
      if (i < 0) return;
      pendingOutages.splice(i, 1);
      outageInProgress = true;
      const seconds = Math.round(rng.between(options.outageSeconds[0], options.outageSeconds[1]));
      const mode = options.cutMode === 'alternate' ? (faults.outages.length % 2 === 0 ? 'reset' : 'close') : options.cutMode;
      say(`FAULT Postgres cut for ${seconds} s (${kind}; open connections ${mode === 'reset' ? 'reset' : 'closed'})`);
      faults.outages.push({ kind: `${kind}, ${mode}`, seconds, at: Date.now() - t0 });
      await proxy.cut(mode);
      await sleep(seconds * 1000);
      await proxy.resume();
      faults.lastFaultEndedAt = Date.now();
      outageInProgress = false;
      say(`Postgres back after ${seconds} s`);
    };

    // Some kills are kept for the worst moments (just after an approval, at a refund request)
    // while an investigation may still reach one; random kills may not spend them.
    const reserve = Math.ceil(options.kills * 0.4);
    const worstMomentsAhead = () => cases.some((c) => !c.settled && !c.closeSent && c.approvals.size === 0);
    const killWorker = (why: string, worst: boolean) => {
      if (faults.kills >= options.kills || !worker.ready) return false;
      if (!worst && worstMomentsAhead() && faults.kills >= options.kills - reserve) return false;
      faults.kills += 1;
      if (worst) faults.killsAtWorstMoment += 1;
      const restartMs = Math.round(rng.between(0, 3_000));
      say(`FAULT SIGKILL worker #${faults.kills} (${why}); restart in ${(restartMs / 1000).toFixed(1)} s`);
      worker.kill(restartMs);
      void worker.waitReady(10 * 60_000).then(
        () => (faults.lastFaultEndedAt = Math.max(faults.lastFaultEndedAt, Date.now())),
        () => undefined,
      );
      return true;
    };

    // Approvals are held back while an "after approvals" outage is armed, so several go at once
    // and Postgres disappears right behind them, as it did in the incident.
    const held: { c: Case; requestId: string; amount: number; since: number }[] = [];
    const approvalBatch = Math.max(2, Math.round(options.investigations / 5));

    const approve = async (c: Case, requestId: string, amount: number) => {
      c.approvalsInFlight.add(requestId);
      const approver = amount > 50_000 ? 'duty-manager' : 'support-lead';
      try {
        const answer = await attempt(client, 15_000, () => decideRefund(client, c.workflowId, { requestId, decision: 'approved', approver, reason: 'soak' }));
        if (answer) {
          c.approvals.set(requestId, true);
          c.approvers.set(requestId, approver);
          say(`approved ${requestId} of ${c.ticketId}`);
          if (rng.chance(0.5)) killWorker('just after an approval', true);
          if (rng.chance(1 / 3)) c.twice.add(requestId);
        }
      } finally {
        c.approvalsInFlight.delete(requestId);
      }
    };

    const approveAgain = async (c: Case, requestId: string) => {
      c.twice.delete(requestId);
      // Half the repeats are the same decision resent (same update id), half a second person's.
      const first = c.approvers.get(requestId) ?? 'support-lead';
      const same = rng.chance(0.5);
      const approver = same ? first : first === 'duty-manager' ? 'support-lead' : 'duty-manager';
      try {
        await client.withDeadline(Date.now() + 15_000, () => decideRefund(client, c.workflowId, { requestId, decision: 'approved', approver, reason: 'soak (again)' }));
        // Accepted: fine when it is the very same update answered again; a second decision is a bug.
        if (same) faults.secondApprovals.deduplicated += 1;
        else faults.secondApprovals.accepted += 1;
      } catch (error) {
        const message = (error as Error).message;
        if (/already been decided|no refund is waiting|unknown refund request/.test(message)) faults.secondApprovals.refused += 1;
        else faults.secondApprovals.failed += 1;
      }
    };

    /** One look at one investigation: start it, approve, close, or record how it settled. */
    const visit = async (c: Case) => {
      if (!c.delivered) {
        if (Date.now() < c.startAt) return;
        const ok = await attempt(client, 10_000, () => deliverEvent(client, db.admin, c.created, { taskQueue, settings }));
        if (ok) {
          c.delivered = true;
          say(`started ${c.workflowId} (${c.story})`);
        }
        return;
      }
      const described = await attempt(client, 5_000, () => client.workflow.getHandle(c.workflowId).describe());
      if (!described) return;
      const saStatus = described.typedSearchAttributes.get(SA.status);
      if (saStatus === 'needs_human') c.sawNeedsHuman = true;
      if (described.status.name !== 'RUNNING') {
        if (described.status.name === 'CONTINUED_AS_NEW') return;
        let lastReply: string | null = null;
        if (described.status.name === 'COMPLETED') {
          const result = await attempt(client, 10_000, () => client.workflow.getHandle<() => Promise<InvestigationStatus>>(c.workflowId).result());
          if (!result) return;
          lastReply = result.lastReply;
        }
        const failed = TERMINAL_FAILURES.has(described.status.name);
        c.settled = { outcome: failed ? 'failed' : c.sawNeedsHuman ? 'needs_human' : 'completed', execution: described.status.name, at: Date.now(), lastReply };
        say(`settled ${c.workflowId}: ${described.status.name}`);
        return;
      }
      const status = await attempt(client, 5_000, () => readStatus(client, c.workflowId));
      if (!status) return;
      const state = status.status as string;
      if (state === 'needs_human') {
        c.sawNeedsHuman = true;
        c.settled = { outcome: 'needs_human', execution: 'RUNNING', at: Date.now(), lastReply: status.lastReply };
        say(`settled ${c.workflowId}: needs a human`);
        return;
      }
      const lastStep = status.steps[status.steps.length - 1];
      if (!status.pendingApproval && lastStep?.tools.includes('request_refund') && state === 'investigating' && !c.refundRequestSeen) {
        // request_refund is running: the worst moment to lose the database or the worker.
        c.refundRequestSeen = true;
        if (pendingOutages.includes('at a refund request') && !outageInProgress && !serverDown) void cutPostgres('at a refund request');
        else if (rng.chance(0.5)) killWorker('at a refund request', true);
      }
      const pending = status.pendingApproval;
      if (pending) {
        c.refundRequestSeen = true;
        const id = pending.request_id;
        if (!c.approvals.get(id) && !c.approvalsInFlight.has(id) && !held.some((h) => h.requestId === id)) {
          if (pendingOutages.includes('after approvals') && !outageInProgress) held.push({ c, requestId: id, amount: pending.amount_cents, since: Date.now() });
          else void approve(c, id, pending.amount_cents);
        }
        return;
      }
      for (const requestId of [...c.twice]) void approveAgain(c, requestId);
      if (state === 'waiting_for_customer' && status.lastReply && !c.closeSent) {
        const closed: TicketEvent = {
          eventId: `evt-${c.ticketId}-close`,
          type: 'ticket.closed',
          ticketId: c.ticketId,
          customerId: c.customerId,
          message: '',
          receivedAt: new Date().toISOString(),
        };
        if (await attempt(client, 10_000, () => deliverEvent(client, db.admin, closed, { taskQueue, settings }))) c.closeSent = true;
      }
    };

    // ---- Fault loops, all stopping by themselves once every investigation has settled.
    const killLoop = async () => {
      while (active() && faults.kills < options.kills && Date.now() < deadline) {
        await worker.waitReady(10 * 60_000).catch(() => undefined);
        await sleep(rng.between(1_500, 8_000));
        if (active() && cases.some((c) => c.delivered && !c.settled)) killWorker('at random', false);
      }
    };
    const serverLoop = async () => {
      const window = spacingMs * options.investigations + 30_000;
      const times = Array.from({ length: options.serverRestarts }, () => rng.between(15_000, window)).sort((a, b) => a - b);
      for (const at of times) {
        while (Date.now() - t0 < at || outageInProgress) {
          if (!active() || Date.now() > deadline) return;
          await sleep(500);
        }
        const down = Math.round(rng.between(options.serverDownSeconds[0], options.serverDownSeconds[1]));
        say(`FAULT dev server stopped for ${down} s`);
        serverDown = true;
        faults.serverRestarts.push({ downSeconds: down, at: Date.now() - t0 });
        await server!.stop();
        await sleep(down * 1000);
        server = await startServer();
        serverDown = false;
        faults.lastFaultEndedAt = Date.now();
        say('dev server back');
      }
    };
    const approvalReleaseLoop = async () => {
      while (active() && Date.now() < deadline) {
        await sleep(500);
        if (!held.length || outageInProgress) continue;
        const waiting = cases.filter((c) => c.delivered && !c.settled).length;
        const undelivered = cases.filter((c) => !c.delivered).length;
        const oldest = Date.now() - held[0]!.since;
        if (held.length >= approvalBatch || oldest > 30_000 || (undelivered === 0 && held.length >= waiting)) {
          const batch = held.splice(0);
          say(`approving ${batch.length} held refund requests at once, then cutting Postgres`);
          await Promise.all(batch.map((h) => approve(h.c, h.requestId, h.amount)));
          void cutPostgres('after approvals');
        }
      }
    };

    const loops = [killLoop(), serverLoop(), approvalReleaseLoop()];
    // ---- The driver: looks at every investigation about twice a second.
    // Each visit runs on its own: one investigation whose query hangs (no worker) holds up no other.
    while (active() && Date.now() < deadline) {
      for (const c of cases.filter((x) => !x.settled && !x.busy)) {
        c.busy = true;
        void visit(c)
          .catch((error: Error) => say(`driver: ${c.workflowId}: ${error.message}`))
          .finally(() => (c.busy = false));
      }
      await sleep(500);
    }
    const settledAt = Date.now();
    await Promise.all(loops);
    if (outageInProgress) await proxy.resume();

    // ---- Read what happened, straight from Postgres and from every history.
    await worker.waitReady(60_000).catch(() => undefined);
    const ledger = await readLedger(db.admin, workflowPrefix);
    const findings: InfraFinding[] = [];
    // The conversations kept by reference, read with the worker's payload codec.
    const log = transcriptLogOf(client, db.admin);
    let replies = 0;
    let toolResults = 0;
    for (const c of cases.filter((x) => x.delivered)) {
      const scan = await scanTranscript(client, c.workflowId, c.settled?.lastReply ?? null, log).catch((error: Error) => {
        say(`could not read the history of ${c.workflowId}: ${error.message}`);
        return undefined;
      });
      if (!scan) continue;
      replies += scan.replies;
      toolResults += scan.toolResults;
      findings.push(...scan.findings);
    }
    const ok = report(options, cases, faults, ledger, findings, { replies, toolResults, settledAt, worker, proxy });
    if (options.keep) say(`kept ${scratch} (worker log, dev-server database, bundle)`);
    else cleanups.unshift(async () => rmSync(scratch, { recursive: true, force: true }));
    return ok ? 0 : 1;
  } finally {
    await runCleanups();
  }
}

function report(
  options: SoakOptions,
  cases: Case[],
  faults: FaultLog,
  ledger: Ledger,
  findings: InfraFinding[],
  extra: { replies: number; toolResults: number; settledAt: number; worker: WorkerProcess; proxy: FaultProxy },
): boolean {
  const count = (f: (c: Case) => boolean) => cases.filter(f).length;
  const started = count((c) => c.delivered);
  const completed = count((c) => c.settled?.outcome === 'completed');
  const needsHuman = count((c) => c.settled?.outcome === 'needs_human');
  const failed = count((c) => c.settled?.outcome === 'failed');
  const unsettled = count((c) => c.delivered && !c.settled);
  const approvals = cases.reduce((n, c) => n + [...c.approvals.values()].filter(Boolean).length, 0);
  const approvedIds = new Set(cases.flatMap((c) => [...c.approvals.keys()]));
  const perApproval = [...approvedIds].map((id) => ledger.byRequest.find((r) => r.request_id === id)?.refunds ?? 0);
  const exactlyOne = perApproval.filter((n) => n === 1).length;
  const unpaid = perApproval.filter((n) => n === 0).length;
  const casesOverOne = [...ledger.casesByWorkflow.values()].filter((n) => n > 1).length;
  const completedWithoutCase = cases.filter((c) => c.settled?.execution === 'COMPLETED' && !ledger.casesByWorkflow.get(c.workflowId)).length;
  const duplicates =
    ledger.requestsPerToolUseOverOne + ledger.investigationsWithSeveralRequests + ledger.refundsPerApprovalOverOne + casesOverOne + faults.secondApprovals.accepted;
  // A story whose investigations sometimes file a refund request and sometimes do not lost some.
  const requesting = new Set(ledger.byRequest.map((r) => r.workflow_id));
  const refundStories = new Set(cases.filter((c) => requesting.has(c.workflowId)).map((c) => c.story));
  const lostRequests = cases.filter((c) => c.delivered && refundStories.has(c.story) && !requesting.has(c.workflowId));
  const replyFindings = findings.filter((f) => f.where === 'reply');
  const modelFindings = findings.filter((f) => f.where === 'model input');
  // A worker that refuses to start while Postgres is down exits with its own message ("error: …");
  // anything else (an unhandled 'error' event, a thrown error) is a crash.
  const crashes = [...extra.worker.exitReasons].filter(([reason]) => !/^(error:|casework worker:)/.test(reason)).reduce((n, [, k]) => n + k, 0);
  const lastSettle = Math.max(...cases.map((c) => c.settled?.at ?? extra.settledAt));
  const settleAfterFault = Math.max(0, lastSettle - faults.lastFaultEndedAt) / 1000;

  const rows: [string, string, boolean | null][] = [
    ['investigations started', String(started), started === options.investigations],
    ['  completed', String(completed), null],
    ['  needing a human', String(needsHuman), null],
    ['  failed (FAILED / TERMINATED / TIMED_OUT)', String(failed), failed === 0],
    ['  not settled by the timeout', String(unsettled), unsettled === 0],
    ['approvals accepted', String(approvals), null],
    ['refunds paid', String(ledger.refundsPaid), ledger.refundsPaid === approvals],
    ['refunds per approval: exactly 1 / none / more', `${exactlyOne} / ${unpaid} / ${perApproval.length - exactlyOne - unpaid}`, exactlyOne === perApproval.length],
    ['refund requests filed / left open or approved-unpaid', `${ledger.refundRequests} / ${ledger.openRequests}`, ledger.openRequests === 0],
    ['refund-story investigations without a request', String(lostRequests.length), lostRequests.length === 0],
    ['duplicate tool side effects', String(duplicates), duplicates === 0],
    ['  requests per tool_use > 1 / investigations with > 1 request', `${ledger.requestsPerToolUseOverOne} / ${ledger.investigationsWithSeveralRequests}`, null],
    ['  refunds per approval > 1 / case records per run > 1', `${ledger.refundsPerApprovalOverOne} / ${casesOverOne}`, null],
    [
      '  second approvals: same one answered again / refused / accepted anew / failed',
      `${faults.secondApprovals.deduplicated} / ${faults.secondApprovals.refused} / ${faults.secondApprovals.accepted} / ${faults.secondApprovals.failed}`,
      null,
    ],
    ['completed investigations without a case record', String(completedWithoutCase), completedWithoutCase === 0],
    [`infrastructure text in replies (${extra.replies} scanned)`, String(replyFindings.length), replyFindings.length === 0],
    [`infrastructure text shown to the model (${extra.toolResults} tool results)`, String(modelFindings.length), modelFindings.length === 0],
    ['worker kills (at a worst moment) / worker starts', `${faults.kills} (${faults.killsAtWorstMoment}) / ${extra.worker.starts}`, null],
    ['worker exits not caused by a kill: crashes / refused to start', `${crashes} / ${extra.worker.unplannedExits - crashes}`, crashes === 0],
    ['Postgres connections accepted / destroyed by cuts', `${extra.proxy.counts.accepted} / ${extra.proxy.counts.destroyed}`, null],
    ['Postgres outages', faults.outages.map((o) => `${o.seconds} s ${o.kind}`).join('; ') || 'none', null],
    ['dev-server restarts', faults.serverRestarts.map((r) => `${r.downSeconds} s down`).join('; ') || 'none', null],
    ['time to settle after the last fault', `${settleAfterFault.toFixed(1)} s`, null],
    ['soak wall time', `${((Date.now() - t0) / 1000).toFixed(0)} s`, null],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log('');
  console.log(`casework soak, seed ${options.seed}`);
  const valueWidth = Math.min(16, Math.max(...rows.map((r) => r[1].length)));
  for (const [label, value, holds] of rows) {
    const verdict = holds === null ? '' : holds ? 'ok' : 'BROKEN';
    console.log(`  ${label.padEnd(width)}  ${value.length > valueWidth ? value : value.padStart(valueWidth)}  ${verdict}`.trimEnd());
  }
  for (const [reason, n] of extra.worker.exitReasons) console.log(`  worker exit, ${n} x: ${reason}`);
  if (faults.kills < options.kills) console.log(`  note: ${faults.kills} of ${options.kills} kills happened before every investigation settled`);
  if (faults.outages.length < options.outages) console.log(`  note: ${faults.outages.length} of ${options.outages} outages found their moment`);
  for (const c of lostRequests.slice(0, 5)) console.log(`  no refund request: ${c.workflowId} (${c.story})`);
  for (const id of [...approvedIds].filter((id) => (ledger.byRequest.find((r) => r.request_id === id)?.refunds ?? 0) !== 1).slice(0, 5)) {
    const row = ledger.byRequest.find((r) => r.request_id === id);
    console.log(`  approval without exactly one refund: ${id} (${row?.workflow_id ?? 'no request row'}, status ${row?.status ?? '-'})`);
  }
  for (const f of findings.slice(0, 8)) console.log(`  ${f.where} of ${f.workflowId}: ${f.name} "${f.match}" in "…${f.excerpt}…"`);
  const holds = rows.every((r) => r[2] !== false);
  console.log(holds ? 'every invariant held' : 'an invariant broke (BROKEN above)');
  return holds;
}

const fleet = process.argv.includes('--fleet');
if (process.argv.includes('--help')) {
  console.log(fleet ? FLEET_USAGE : SOAK_USAGE);
} else {
  (fleet ? runFleetSoak(parseFleetOptions(process.argv.slice(2))) : main()).then(
    (code) => process.exit(code),
    (error: Error) => {
      console.error(`soak: ${error.message}`);
      process.exit(2);
    },
  );
}
