/**
 * Authors, categories and publishers: the list sorted by name, a form that creates one or edits the
 * chosen one, and delete, which the server refuses (409, shown as it says) while books use it.
 */
import { useState } from 'preact/hooks';
import { catalogue, type Reference, type ReferenceKind } from '../api/catalogue';
import { errorsByField, GraphqlRequestError } from '../api/graphql';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { DataTable } from '../components/table';
import { useRemote } from '../hooks';

interface Field {
  name: string;
  label: string;
  required?: boolean;
  multiline?: boolean;
}

interface KindSettings {
  title: string;
  /** One of them, in a sentence. */
  singular: string;
  fields: Field[];
  /** The row's name as the list shows it. */
  name(row: Reference): string;
}

export const REFERENCE_KINDS: Record<ReferenceKind, KindSettings> = {
  authors: {
    title: 'Authors',
    singular: 'author',
    fields: [
      { name: 'firstName', label: 'First name', required: true },
      { name: 'lastName', label: 'Last name' },
      { name: 'country', label: 'Country' },
      { name: 'biography', label: 'Biography', multiline: true },
    ],
    name: (row) => {
      const author = row as { firstName: string; lastName: string | null };
      return [author.firstName, author.lastName].filter(Boolean).join(' ');
    },
  },
  categories: {
    title: 'Categories',
    singular: 'category',
    fields: [
      { name: 'name', label: 'Name', required: true },
      { name: 'description', label: 'Description', multiline: true },
    ],
    name: (row) => (row as { name: string }).name,
  },
  publishers: {
    title: 'Publishers',
    singular: 'publisher',
    fields: [
      { name: 'name', label: 'Name', required: true },
      { name: 'address', label: 'Address' },
    ],
    name: (row) => (row as { name: string }).name,
  },
};

type Values = Record<string, string>;

const emptyValues = (settings: KindSettings): Values => Object.fromEntries(settings.fields.map((field) => [field.name, '']));
const valuesOf = (settings: KindSettings, row: Reference): Values =>
  Object.fromEntries(settings.fields.map((field) => [field.name, String((row as unknown as Record<string, string | number | null | undefined>)[field.name] ?? '')]));

export function ReferencePage({ kind }: { kind: ReferenceKind }) {
  const settings = REFERENCE_KINDS[kind];
  const rows = useRemote(() => catalogue.list(kind), [kind]);
  const [editing, setEditing] = useState<Reference | undefined>();
  const [values, setValues] = useState<Values>(() => emptyValues(settings));
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const startEditing = (row: Reference | undefined) => {
    setEditing(row);
    setValues(row ? valuesOf(settings, row) : emptyValues(settings));
    setFieldErrors({});
    setProblem(undefined);
  };

  const run = async (work: () => Promise<string>) => {
    setBusy(true);
    setProblem(undefined);
    setNotice(undefined);
    setFieldErrors({});
    try {
      setNotice(await work());
      rows.reload();
    } catch (error) {
      if (error instanceof GraphqlRequestError) setFieldErrors(errorsByField(error));
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };

  const onSubmit = (event: Event) => {
    event.preventDefault();
    const body = Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value.trim() === '' ? null : value.trim()]));
    void run(async () => {
      const saved = editing ? await catalogue.update(kind, editing.id, body) : await catalogue.create(kind, body);
      startEditing(undefined);
      return `${editing ? 'Saved' : 'Created'} ${settings.name(saved)}.`;
    });
  };

  const onDelete = (row: Reference) => {
    if (!window.confirm(`Delete the ${settings.singular} ${settings.name(row)}?`)) return;
    void run(async () => {
      await catalogue.remove(kind, row.id);
      if (editing?.id === row.id) startEditing(undefined);
      return `Deleted ${settings.name(row)}.`;
    });
  };

  return (
    <>
      <h1>{settings.title}</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {problem ? (
        <p class="state state-error" role="alert" data-testid="catalogue-error">
          {problem}
        </p>
      ) : null}
      <section class="panel panel-wide" aria-labelledby="reference-form-title">
        <h2 id="reference-form-title">{editing ? `Edit ${settings.name(editing)}` : `New ${settings.singular}`}</h2>
        <form class="profile-form" onSubmit={onSubmit} data-testid="reference-form" noValidate>
          {settings.fields.map((field) => {
            const id = `${kind}-${field.name}`;
            const onInput = (event: { currentTarget: { value: string } }) => setValues({ ...values, [field.name]: event.currentTarget.value });
            const error = fieldErrors[field.name];
            return (
              <div class="field" key={field.name}>
                <label for={id}>
                  {field.label}
                  {field.required ? ' (required)' : ''}
                </label>
                {field.multiline ? (
                  <textarea id={id} name={field.name} value={values[field.name]} onInput={onInput} aria-invalid={error ? 'true' : undefined} />
                ) : (
                  <input id={id} name={field.name} value={values[field.name]} onInput={onInput} aria-invalid={error ? 'true' : undefined} />
                )}
                {error ? (
                  <small class="field-error" data-testid={`error-${field.name}`}>
                    {error}
                  </small>
                ) : null}
              </div>
            );
          })}
          <div class="search-row">
            <button type="submit" disabled={busy}>
              {editing ? 'Save' : 'Create'}
            </button>
            {editing ? (
              <button type="button" class="button-secondary" onClick={() => startEditing(undefined)}>
                Cancel
              </button>
            ) : null}
          </div>
        </form>
      </section>

      {rows.status === 'loading' ? <Loading what={settings.title.toLowerCase()} /> : null}
      {rows.status === 'error' ? <ErrorMessage error={rows.error} what={settings.title.toLowerCase()} onRetry={rows.reload} /> : null}
      {rows.status === 'ready' && rows.data.length === 0 ? <Empty>No {settings.title.toLowerCase()} yet.</Empty> : null}
      {rows.status === 'ready' && rows.data.length > 0 ? (
        <DataTable testId={kind} columns={['Name', ...settings.fields.slice(1).flatMap((field) => (field.name === 'lastName' ? [] : [field.label])), 'Actions']}>
          {rows.data.map((row) => (
            <tr key={row.id}>
              <td>{settings.name(row)}</td>
              {settings.fields
                .slice(1)
                .map((field) =>
                  field.name === 'lastName' ? null : <td key={field.name}>{String((row as unknown as Record<string, string | number | null | undefined>)[field.name] ?? '')}</td>,
                )}
              <td>
                <button type="button" class="button-secondary" onClick={() => startEditing(row)} disabled={busy}>
                  Edit
                </button>{' '}
                <button type="button" class="button-danger" onClick={() => onDelete(row)} disabled={busy}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </>
  );
}
