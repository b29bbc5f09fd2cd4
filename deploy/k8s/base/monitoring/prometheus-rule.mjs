// Writes prometheus-rule.yaml, the Prometheus Operator's PrometheusRule holding the groups of
// alerts.yml (the plain rules file, the one to edit): `node deploy/k8s/base/monitoring/prometheus-rule.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse, stringify } from 'yaml';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const { groups } = parse(readFileSync(here('alerts.yml'), 'utf8'));
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'bookstore', labels: { 'app.kubernetes.io/part-of': 'bookstore' } },
  spec: { groups },
};
const header = '# Written by prometheus-rule.mjs from alerts.yml (edit that, then run the script): the same alerts for the Prometheus Operator.\n';
const target = here('prometheus-rule.yaml');
writeFileSync(target, await format(header + stringify(rule, { lineWidth: 0 }), { ...(await resolveConfig(target)), filepath: target }));
