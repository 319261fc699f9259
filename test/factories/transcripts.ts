import type { JudgeInput, JudgeMessage } from '../../src/labels/judges/judge';

let counter = 0;

/** A message as the API shows it; `text` becomes one text block, `products` a product_cards block. */
export function message(
  role: JudgeMessage['role'],
  text: string,
  options: { rating?: 'positive' | 'negative'; products?: number } = {},
): JudgeMessage {
  counter += 1;
  const blocks: JudgeMessage['blocks'] = [{ type: 'text', text }];
  if (options.products) {
    blocks.push({
      type: 'product_cards',
      products: Array.from({ length: options.products }, (_, i) => ({
        productId: `p${i}`,
        name: `Product ${i}`,
        url: `https://shop.example/p/${i}`,
        price: null,
      })),
    });
  }
  return {
    id: `msg_test${String(counter).padStart(10, '0')}`,
    role,
    createdAt: new Date(Date.UTC(2026, 10, 20, 10, 0, counter % 60)).toISOString(),
    rating: options.rating ?? null,
    blocks,
  };
}

/** A judge input: the conversation fields a judge reads, and its transcript. */
export function transcript(
  messages: JudgeMessage[],
  engagement: { impressions?: number; clicks?: number } = {},
): JudgeInput {
  const rated = (kind: 'positive' | 'negative') => messages.filter((m) => m.rating === kind).length;
  return {
    conversation: {
      id: 'conv_test0000000000000000001',
      channel: 'web',
      language: 'en',
      productEngagement: { impressions: engagement.impressions ?? 0, clicks: engagement.clicks ?? 0 },
      feedback: { positive: rated('positive'), negative: rated('negative') },
    },
    messages,
  };
}
