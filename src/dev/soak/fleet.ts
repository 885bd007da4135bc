import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { deliverEvent, readStatus } from '../../client/investigations';
import { investigationSettings } from '../../settings';
import { loadConfig, type Config } from '../../config';
import { migrate } from '../../db/migrate';
import { openDatabase, type Database } from '../../db/pool';
import type { TicketEvent } from '../../schemas/event';
import { connectClient } from '../../temporal/client';
import { dataConverterFor } from '../../temporal/data-converter';
import { writeWorkflowBundle } from '../../worker';
import { consoleAgent, visibleText } from '../console-agent';
import { seedDemoData } from '../demo-data/seed';
import { startDeskStandin, type DeskStandin } from '../desk-standin';
import { startDevServer, type DevServer } from '../env/dev-server';
import { startFaultProxy } from '../fault-proxy';
import { seededRng } from '../rng';
import { startRoundRobinProxy } from '../round-robin-proxy';
import { cohortCustomer, cohortMessage, seedCohorts } from './cohorts';
import { createDatabase, dropDatabase, viaProxy } from './database';
import type { FleetSoakOptions } from './fleet-options';
import { readLedger } from './ledger-checks';
import { superviseWorker, type WorkerProcess } from './worker-process';

// The fleet soak (issue 28): casework as a fleet runs it, on one machine. Two `casework serve`
// behind a round-robin balancer take a desk's signed webhooks; two `casework console` behind
// another take two approvers' signed-in sessions; three `casework worker` processes share the task
// queue as one Worker Deployment. All of them reach Postgres through a fault proxy and one
// Temporal dev server on a database file. Zendesk's stand-in opens tickets whose webhooks are
// delivered as Zendesk delivers them: signed, sometimes twice, and retried after a 5xx or a
// dropped connection. While investigations run, a random process is SIGKILLed now and then (and
// restarted), the workers are replaced one by one by a new build whose workflow code differs (a
// change behind patched(), made current with Worker Versioning), Postgres is cut, and the dev
// server is restarted. Once everything has settled, the soak reads every history and the refund
// trail and prints a table of what must hold.

const ROOT = join(__dirname, '../../..');
const STORIES = ['dana-5102', 'double-charge', 'priya-1', 'wrong-address'] as const;
const DEPLOYMENT = 'casework-fleet-soak';
const APPROVERS = ['lead-a', 'lead-b'] as const;
const REQUESTER_BASE = 8_100_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A free TCP port on 127.0.0.1 (a replica keeps it across restarts, as a container keeps its address). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One desk ticket and the investigation it opens. */
interface FleetCase {
  index: number;
  story: string;
  ticketId: number;
  customerId: string;
  workflowId: string;
  webhook: { body: Buffer; headers: Record<string, string> };
  startAt: number;
  delivering: boolean;
  delivered: boolean;
  closeSent: boolean;
  /** The ticket stays open, waiting on its customer, until every planned fault is over. */
  holdClose: boolean;
  /** When the desk closes the ticket once its reply is there (set when the reply is first seen). */
  closeAt?: number;
  busy: boolean;
  approving: boolean;
  approvedRequests: Set<string>;
  settled?: { execution: string; closedAt: number; buildId: string | null; rolledOutTo: unknown; handOff: string | null };
}

/** What happened, for the table. */
interface FleetLog {
  deliveries: { sent: number; accepted: number; duplicate: number; retried5xx: number; dropped: number; refused4xx: number };
  approvals: { approved: Record<string, number>; secondRefused: number; secondAccepted: number; retries: number };
  sessions: { signIns: number; lost: number };
  kills: Record<string, number>;
  outage?: { seconds: number; at: number; open: number };
  serverRestart?: { seconds: number; at: number; open: number };
  rollout?: { requestedAt: number; currentAt: number; done: number; open: number };
  closes: number;
}

/** Runs the fleet soak; answers the exit code (0: every invariant held). */
export async function runFleetSoak(options: FleetSoakOptions): Promise<number> {
  const t0 = Date.now();
  const say = (line: string) => console.log(`[fleet ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  const rng = seededRng(options.seed);
  const runTag = `f${options.seed.toString(36)}`;
  const dbName = `casework_fleet_${options.seed}_${process.pid}`;
  const scratch = mkdtempSync(join(tmpdir(), 'casework-fleet-'));
  say(`seed ${options.seed}: ${options.cases} desk tickets over ${options.spreadSeconds} s, ${options.kills} kills; files in ${scratch}`);
  const cleanups: (() => Promise<unknown>)[] = [];
  let temporalServer: DevServer | undefined;
  process.on('exit', () => void temporalServer?.stop());
  const runCleanups = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch((e: Error) => say(`cleanup: ${e.message}`));
  };
  const onSignal = () => void runCleanups().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // ---- Postgres: a database of the soak's own, seeded, behind the fault proxy.
    const directUrl = await createDatabase(options.postgresUrl, dbName);
    cleanups.push(() => (options.keep ? Promise.resolve(say(`kept database ${dbName}`)) : dropDatabase(options.postgresUrl, dbName)));
    const keys = `fleet-k1:${randomBytes(32).toString('base64')}`;
    const base: Config = loadConfig({ ...process.env, DATABASE_URL: directUrl, CASEWORK_CODEC_KEYS: keys });
    const db: Database = await openDatabase(base);
    cleanups.push(() => db.close());
    await migrate(db.admin);
    await seedDemoData(db.admin);
    await seedCohorts(db.admin, options.cases);
    const target = new URL(directUrl);
    const pgProxy = await startFaultProxy({ port: 0, target: { host: target.hostname, port: Number(target.port || 5432) } });
    cleanups.push(() => pgProxy.close());

    // ---- Temporal: a dev server on a database file, so a restart keeps every history.
    const dbFile = join(scratch, 'temporal.db');
    const startTemporal = async () => {
      const started = await startDevServer({ port: options.temporalPort, uiPort: options.uiPort, dbFile, headless: true });
      if (!started.startedHere) throw new Error(`something already listens on ${started.address}; stop it or pass --temporal-port`);
      return started;
    };
    temporalServer = await startTemporal();
    cleanups.push(() => temporalServer?.stop() ?? Promise.resolve());
    const temporalAddress = temporalServer.address;

    // ---- Two builds of the workflow code: v1 as it is, v2 with a change behind patched().
    const v1Bundle = join(scratch, 'workflow-bundle-v1.js');
    const v2Bundle = join(scratch, 'workflow-bundle-v2.js');
    const built = spawnSync(process.execPath, [join(ROOT, 'bin/casework'), 'bundle', v1Bundle], { cwd: ROOT, encoding: 'utf8', env: process.env });
    if (built.status !== 0) throw new Error(`casework bundle failed: ${built.stderr || built.stdout}`);
    await writeWorkflowBundle(v2Bundle, { extraInterceptorModules: [require.resolve('../rollout-probe')] });

    // ---- The desk, its customers, and who may call the endpoints.
    const standin: DeskStandin = await startDeskStandin({ firstTicketId: 400_000 + (options.seed % 100_000) * 10 });
    cleanups.push(() => standin.close());
    const ticketingKey = `tk_fleet_${randomBytes(12).toString('hex')}`;
    const consoleKeys = APPROVERS.map(() => `ck_fleet_${randomBytes(12).toString('hex')}`);
    const stories = Array.from({ length: options.cases }, (_, k) => {
      const story = STORIES[k % STORIES.length]!;
      const raw = JSON.parse(readFileSync(join(ROOT, 'examples/events', `${story}.json`), 'utf8')) as TicketEvent;
      return { story, customerId: cohortCustomer(k, raw.customerId), message: cohortMessage(k, raw.message) };
    });
    const taskQueue = `casework-fleet-${runTag}`;
    const common: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: viaProxy(directUrl, pgProxy.port),
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      CASEWORK_CODEC_KEYS: keys,
      CASEWORK_API_KEYS: [`${ticketingKey}:*`, ...consoleKeys.map((k) => `${k}:approver:*`)].join(','),
      CASEWORK_APPROVERS: APPROVERS.map((a) => `${a}:500000`).join(','),
      CASEWORK_DESKS: 'zendesk',
      CASEWORK_DESK_CUSTOMERS: stories.map((s, k) => `zendesk:${REQUESTER_BASE + k}=${s.customerId}`).join(','),
      CASEWORK_ZENDESK_BASE_URL: standin.url,
      CASEWORK_ZENDESK_EMAIL: standin.agent.email,
      CASEWORK_ZENDESK_API_TOKEN: standin.agent.apiToken,
      CASEWORK_ZENDESK_WEBHOOK_SECRET: standin.webhookSecret,
      CASEWORK_EMBEDDINGS: 'off',
      CASEWORK_LOG_FORMAT: 'json',
      CASEWORK_METRICS_PORT: '0',
      CASEWORK_CONNECT_TIMEOUT_MS: '3000',
    };
    // The offline investigator is the model: no key, no network.
    delete common.ANTHROPIC_API_KEY;

    // ---- Three workers of build v1, one Worker Deployment.
    const workerEnv = (build: 'v1' | 'v2'): NodeJS.ProcessEnv => ({
      ...common,
      CASEWORK_LOG_LEVEL: 'warn',
      CASEWORK_DEPLOYMENT_NAME: DEPLOYMENT,
      CASEWORK_BUILD_ID: build,
      CASEWORK_WORKFLOW_BUNDLE: build === 'v1' ? v1Bundle : v2Bundle,
    });
    let workerStarts = 0;
    const startWorker = (build: 'v1' | 'v2') => superviseWorker(workerEnv(build), join(scratch, `worker-${build}-${++workerStarts}.log`));
    const workers: { build: 'v1' | 'v2'; process: WorkerProcess }[] = [0, 1, 2].map(() => ({ build: 'v1', process: startWorker('v1') }));
    cleanups.push(() => Promise.all(workers.map((w) => w.process.stop())));
    await Promise.all(workers.map((w) => w.process.waitReady(180_000)));

    const config: Config = { ...base, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue };
    const temporal = await connectClient(config, { pool: db.app });
    cleanups.push(() => temporal.close());
    const client: Client = temporal.client;
    const settings = investigationSettings(config);
    const setCurrent = async (buildId: string) => {
      const deadline = Date.now() + 180_000;
      for (;;) {
        try {
          await client.workflowService.setWorkerDeploymentCurrentVersion({
            namespace: config.TEMPORAL_NAMESPACE,
            deploymentName: DEPLOYMENT,
            buildId,
            identity: 'casework fleet soak',
          });
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await sleep(1_000);
        }
      }
    };
    await setCurrent('v1');
    say(`3 workers of build v1 poll "${taskQueue}" as deployment ${DEPLOYMENT}; v1 is current`);

    // ---- Two servers and two consoles, each behind a round-robin balancer.
    const httpEnv: NodeJS.ProcessEnv = { ...common, CASEWORK_LOG_LEVEL: 'info' };
    const http = async (kind: 'serve' | 'console', i: number) => {
      const port = await freePort();
      const proc = superviseWorker(httpEnv, join(scratch, `${kind}-${i}.log`), { command: { args: [kind, '--port', String(port)], ready: /listening/, name: `casework ${kind}` } });
      return { kind, port, process: proc };
    };
    const servers = await Promise.all([http('serve', 1), http('serve', 2)]);
    const consoles = await Promise.all([http('console', 1), http('console', 2)]);
    cleanups.push(() => Promise.all([...servers, ...consoles].map((s) => s.process.stop())));
    await Promise.all([...servers, ...consoles].map((s) => s.process.waitReady(180_000)));
    const api = await startRoundRobinProxy({ upstreams: servers.map((s) => ({ host: '127.0.0.1', port: s.port })) });
    const consoleLb = await startRoundRobinProxy({ upstreams: consoles.map((s) => ({ host: '127.0.0.1', port: s.port })) });
    cleanups.push(() => api.close());
    cleanups.push(() => consoleLb.close());
    say(`servers ${servers.map((s) => s.port).join(', ')} behind ${api.url}; consoles ${consoles.map((s) => s.port).join(', ')} behind ${consoleLb.url}`);

    const log: FleetLog = {
      deliveries: { sent: 0, accepted: 0, duplicate: 0, retried5xx: 0, dropped: 0, refused4xx: 0 },
      approvals: { approved: Object.fromEntries(APPROVERS.map((a) => [a, 0])), secondRefused: 0, secondAccepted: 0, retries: 0 },
      sessions: { signIns: 0, lost: 0 },
      kills: {},
      closes: 0,
    };

    // ---- Two approvers, each signed in once for the whole soak, through the console balancer.
    const people = APPROVERS.map((name, i) => ({ name, key: consoleKeys[i]!, agent: consoleAgent(consoleLb.url) }));
    const signIn = async (p: (typeof people)[number]) => {
      for (;;) {
        const answer = await p.agent.signIn(p.key, p.name).catch(() => undefined);
        if (answer?.status === 303 && answer.headers.get('location') !== '/console/sign-in') {
          log.sessions.signIns += 1;
          return;
        }
        await sleep(1_000);
      }
    };
    for (const p of people) await signIn(p);
    const toSignIn = (answer: { status: number; headers: Headers }) => answer.status === 303 && answer.headers.get('location') === '/console/sign-in';

    /** One approver's try at approving a request from the inbox: approved, refused (someone decided), or try again. */
    const approveVia = async (p: (typeof people)[number], c: FleetCase, requestId: string): Promise<'approved' | 'refused' | 'again'> => {
      const inbox = await p.agent.get('/console/inbox').catch(() => undefined);
      if (inbox && toSignIn(inbox)) {
        log.sessions.lost += 1;
        await signIn(p);
        return 'again';
      }
      if (inbox?.status !== 200 || !inbox.text.includes(`data-request-id="${requestId}"`)) return 'again';
      const posted = await p.agent.post('/console/inbox/decide', { workflowId: c.workflowId, requestId, decision: 'approved', reason: 'fleet soak' }).catch(() => undefined);
      if (posted && toSignIn(posted)) {
        log.sessions.lost += 1;
        await signIn(p);
        return 'again';
      }
      if (posted?.status !== 303) return 'again';
      const shown = await p.agent.follow(posted).catch(() => undefined);
      const text = shown ? visibleText(shown.text) : '';
      if (text.includes('Approved the')) return 'approved';
      if (/Refund decision refused|already|no refund is waiting/i.test(text)) return 'refused';
      return 'again';
    };

    /** A delivery as Zendesk makes it: the same signed bytes until a 2xx, after Retry-After or a pause. */
    const deliver = async (c: FleetCase): Promise<void> => {
      for (;;) {
        log.deliveries.sent += 1;
        let status: number;
        let retryAfter: string | null = null;
        let body: Record<string, unknown> = {};
        try {
          const res = await fetch(`${api.url}/webhooks/zendesk`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...c.webhook.headers },
            body: c.webhook.body,
            signal: AbortSignal.timeout(30_000),
          });
          status = res.status;
          retryAfter = res.headers.get('retry-after');
          body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        } catch {
          status = 0;
        }
        if (status >= 200 && status < 300) {
          if (body.duplicate === true) log.deliveries.duplicate += 1;
          else log.deliveries.accepted += 1;
          return;
        }
        if (status >= 400 && status < 500) {
          // A desk drops a delivery answered 4xx: casework must never answer a signed one so.
          log.deliveries.refused4xx += 1;
          say(`delivery of ticket ${c.ticketId} answered ${status}: ${JSON.stringify(body).slice(0, 200)}`);
          return;
        }
        if (status === 0) log.deliveries.dropped += 1;
        else log.deliveries.retried5xx += 1;
        await sleep(Math.min(10_000, retryAfter ? Number(retryAfter) * 1000 : 2_000));
      }
    };

    // ---- The plan: tickets spread over the window, each opened on the desk.
    const cases: FleetCase[] = stories.map((s, index) => {
      const { ticketId, commentId } = standin.createTicket({ requesterId: REQUESTER_BASE + index, subject: `Order question ${index}`, body: s.message });
      return {
        index,
        story: s.story,
        ticketId,
        customerId: s.customerId,
        workflowId: `investigation-zendesk-${ticketId}`,
        webhook: standin.commentWebhook(ticketId, commentId),
        startAt: Date.now() + (index * options.spreadSeconds * 1000) / options.cases,
        delivering: false,
        delivered: false,
        closeSent: false,
        // Every other ticket waits on its customer through every fault (a case open for days
        // does), so the outage, the rollout and the dev-server restart each find cases in flight
        // and cases started on v1 must finish on v2; the rest close soon after their reply, so
        // early ones finish on v1. By index, not by draw: a seed's first draws may all fall low.
        holdClose: index % 2 === 1,
        busy: false,
        approving: false,
        approvedRequests: new Set(),
      };
    });
    // The window and the timeout count from here: starting the fleet took what the machine's load made it.
    const tStart = Date.now();
    const deadline = tStart + options.timeoutMs;
    // The soak goes on until every case has settled and every planned fault has happened.
    let faultsDone = false;
    const active = () => (!faultsDone || cases.some((c) => !c.settled)) && Date.now() < deadline;
    /** Cases delivered and not yet settled: what a fault finds in flight. */
    const inFlight = () => cases.filter((c) => c.delivered && !c.settled).length;

    const visit = async (c: FleetCase) => {
      if (!c.delivered) {
        if (c.delivering || Date.now() < c.startAt) return;
        c.delivering = true;
        await deliver(c);
        // About half the deliveries come twice, as a desk's redelivery does, to either server.
        if (rng.chance(0.5)) void sleep(rng.between(0, 5_000)).then(() => deliver(c));
        c.delivered = true;
        return;
      }
      const described = await client.withDeadline(Date.now() + 5_000, () => client.workflow.getHandle(c.workflowId).describe()).catch(() => undefined);
      if (!described) return;
      if (described.status.name !== 'RUNNING') {
        if (described.status.name === 'CONTINUED_AS_NEW') return;
        const info = described.raw.workflowExecutionInfo?.versioningInfo;
        c.settled = {
          execution: described.status.name,
          closedAt: described.closeTime?.getTime() ?? Date.now(),
          buildId: info?.deploymentVersion?.buildId ?? null,
          rolledOutTo: described.memo?.rolledOutTo,
          handOff: null,
        };
        say(`settled ${c.workflowId}: ${described.status.name} on ${c.settled.buildId ?? 'no build'}${c.holdClose ? ' (held open through the faults)' : ''}`);
        return;
      }
      const status = await client.withDeadline(Date.now() + 5_000, () => readStatus(client, c.workflowId)).catch(() => undefined);
      if (!status) return;
      if (status.status === 'needs_human') {
        c.settled = { execution: 'RUNNING', closedAt: Date.now(), buildId: null, rolledOutTo: undefined, handOff: status.handOff?.reason ?? 'needs a person' };
        say(`settled ${c.workflowId}: needs a person (${c.settled.handOff})`);
        return;
      }
      const pending = status.pendingApproval;
      if (pending && !c.approvedRequests.has(pending.request_id) && !c.approving) {
        c.approving = true;
        const requestId = pending.request_id;
        void (async () => {
          const [first, second] = rng.chance(0.5) ? [people[0]!, people[1]!] : [people[1]!, people[0]!];
          for (let tries = 0; tries < 60 && active(); tries++) {
            const outcome = await approveVia(first, c, requestId);
            if (outcome !== 'again') {
              c.approvedRequests.add(requestId);
              if (outcome === 'approved') {
                log.approvals.approved[first.name] = (log.approvals.approved[first.name] ?? 0) + 1;
                // Now and then the other approver, on a page drawn before, approves it too.
                if (rng.chance(1 / 3)) {
                  const again = await p2(second, c, requestId);
                  if (again === 'approved') log.approvals.secondAccepted += 1;
                  else if (again === 'refused') log.approvals.secondRefused += 1;
                }
              }
              return;
            }
            log.approvals.retries += 1;
            await sleep(1_000);
          }
        })().finally(() => (c.approving = false));
        return;
      }
      if (status.status === 'waiting_for_customer' && status.lastReply && !c.closeSent) {
        // The desk closes a ticket a little after its reply, or, for a held one, once the faults are over.
        c.closeAt ??= Date.now() + rng.between(0, 10_000);
        if (Date.now() < c.closeAt || (c.holdClose && !faultsDone)) return;
        const closed: TicketEvent = {
          eventId: `evt-zendesk-${c.ticketId}-close`,
          type: 'ticket.closed',
          ticketId: `zendesk-${c.ticketId}`,
          customerId: c.customerId,
          message: '',
          receivedAt: new Date().toISOString(),
        };
        // A desk ticket's ids are the desk's alone over HTTP (POST /events refuses "zendesk-…"): the
        // stand-in sends no solved-ticket webhook, so the close goes through the gate directly.
        const sent = await client
          .withDeadline(Date.now() + 10_000, () => deliverEvent(client, db.admin, closed, { taskQueue, settings }))
          .then(() => true)
          .catch(() => false);
        if (sent) {
          c.closeSent = true;
          log.closes += 1;
        }
      }
    };
    // A second approval: straight to the decide form, as from a page drawn before the first.
    const p2 = async (p: (typeof people)[number], c: FleetCase, requestId: string): Promise<'approved' | 'refused' | 'again'> => {
      await p.agent.get('/console/inbox').catch(() => undefined);
      const posted = await p.agent
        .post('/console/inbox/decide', { workflowId: c.workflowId, requestId, decision: 'approved', reason: 'fleet soak, second approver' })
        .catch(() => undefined);
      if (posted && toSignIn(posted)) log.sessions.lost += 1;
      if (posted?.status !== 303 || toSignIn(posted)) return 'again';
      const shown = await p.agent.follow(posted).catch(() => undefined);
      const text = shown ? visibleText(shown.text) : '';
      return text.includes('Approved the') ? 'approved' : /refused|already|no refund is waiting/i.test(text) ? 'refused' : 'again';
    };

    // ---- Faults, each at its moment inside the window.
    const window = options.spreadSeconds * 1000;
    let faultInProgress = false;
    const at = async (ms: number) => {
      while (Date.now() - tStart < ms || faultInProgress) {
        if (!active()) return false;
        await sleep(250);
      }
      return active();
    };
    const every = [...workers.map((w) => w.process), ...servers.map((s) => s.process), ...consoles.map((s) => s.process)];
    const killLoop = async () => {
      const times = Array.from({ length: options.kills }, () => rng.between(10_000, window + 20_000)).sort((a, b) => a - b);
      for (const time of times) {
        if (!(await at(time))) return;
        const pool: { name: string; process: WorkerProcess }[] = [
          ...workers.map((w, i) => ({ name: `worker ${i + 1} (${w.build})`, process: w.process })),
          ...servers.map((s, i) => ({ name: `serve ${i + 1}`, process: s.process })),
          ...consoles.map((s, i) => ({ name: `console ${i + 1}`, process: s.process })),
        ].filter((p) => p.process.ready);
        const victim = pool[Math.floor(rng.next() * pool.length)];
        if (!victim) continue;
        const kind = victim.name.split(' ')[0]!;
        log.kills[kind] = (log.kills[kind] ?? 0) + 1;
        say(`FAULT SIGKILL ${victim.name}`);
        victim.process.kill(Math.round(rng.between(0, 3_000)));
      }
    };
    const outage = async () => {
      if (!(await at(rng.between(0.15, 0.3) * window))) return;
      faultInProgress = true;
      const seconds = Math.round(rng.between(options.outageSeconds[0], options.outageSeconds[1]));
      say(`FAULT Postgres cut for ${seconds} s`);
      log.outage = { seconds, at: Date.now() - tStart, open: inFlight() };
      await pgProxy.cut('reset');
      await sleep(seconds * 1000);
      await pgProxy.resume();
      faultInProgress = false;
      say('Postgres back');
    };
    const rollout = async () => {
      if (!(await at(rng.between(0.4, 0.55) * window))) return;
      faultInProgress = true;
      say('ROLLOUT build v2: replacing the workers one at a time');
      const requestedAt = Date.now();
      for (let i = 0; i < workers.length; i++) {
        const next = startWorker('v2');
        every.push(next);
        await next.waitReady(180_000);
        if (i === 0) {
          const asked = Date.now();
          await setCurrent('v2');
          log.rollout = { requestedAt: asked, currentAt: Date.now(), done: 0, open: inFlight() };
          say('v2 is current');
        }
        const old = workers[i]!;
        workers[i] = { build: 'v2', process: next };
        // As a deploy tool stops the old build: SIGTERM, so it finishes the activities it holds.
        await old.process.terminate(60_000);
        say(`worker ${i + 1}: v1 stopped, v2 polling`);
      }
      if (log.rollout) log.rollout.done = Date.now() - requestedAt;
      faultInProgress = false;
    };
    const restartTemporal = async () => {
      if (!(await at(rng.between(0.65, 0.85) * window))) return;
      faultInProgress = true;
      const seconds = Math.round(rng.between(options.serverDownSeconds[0], options.serverDownSeconds[1]));
      say(`FAULT dev server stopped for ${seconds} s`);
      log.serverRestart = { seconds, at: Date.now() - tStart, open: inFlight() };
      await temporalServer!.stop();
      await sleep(seconds * 1000);
      temporalServer = await startTemporal();
      faultInProgress = false;
      say('dev server back');
    };
    const faults = [
      killLoop(),
      (async () => {
        await outage();
        await rollout();
        await restartTemporal();
      })().finally(() => (faultsDone = true)),
    ];

    // ---- The driver: looks at every case about twice a second, each visit on its own.
    while (active()) {
      for (const c of cases.filter((x) => !x.settled && !x.busy)) {
        c.busy = true;
        void visit(c)
          .catch((error: Error) => say(`driver: ${c.workflowId}: ${error.message}`))
          .finally(() => (c.busy = false));
      }
      await sleep(500);
    }
    await Promise.all(faults);
    await pgProxy.resume();
    // Late duplicates still in flight land before the counts.
    await sleep(6_000);

    // ---- Read what happened: every history, the refund trail, the versions.
    const histories: { workflowId: string; history: Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>> }[] = [];
    const messagesPer = new Map<string, number>();
    for (const c of cases) {
      const history = await client.workflow
        .getHandle(c.workflowId)
        .fetchHistory()
        .catch(() => undefined);
      if (!history) continue;
      histories.push({ workflowId: c.workflowId, history });
      messagesPer.set(c.workflowId, (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage').length);
    }
    let replayFailures = 0;
    const replays = Worker.runReplayHistories({ workflowBundle: { codePath: v2Bundle }, dataConverter: dataConverterFor(config, db.app) }, histories);
    for await (const result of replays) {
      if (result.error) {
        replayFailures += 1;
        say(`replaying ${result.workflowId} on v2 failed: ${result.error.message}`);
      }
    }
    const ledger = await readLedger(db.admin, 'investigation-zendesk-');
    const ok = fleetReport({
      options,
      cases,
      log,
      messagesPer,
      ledger,
      replayFailures,
      histories: histories.length,
      every,
      api: api.counts.byUpstream,
      consoles: consoleLb.counts.byUpstream,
      t0,
    });
    if (!options.keep) cleanups.unshift(async () => rmSync(scratch, { recursive: true, force: true }));
    else say(`kept ${scratch} (process logs, dev-server database, bundles)`);
    return ok ? 0 : 1;
  } finally {
    await runCleanups();
  }
}

/** Prints the fleet soak's table; answers whether every invariant held. */
function fleetReport(r: {
  options: FleetSoakOptions;
  cases: FleetCase[];
  log: FleetLog;
  messagesPer: Map<string, number>;
  ledger: Awaited<ReturnType<typeof readLedger>>;
  replayFailures: number;
  histories: number;
  every: WorkerProcess[];
  api: Record<string, number>;
  consoles: Record<string, number>;
  t0: number;
}): boolean {
  const { cases, log, ledger } = r;
  const count = (f: (c: FleetCase) => boolean) => cases.filter(f).length;
  const completed = count((c) => c.settled?.execution === 'COMPLETED');
  const failed = count((c) => !!c.settled && !['COMPLETED', 'RUNNING'].includes(c.settled.execution));
  const handedOver = cases.filter((c) => c.settled?.handOff);
  const unsettled = count((c) => !c.settled);
  const notOnce = cases.filter((c) => r.messagesPer.get(c.workflowId) !== 1);
  const approved = ledger.byRequest.filter((q) => q.decision === 'approved');
  const paidOnce = approved.filter((q) => q.refunds === 1).length;
  // The version each completed case must have ended on: v1 before v2 was made current, v2 after.
  const rollout = log.rollout;
  const wrongVersion = cases.filter((c) => {
    if (c.settled?.execution !== 'COMPLETED') return false;
    if (!rollout) return c.settled.buildId !== 'v1';
    if (c.settled.closedAt < rollout.requestedAt) return c.settled.buildId !== 'v1';
    if (c.settled.closedAt > rollout.currentAt) return c.settled.buildId !== 'v2' || c.settled.rolledOutTo !== 'v2';
    return false;
  });
  const onV1 = count((c) => c.settled?.buildId === 'v1');
  const onV2 = count((c) => c.settled?.buildId === 'v2');
  const exits = r.every.reduce((n, p) => n + p.unplannedExits, 0);
  const crashes = r.every.reduce((n, p) => n + [...p.exitReasons].filter(([reason]) => !/^(error:|casework \w+:)/.test(reason)).reduce((k, [, v]) => k + v, 0), 0);
  const spread = (counts: Record<string, number>) => Object.values(counts).join(' / ') || '0';
  const rows: [string, string, boolean | null][] = [
    ['desk tickets / investigations that ran', `${cases.length} / ${r.histories}`, r.histories === cases.length],
    ['  completed / handed to a person / failed / not settled', `${completed} / ${handedOver.length} / ${failed} / ${unsettled}`, failed === 0 && unsettled === 0],
    [
      'webhook posts: accepted / duplicate / 5xx retried / dropped / 4xx',
      `${log.deliveries.accepted} / ${log.deliveries.duplicate} / ${log.deliveries.retried5xx} / ${log.deliveries.dropped} / ${log.deliveries.refused4xx}`,
      log.deliveries.refused4xx === 0,
    ],
    ['every delivery reached its investigation once', `${cases.length - notOnce.length} of ${cases.length}`, notOnce.length === 0],
    ['  requests per server replica', spread(r.api), null],
    ['approvals: by lead-a / lead-b (console replicas)', `${spread(log.approvals.approved)} (${spread(r.consoles)} requests)`, null],
    [
      '  second approvals refused / accepted; retries',
      `${log.approvals.secondRefused} / ${log.approvals.secondAccepted}; ${log.approvals.retries}`,
      log.approvals.secondAccepted === 0,
    ],
    ['approved requests paid exactly once', `${paidOnce} of ${approved.length}`, paidOnce === approved.length && ledger.refundsPerApprovalOverOne === 0],
    ['refund requests left open or approved-unpaid', String(ledger.openRequests), ledger.openRequests === 0],
    ['console sign-ins / sessions lost (no expiry in this run)', `${log.sessions.signIns} / ${log.sessions.lost}`, log.sessions.lost === 0],
    ['cases needing a person because of infrastructure', String(handedOver.length), handedOver.length === 0],
    [`completed on v1 / on v2 (rollout ${rollout ? `${(rollout.done / 1000).toFixed(0)} s` : 'never happened'})`, `${onV1} / ${onV2}`, rollout !== undefined],
    ['completed on a version the policy does not say', String(wrongVersion.length), wrongVersion.length === 0],
    ['histories that do not replay on v2', String(r.replayFailures), r.replayFailures === 0],
    ['SIGKILLs: worker / serve / console', `${r.log.kills.worker ?? 0} / ${r.log.kills.serve ?? 0} / ${r.log.kills.console ?? 0}`, null],
    ['process exits not caused by the soak: crashes / refused to start', `${crashes} / ${exits - crashes}`, crashes === 0],
    [
      'Postgres outage / dev-server restart',
      `${log.outage ? `${log.outage.seconds} s` : 'none'} / ${log.serverRestart ? `${log.serverRestart.seconds} s down` : 'none'}`,
      !!log.outage && !!log.serverRestart,
    ],
    ['  tickets held open until the faults were over', String(count((c) => c.holdClose)), null],
    [
      '  cases in flight at the outage / rollout / restart',
      [log.outage, log.rollout, log.serverRestart].map((f) => (f ? String(f.open) : '-')).join(' / '),
      [log.outage, log.rollout, log.serverRestart].every((f) => (f?.open ?? 0) > 0),
    ],
    ['soak wall time', `${((Date.now() - r.t0) / 1000).toFixed(0)} s`, null],
  ];
  const width = Math.max(...rows.map((x) => x[0].length));
  console.log('');
  console.log(`casework fleet soak, seed ${r.options.seed}: 2 servers, 2 consoles, 3 workers, ${cases.length} desk tickets`);
  for (const [label, value, holds] of rows) console.log(`  ${label.padEnd(width)}  ${value.padStart(24)}  ${holds === null ? '' : holds ? 'ok' : 'BROKEN'}`.trimEnd());
  for (const c of notOnce.slice(0, 5)) console.log(`  ${c.workflowId}: ${r.messagesPer.get(c.workflowId) ?? 'no history'} customer messages`);
  for (const c of handedOver.slice(0, 5)) console.log(`  ${c.workflowId} needs a person: ${c.settled?.handOff}`);
  for (const c of wrongVersion.slice(0, 5)) console.log(`  ${c.workflowId}: completed on ${c.settled?.buildId} (memo ${String(c.settled?.rolledOutTo)})`);
  for (const p of r.every) for (const [reason, n] of p.exitReasons) console.log(`  exit, ${n} x: ${reason}`);
  const holds = rows.every((x) => x[2] !== false);
  console.log(holds ? 'every invariant held' : 'an invariant broke (BROKEN above)');
  return holds;
}
