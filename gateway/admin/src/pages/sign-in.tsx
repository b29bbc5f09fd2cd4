/** The sign-in form, and where a refused non-admin or an ended session is told why. */
import { useState } from 'preact/hooks';
import { REFUSAL, signIn, type AuthState } from '../api/auth';

export function SignInPage({ notice }: { notice: Extract<AuthState, { status: 'signed-out' }>['notice'] }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const failure = await signIn(email.trim(), password);
    setBusy(false);
    if (failure) setError(failure);
    else setPassword('');
  };

  return (
    <main class="sign-in" id="main">
      <form class="sign-in-card" onSubmit={(event) => void onSubmit(event)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Bookstore admin</h1>
        <p class="muted">Sign in with an administrator account.</p>
        {notice?.kind === 'refused' ? (
          <div class="state state-error" role="alert" data-testid="refusal">
            <strong>{REFUSAL}.</strong>
            <p>{notice.message}</p>
          </div>
        ) : notice ? (
          <p class="notice" role="status">
            {notice.message}
          </p>
        ) : null}
        {error ? (
          <p class="state state-error" role="alert" data-testid="sign-in-error">
            {error}
          </p>
        ) : null}
        <div class="field">
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
