/**
 * The dashboard: all-time figures (DashboardResponse) as cards, payment success, best sellers, and
 * revenue and order charts over a date range kept in the URL (`?from=&to=`, inclusive UTC days).
 * It is live: the cards follow the gateway's `dashboardUpdated` subscription, and each change it
 * brings loads the rest again (payment success, best sellers, charts) without a reload; a lost
 * connection shows beside the title until it is back.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { liveDashboard, type LiveFigures, type LiveStatus } from '../api/live';
import { api, type DashboardData, type ReportsData } from '../api/operations';
import { Chart } from '../components/chart';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { DataTable } from '../components/table';
import { count, DAY_MS, defaultRange, isIsoDay, money, percent } from '../format';
import { useRemote } from '../hooks';
import { href, Link, navigate, type Location } from '../router';

/** Filling every day of a longer range would only draw a flat line; past this the chart shows active days. */
const MAX_FILLED_DAYS = 732;

function DashboardCards({ data }: { data: Pick<DashboardData, 'dashboard'> }) {
  const d = data.dashboard;
  const cards: { key: keyof typeof d; label: string; value: string; raw: string | number }[] = [
    { key: 'totalRevenue', label: 'Total revenue', value: money(d.totalRevenue), raw: d.totalRevenue },
    { key: 'paidOrders', label: 'Paid orders', value: count(d.paidOrders), raw: d.paidOrders },
    { key: 'totalOrders', label: 'Orders created', value: count(d.totalOrders), raw: d.totalOrders },
    { key: 'averageOrderValue', label: 'Average order value', value: money(d.averageOrderValue), raw: d.averageOrderValue },
    { key: 'booksSold', label: 'Books sold', value: count(d.booksSold), raw: d.booksSold },
    { key: 'failedPayments', label: 'Failed payments', value: count(d.failedPayments), raw: d.failedPayments },
    { key: 'paymentSuccessRate', label: 'Payment success rate', value: percent(d.paymentSuccessRate), raw: d.paymentSuccessRate },
    // Every refund that succeeded, partial or full; revenue and books sold above are net of them.
    { key: 'totalRefunds', label: 'Refunds', value: count(d.totalRefunds), raw: d.totalRefunds },
    { key: 'refundedAmount', label: 'Refunded', value: money(d.refundedAmount), raw: d.refundedAmount },
  ];
  return (
    <dl class="cards">
      {cards.map((card) => (
        <div class="card" key={card.key} data-testid={`card-${card.key}`} data-value={String(card.raw)}>
          <dt>{card.label}</dt>
          <dd>{card.value}</dd>
        </div>
      ))}
    </dl>
  );
}

function PaymentSuccess({ data }: { data: DashboardData }) {
  const p = data.paymentReport;
  const settled = p.paidOrders + p.failedPayments;
  return (
    <section class="panel" aria-labelledby="payments-title" data-testid="payment-success">
      <h2 id="payments-title">Payment success</h2>
      {settled === 0 ? (
        <Empty>No payment has been settled yet.</Empty>
      ) : (
        <>
          <p class="big-figure">{percent(p.paymentSuccessRate)}</p>
          <meter class="success-meter" min={0} max={100} low={80} optimum={100} value={p.paymentSuccessRate} aria-label="Payment success rate">
            {percent(p.paymentSuccessRate)}
          </meter>
          <p class="muted">
            {count(p.paidOrders)} paid, {count(p.failedPayments)} failed
          </p>
        </>
      )}
      <p class="muted">
        Refunded in full: {count(p.refundedPayments)} ({money(p.refundedAmount)})
      </p>
    </section>
  );
}

function TopBooks({ data }: { data: DashboardData }) {
  const books = data.bookReport.topBooks;
  return (
    <section class="panel panel-wide" aria-labelledby="top-books-title">
      <h2 id="top-books-title">Top books</h2>
      {books.length === 0 ? (
        <Empty>No book has sold yet.</Empty>
      ) : (
        <DataTable testId="top-books" columns={['#', 'Title', { label: 'Quantity', numeric: true }, { label: 'Revenue', numeric: true }]}>
          {books.map((book, i) => (
            <tr key={book.bookId}>
              <td>{i + 1}</td>
              <td>
                <Link href={href(`/books/${book.bookId}`)}>{book.book?.title ?? book.bookTitle}</Link>
                {book.book ? null : <span class="muted"> (no longer in the catalogue)</span>}
              </td>
              <td class="num">{count(book.quantitySold)}</td>
              <td class="num">{money(book.revenue)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function daysOf(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  const days: string[] = [];
  for (let t = start; t <= end && days.length <= MAX_FILLED_DAYS; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

function monthsOf(from: string, to: string): string[] {
  const months: string[] = [];
  let [year, month] = from.slice(0, 7).split('-').map(Number) as [number, number];
  const last = to.slice(0, 7);
  for (;;) {
    const label = `${year}-${String(month).padStart(2, '0')}`;
    if (label > last || months.length > 120) break;
    months.push(label);
    month += 1;
    if (month > 12) [year, month] = [year + 1, 1];
  }
  return months;
}

/** Every day (or month) of the range on x, zero where the server reported no activity. */
function filled<T extends Record<string, string | number>>(labels: string[], points: T[], key: keyof T, value: (point: T) => number): number[] {
  const byLabel = new Map(points.map((point) => [String(point[key]), value(point)]));
  return labels.map((label) => byLabel.get(label) ?? 0);
}

function Charts({ data, from, to }: { data: ReportsData; from: string; to: string }) {
  const { revenueReport: revenue, orderReport: orders } = data;
  let days = daysOf(from, to);
  if (days.length > MAX_FILLED_DAYS) days = [...new Set([...revenue.daily.map((d) => d.date), ...orders.daily.map((d) => d.date)])].sort();
  const months = monthsOf(from, to);
  const noSales = revenue.daily.length === 0;
  return (
    <>
      <p class="range-summary" data-testid="range-summary">
        {from} to {to}: revenue <strong>{money(revenue.totalRevenue)}</strong>, {count(orders.totalOrders)} {orders.totalOrders === 1 ? 'order' : 'orders'} created,{' '}
        {count(orders.paidOrders)} paid
      </p>
      {noSales ? (
        <Empty>
          No sales between {from} and {to}.
        </Empty>
      ) : null}
      <div class="charts">
        <Chart
          id="chart-revenue-daily"
          title="Revenue per day"
          unit="day"
          kind="bars"
          labels={noSales ? [] : days}
          series={[{ label: 'Revenue', color: '#2563eb', values: filled(days, revenue.daily, 'date', (d) => Number(d.revenue)) }]}
          points={revenue.daily}
          columns={[
            { key: 'date', label: 'Day' },
            { key: 'revenue', label: 'Revenue' },
            { key: 'paidOrders', label: 'Paid orders' },
          ]}
        />
        <Chart
          id="chart-revenue-monthly"
          title="Revenue per month"
          unit="month"
          kind="bars"
          labels={noSales ? [] : months}
          series={[{ label: 'Revenue', color: '#0f766e', values: filled(months, revenue.monthly, 'month', (m) => Number(m.revenue)) }]}
          points={revenue.monthly}
          columns={[
            { key: 'month', label: 'Month' },
            { key: 'revenue', label: 'Revenue' },
            { key: 'paidOrders', label: 'Paid orders' },
            { key: 'ordersCreated', label: 'Orders created' },
          ]}
        />
        <Chart
          id="chart-orders-daily"
          wide
          title="Orders created vs paid per day"
          unit="day"
          kind="lines"
          labels={orders.daily.length === 0 ? [] : days}
          series={[
            { label: 'Created', color: '#7c3aed', values: filled(days, orders.daily, 'date', (d) => d.ordersCreated) },
            { label: 'Paid', color: '#16a34a', values: filled(days, orders.daily, 'date', (d) => d.paidOrders), dashed: true },
          ]}
          integers
          points={orders.daily}
          columns={[
            { key: 'date', label: 'Day' },
            { key: 'ordersCreated', label: 'Orders created' },
            { key: 'paidOrders', label: 'Paid orders' },
          ]}
        />
      </div>
    </>
  );
}

function RangeForm({ from, to }: { from: string; to: string }) {
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => {
      const value = form.get(name);
      return typeof value === 'string' ? value : '';
    };
    navigate(href('/', { from: text('from'), to: text('to') }));
  };
  return (
    <form class="range-form" onSubmit={onSubmit} aria-label="Date range">
      <label>
        From
        <input type="date" name="from" value={from} required />
      </label>
      <label>
        To
        <input type="date" name="to" value={to} required />
      </label>
      <button type="submit">Show</button>
      <button type="button" class="button-secondary" onClick={() => navigate(href('/'))}>
        Last 30 days
      </button>
      <span class="muted">UTC days, both inclusive</span>
    </form>
  );
}

/**
 * What a remote value last was when ready, shown while a live change loads it again so the page
 * does not blank; forgotten when `key` (what is asked, e.g. the date range) changes.
 */
function useSteady<T>(remote: ReturnType<typeof useRemote<T>>, key = ''): T | undefined {
  const last = useRef<{ key: string; data: T } | undefined>(undefined);
  if (remote.status === 'ready') last.current = { key, data: remote.data };
  return last.current?.key === key ? last.current.data : undefined;
}

/** The live figures and the stream's state; `changes` counts the values after the first. */
function useLiveFigures(): { figures: LiveFigures | undefined; status: LiveStatus; changes: number } {
  const [state, setState] = useState<{ figures: LiveFigures | undefined; status: LiveStatus; changes: number }>({ figures: undefined, status: 'connecting', changes: 0 });
  useEffect(
    () =>
      liveDashboard({
        value: (figures) => setState((now) => ({ figures, status: 'live', changes: now.figures ? now.changes + 1 : now.changes })),
        status: (status) => setState((now) => ({ ...now, status })),
      }),
    [],
  );
  return state;
}

const LIVE_LABELS: Record<LiveStatus, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Connection lost: reconnecting…' };

export function DashboardPage({ location }: { location: Location }) {
  const defaults = defaultRange();
  const from = isIsoDay(location.query.get('from')) ? (location.query.get('from') as string) : defaults.from;
  const to = isIsoDay(location.query.get('to')) ? (location.query.get('to') as string) : defaults.to;
  const live = useLiveFigures();
  // Each change the stream brings loads the rest of the page again.
  const figures = useRemote(() => api.dashboard(), []);
  const reports = useRemote(() => api.reports(from, to), [from, to]);
  const { reload: reloadFigures } = figures;
  const { reload: reloadReports } = reports;
  useEffect(() => {
    if (live.changes === 0) return;
    reloadFigures();
    reloadReports();
  }, [live.changes, reloadFigures, reloadReports]);
  const shownFigures = useSteady(figures);
  const shownReports = useSteady(reports, `${from}/${to}`);
  const cards = shownFigures ? { dashboard: live.figures?.dashboardUpdated ?? shownFigures.dashboard } : undefined;

  return (
    <>
      <h1>
        Dashboard{' '}
        <span class={`live-status live-${live.status}`} role="status" data-testid="live-status" data-status={live.status}>
          {LIVE_LABELS[live.status]}
        </span>
      </h1>
      <section aria-labelledby="all-time-title">
        <h2 id="all-time-title">All time</h2>
        {!cards && figures.status === 'loading' ? <Loading what="the figures" /> : null}
        {figures.status === 'error' ? <ErrorMessage error={figures.error} what="the figures" onRetry={figures.reload} /> : null}
        {cards ? (
          <>
            <DashboardCards data={cards} />
            {cards.dashboard.totalOrders === 0 ? <Empty>No orders yet: the figures fill in as customers check out.</Empty> : null}
          </>
        ) : null}
      </section>

      <section class="panel panel-wide" aria-labelledby="range-title" data-testid="reports" aria-busy={reports.status === 'loading'}>
        <h2 id="range-title">Revenue and orders by date</h2>
        <RangeForm key={`${from}/${to}`} from={from} to={to} />
        {!shownReports && reports.status === 'loading' ? <Loading what="the reports" /> : null}
        {reports.status === 'error' ? <ErrorMessage error={reports.error} what="the reports" onRetry={reports.reload} /> : null}
        {shownReports && reports.status !== 'error' ? <Charts data={shownReports} from={from} to={to} /> : null}
      </section>

      {shownFigures ? (
        <div class="panels">
          <PaymentSuccess data={shownFigures} />
          <TopBooks data={shownFigures} />
        </div>
      ) : null}
    </>
  );
}
