import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors/api-error';
import { ErrorCode } from '../errors/error-codes';
import { PROBLEM_CONTENT_TYPE, toProblem } from '../errors/problem';
import { newId } from '../ids/ids';

/** What Node's HTTP parser refused, as our error code. */
function codeFor(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'invalid_request';
}

const DETAILS: Partial<Record<ErrorCode, string>> = {
  headers_too_large: 'The request line and headers are larger than the server accepts.',
  request_timeout: 'The request was not received whole in time.',
  invalid_request: 'The request is not valid HTTP/1.1.',
};

/**
 * The answer to a request Node's own HTTP parser refused (bad request line, headers too large,
 * headers not received in time), which never reaches Express: a problem document like every
 * other error, written raw on the socket, which is then closed. `instance` is unknown (the
 * request line could not be read): "/".
 */
export function clientErrorResponse(err: NodeJS.ErrnoException, publicBaseUrl: string): string {
  const error = new ApiError(codeFor(err), DETAILS[codeFor(err)] ?? 'The request could not be read.');
  const requestId = newId('req');
  const body = JSON.stringify(toProblem(error, { publicBaseUrl, instance: '/', requestId }));
  const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[
    error.status
  ];
  return [
    `HTTP/1.1 ${error.status} ${reason ?? 'Bad Request'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Wires clientErrorResponse as the server's `clientError` handler (main.ts and the test app). */
export function answerClientErrorsWithProblems(server: Server, publicBaseUrl: string): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset connection, or one already answering a request (its bytes would corrupt that
    // answer): nothing can be written, as in Node's own handler.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err, publicBaseUrl));
  });
}
