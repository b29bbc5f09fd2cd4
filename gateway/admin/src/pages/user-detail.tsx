/**
 * One user: the profile with its payments, orders and signed-in devices (one federated query), the
 * profile form (validation errors shown by field), ending every session of the user, and deletion;
 * neither of the last two is offered for one's own account.
 */
import { useState } from 'preact/hooks';
import { errorsByField, GraphqlRequestError } from '../api/graphql';
import { api, type LineItem, type ProfileFields, type UserData, type UserOrder, type UserPayment, type UserProfile, type UserSession } from '../api/operations';
import { Empty, ErrorMessage, Loading, StatusBadge } from '../components/states';
import { DataTable } from '../components/table';
import { fullName, money, shortId, timestamp } from '../format';
import { useRemote } from '../hooks';
import { href, Link, navigate } from '../router';

type User = NonNullable<UserData['user']>;

const FIELDS: { name: keyof ProfileFields; label: string; type: 'text' | 'tel' | 'date'; autocomplete: string }[] = [
  { name: 'firstName', label: 'First name', type: 'text', autocomplete: 'off' },
  { name: 'lastName', label: 'Last name', type: 'text', autocomplete: 'off' },
  { name: 'phoneNumber', label: 'Phone number', type: 'tel', autocomplete: 'off' },
  { name: 'dateOfBirth', label: 'Date of birth', type: 'date', autocomplete: 'off' },
  { name: 'address', label: 'Address', type: 'text', autocomplete: 'off' },
];

function items(lines: LineItem[]): string {
  return lines.map((line) => `${line.quantity} × ${line.bookTitle}`).join(', ');
}

function ProfileForm({ user, onSaved }: { user: UserProfile; onSaved: (user: UserProfile) => void }) {
  const [values, setValues] = useState<ProfileFields>({
    firstName: user.firstName,
    lastName: user.lastName,
    phoneNumber: user.phoneNumber,
    dateOfBirth: user.dateOfBirth,
    address: user.address,
  });
  const [saving, setSaving] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | undefined>();
  const [saved, setSaved] = useState(false);

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    setSaved(false);
    setError(undefined);
    setFieldErrors({});
    try {
      onSaved(await api.updateUser(user.userId, values));
      setSaved(true);
    } catch (caught) {
      const failure = caught instanceof Error ? caught : new Error(String(caught));
      const byField = failure instanceof GraphqlRequestError ? errorsByField(failure) : {};
      setFieldErrors(byField);
      setError(failure);
    } finally {
      setSaving(false);
    }
  };

  return (
    <form class="profile-form" onSubmit={(event) => void onSubmit(event)} aria-labelledby="profile-title" noValidate>
      <h2 id="profile-title">Profile</h2>
      <div class="field">
        <label for="field-email">Email</label>
        <input id="field-email" type="email" value={user.email} readOnly aria-describedby="email-hint" />
        <small id="email-hint" class="muted">
          The email is the sign-in name and cannot be changed here.
        </small>
      </div>
      {FIELDS.map((field) => {
        const problem = fieldErrors[field.name];
        const common = {
          id: `field-${field.name}`,
          name: field.name,
          autocomplete: field.autocomplete,
          value: values[field.name],
          'aria-invalid': problem ? true : undefined,
          'aria-describedby': problem ? `error-${field.name}` : undefined,
          onInput: (event: Event) => setValues({ ...values, [field.name]: (event.currentTarget as HTMLInputElement).value }),
        };
        return (
          <div class="field" key={field.name}>
            <label for={`field-${field.name}`}>{field.label}</label>
            {field.type === 'date' ? <input type="date" {...common} /> : field.type === 'tel' ? <input type="tel" {...common} /> : <input type="text" {...common} />}
            {problem ? (
              <small id={`error-${field.name}`} class="field-error" data-testid={`error-${field.name}`}>
                {problem}
              </small>
            ) : null}
          </div>
        );
      })}
      {error ? (
        <p class="state state-error" role="alert">
          {error.message}
        </p>
      ) : null}
      {saved ? (
        <p class="notice" role="status">
          Saved.
        </p>
      ) : null}
      <button type="submit" disabled={saving}>
        {saving ? 'Saving…' : 'Save changes'}
      </button>
    </form>
  );
}

function DeleteUser({ user, self }: { user: UserProfile; self: boolean }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();

  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api.deleteUser(user.userId);
      navigate(href('/users'), { flash: `Deleted ${fullName(user)} (${user.email}).` });
    } catch (caught) {
      setError(caught instanceof Error ? caught : new Error(String(caught)));
      setBusy(false);
      setConfirming(false);
    }
  };

  return (
    <section class="panel danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete user</h2>
      {self ? (
        <p class="muted" id="delete-self-hint">
          This is your own account: an administrator cannot delete themself.
        </p>
      ) : (
        <p class="muted">Deletes the profile; the account can no longer sign in. Its payments and orders are kept.</p>
      )}
      {error ? <ErrorMessage error={error} /> : null}
      {confirming ? (
        <div class="confirm" role="group" aria-label="Confirm deletion">
          <p>
            Delete <strong>{fullName(user)}</strong> ({user.email})?
          </p>
          <button type="button" class="button-danger" onClick={() => void remove()} disabled={busy}>
            {busy ? 'Deleting…' : 'Yes, delete'}
          </button>
          <button type="button" class="button-secondary" onClick={() => setConfirming(false)} disabled={busy}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" class="button-danger" disabled={self} aria-describedby={self ? 'delete-self-hint' : undefined} onClick={() => setConfirming(true)}>
          Delete user
        </button>
      )}
    </section>
  );
}

function Sessions({ user, sessions, self }: { user: UserProfile; sessions: UserSession[] | null; self: boolean }) {
  const [shown, setShown] = useState(sessions);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const [notice, setNotice] = useState<string | undefined>();

  const endAll = async () => {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const ended = await api.endUserSessions(user.userId);
      setShown([]);
      setNotice(`Ended ${ended} session${ended === 1 ? '' : 's'}: ${fullName(user)} is signed out everywhere.`);
    } catch (caught) {
      setError(caught instanceof Error ? caught : new Error(String(caught)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel panel-wide" aria-labelledby="sessions-list-title">
      <h2 id="sessions-list-title">Sessions</h2>
      {shown === null ? (
        <p class="muted">The sessions could not be read.</p>
      ) : shown.length === 0 ? (
        <Empty>Not signed in anywhere.</Empty>
      ) : (
        <DataTable testId="user-sessions" columns={['Device', 'Device id', 'Signed in', 'Last used']}>
          {shown.map((session) => (
            <tr key={session.sessionId} data-session-id={session.sessionId}>
              <td>{session.deviceName}</td>
              <td>
                <code>{session.deviceId}</code>
              </td>
              <td>{timestamp(session.createdAt)}</td>
              <td>{timestamp(session.lastUsedAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {error ? <ErrorMessage error={error} /> : null}
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {self ? (
        <p class="muted" id="end-sessions-self-hint">
          These are your own sessions: sign out to end this one.
        </p>
      ) : null}
      <button
        type="button"
        class="button-danger"
        disabled={self || busy || !shown || shown.length === 0}
        aria-describedby={self ? 'end-sessions-self-hint' : undefined}
        onClick={() => void endAll()}
      >
        {busy ? 'Ending…' : 'End all sessions'}
      </button>
    </section>
  );
}

function Payments({ payments }: { payments: UserPayment[] }) {
  return (
    <section class="panel panel-wide" aria-labelledby="payments-list-title">
      <h2 id="payments-list-title">Payments</h2>
      {payments.length === 0 ? (
        <Empty>No payments.</Empty>
      ) : (
        <DataTable testId="user-payments" columns={['Payment', 'Created', 'Items', { label: 'Amount', numeric: true }, 'Status', 'Order']}>
          {payments.map((payment) => (
            <tr key={payment.paymentId} data-payment-id={payment.paymentId}>
              <td>
                <code title={payment.paymentId}>{shortId(payment.paymentId)}</code>
              </td>
              <td>{timestamp(payment.createdAt)}</td>
              <td>{items(payment.items)}</td>
              <td class="num">
                {money(payment.amount)} {payment.currency.toUpperCase()}
              </td>
              <td>
                <StatusBadge status={payment.status} />
              </td>
              <td>{payment.orderId ? <code title={payment.orderId}>{shortId(payment.orderId)}</code> : <span class="muted">none yet</span>}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function Orders({ orders }: { orders: UserOrder[] }) {
  return (
    <section class="panel panel-wide" aria-labelledby="orders-list-title">
      <h2 id="orders-list-title">Orders</h2>
      {orders.length === 0 ? (
        <Empty>No orders.</Empty>
      ) : (
        <DataTable testId="user-orders" columns={['Order', 'Created', 'Items', { label: 'Total', numeric: true }, 'Status']}>
          {orders.map((order) => (
            <tr key={order.orderId} data-order-id={order.orderId}>
              <td>
                <code title={order.orderId}>{shortId(order.orderId)}</code>
              </td>
              <td>{timestamp(order.createdAt)}</td>
              <td>{items(order.items)}</td>
              <td class="num">{money(order.totalAmount)}</td>
              <td>
                <StatusBadge status={order.status} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <p class="muted">
        Change an order's status on the <Link href={href('/orders')}>Orders</Link> page.
      </p>
    </section>
  );
}

export function UserDetailPage({ userId, selfId }: { userId: string; selfId: string }) {
  const remote = useRemote(() => api.user(userId), [userId]);
  const [edited, setEdited] = useState<UserProfile | undefined>();

  if (remote.status === 'loading') return <Loading what="the user" />;
  const missing = remote.status === 'error' && remote.error instanceof GraphqlRequestError && remote.error.code === 'NOT_FOUND';
  if (remote.status === 'error' && !missing) return <ErrorMessage error={remote.error} what="the user" onRetry={remote.reload} />;
  if (remote.status === 'error' || !remote.data) {
    return (
      <>
        <h1>User not found</h1>
        <Empty>
          No user has the id <code>{userId}</code>. <Link href={href('/users')}>Back to users</Link>
        </Empty>
      </>
    );
  }
  const user: User = { ...remote.data, ...edited };
  return (
    <>
      <p class="breadcrumb">
        <Link href={href('/users')}>Users</Link> / {fullName(user)}
      </p>
      <h1>{fullName(user)}</h1>
      <p class="muted">
        {user.email} · joined {timestamp(user.createdAt)} · id <code>{user.userId}</code>
      </p>
      <div class="panels">
        <section class="panel">
          <ProfileForm user={user} onSaved={setEdited} />
        </section>
        <DeleteUser user={user} self={user.userId === selfId} />
      </div>
      <Sessions user={user} sessions={user.sessions} self={user.userId === selfId} />
      <Payments payments={user.payments} />
      <Orders orders={user.orders} />
    </>
  );
}
