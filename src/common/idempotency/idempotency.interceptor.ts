import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { SecretBox } from '../crypto/secret-box';
import { ApiError } from '../errors/api-error';
import type { ServiceRequest } from '../http/request-context';
import { parseIdempotencyKey, requestHash } from './idempotency-key';
import { IdempotencyKeysRepository, StoredAnswer } from './idempotency-keys.repository';
import { withinIdempotentTransaction } from './idempotent-transaction';

/**
 * Route metadata (@Idempotent({ sealAnswer: true })): the stored answer carries a secret shown
 * once (a webhook's signing secret), so it is kept encrypted (AES-256-GCM under
 * WEBHOOK_SECRET_KEY) and opened only to answer a retry.
 */
export const SEAL_ANSWER = 'idempotency:sealAnswer';

/**
 * Route metadata (@Idempotent({ conversationAnswer: true })): the answer carries a conversation's
 * text (the route's `:id`, else the answer's `data.id`), so it is stored with that conversation's
 * id and erased with it: rewritten by a redaction, cleared by a deletion (a replay then answers
 * 404 not_found).
 */
export const CONVERSATION_ANSWER = 'idempotency:conversationAnswer';

/**
 * Idempotency-Key semantics (see @Idempotent()): the key (per organization) is claimed in a
 * transaction that the route's write joins (IdempotentTransaction), and the answer (status and
 * body) is stored in it, so a retry with the same key and body returns the first answer and
 * records nothing twice, even when both arrive at once (the second waits on the first's row).
 * The same key with another body or route is 409 conflict. A failed request rolls back, so it
 * keeps no key and can be retried with the same key. A replay whose conversation was deleted
 * since (CONVERSATION_ANSWER) answers 404 not_found, as any request naming it would.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly box: SecretBox;

  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: IdempotencyKeysRepository,
    private readonly reflector: Reflector,
    config: AppConfig,
  ) {
    this.box = new SecretBox(config.webhooks.secretKey, 'idempotent-answers');
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<ServiceRequest>();
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    if (key === undefined) return next.handle();
    if (!req.auth) throw new Error('@Idempotent() used on a route without ApiKeyGuard');
    const hash = requestHash(req.method, req.path, req.body);
    const seal = this.reflector.get<boolean>(SEAL_ANSWER, context.getHandler()) === true;
    const ofConversation = this.reflector.get<boolean>(CONVERSATION_ANSWER, context.getHandler()) === true;
    const res = http.getResponse<Response>();
    const conversationOf = ofConversation ? (body: unknown) => answeredConversation(req, body) : undefined;
    return from(this.answer(req.auth.organizationId, key, hash, next, res, seal, conversationOf));
  }

  private async answer(
    organizationId: string,
    key: string,
    hash: string,
    next: CallHandler,
    res: Response,
    seal: boolean,
    conversationOf?: (body: unknown) => string | null,
  ): Promise<unknown> {
    const afterCommit: Array<() => Promise<void>> = [];
    const context = `${organizationId}:${key}`;
    const first = await this.dataSource.transaction(async (manager): Promise<StoredAnswer | undefined> => {
      if (!(await this.keys.claim(organizationId, key, hash, manager))) return undefined;
      // next.handle() is called inside the scope: the handler runs in it and joins this transaction.
      const body = await withinIdempotentTransaction(
        manager,
        () => lastValueFrom(next.handle()),
        afterCommit,
      );
      const answer = { status: res.statusCode, body };
      const stored = seal ? { sealed: this.box.seal(JSON.stringify(body), context) } : body;
      const conversationId = conversationOf?.(body) ?? null;
      await this.keys.saveAnswer(
        organizationId,
        key,
        { status: answer.status, body: stored, conversationId },
        manager,
      );
      return answer;
    });
    if (first) {
      for (const work of afterCommit) await work().catch(() => undefined);
      return first.body;
    }
    const stored = await this.keys.find(organizationId, key);
    if (!stored) return this.answer(organizationId, key, hash, next, res, seal, conversationOf); // expired or released meanwhile
    if (stored.hash !== hash) {
      throw new ApiError(
        'conflict',
        'This Idempotency-Key was used with a different request; use a new key for a new request.',
      );
    }
    if (stored.erased) throw ApiError.notFound('conversation');
    res.status(stored.status);
    const sealed = (stored.body as { sealed?: unknown } | null)?.sealed;
    return seal && typeof sealed === 'string' ? JSON.parse(this.box.open(sealed, context)) : stored.body;
  }
}

/** The conversation a CONVERSATION_ANSWER route answered about: its `:id`, else the answer's `data.id`. */
function answeredConversation(req: ServiceRequest, body: unknown): string | null {
  const param = (req.params as Record<string, string | undefined> | undefined)?.id;
  if (typeof param === 'string') return param;
  const id = (body as { data?: { id?: unknown } } | null)?.data?.id;
  return typeof id === 'string' ? id : null;
}
