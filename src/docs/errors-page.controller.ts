import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator';
import { ERROR_CODES } from '../common/errors/error-codes';

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** Renders /docs/api/errors: one anchor per code, so every problem `type` URL resolves. */
export function renderErrorsPage(): string {
  const sections = Object.entries(ERROR_CODES)
    .map(
      ([code, spec]) => `<section id="${code}">
  <h2><a href="#${code}"><code>${code}</code></a> &middot; ${spec.status}</h2>
  <p><strong>${escapeHtml(spec.title)}</strong></p>
  <p>${escapeHtml(spec.description)}</p>
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>API errors</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}section{border-top:1px solid #ddd;padding:.5rem 0}code{font-size:1.05em}</style>
</head><body>
<h1>API errors</h1>
<p>Every error under <code>/api/v1/</code> is an RFC 9457 problem document (<code>application/problem+json</code>)
with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>instance</code>, <code>code</code>,
<code>requestId</code> and, on some 400 responses, <code>errors</code>. Branch on <code>code</code>, never on <code>detail</code>.
An unknown code is a generic failure of its HTTP status.</p>
${sections}
</body></html>`;
}

@ApiExcludeController()
@Public()
@Controller('docs/api/errors')
export class ErrorsPageController {
  private readonly page = renderErrorsPage();

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  get(): string {
    return this.page;
  }
}
