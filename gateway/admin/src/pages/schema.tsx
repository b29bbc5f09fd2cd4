/**
 * Schema: the schema registry (CONTRACT §13) for an API owner. The versions recorded (published with
 * `npm run schema:publish`, or served by a gateway that started on them), then each coordinate of the
 * latest one with its requests over the window (`?days=`, 7 by default) and the clients that sent
 * them: deprecated coordinates still in use first, as the list to clear before removing anything.
 */
import { useState } from 'preact/hooks';
import { api, type SchemaFieldRow } from '../api/operations';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { DataTable } from '../components/table';
import { count, shortId, timestamp } from '../format';
import { useRemote } from '../hooks';
import { href, Link, type Location } from '../router';

const WINDOWS = [1, 7, 30, 90];

function Clients({ field }: { field: SchemaFieldRow }) {
  if (field.clients.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="client-list">
      {field.clients.map((client) => (
        <li key={`${client.name} ${client.version}`}>
          <code>{client.name}</code> {client.version} <span class="muted">×{count(client.requests)}</span>
        </li>
      ))}
    </ul>
  );
}

function FieldRows({ fields }: { fields: SchemaFieldRow[] }) {
  return (
    <>
      {fields.map((field) => (
        <tr key={field.coordinate} data-coordinate={field.coordinate}>
          <td>
            <code>{field.coordinate}</code>
            {field.deprecated ? (
              <>
                {' '}
                <span class="badge badge-deprecated">DEPRECATED</span>
                <br />
                <small class="muted">{field.deprecationReason}</small>
              </>
            ) : null}
          </td>
          <td>{field.kind.replace('_', ' ').toLowerCase()}</td>
          <td class="num">{count(field.requests)}</td>
          <td>{field.lastUsedAt ? timestamp(field.lastUsedAt) : <span class="muted">not in the window</span>}</td>
          <td>
            <Clients field={field} />
          </td>
        </tr>
      ))}
    </>
  );
}

const FIELD_COLUMNS = ['Coordinate', 'Kind', { label: 'Requests', numeric: true as const }, 'Last used (hour)', 'Clients'];

export function SchemaPage({ location }: { location: Location }) {
  const wanted = Number(location.query.get('days'));
  const days = WINDOWS.includes(wanted) ? wanted : 7;
  const registry = useRemote(() => api.schemaRegistry(days), [days]);
  const [showUnused, setShowUnused] = useState(false);

  return (
    <>
      <h1>Schema</h1>
      <nav class="toolbar" aria-label="Usage window">
        <span class="muted">Usage over the last</span>
        {WINDOWS.map((window) => (
          <Link key={window} href={href('/schema', { days: String(window) })} aria-current={window === days ? 'page' : undefined}>
            {window === 1 ? '24 hours' : `${window} days`}
          </Link>
        ))}
      </nav>
      {registry.status === 'loading' ? <Loading what="the schema registry" /> : null}
      {registry.status === 'error' ? <ErrorMessage error={registry.error} what="the schema registry" onRetry={registry.reload} /> : null}
      {registry.status === 'ready'
        ? (() => {
            const { schemaVersions: versions, schemaUsage: usage } = registry.data;
            const deprecatedInUse = usage.fields.filter((field) => field.deprecated && field.requests > 0);
            const used = usage.fields.filter((field) => !(field.deprecated && field.requests > 0) && field.requests > 0);
            const unused = usage.fields.filter((field) => field.requests === 0);
            return (
              <>
                <h2>Versions</h2>
                {versions.length === 0 ? (
                  <Empty>No version recorded yet: a gateway records the schema it starts on, and `npm run schema:publish` records the committed one.</Empty>
                ) : (
                  <DataTable testId="schema-versions" columns={['Version', 'Commit', 'By', 'Recorded', 'Published', 'Served since', 'Subgraphs']}>
                    {versions.map((version) => (
                      <tr key={version.id} data-version-id={version.id}>
                        <td>
                          <code title={version.supergraphHash}>{shortId(version.id)}</code>
                          {version.id === usage.version?.id ? (
                            <>
                              {' '}
                              <span class="badge badge-enabled">listed below</span>
                            </>
                          ) : null}
                        </td>
                        <td>{version.commit ? <code>{version.commit.slice(0, 12)}</code> : <span class="muted">unknown</span>}</td>
                        <td>{version.publishedBy ?? <span class="muted">unknown</span>}</td>
                        <td>{timestamp(version.recordedAt)}</td>
                        <td>{version.publishedAt ? timestamp(version.publishedAt) : <span class="muted">not published</span>}</td>
                        <td>{version.servedAt ? timestamp(version.servedAt) : <span class="muted">not served</span>}</td>
                        <td>{version.subgraphs.join(', ')}</td>
                      </tr>
                    ))}
                  </DataTable>
                )}

                <h2>Deprecated and still in use</h2>
                {deprecatedInUse.length === 0 ? (
                  <Empty>No deprecated field was used in the window: nothing deprecated holds a client back.</Empty>
                ) : (
                  <DataTable testId="schema-deprecated-in-use" columns={FIELD_COLUMNS}>
                    <FieldRows fields={deprecatedInUse} />
                  </DataTable>
                )}

                <h2>Fields in use</h2>
                <p class="muted" data-testid="schema-usage-summary">
                  {count(used.length + deprecatedInUse.length)} of {count(usage.totalFields)} coordinates were used since {timestamp(usage.since)}; {count(unused.length)} were not.
                </p>
                {used.length === 0 ? (
                  <Empty>No other coordinate was used in the window.</Empty>
                ) : (
                  <DataTable testId="schema-fields" columns={FIELD_COLUMNS}>
                    <FieldRows fields={used} />
                  </DataTable>
                )}
                {unused.length > 0 ? (
                  <>
                    <button type="button" class="button-secondary" onClick={() => setShowUnused((shown) => !shown)} aria-expanded={showUnused}>
                      {showUnused ? 'Hide' : 'Show'} the {count(unused.length)} unused coordinates
                    </button>
                    {showUnused ? (
                      <DataTable testId="schema-unused" columns={FIELD_COLUMNS}>
                        <FieldRows fields={unused} />
                      </DataTable>
                    ) : null}
                  </>
                ) : null}
              </>
            );
          })()
        : null}
    </>
  );
}
