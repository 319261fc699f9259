import pino from 'pino';
import { logCapture } from '../../../test/setup/log-capture';
import { NestProcessLogger } from './process-logger';

function capture(): { logger: NestProcessLogger; lines: () => Record<string, unknown>[] } {
  const { stream, lines } = logCapture();
  return { logger: new NestProcessLogger(pino({ level: 'trace' }, stream)), lines };
}

describe('NestProcessLogger: what Nest logs while the application is created is JSON', () => {
  it('a message keeps its context as a field and its level', () => {
    const { logger, lines } = capture();
    logger.log('Starting Nest application...', 'NestFactory');
    logger.warn('careful', 'Module');
    logger.verbose('details', 'Module');
    expect(lines()).toEqual([
      expect.objectContaining({ level: 30, context: 'NestFactory', msg: 'Starting Nest application...' }),
      expect.objectContaining({ level: 40, context: 'Module', msg: 'careful' }),
      expect.objectContaining({ level: 10, context: 'Module', msg: 'details' }),
    ]);
  });

  it('an error thrown while creating a module is logged with its message and stack', () => {
    const { logger, lines } = capture();
    logger.error(new Error('cannot create RedisModule'), 'ExceptionHandler');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 50,
        context: 'ExceptionHandler',
        msg: 'cannot create RedisModule',
        err: expect.objectContaining({
          message: 'cannot create RedisModule',
          stack: expect.stringContaining('\n    at '),
        }),
      }),
    ]);
  });

  it("Nest's (message, stack, context) form of an error keeps the stack as a field", () => {
    const { logger, lines } = capture();
    logger.error('failed', 'Error: failed\n    at somewhere (file.js:1:1)', 'InstanceLoader');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 50,
        context: 'InstanceLoader',
        msg: 'failed',
        stack: expect.stringContaining('at somewhere'),
      }),
    ]);
  });

  it('an object message becomes fields of the line', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'mapped', route: '/health' }, 'RouterExplorer');
    expect(lines()).toEqual([
      expect.objectContaining({ context: 'RouterExplorer', msg: 'mapped', route: '/health' }),
    ]);
  });
});
