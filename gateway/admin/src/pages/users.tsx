/** Users: every profile, or those matching a search (`?q=`), each linking to its page. */
import { useState } from 'preact/hooks';
import { api } from '../api/operations';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { DataTable } from '../components/table';
import { fullName, timestamp } from '../format';
import { useRemote } from '../hooks';
import { href, Link, navigate, takeFlash, type Location } from '../router';

export function UsersPage({ location }: { location: Location }) {
  const keyword = (location.query.get('q') ?? '').trim();
  const [draft, setDraft] = useState(keyword);
  const [flash] = useState(takeFlash);
  const users = useRemote(() => (keyword ? api.searchUsers(keyword) : api.users()), [keyword]);

  const onSubmit = (event: Event) => {
    event.preventDefault();
    navigate(href('/users', { q: draft.trim() }));
  };

  return (
    <>
      <h1>Users</h1>
      {flash ? (
        <p class="notice" role="status">
          {flash}
        </p>
      ) : null}
      <form class="search-form" role="search" onSubmit={onSubmit}>
        <label for="user-search">Search by name or email</label>
        <div class="search-row">
          <input id="user-search" type="search" name="q" value={draft} onInput={(event) => setDraft(event.currentTarget.value)} placeholder="e.g. ada or @example.com" />
          <button type="submit">Search</button>
          {keyword ? (
            <button
              type="button"
              class="button-secondary"
              onClick={() => {
                setDraft('');
                navigate(href('/users'));
              }}
            >
              Clear
            </button>
          ) : null}
        </div>
      </form>

      {users.status === 'loading' ? <Loading what="users" /> : null}
      {users.status === 'error' ? <ErrorMessage error={users.error} what="users" onRetry={users.reload} /> : null}
      {users.status === 'ready' && users.data.length === 0 ? <Empty>{keyword ? `No user matches “${keyword}”.` : 'No users yet.'}</Empty> : null}
      {users.status === 'ready' && users.data.length > 0 ? (
        <>
          <p class="muted" aria-live="polite">
            {users.data.length} {users.data.length === 1 ? 'user' : 'users'}
            {keyword ? ` matching “${keyword}”` : ''}
          </p>
          <DataTable testId="users" columns={['Name', 'Email', 'Phone', 'Joined']}>
            {users.data.map((user) => (
              <tr key={user.userId}>
                <td>
                  <Link href={href(`/users/${user.userId}`)}>{fullName(user)}</Link>
                </td>
                <td>{user.email}</td>
                <td>{user.phoneNumber}</td>
                <td>{timestamp(user.createdAt)}</td>
              </tr>
            ))}
          </DataTable>
        </>
      ) : null}
    </>
  );
}
