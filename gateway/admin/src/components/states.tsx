/** Loading, error and empty states, the same on every page. */
import type { ComponentChildren } from 'preact';
import { GraphqlRequestError } from '../api/graphql';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function ErrorMessage({ error, what, onRetry }: { error: Error; what?: string; onRetry?: () => void }) {
  const code = error instanceof GraphqlRequestError && error.code && error.code !== 'INTERNAL_SERVER_ERROR' ? error.code : undefined;
  return (
    <div class="state state-error" role="alert">
      <p>
        {what ? <strong>Could not load {what}: </strong> : null}
        <span data-testid="error-message">{error.message}</span>
        {code ? <span class="error-code"> ({code})</span> : null}
      </p>
      {onRetry ? (
        <button type="button" class="button-secondary" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return (
    <p class="state state-empty" data-testid="empty">
      {children}
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}
