/**
 * Webhooks: the endpoints other systems receive events at, added here (the signing secret shown
 * once), enabled or disabled, their secret rotated, a test sent; and one endpoint's delivery log
 * (`?endpoint=`), each delivery resendable.
 */
import { useState } from 'preact/hooks';
import { api, type WebhookDeliveryRow, type WebhookEndpointRow } from '../api/operations';
import { Empty, ErrorMessage, Loading, StatusBadge } from '../components/states';
import { DataTable } from '../components/table';
import { shortId, timestamp } from '../format';
import { useRemote } from '../hooks';
import { href, Link, type Location } from '../router';

const PAGE_SIZE = 50;

/** Runs an action, showing what it did or why it failed. */
function useAction() {
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const run = async (action: () => Promise<string>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      setNotice(await action());
    } catch (caught) {
      setNotice(undefined);
      setProblem(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  };
  return { busy, notice, problem, run };
}

function NewEndpoint({ subscriptions, busy, onCreate }: { subscriptions: string[]; busy: boolean; onCreate: (url: string, events: string[], description: string | null) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['order.*']);
  const toggle = (event: string) => setEvents(events.includes(event) ? events.filter((e) => e !== event) : [...events, event]);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    onCreate(url.trim(), events, description.trim() || null);
  };
  return (
    <section class="panel panel-wide" aria-labelledby="webhook-form-title">
      <h2 id="webhook-form-title">New endpoint</h2>
      <form class="profile-form" onSubmit={onSubmit} data-testid="webhook-form" noValidate>
        <div class="field">
          <label for="webhook-url">URL (required)</label>
          <input id="webhook-url" type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://erp.example.com/hooks/bookstore" />
        </div>
        <div class="field">
          <label for="webhook-description">Description</label>
          <input id="webhook-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <fieldset class="field choices">
          <legend>Events</legend>
          {subscriptions.map((event) => (
            <label key={event} class="choice">
              <input type="checkbox" checked={events.includes(event)} onChange={() => toggle(event)} />
              <code>{event}</code>
            </label>
          ))}
        </fieldset>
        <div class="search-row">
          <button type="submit" disabled={busy || !url.trim() || events.length === 0}>
            Add endpoint
          </button>
        </div>
      </form>
    </section>
  );
}

function DeliveryLog({ endpoint, busy, run }: { endpoint: WebhookEndpointRow; busy: boolean; run: ReturnType<typeof useAction>['run'] }) {
  const deliveries = useRemote(() => api.webhookDeliveries(endpoint.id, PAGE_SIZE, 0), [endpoint.id]);
  const [resent, setResent] = useState<Record<string, WebhookDeliveryRow>>({});
  const resend = (delivery: WebhookDeliveryRow) =>
    void run(async () => {
      const after = await api.resendWebhookDelivery(delivery.id);
      setResent((all) => ({ ...all, [after.id]: after }));
      return `Resent ${delivery.type} (${shortId(delivery.id)}): ${after.status}.`;
    });
  return (
    <section class="delivery-log" aria-labelledby="delivery-log-title">
      <h2 id="delivery-log-title">
        Delivery log of <code>{endpoint.url}</code>
      </h2>
      {deliveries.status === 'loading' ? <Loading what="deliveries" /> : null}
      {deliveries.status === 'error' ? <ErrorMessage error={deliveries.error} what="deliveries" onRetry={deliveries.reload} /> : null}
      {deliveries.status === 'ready' && deliveries.data.length === 0 ? <Empty>Nothing sent to this endpoint yet.</Empty> : null}
      {deliveries.status === 'ready' && deliveries.data.length > 0 ? (
        <DataTable testId="webhook-deliveries" columns={['Event', 'Status', 'Time', { label: 'Attempts', numeric: true }, 'Response', 'Answer excerpt', '']}>
          {deliveries.data.map((original) => {
            const delivery = resent[original.id] ?? original;
            return (
              <tr key={delivery.id} data-delivery-id={delivery.id}>
                <td>
                  <code>{delivery.type}</code>
                  <div class="muted small" title={delivery.eventId}>
                    {shortId(delivery.eventId)}
                  </div>
                </td>
                <td data-testid="delivery-status">
                  <StatusBadge status={delivery.status} />
                  {delivery.nextAttemptAt ? <div class="muted small">next {timestamp(delivery.nextAttemptAt)}</div> : null}
                </td>
                <td>{timestamp(delivery.updatedAt)}</td>
                <td class="num">{delivery.attempts}</td>
                <td>{delivery.lastStatusCode ?? <span class="muted">{delivery.lastError ?? '—'}</span>}</td>
                <td>
                  <code class="excerpt">{(delivery.responseExcerpt ?? '').slice(0, 120)}</code>
                </td>
                <td>
                  <button type="button" class="button-secondary" disabled={busy} onClick={() => resend(delivery)}>
                    Resend
                  </button>
                </td>
              </tr>
            );
          })}
        </DataTable>
      ) : null}
    </section>
  );
}

export function WebhooksPage({ location }: { location: Location }) {
  const remote = useRemote(() => api.webhookEndpoints(), []);
  const endpoints = remote.status === 'ready' ? { ...remote, data: remote.data.webhookEndpoints } : remote;
  const [secret, setSecret] = useState<{ url: string; secret: string } | undefined>();
  const [logKey, setLogKey] = useState(0);
  const [created, setCreated] = useState(0);
  const { busy, notice, problem, run } = useAction();
  const selected = endpoints.status === 'ready' ? endpoints.data.find((e) => e.id === location.query.get('endpoint')) : undefined;
  const after = (message: string) => {
    endpoints.reload();
    setLogKey((n) => n + 1);
    return message;
  };

  const create = (url: string, events: string[], description: string | null) =>
    void run(async () => {
      const added = await api.createWebhookEndpoint(url, events, description);
      setSecret({ url: added.endpoint.url, secret: added.secret });
      setCreated((n) => n + 1);
      return after(`Added ${added.endpoint.url}.`);
    });
  const rotate = (endpoint: WebhookEndpointRow) =>
    void run(async () => {
      const rotated = await api.rotateWebhookSecret(endpoint.id);
      setSecret({ url: endpoint.url, secret: rotated.secret });
      return after(`New secret for ${endpoint.url}; the old one keeps signing for 24 hours.`);
    });
  const setEnabled = (endpoint: WebhookEndpointRow, enabled: boolean) =>
    void run(async () => after(`${enabled ? 'Enabled' : 'Disabled'} ${(await api.setWebhookEndpointEnabled(endpoint.id, enabled)).url}.`));
  const test = (endpoint: WebhookEndpointRow) =>
    void run(async () => {
      const delivery = await api.sendWebhookTest(endpoint.id);
      return after(
        `Test sent to ${endpoint.url}: ${delivery.status}${delivery.lastStatusCode ? ` (HTTP ${delivery.lastStatusCode})` : delivery.lastError ? ` (${delivery.lastError})` : ''}.`,
      );
    });

  return (
    <>
      <h1>Webhooks</h1>
      {notice ? (
        <p class="notice" role="status" data-testid="webhook-notice">
          {notice}
        </p>
      ) : null}
      {problem ? (
        <p class="state state-error" role="alert" data-testid="webhook-error">
          {problem}
        </p>
      ) : null}
      {secret ? (
        <div class="notice" data-testid="webhook-secret-panel">
          Signing secret of <code>{secret.url}</code>, shown this once: <code data-testid="webhook-secret">{secret.secret}</code>
        </div>
      ) : null}
      {remote.status === 'ready' ? <NewEndpoint key={created} subscriptions={remote.data.webhookSubscriptions} busy={busy} onCreate={create} /> : null}

      {endpoints.status === 'loading' ? <Loading what="webhook endpoints" /> : null}
      {endpoints.status === 'error' ? <ErrorMessage error={endpoints.error} what="webhook endpoints" onRetry={endpoints.reload} /> : null}
      {endpoints.status === 'ready' && endpoints.data.length === 0 ? <Empty>No endpoints yet.</Empty> : null}
      {endpoints.status === 'ready' && endpoints.data.length > 0 ? (
        <DataTable testId="webhook-endpoints" columns={['Endpoint', 'Events', 'Status', 'Created', 'Actions']}>
          {endpoints.data.map((endpoint) => (
            <tr key={endpoint.id} data-endpoint-id={endpoint.id}>
              <td>
                <Link href={href('/webhooks', { endpoint: endpoint.id })}>{endpoint.url}</Link>
                {endpoint.description ? <div class="muted small">{endpoint.description}</div> : null}
              </td>
              <td>{endpoint.events.join(', ')}</td>
              <td data-testid="endpoint-status">
                <StatusBadge status={endpoint.enabled ? 'ENABLED' : 'DISABLED'} />
                {endpoint.disabledReason ? <div class="small field-error">{endpoint.disabledReason}</div> : null}
                {endpoint.enabled && endpoint.failingSince ? <div class="muted small">failing since {timestamp(endpoint.failingSince)}</div> : null}
              </td>
              <td>{timestamp(endpoint.createdAt)}</td>
              <td>
                <button type="button" class="button-secondary" disabled={busy} onClick={() => test(endpoint)}>
                  Send test
                </button>{' '}
                <button type="button" class="button-secondary" disabled={busy} onClick={() => setEnabled(endpoint, !endpoint.enabled)}>
                  {endpoint.enabled ? 'Disable' : 'Enable'}
                </button>{' '}
                <button type="button" class="button-secondary" disabled={busy} onClick={() => rotate(endpoint)}>
                  Rotate secret
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      {selected ? <DeliveryLog key={`${selected.id}-${logKey}`} endpoint={selected} busy={busy} run={run} /> : null}
    </>
  );
}
