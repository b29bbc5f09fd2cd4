/** The shell: sign-in until an admin is in, then the header, the navigation and the current page. */
import { useEffect, useState } from 'preact/hooks';
import { authState, onAuthChange, restore, signOut, type AuthState, type Session } from './api/auth';
import { Empty } from './components/states';
import { BookPage } from './pages/book';
import { BooksPage } from './pages/books';
import { MailPage } from './pages/mail';
import { ReferencePage } from './pages/references';
import { SchemaPage } from './pages/schema';
import { DashboardPage } from './pages/dashboard';
import { OrderDetailPage } from './pages/order-detail';
import { OrdersPage } from './pages/orders';
import { SignInPage } from './pages/sign-in';
import { UserDetailPage } from './pages/user-detail';
import { UsersPage } from './pages/users';
import { WebhooksPage } from './pages/webhooks';
import { href, Link, useLocation, type Location } from './router';

const UUID = '[0-9a-fA-F-]{36}';

function Page({ location, session }: { location: Location; session: Session }) {
  const path = location.path.replace(/\/+$/, '') || '/';
  let match: RegExpMatchArray | null;
  if (path === '/') return <DashboardPage location={location} />;
  if (path === '/users') return <UsersPage key={location.query.get('q') ?? ''} location={location} />;
  if ((match = path.match(new RegExp(`^/users/(${UUID})$`)))) return <UserDetailPage key={match[1]} userId={match[1]} selfId={session.userId} />;
  if (path === '/orders') return <OrdersPage location={location} />;
  if ((match = path.match(new RegExp(`^/orders/(${UUID})$`)))) return <OrderDetailPage key={match[1]} orderId={match[1]} />;
  if (path === '/books') return <BooksPage key={location.query.toString()} location={location} />;
  if (path === '/authors' || path === '/categories' || path === '/publishers') return <ReferencePage key={path} kind={path.slice(1) as 'authors' | 'categories' | 'publishers'} />;
  if ((match = path.match(new RegExp(`^/books/(${UUID})$`)))) return <BookPage key={match[1]} bookId={match[1]} />;
  if (path === '/webhooks') return <WebhooksPage location={location} />;
  if (path === '/mail') return <MailPage />;
  if (path === '/schema') return <SchemaPage location={location} />;
  return (
    <>
      <h1>Page not found</h1>
      <Empty>
        Nothing lives at <code>{window.location.pathname}</code>. <Link href={href('/')}>Go to the dashboard</Link>
      </Empty>
    </>
  );
}

const SECTIONS = [
  { path: '/', label: 'Dashboard', matches: (p: string) => p === '/' },
  { path: '/users', label: 'Users', matches: (p: string) => p.startsWith('/users') },
  { path: '/orders', label: 'Orders', matches: (p: string) => p.startsWith('/orders') },
  { path: '/books', label: 'Books', matches: (p: string) => p.startsWith('/books') },
  { path: '/authors', label: 'Authors', matches: (p: string) => p.startsWith('/authors') },
  { path: '/categories', label: 'Categories', matches: (p: string) => p.startsWith('/categories') },
  { path: '/publishers', label: 'Publishers', matches: (p: string) => p.startsWith('/publishers') },
  { path: '/webhooks', label: 'Webhooks', matches: (p: string) => p.startsWith('/webhooks') },
  { path: '/mail', label: 'Mail', matches: (p: string) => p.startsWith('/mail') },
  { path: '/schema', label: 'Schema', matches: (p: string) => p.startsWith('/schema') },
];

function Shell({ session }: { session: Session }) {
  const location = useLocation();
  const [leaving, setLeaving] = useState(false);
  useEffect(() => {
    const section = SECTIONS.find((s) => s.matches(location.path));
    document.title = section ? `${section.label} · Bookstore admin` : 'Bookstore admin';
  }, [location.path]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top-bar">
        <Link class="brand" href={href('/')}>
          Bookstore admin
        </Link>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((section) => (
              <li key={section.path}>
                <Link href={href(section.path)} aria-current={section.matches(location.path) ? 'page' : undefined}>
                  {section.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="who-email" data-testid="signed-in-as">
            {session.email}
          </span>
          <button
            type="button"
            class="button-secondary"
            disabled={leaving}
            onClick={() => {
              setLeaving(true);
              void signOut();
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page location={location} session={session} />
      </main>
    </>
  );
}

export function App() {
  const [auth, setAuth] = useState<AuthState>(authState);
  useEffect(() => {
    const unsubscribe = onAuthChange(setAuth);
    void restore();
    return unsubscribe;
  }, []);

  if (auth.status === 'restoring') {
    return (
      <p class="state state-loading" role="status">
        <span class="spinner" aria-hidden="true" /> Restoring your session…
      </p>
    );
  }
  if (auth.status === 'signed-out') return <SignInPage notice={auth.notice} />;
  // Keyed by account: a different admin signing in starts from fresh page state.
  return <Shell key={auth.session.userId} session={auth.session} />;
}
