import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:isPublic';

/** Marks a route that needs no API key and is not rate limited (health checks, docs). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
