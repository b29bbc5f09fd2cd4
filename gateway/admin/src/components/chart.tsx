/**
 * A uPlot chart of days or months (UTC) with its data also written out as a table:
 * screen readers read the table, and tests read it (and `data-series`) instead of canvas pixels.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  /** One value per x. */
  values: number[];
  dashed?: boolean;
}

export interface ChartProps {
  id: string;
  title: string;
  /** One label per x position, ascending: each day (yyyy-MM-dd) or month (yyyy-MM) of the range. */
  labels: string[];
  unit: 'day' | 'month';
  series: ChartSeries[];
  kind: 'bars' | 'lines';
  /** The server's points, as they came (days or months with activity). */
  points: Record<string, string | number>[];
  columns: { key: string; label: string }[];
  /** Counts: whole-number steps on the y axis. */
  integers?: boolean;
  /** Spans the whole row of the chart grid. */
  wide?: boolean;
}

/** x is the position in `labels`: uPlot's own time axis would label hours and local time zones. */
function options(props: ChartProps, width: number): uPlot.Options {
  const label = (v: number | null | undefined) => (v == null ? '' : (props.labels[Math.round(v)] ?? ''));
  const bars = uPlot.paths.bars?.({ size: [0.7, 40] });
  return {
    width,
    height: 220,
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: () => [-0.5, props.labels.length - 0.5] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        space: props.unit === 'day' ? 84 : 64,
        incrs: [1, 2, 3, 7, 14, 28, 56, 91, 182, 364],
        values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? label(v) : '')),
      },
      { size: 56, incrs: props.integers ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000] : undefined },
    ],
    series: [
      { label: props.unit === 'day' ? 'Day' : 'Month', value: (_u, v) => label(v) },
      ...props.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        fill: props.kind === 'bars' ? `${s.color}cc` : undefined,
        paths: props.kind === 'bars' ? bars : undefined,
        dash: s.dashed ? [6, 4] : undefined,
        points: { show: props.kind === 'lines' && props.labels.length <= 62 },
      })),
    ],
  };
}

export function Chart(props: ChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  // Redrawn when the data changes, not on every render of the page around it.
  const drawn = JSON.stringify([props.labels, props.series, props.kind]);
  const latest = useRef(props);
  latest.current = props;
  useEffect(() => {
    const props = latest.current;
    const element = holder.current;
    if (!element || props.labels.length === 0) return;
    // A bar of zero is left out rather than drawn as a dash on the axis.
    const values = props.series.map((s) => (props.kind === 'bars' ? s.values.map((v) => (v === 0 ? null : v)) : s.values));
    const plot = new uPlot(options(props, element.clientWidth || 600), [props.labels.map((_, i) => i), ...values], element);
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [drawn]);

  return (
    <figure class={props.wide ? 'chart chart-wide' : 'chart'} data-testid={props.id} data-series={JSON.stringify(props.points)} aria-labelledby={`${props.id}-title`}>
      <figcaption id={`${props.id}-title`}>{props.title}</figcaption>
      {props.labels.length === 0 ? (
        <p class="chart-empty">Nothing to draw in this range.</p>
      ) : (
        <div ref={holder} class="chart-canvas" role="img" aria-label={`${props.title}: ${props.points.length} ${props.unit === 'day' ? 'days' : 'months'} with activity`} />
      )}
      <div class="visually-hidden">
        <table>
          <caption>{props.title}</caption>
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th scope="col" key={column.key}>
                  {column.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.points.map((point, i) => (
              <tr key={i}>
                {props.columns.map((column) => (
                  <td key={column.key}>{point[column.key]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
