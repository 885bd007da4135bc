import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigSchema, loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { SEARCH_ATTRIBUTE_FLAGS } from '../src/schemas/search-attributes';
import { allowedOriginsFor } from '../src/server/codec-server';
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

const LONG_RUNNING = [
  'temporal-postgres',
  'temporal',
  'temporal-ui',
  'casework-postgres',
  'casework-worker',
  'casework-api',
  'casework-console',
  'casework-codec',
  'casework-balancer',
];
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

  test('runs a fleet: three workers, two endpoints and two consoles by default, each as many as its variable says', () => {
    for (const [name, variable, fallback] of [
      ['casework-worker', 'CASEWORK_WORKER_REPLICAS', 3],
      ['casework-api', 'CASEWORK_API_REPLICAS', 2],
      ['casework-console', 'CASEWORK_CONSOLE_REPLICAS', 2],
    ] as const) {
      const replicas = service(name).deploy?.replicas;
      assert.equal(Number(interpolate(String(replicas), {})), fallback, `${name}: ${fallback} replicas by default`);
      assert.equal(Number(interpolate(String(replicas), { [variable]: '5' })), 5, `${name}: ${variable} sets the count`);
      const s = compose.services[name] as Service & { container_name?: string };
      assert.equal(s.container_name, undefined, `${name}: a fixed container name would stop replicas`);
      assert.ok(!s.ports?.length, `${name}: replicas publish no host port (they would collide); the balancer does`);
    }
  });

  test('puts the endpoints and consoles behind the official nginx image, round robin, with the Host and scheme passed on', () => {
    const balancer = service('casework-balancer');
    assert.match(balancer.image!, /^nginx:/, 'a standard balancer image, not one of casework’s own');
    assert.equal(balancer.build, undefined);
    assert.deepEqual(interpolateAll(balancer.ports, {}), ['8080:8080', '127.0.0.1:8090:8090'], 'the endpoint on the host, the console on loopback only');
    const depends = balancer.depends_on as Record<string, { condition: string }>;
    assert.equal(depends['casework-api']?.condition, 'service_healthy');
    assert.equal(depends['casework-console']?.condition, 'service_healthy');
    const mount = (balancer.volumes ?? []).find((v) => v.endsWith(':/etc/nginx/conf.d/default.conf:ro'));
    assert.ok(mount, 'the config file is mounted read-only where the image reads it');
    const conf = readFileSync(resolve(ROOT, mount.split(':')[0]!), 'utf8').replace(/#.*$/gm, '');
    const upstream = (name: string) => new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(conf)?.[1] ?? '';
    assert.match(upstream('casework_api'), /server casework-api:8080 resolve/, 'every endpoint replica, found through Docker’s DNS as it scales');
    assert.match(upstream('casework_console'), /server casework-console:8090 resolve/);
    assert.match(conf, /resolver 127\.0\.0\.11 /, 'Docker’s DNS re-read while nginx runs');
    for (const sticky of ['ip_hash', 'hash ', 'least_conn', 'sticky', 'random'])
      assert.ok(!conf.includes(sticky), `round robin, not ${sticky.trim()}: any replica may serve any request`);
    assert.match(conf, /listen 8080;[\s\S]*proxy_pass http:\/\/casework_api;/);
    assert.match(conf, /listen 8090;[\s\S]*proxy_pass http:\/\/casework_console;/);
    assert.match(conf, /proxy_set_header Host \$http_host;/, 'the console compares a form’s Origin with the Host, port included');
    assert.match(conf, /proxy_set_header X-Forwarded-Proto \$forwarded_proto;/, 'the console’s cookie is Secure when the browser used https');
    assert.ok(JSON.stringify(balancer.healthcheck?.test).includes(':8080/balancer/healthz'));
  });

  test('checks readiness, not mere liveness, before it counts a casework process healthy, and gives each time to drain', () => {
    for (const [name, port] of [
      ['casework-worker', 9464],
      ['casework-api', 8080],
      ['casework-console', 8090],
      ['casework-codec', 8089],
    ] as const) {
      assert.ok(JSON.stringify(service(name).healthcheck?.test).includes(`:${port}/readyz`), `${name} asks /readyz on ${port}`);
    }
    const grace = (name: string) => String((compose.services[name] as Service & { stop_grace_period?: string }).stop_grace_period ?? '10s');
    const seconds = (text: string) => Number(/^(\d+)(s|m)$/.exec(text)?.[1]) * (text.endsWith('m') ? 60 : 1);
    for (const name of ['casework-api', 'casework-console', 'casework-codec']) assert.ok(seconds(grace(name)) > 10, `${name}: longer than the 10 s drain`);
    const workerEnv = environmentOf('casework-worker', OPERATOR_ENV);
    assert.ok(
      Number(workerEnv.CASEWORK_SHUTDOWN_GRACE_SECONDS) < seconds(grace('casework-worker')),
      'the worker cancels what it still holds before compose kills it, so those activities retry elsewhere at once',
    );
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

  test('the codec server admits the web UI where compose publishes it, on its default port or another', () => {
    for (const env of [OPERATOR_ENV, { ...OPERATOR_ENV, TEMPORAL_UI_PUBLISH_PORT: '18233' }]) {
      const published = (service('temporal-ui').ports ?? []).map((p) => interpolateAll(String(p), env));
      const [host, port] = (published[0] ?? '').split(':');
      const origins = allowedOriginsFor(loadConfig(environmentOf('casework-codec', env)));
      assert.ok(origins.includes(`http://${host}:${port}`), `the UI published at ${host}:${port} is admitted (${origins.join(', ')})`);
      assert.ok(origins.includes(`http://localhost:${port}`), 'and the same page opened as localhost');
    }
  });

  test('the web UI calls the codec server where the browser reaches it, with cookies, so a codec sign-in works without a bearer header', () => {
    for (const env of [OPERATOR_ENV, { ...OPERATOR_ENV, CASEWORK_CODEC_PUBLISH_PORT: '18089' }]) {
      const ui = environmentOf('temporal-ui', env);
      const [host, port] = (service('casework-codec').ports ?? []).map((p) => interpolateAll(String(p), env))[0]!.split(':');
      assert.equal(ui.TEMPORAL_CODEC_ENDPOINT, `http://${host}:${port}`);
      assert.equal(ui.TEMPORAL_CODEC_INCLUDE_CREDENTIALS, 'true');
      const uiHost = (service('temporal-ui').ports ?? []).map((p) => interpolateAll(String(p), env))[0]!.split(':')[0];
      assert.equal(host, uiHost, 'the UI and the codec server share a host name, so the sign-in cookie is same-site');
    }
    assert.ok(environmentOf('casework-codec', OPERATOR_ENV).CASEWORK_CODEC_SERVER_TOKEN, 'the codec server still requires its token');
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
    assert.ok(check.includes(':9464/readyz'), 'the worker health check asks its metrics port');
    assert.ok(JSON.stringify(service('casework-api').healthcheck?.test).includes(':8080/readyz'));
    assert.equal(loadConfig(environmentOf('casework-api', OPERATOR_ENV)).CASEWORK_HTTP_PORT, 8080);
    assert.ok(JSON.stringify(service('casework-console').healthcheck?.test).includes(':8090/readyz'));
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

    test('the worker polls, answers /healthz, /readyz and /metrics on its metrics port, and drains on SIGTERM', async () => {
      const metricsPort = String(await freePort());
      const env = local('casework-worker', { CASEWORK_METRICS_PORT: metricsPort, CASEWORK_TEMPORAL_METRICS_PORT: String(await freePort()) });
      const { child, output } = await startAsContainer('casework-worker', env, `http://127.0.0.1:${metricsPort}/readyz`);
      try {
        const health = (await (await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).json()) as { worker: string; taskQueue: string };
        assert.equal(health.worker, 'RUNNING');
        assert.equal(health.taskQueue, env.TEMPORAL_TASK_QUEUE);
        const ready = (await (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).json()) as Record<string, unknown>;
        assert.deepEqual(
          { ok: ready.ok, worker: ready.worker, temporal: ready.temporal, postgres: ready.postgres, keys: ready.keys },
          { ok: true, worker: 'RUNNING', temporal: 'ok', postgres: 'ok', keys: 'ok' },
        );
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

    test('the event endpoint listens on its port and reports Temporal reachable on /readyz', async () => {
      const env = local('casework-api', { CASEWORK_HTTP_PORT: String(await freePort()), CASEWORK_HTTP_HOST: '127.0.0.1' });
      const { child, output } = await startAsContainer('casework-api', env, `http://127.0.0.1:${env.CASEWORK_HTTP_PORT}/readyz`);
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
