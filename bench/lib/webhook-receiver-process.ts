/**
 * The bench's webhook receiver, in a process of its own (a receiver is another machine in
 * production: it must not share the event loop of the bench's writers). Listens on
 * RECEIVER_PORT, verifies every signature with standardwebhooks (RECEIVER_SECRETS: JSON of path
 * → secret), notes the arrival time (Date.now()) of each (path, webhook-id), and answers 204.
 * On the IPC message "report" it sends back what it saw.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secrets = JSON.parse(process.env.RECEIVER_SECRETS ?? '{}') as Record<string, string>;
const verifiers = new Map(Object.entries(secrets).map(([path, secret]) => [path, new Webhook(secret)]));
const arrivals: Array<[string, number]> = [];
const seen = new Set<string>();
let badSignatures = 0;
let duplicates = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const key = `${req.url} ${req.headers['webhook-id']}`;
    try {
      verifiers
        .get(req.url ?? '')!
        .verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
    } catch {
      badSignatures++;
    }
    if (seen.has(key)) duplicates++;
    else {
      seen.add(key);
      arrivals.push([key, at]);
    }
    res.writeHead(204).end();
  });
});

process.on('message', (message) => {
  if (message === 'report') process.send!({ arrivals, badSignatures, duplicates });
  if (message === 'reset') {
    arrivals.length = 0;
    seen.clear();
  }
});

server.listen(Number(process.env.RECEIVER_PORT), '127.0.0.1', () => process.send!('listening'));
