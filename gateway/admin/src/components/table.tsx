/** The admin's tables, the same on every page: a header row of columns, scrolling sideways on a narrow screen. */
import type { ComponentChildren } from 'preact';

/** A column's heading; a numeric column is right-aligned. */
export type Column = string | { label: string; numeric: true };

export function DataTable({ testId, columns, children }: { testId: string; columns: Column[]; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <th scope="col" key={column}>
                  {column}
                </th>
              ) : (
                <th scope="col" class="num" key={column.label}>
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
