import { webhookUrlFault } from './webhook-url';

const strict = { allowHttp: false, allowLoopback: false };

describe('webhook url: https only, and an address literal in a blocked range is refused at registration', () => {
  it('accepts a public https URL', () => {
    expect(webhookUrlFault('https://hooks.example.com/in?x=1', strict)).toBeUndefined();
    expect(webhookUrlFault('https://93.184.216.34/hook', strict)).toBeUndefined();
  });

  it('refuses plain http unless WEBHOOK_ALLOW_HTTP', () => {
    expect(webhookUrlFault('http://hooks.example.com/in', strict)).toMatch(/https/);
    expect(webhookUrlFault('http://hooks.example.com/in', { ...strict, allowHttp: true })).toBeUndefined();
    expect(webhookUrlFault('ftp://hooks.example.com/in', { ...strict, allowHttp: true })).toMatch(/http/);
  });

  it.each([
    'https://127.0.0.1/x',
    'https://127.1/x',
    'https://2130706433/x',
    'https://0x7f.0.0.1/x',
    'https://10.1.2.3/x',
    'https://192.168.0.1/x',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://[fd00:ec2::254]/x',
    'https://localhost/x',
    'https://api.localhost/x',
  ])('refuses %s', (url) => {
    expect(webhookUrlFault(url, strict)).toMatch(/non-public/);
  });

  it('lets loopback through only with the test-only WEBHOOK_ALLOW_LOOPBACK, on any port', () => {
    const loose = { allowHttp: true, allowLoopback: true };
    expect(webhookUrlFault('http://127.0.0.1:4567/x', loose)).toBeUndefined();
    expect(webhookUrlFault('http://10.0.0.1/x', loose)).toMatch(/non-public/);
  });

  it('refuses credentials, fragments, other ports and garbage', () => {
    expect(webhookUrlFault('https://u:p@hooks.example.com/', strict)).toMatch(/credentials/);
    expect(webhookUrlFault('https://hooks.example.com/#a', strict)).toMatch(/fragment/);
    expect(webhookUrlFault('https://hooks.example.com:8443/', strict)).toMatch(/port/);
    expect(webhookUrlFault('not a url', strict)).toMatch(/absolute/);
  });
});
