/**
 * `npm run bench:render`: rewrites bench/results/listing-<BENCH_OUT or 2x1m>.md from its JSON, with the
 * current bench/notes.md (for notes written after a run; the figures are not touched).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchReport, renderMarkdown } from './lib/report';

const name = `listing-${process.env.BENCH_OUT ?? '2x1m'}`;
const jsonFile = join(__dirname, 'results', `${name}.json`);
const notesFile = join(__dirname, 'notes.md');
const report = JSON.parse(readFileSync(jsonFile, 'utf8')) as BenchReport;
report.notes = existsSync(notesFile) ? readFileSync(notesFile, 'utf8') : report.notes;
writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(__dirname, 'results', `${name}.md`), renderMarkdown(report));
console.log(`rewrote bench/results/${name}.md with bench/notes.md`);
