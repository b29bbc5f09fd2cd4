import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

const counter = (name: string) => ({ name, type: 'bigint', default: 0 });

export class CreateAnalytics1732000000600 implements MigrationInterface {
  name = 'CreateAnalytics1732000000600';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'analytics_payment_facts',
        columns: [
          { name: 'payment_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'amount_cents', type: 'bigint', isNullable: true },
          { name: 'items', type: 'text', isNullable: true },
          { name: 'created_day', type: 'varchar', length: '10', isNullable: true },
          { name: 'paid_day', type: 'varchar', length: '10', isNullable: true },
          { name: 'failed_day', type: 'varchar', length: '10', isNullable: true },
          { name: 'refunded_day', type: 'varchar', length: '10', isNullable: true },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'analytics_daily',
        columns: [
          { name: 'day', type: 'varchar', length: '10', isPrimary: true },
          counter('orders_created'),
          counter('paid_orders'),
          counter('failed_payments'),
          counter('revenue_cents'),
          counter('books_sold'),
          counter('refunded_payments'),
          counter('refunded_cents'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'analytics_book_sales',
        columns: [
          { name: 'book_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'book_title', type: 'varchar', length: '255' },
          counter('quantity_sold'),
          counter('revenue_cents'),
        ],
      }),
    );
    // topBooks reads the first ten rows of this order.
    await queryRunner.createIndex('analytics_book_sales', new TableIndex({ name: 'idx_book_sales_rank', columnNames: ['quantity_sold', 'revenue_cents', 'book_id'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('analytics_book_sales');
    await queryRunner.dropTable('analytics_daily');
    await queryRunner.dropTable('analytics_payment_facts');
  }
}
