import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { CONVERSATION_ANSWER, IdempotencyInterceptor, SEAL_ANSWER } from './idempotency.interceptor';

/**
 * Makes a write route honour Idempotency-Key: a retry with the same key and body gets the first
 * answer (same status and body) and records nothing twice; the same key with another request is
 * 409 conflict; keys are kept 24 hours per organization. The route's service does its write in
 * IdempotentTransaction#run, and its status comes from the route (@HttpCode). `sealAnswer`:
 * see SEAL_ANSWER; `conversationAnswer`: see CONVERSATION_ANSWER.
 */
export function Idempotent(
  options: { sealAnswer?: boolean; conversationAnswer?: boolean } = {},
): MethodDecorator {
  return applyDecorators(
    SetMetadata(SEAL_ANSWER, options.sealAnswer === true),
    SetMetadata(CONVERSATION_ANSWER, options.conversationAnswer === true),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description: '1 to 255 visible ASCII characters; a retry with the same key returns the first answer',
    }),
  );
}
