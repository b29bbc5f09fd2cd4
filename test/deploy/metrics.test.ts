/**
 * Every metric an alert rule or the dashboard names is one the processes really export: a real
 * Prometheus (Debian's package) scrapes the /actuator/prometheus of the gateway and the six
 * services started by the test stack, with the rules loaded, and must know each name, as a series
 * or, for a metric declared with nothing counted yet, by its metadata. `up` is Prometheus's own
 * series of each scrape. The probes of the manifests answer on the same processes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { SERVICE_NAMES } from '../../platform/config';
import { startGateway, type RunningGateway } from '../gateway';
import { describeIf } from '../skip';
import { startStack, type Stack } from '../stack';
import { waitFor } from '../wait';
import { MONITORING_DIR, hasKubectl, named, podSpec, render, type Deployment } from './manifests';

const hasPrometheus = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;

/** The metric names a PromQL expression selects. */
function metricNames(expr: string): string[] {
  const names: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.push(expr.slice(node.from, node.to));
    },
  });
  return names;
}

const ruleExprs = (parse(fs.readFileSync(path.join(MONITORING_DIR, 'alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((group) =>
  group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
);
const dashboardExprs = (
  JSON.parse(fs.readFileSync(path.join(MONITORING_DIR, 'grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] }
).panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function api<T>(base: string, route: string): Promise<T> {
  const answer = await fetch(`${base}${route}`);
  if (!answer.ok) throw new Error(`${route} answered ${answer.status}`);
  return ((await answer.json()) as { data: T }).data;
}

describeIf(hasPrometheus, 'the metrics the alerts and the dashboard name', "needs prometheus, from Debian's prometheus package", () => {
  let stack: Stack;
  let gateway: RunningGateway;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl: string;
  let workDir: string;
  const targets: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
    gateway = await startGateway(stack.config);
    for (const name of SERVICE_NAMES) targets[name] = stack.urls[name];
    targets.gateway = gateway.url;

    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-prometheus-'));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [path.join(MONITORING_DIR, 'alerts.yml')],
      scrape_configs: [
        {
          job_name: 'bookstore',
          metrics_path: '/actuator/prometheus',
          honor_labels: true,
          static_configs: [{ targets: Object.values(targets).map((url) => new URL(url).host) }],
        },
      ],
    };
    fs.writeFileSync(path.join(workDir, 'prometheus.yml'), JSON.stringify(config));
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      'prometheus',
      [`--config.file=${path.join(workDir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(workDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
      { stdio: 'ignore' },
    );
    // Every target scraped twice at least (a histogram of the scrapes themselves then has samples), every rule evaluated.
    await waitFor(
      async () => {
        const { activeTargets } = await api<{ activeTargets: { health: string; lastScrape: string }[] }>(prometheusUrl, '/api/v1/targets');
        const { groups } = await api<{ groups: { rules: { health: string }[] }[] }>(prometheusUrl, '/api/v1/rules');
        return (
          activeTargets.length === Object.keys(targets).length &&
          activeTargets.every((target) => target.health === 'up') &&
          groups.every((group) => group.rules.every((rule) => rule.health === 'ok'))
        );
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'Prometheus to scrape every process and evaluate every rule' },
    );
    await waitFor(async () => (await api<string[]>(prometheusUrl, '/api/v1/label/__name__/values')).includes('http_server_requests_seconds_count'), {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: 'the services’ request metrics',
    });
  }, 180_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
    await gateway?.stop();
    await stack?.stop();
  }, 60_000);

  it('loads the alert rules and evaluates each without an error on what the processes export', async () => {
    const { groups } = await api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>(prometheusUrl, '/api/v1/rules');
    const rules = groups.flatMap((group) => group.rules);
    expect(rules.map((rule) => rule.name).sort()).toEqual(ruleExprs.map(({ where }) => where.replace('alert ', '')).sort());
    expect(rules.filter((rule) => rule.health !== 'ok')).toEqual([]);
  });

  it('finds every metric an alert or a dashboard panel names among those the gateway and the services export', async () => {
    const series = new Set(await api<string[]>(prometheusUrl, '/api/v1/label/__name__/values'));
    const declared = new Set(Object.keys(await api<Record<string, unknown>>(prometheusUrl, '/api/v1/metadata')));
    const named = [...ruleExprs, ...dashboardExprs].flatMap(({ where, expr }) => metricNames(expr).map((metric) => ({ where, metric })));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter(({ metric }) => !series.has(metric) && !declared.has(metric))).toEqual([]);
  });

  it("reads each service's outbox and the payment service's failed refunds from their databases at scrape time", async () => {
    const query = async (expr: string) =>
      (await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(prometheusUrl, `/api/v1/query?query=${encodeURIComponent(expr)}`)).result;
    const outboxes = await query('bookstore_outbox_oldest_event_age_seconds');
    expect(outboxes.map(({ metric }) => metric.service).sort()).toEqual([...SERVICE_NAMES].sort());
    expect((await query('bookstore_refunds_failed')).map(({ metric, value }) => [metric.service, value[1]])).toEqual([['payment', '0']]);
  });

  describeIf(hasKubectl, 'the probes of the manifests', 'needs kubectl, to render the manifests', () => {
    it('answer 200 on the processes, at the paths the Deployments probe', async () => {
      const objects = render('prod');
      for (const [name, url] of Object.entries(targets)) {
        const container = podSpec(named<Deployment>(objects, 'Deployment', name)).containers[0];
        for (const probe of [container.startupProbe, container.readinessProbe, container.livenessProbe]) {
          const answer = await fetch(`${url}${probe?.httpGet?.path ?? '/none'}`);
          expect([name, probe?.httpGet?.path, answer.status]).toEqual([name, probe?.httpGet?.path, 200]);
        }
      }
    });
  });
});
