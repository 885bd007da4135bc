import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigSchema, loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { SEARCH_ATTRIBUTE_FLAGS } from '../src/schemas/search-attributes';
import { openTestDatabase, unique } from './support/db';
import { freePort } from './support/net';

// docker-compose.yml, checked without a Docker engine: it parses, every service the worker
// needs is there with a health check and ordered start-up, no secret is written in it, every
// casework variable it sets is one casework reads, and the worker and the endpoint start, with
// the very command and environment it gives them, against this machine's Temporal and Postgres.
//
// The YAML is read by Python's PyYAML (on this machine's image; no new npm dependency), whose
// safe loader resolves the anchors and merge keys the file uses. Compose's own ${VAR} syntax
// is interpolated here, by the rules of the Compose spec.

const ROOT = resolve(__dirname, '..');
const COMPOSE_FILE = resolve(ROOT, 'docker-compose.yml');

type Env = Record<string, string | undefined>;
interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  env_file?: unknown;
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  deploy?: { replicas?: string | number };
  ports?: string[];
  restart?: string;
  volumes?: string[];
  profiles?: string[];
  expose?: string[];
}
interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

function loadYaml(path: string): { value?: unknown; problem?: string } {
  const script = 'import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))';
  const run = spawnSync('python3', ['-c', script, path], { encoding: 'utf8' });
  if (run.error) return { problem: `python3 is not available (${run.error.message})` };
  if (run.status !== 0) {
    if (/No module named .?yaml/.test(run.stderr)) return { problem: 'PyYAML is not installed (pip install pyyaml, or apt-get install python3-yaml)' };
    throw new Error(`docker-compose.yml does not parse as YAML:\n${run.stderr}`);
  }
  return { value: JSON.parse(run.stdout) };
}

/** Compose's variable interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, ${VAR:+alt}, $VAR and $$. */
function interpolate(text: string, env: Env): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '$') {
      out += c;
      i += 1;
      continue;
    }
    if (text[i + 1] === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (text[i + 1] !== '{') {
      const bare = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i + 1));
      if (!bare) throw new Error(`a lone "$" at ${i} in ${JSON.stringify(text)}: write $$ for a literal dollar`);
      out += env[bare[0]] ?? '';
      i += 1 + bare[0].length;
      continue;
    }
    let depth = 0;
    let end = i + 1;
    for (; end < text.length; end++) {
      if (text[end] === '{') depth += 1;
      if (text[end] === '}' && --depth === 0) break;
    }
    if (end >= text.length) throw new Error(`unclosed \${ in ${JSON.stringify(text)}`);
    const body = text.slice(i + 2, end);
    const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(body);
    if (!match) throw new Error(`bad interpolation \${${body}}`);
    const [, name = '', op, arg = ''] = match;
    const value = env[name];
    const unset = value === undefined;
    const empty = unset || value === '';
    switch (op) {
      case undefined:
        out += value ?? '';
        break;
      case ':-':
        out += empty ? interpolate(arg, env) : value;
        break;
      case '-':
        out += unset ? interpolate(arg, env) : value;
        break;
      case ':?':
      case '?':
        if (op === ':?' ? empty : unset) throw new Error(`required variable ${name} is missing a value: ${arg}`);
        out += value;
        break;
      case ':+':
        out += empty ? '' : interpolate(arg, env);
        break;
      case '+':
        out += unset ? '' : interpolate(arg, env);
        break;
    }
    i = end + 1;
  }
  return out;
}

function interpolateAll<T>(value: T, env: Env): T {
  if (typeof value === 'string') return interpolate(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => interpolateAll(v, env)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env)])) as T;
  }
  return value;
}

const parsed = loadYaml(COMPOSE_FILE);
// Under CI a missing parser is a failure, not a quiet skip.
const skip = parsed.problem && process.env.CI !== 'true' ? `cannot read YAML here: ${parsed.problem}` : false;
const compose = parsed.value as ComposeFile;

/** What an operator's .env holds: the secrets compose refuses to start without, all made up. */
const OPERATOR_ENV: Env = {
  CASEWORK_DB_PASSWORD: 'casework-db-pw-0123',
  TEMPORAL_DB_PASSWORD: 'temporal-db-pw-0123',
  CASEWORK_API_KEYS: 'tk_compose_test_0123456789:*',
  CASEWORK_CODEC_KEYS: 'compose-test:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
  CASEWORK_CODEC_SERVER_TOKEN: 'codec-token-compose-test-0123',
};

const LONG_RUNNING = ['temporal-postgres', 'temporal', 'temporal-ui', 'casework-postgres', 'casework-worker', 'casework-api', 'casework-console', 'casework-codec'];
const ONE_SHOT = ['temporal-schema', 'temporal-setup'];
const CONFIG_KEYS = new Set(Object.keys(ConfigSchema.shape));
const SECRET_NAME = /(PASSWORD|PASSWD|_PWD|SECRET|API_KEYS?|TOKEN)$/;

function service(name: string): Service {
  const found = compose.services[name];
  assert.ok(found, `docker-compose.yml has no service "${name}"`);
  return found;
}

function environmentOf(name: string, env: Env): Record<string, string> {
  const raw = service(name).environment ?? {};
  assert.ok(!Array.isArray(raw), `${name}: environment as a map, so keys can be checked`);
  return Object.fromEntries(Object.entries(interpolateAll(raw, env)).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** The container's command: the Dockerfile's ENTRYPOINT with the service's command. */
function containerArgv(name: string): string[] {
  const dockerfile = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8');
  const [, entry] = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile) ?? [];
  assert.ok(entry, 'the Dockerfile has an exec-form ENTRYPOINT');
  const command = service(name).command;
  assert.ok(Array.isArray(command), `${name}: exec-form command`);
  return [...(JSON.parse(entry) as string[]), ...command];
}

/** Starts what the container would run, here, and waits until `url` answers 200. */
async function startAsContainer(name: string, env: Record<string, string>, url: string): Promise<{ child: ChildProcess; output: () => string }> {
  const [program, ...args] = containerArgv(name);
  assert.equal(program, 'node');
  let output = '';
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) assert.fail(`${name} exited with ${child.exitCode} before it was healthy:\n${output.slice(-3000)}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, output: () => output };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      assert.fail(`${name} was not healthy at ${url} within 120 s:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Sends SIGTERM, as `docker compose stop` does, and returns the exit code. */
function stopAsContainer(child: ChildProcess): Promise<number | null> {
  return new Promise((resolveExit) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(kill);
      resolveExit(code);
    });
    child.kill('SIGTERM');
  });
}

describe('docker-compose.yml', { skip }, () => {
  before(() => assert.ok(!parsed.problem, `docker-compose.yml cannot be read: ${parsed.problem}`));

  test('has every service casework needs, from the official images, with Temporal on Postgres', () => {
    for (const name of [...LONG_RUNNING, ...ONE_SHOT]) service(name);
    assert.match(service('temporal').image!, /^temporalio\/server:/);
    assert.match(service('temporal-ui').image!, /^temporalio\/ui:/);
    for (const job of ONE_SHOT) assert.match(service(job).image!, /^temporalio\/admin-tools:/);
    for (const db of ['temporal-postgres', 'casework-postgres']) assert.match(service(db).image!, /^postgres:/);
    for (const [name, s] of Object.entries(compose.services)) {
      assert.doesNotMatch(s.image ?? '', /auto-setup/, `${name}: temporalio/auto-setup is deprecated; the schema job replaces it`);
    }
    const temporalEnv = environmentOf('temporal', OPERATOR_ENV);
    assert.equal(temporalEnv.DB, 'postgres12');
    assert.equal(temporalEnv.POSTGRES_SEEDS, 'temporal-postgres');
    const schemaJob = JSON.stringify(service('temporal-schema').command);
    for (const step of ['create', 'setup-schema', 'update-schema', 'temporal_visibility']) assert.ok(schemaJob.includes(step), `schema job runs ${step}`);
    assert.equal(service('casework-worker').command?.[0], 'worker');
    assert.equal(service('casework-api').command?.[0], 'serve');
    assert.equal(service('casework-console').command?.[0], 'console');
    assert.ok(service('casework-worker').build && service('casework-api').build, 'casework services build the Dockerfile');
  });

  test('registers every Casework search attribute the workflow upserts', () => {
    const job = JSON.stringify(service('temporal-setup').command);
    assert.ok(job.includes('temporal operator search-attribute create'));
    assert.ok(job.includes('temporal operator namespace create'), 'a fresh cluster has no namespace; the job creates it');
    for (const flag of SEARCH_ATTRIBUTE_FLAGS) assert.ok(job.includes(flag), `the setup job registers ${flag}`);
  });

  test('long-running services have health checks, and start in order on conditions', () => {
    for (const name of LONG_RUNNING) {
      const check = service(name).healthcheck;
      assert.ok(check?.test && check.test.length > 0 && !check.disable, `${name} has a health check`);
    }
    for (const [name, s] of Object.entries(compose.services)) {
      if (!s.depends_on) continue;
      assert.ok(!Array.isArray(s.depends_on), `${name}: depends_on with conditions, not a bare list`);
      for (const [dependency, { condition }] of Object.entries(s.depends_on)) {
        const target = service(dependency);
        if (condition === 'service_healthy') assert.ok(target.healthcheck?.test, `${name} waits for ${dependency} to be healthy, which needs its health check`);
        else assert.equal(condition, 'service_completed_successfully', `${name} -> ${dependency}: ${condition}`);
        if (condition === 'service_completed_successfully') assert.ok(ONE_SHOT.includes(dependency), `${dependency} is a one-shot job`);
      }
    }
    const worker = service('casework-worker').depends_on as Record<string, { condition: string }>;
    assert.equal(worker['casework-postgres']?.condition, 'service_healthy');
    assert.equal(worker['temporal-setup']?.condition, 'service_completed_successfully', 'workers start once the search attributes exist');
    assert.equal((service('temporal').depends_on as Record<string, { condition: string }>)['temporal-schema']?.condition, 'service_completed_successfully');
  });

  test('the worker runs as replicas, two by default and as many as CASEWORK_WORKER_REPLICAS says', () => {
    const replicas = service('casework-worker').deploy?.replicas;
    assert.equal(Number(interpolate(String(replicas), {})), 2);
    assert.equal(Number(interpolate(String(replicas), { CASEWORK_WORKER_REPLICAS: '5' })), 5);
    const worker = compose.services['casework-worker'] as Service & { container_name?: string };
    assert.equal(worker.container_name, undefined, 'a fixed container name would stop replicas');
    assert.ok(!worker.ports?.length, 'replicas publish no host port (they would collide)');
  });

  test('holds no secret: each comes from the environment, and compose refuses to start without it', () => {
    const raw = readFileSync(COMPOSE_FILE, 'utf8');
    assert.doesNotMatch(raw, /sk-ant-[A-Za-z0-9_-]{8,}/, 'no Anthropic key');
    for (const [name, s] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        const text = value === null ? '' : String(value);
        if (SECRET_NAME.test(key)) assert.match(text, /^(\$\{[A-Z0-9_]+(:?[-?][^}]*)?\})?$/, `${name}.${key} must come from the environment, not be written here`);
        const userinfo = /:\/\/[^:/@\s]+:([^@\s]+)@/.exec(text);
        if (userinfo?.[1] !== undefined) assert.match(userinfo[1], /^\$\{[A-Z0-9_]+(:\?[^}]*)?\}$/, `${name}.${key}: the password in the URL comes from the environment`);
      }
    }
    assert.throws(() => interpolateAll(compose.services, {}), /CASEWORK_DB_PASSWORD|TEMPORAL_DB_PASSWORD|CASEWORK_API_KEYS|CASEWORK_CODEC_KEYS|CASEWORK_CODEC_SERVER_TOKEN/);
    for (const missing of Object.keys(OPERATOR_ENV)) {
      assert.throws(() => interpolateAll(compose.services, { ...OPERATOR_ENV, [missing]: '' }), new RegExp(missing), `without ${missing} compose refuses to start`);
    }
  });

  test('every casework variable it sets is one casework reads, with a value casework accepts', () => {
    for (const name of ['casework-worker', 'casework-api', 'casework-console']) {
      const env = environmentOf(name, OPERATOR_ENV);
      for (const key of Object.keys(env)) assert.ok(CONFIG_KEYS.has(key), `${name} sets ${key}, which src/config.ts does not read`);
      const config = loadConfig(env);
      assert.equal(config.TEMPORAL_ADDRESS, 'temporal:7233');
      assert.equal(config.TEMPORAL_TASK_QUEUE, 'casework');
      assert.equal(config.DATABASE_URL, `postgres://casework:${OPERATOR_ENV.CASEWORK_DB_PASSWORD}@casework-postgres:5432/casework`);
    }
    assert.equal(loadConfig(environmentOf('casework-worker', OPERATOR_ENV)).CASEWORK_METRICS_PORT, 9464);
    const check = JSON.stringify(service('casework-worker').healthcheck?.test);
    assert.ok(check.includes(':9464/healthz'), 'the worker health check asks its metrics port');
    assert.ok(JSON.stringify(service('casework-api').healthcheck?.test).includes(':8080/healthz'));
    assert.equal(loadConfig(environmentOf('casework-api', OPERATOR_ENV)).CASEWORK_HTTP_PORT, 8080);
    assert.ok(JSON.stringify(service('casework-console').healthcheck?.test).includes(':8090/healthz'));
    assert.equal(loadConfig(environmentOf('casework-console', OPERATOR_ENV)).CASEWORK_CONSOLE_PORT, 8090);
  });

  describe('the observability profile', () => {
    const OBSERVABILITY = ['otel-collector', 'jaeger', 'prometheus', 'grafana'];
    /** The host file a service mounts at `target`, checked to exist in the repository. */
    const mounted = (name: string, target: string): string => {
      const volume = (service(name).volumes ?? []).find((v) => v.split(':')[1] === target);
      assert.ok(volume, `${name} mounts something at ${target}`);
      const source = resolve(ROOT, volume.split(':')[0]!);
      assert.ok(existsSync(source), `${name}: ${source} exists`);
      return source;
    };

    test('runs only when asked for, and nothing casework needs depends on it', () => {
      for (const name of OBSERVABILITY) assert.deepEqual(service(name).profiles, ['observability'], `${name} is in the observability profile only`);
      for (const name of [...LONG_RUNNING, ...ONE_SHOT]) {
        assert.equal(service(name).profiles, undefined, `${name} runs without a profile`);
        const needs = Object.keys((service(name).depends_on as Record<string, unknown> | undefined) ?? {});
        for (const dependency of needs) assert.ok(!OBSERVABILITY.includes(dependency), `${name} must not need ${dependency}`);
      }
      assert.doesNotThrow(() => interpolateAll(compose.services, OPERATOR_ENV), 'the profile needs no variable beyond the ones casework does');
    });

    test('traces go from casework to the collector over OTLP/HTTP, and from there to Jaeger, only when configured', () => {
      for (const name of ['casework-worker', 'casework-api']) {
        assert.equal(environmentOf(name, OPERATOR_ENV).OTEL_EXPORTER_OTLP_ENDPOINT, '', `${name}: no tracing unless configured`);
        const traced = environmentOf(name, { ...OPERATOR_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' });
        assert.equal(loadConfig(traced).OTEL_EXPORTER_OTLP_ENDPOINT, 'http://otel-collector:4318');
      }
      const config = loadYaml(mounted('otel-collector', '/etc/otelcol/casework.yml')).value as {
        receivers: { otlp: { protocols: { http: { endpoint: string } } } };
        exporters: Record<string, { endpoint?: string }>;
        service: { pipelines: Record<string, { receivers: string[]; processors?: string[]; exporters: string[] }> };
      };
      assert.ok(JSON.stringify(service('otel-collector').command).includes('/etc/otelcol/casework.yml'), 'the collector reads the mounted file');
      assert.equal(config.receivers.otlp.protocols.http.endpoint, '0.0.0.0:4318');
      assert.ok(service('otel-collector').expose?.includes('4318'));
      const traces = config.service.pipelines.traces;
      assert.ok(traces, 'a traces pipeline');
      assert.deepEqual(traces.receivers, ['otlp']);
      for (const exporter of traces.exporters) assert.ok(config.exporters[exporter], `exporter ${exporter} is defined`);
      assert.equal(config.exporters['otlp/jaeger']?.endpoint, 'jaeger:4317');
      assert.equal(environmentOf('jaeger', {}).COLLECTOR_OTLP_ENABLED, 'true');
    });

    test('Prometheus loads the alert rules and scrapes the workers and the endpoint on their metrics ports', () => {
      const config = loadYaml(mounted('prometheus', '/etc/prometheus/prometheus.yml')).value as {
        rule_files: string[];
        scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[]; static_configs?: { targets: string[] }[] }[];
      };
      assert.ok(JSON.stringify(service('prometheus').command).includes('/etc/prometheus/prometheus.yml'));
      for (const file of config.rule_files) mounted('prometheus', `/etc/prometheus/${file}`);
      assert.ok(config.rule_files.includes('casework-rules.yml'));
      const jobs = Object.fromEntries(config.scrape_configs.map((c) => [c.job_name, c]));
      // The rules name these jobs (up{job="casework-worker"}).
      assert.deepEqual(jobs['casework-worker']?.dns_sd_configs?.[0], { names: ['casework-worker'], type: 'A', port: 9464, refresh_interval: '30s' });
      assert.equal(loadConfig(environmentOf('casework-worker', OPERATOR_ENV)).CASEWORK_METRICS_PORT, 9464);
      assert.deepEqual(jobs['casework-api']?.static_configs?.[0]?.targets, [`casework-api:${loadConfig(environmentOf('casework-api', OPERATOR_ENV)).CASEWORK_HTTP_PORT}`]);
      // The endpoint's /metrics wants an operator key: the scrape reads it from the file the container writes, not from the config.
      const auth = (jobs['casework-api'] as { authorization?: { credentials_file?: string } }).authorization;
      assert.ok(auth?.credentials_file && JSON.stringify(service('prometheus').command).includes(auth.credentials_file), 'the start-up writes the key file the scrape job reads');
      assert.equal(service('prometheus').environment?.CASEWORK_METRICS_KEY, '${CASEWORK_METRICS_KEY:-}');
    });

    test('Grafana provisions the Prometheus data source and the dashboard from the mounted files', () => {
      const sources = loadYaml(`${mounted('grafana', '/etc/grafana/provisioning/datasources')}/prometheus.yml`).value as { datasources: { url: string; uid: string }[] };
      assert.equal(sources.datasources[0]?.url, 'http://prometheus:9090');
      const providers = loadYaml(`${mounted('grafana', '/etc/grafana/provisioning/dashboards')}/casework.yml`).value as { providers: { options: { path: string } }[] };
      const path = providers.providers[0]?.options.path;
      assert.equal(path, '/var/lib/grafana/dashboards');
      const dashboard = JSON.parse(readFileSync(mounted('grafana', `${path}/casework-dashboard.json`), 'utf8')) as { panels: { datasource?: { uid: string } }[] };
      assert.ok(
        dashboard.panels.some((p) => p.datasource?.uid === sources.datasources[0]?.uid),
        'the dashboard queries the provisioned data source',
      );
      assert.ok(
        service('grafana').ports?.every((p) => p.startsWith('127.0.0.1:')),
        'Grafana is published on this host only',
      );
    });
  });

  describe('started as the containers would be, against this machine’s Temporal and Postgres', () => {
    let db: Database;
    /** The service's environment with its hosts pointed here, and ports and task queue made unique to this run. */
    let local: (name: string, ports: Record<string, string>) => Record<string, string>;
    before(async () => {
      db = await openTestDatabase();
      const taskQueue = unique('casework-compose');
      local = (name, ports) => ({
        ...environmentOf(name, OPERATOR_ENV),
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
        DATABASE_URL: db.url,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ...ports,
      });
    });
    after(async () => {
      await db?.close();
    });

    test('the worker polls, answers /healthz and /metrics on its metrics port, and drains on SIGTERM', async () => {
      const metricsPort = String(await freePort());
      const env = local('casework-worker', { CASEWORK_METRICS_PORT: metricsPort, CASEWORK_TEMPORAL_METRICS_PORT: String(await freePort()) });
      const { child, output } = await startAsContainer('casework-worker', env, `http://127.0.0.1:${metricsPort}/healthz`);
      try {
        const health = (await (await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).json()) as { worker: string; taskQueue: string };
        assert.equal(health.worker, 'RUNNING');
        assert.equal(health.taskQueue, env.TEMPORAL_TASK_QUEUE);
        const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        // Counted through the worker's own connection: the labelled series exist only after a count succeeded.
        assert.match(metrics, /^casework_approvals_waiting 0$/m);
        assert.match(metrics, /^casework_investigations_open\{status="awaiting_approval"\} 0$/m);
        assert.match(metrics, /^casework_visibility_count_errors_total 0$/m);
        assert.match(metrics, /^temporal_\w+/m, 'the Temporal runtime metrics are merged in');
      } finally {
        assert.equal(await stopAsContainer(child), 0, `the worker exits cleanly on SIGTERM:\n${output().slice(-3000)}`);
      }
      const lines = output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      assert.ok(lines.length > 0, 'the worker logs JSON lines');
      assert.ok(lines.some((l) => /"msg":"Worker state changed".*"state":"RUNNING"/.test(l)));
    });

    test('the event endpoint listens on its port and reports Temporal reachable on /healthz', async () => {
      const env = local('casework-api', { CASEWORK_HTTP_PORT: String(await freePort()), CASEWORK_HTTP_HOST: '127.0.0.1' });
      const { child, output } = await startAsContainer('casework-api', env, `http://127.0.0.1:${env.CASEWORK_HTTP_PORT}/healthz`);
      assert.equal(await stopAsContainer(child), 0, `casework serve exits cleanly on SIGTERM:\n${output().slice(-3000)}`);
    });

    test('the console listens on its port, sends / to its sign-in, and serves none of the JSON routes', async () => {
      const env = local('casework-console', { CASEWORK_CONSOLE_PORT: String(await freePort()), CASEWORK_CONSOLE_HOST: '127.0.0.1' });
      const base = `http://127.0.0.1:${env.CASEWORK_CONSOLE_PORT}`;
      const { child, output } = await startAsContainer('casework-console', env, `${base}/healthz`);
      try {
        assert.equal((await fetch(`${base}/`, { redirect: 'manual' })).headers.get('location'), '/console');
        const signIn = await fetch(`${base}/console/sign-in`);
        assert.equal(signIn.status, 200);
        assert.match(await signIn.text(), /<h1>Sign in<\/h1>/);
        assert.equal((await fetch(`${base}/events`, { method: 'POST' })).status, 404, 'events go to casework serve, not the console');
      } finally {
        assert.equal(await stopAsContainer(child), 0, `casework console exits cleanly on SIGTERM:\n${output().slice(-3000)}`);
      }
    });
  });
});
