/** Decorators and setup of the OpenAPI document (see docs/openapi.md "How to document a route"). */
export * from './api-paged-list.decorator';
export * from './api-problems.decorator';
export * from './api-query.decorators';
export * from './api-responses.decorators';
export * from './nullable-schemas';
export * from './openapi-document';
export * from './problem.schema';
export * from './resource.schemas';
export * from './served-routes';
export * from './resource-routes.decorators';
