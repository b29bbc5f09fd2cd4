/** Loading a page's data: one state for loading, failure and success, and a way to load again. */
import { useCallback, useEffect, useState } from 'preact/hooks';

export type Remote<T> = { status: 'loading' } | { status: 'error'; error: Error } | { status: 'ready'; data: T };

export function useRemote<T>(load: () => Promise<T>, deps: unknown[]): Remote<T> & { reload: () => void } {
  const [state, setState] = useState<Remote<T>>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    setState({ status: 'loading' });
    load().then(
      (data) => live && setState({ status: 'ready', data }),
      (error: unknown) => live && setState({ status: 'error', error: error instanceof Error ? error : new Error(String(error)) }),
    );
    return () => {
      live = false;
    };
  }, [...deps, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { ...state, reload };
}
