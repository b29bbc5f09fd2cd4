/**
 * A router of a few lines for a few pages: paths under /admin/ in the History API, links that
 * navigate without a reload, and a one-shot flash message carried to the next page.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/admin';
const NAVIGATED = 'admin:navigated';
let flash: string | undefined;

export interface Location {
  /** The path below /admin, always starting with "/". */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const below = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : window.location.pathname;
  return { path: below === '' ? '/' : below, query: new URLSearchParams(window.location.search) };
}

/** Builds `/admin<path>?<query>`, leaving out empty query values. */
export function href(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => Boolean(entry[1]))).toString();
  return `${BASE}${path}${search ? `?${search}` : ''}`;
}

export function navigate(to: string, options: { flash?: string; replace?: boolean } = {}): void {
  flash = options.flash;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATED));
  window.scrollTo(0, 0);
}

/** The message the previous page left for this one, read once. */
export function takeFlash(): string | undefined {
  const message = flash;
  flash = undefined;
  return message;
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return location;
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page';
}

export function Link({ href: to, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={to} onClick={onClick}>
      {children}
    </a>
  );
}
