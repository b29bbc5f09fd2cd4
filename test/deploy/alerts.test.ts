/**
 * The alert rules: promtool (Debian's `prometheus` package) finds them valid and passes their unit
 * tests, each alert has a test that fires it and one that keeps it quiet, and the PrometheusRule
 * shipped with the manifests holds exactly the groups of the plain file.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { itIf } from '../skip';
import { MONITORING_DIR } from './manifests';

const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
const NEEDS_PROMTOOL = "needs promtool, from Debian's prometheus package";

interface RuleGroup {
  name: string;
  rules: { alert?: string; record?: string; expr: string }[];
}

const read = (file: string): unknown => parse(fs.readFileSync(path.join(MONITORING_DIR, file), 'utf8'));
const groups = (read('alerts.yml') as { groups: RuleGroup[] }).groups;
const alertNames = groups.flatMap((group) => group.rules.flatMap((rule) => rule.alert ?? []));

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd: MONITORING_DIR, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the alert rules', () => {
  itIf(hasPromtool, NEEDS_PROMTOOL)('are valid rules for Prometheus', () => {
    const run = promtool('check', 'rules', 'alerts.yml');
    expect(run.output).toContain(`SUCCESS: ${alertNames.length} rules found`);
    expect(run.status).toBe(0);
  });

  itIf(hasPromtool, NEEDS_PROMTOOL)('pass their unit tests: each fires on its series and stays quiet on the others', () => {
    const run = promtool('test', 'rules', 'alerts.test.yml');
    expect(run.output).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('have, each, a test that fires it and a test that keeps it quiet', () => {
    const tests = (read('alerts.test.yml') as { tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[] }).tests.flatMap(
      (test) => test.alert_rule_test ?? [],
    );
    const untested = alertNames.flatMap((name) => {
      const cases = tests.filter((test) => test.alertname === name);
      return [
        ...(cases.some((test) => (test.exp_alerts ?? []).length > 0) ? [] : [`${name}: no test fires it`]),
        ...(cases.some((test) => (test.exp_alerts ?? []).length === 0) ? [] : [`${name}: no test keeps it quiet`]),
      ];
    });
    expect(untested).toEqual([]);
    expect(alertNames.length).toBeGreaterThanOrEqual(12);
  });

  it('are the same in the PrometheusRule as in the plain file (node deploy/k8s/base/monitoring/prometheus-rule.mjs writes it)', () => {
    const rule = read('prometheus-rule.yaml') as { apiVersion: string; kind: string; spec: { groups: RuleGroup[] } };
    expect([rule.apiVersion, rule.kind]).toEqual(['monitoring.coreos.com/v1', 'PrometheusRule']);
    expect(rule.spec.groups).toEqual(groups);
  });
});
