import { ArgumentsHost, Catch, ExceptionFilter, NotFoundException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application, Request, Response } from 'express';
import { AppConfig } from '../../config/app-config';
import { allowedMethods } from '../http/route-table';
import { sendProblem } from './problem-responder';

/**
 * The one filter that turns every exception into a problem document, except a method a path
 * does not support: that is a plain 405 with Allow (contract: not a problem document).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(
    private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();

    if (exception instanceof NotFoundException && this.isRouterMiss(exception)) {
      const app = this.adapterHost.httpAdapter.getInstance<Application>();
      const allow = allowedMethods(app, req.path);
      if (allow.length > 0) {
        res.status(405).setHeader('Allow', allow.join(', '));
        res.type('text/plain').send('Method Not Allowed');
        return;
      }
    }
    sendProblem(req, res, exception, this.config.publicBaseUrl);
  }

  /** Nest's router answers unknown routes with NotFoundException("Cannot METHOD /path"). */
  private isRouterMiss(exception: NotFoundException): boolean {
    return /^Cannot [A-Z]+ /.test(exception.message);
  }
}
