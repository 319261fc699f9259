// The data source the TypeORM CLI uses (npm run migration:run / migration:revert / migration:show).
import 'reflect-metadata';
import { createDataSource } from './src/database/data-source';

export default createDataSource(
  process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/shopping_analytics',
);
