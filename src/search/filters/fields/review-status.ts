import { params } from '../../../common/query/query-params';
import { defineField, singleValuedField } from '../filter-field';
import { REVIEW_STATUSES, ReviewStatus } from '../filter-values';

/*
 * `reviewStatus` (workflows-v1 §2): whether a human review applies. Implies labeled. The column
 * (`review_state`) is not in the covering index: a plan reading it needs the heap, and no
 * summary counts it.
 */

/**
 * The condition of `reviewStatus` (workflows-v1 §2) on `conversations.review_state` (migration
 * LabelReviews): reviewed, a current review applies; outdated, only an outdated review;
 * unreviewed, no review at all. Each also implies labeled (the label status field renders it).
 */
export function reviewStatusSql(status: ReviewStatus, column = 'review_state'): string {
  switch (status) {
    case 'reviewed':
      return `${column} = 'current'`;
    case 'outdated':
      return `${column} = 'outdated'`;
    case 'unreviewed':
      return `${column} IS NULL`;
  }
}

export const reviewStatusField = defineField({
  key: 'reviewStatus',
  example: { reviewStatus: 'outdated' },
  params: {
    reviewStatus: {
      ...params.oneOf(REVIEW_STATUSES),
      json: 'string',
      doc: {
        description:
          'Label reviews: reviewed (a current review applies), outdated (only an outdated review), unreviewed (labeled, no review at all). Implies labeled: with a labelStatus other than labeled, 400 invalid_filter naming labelStatus.',
        schema: { type: 'string', enum: [...REVIEW_STATUSES] },
      },
    },
  },
  read: (v) => v.reviewStatus as ReviewStatus | undefined,
  ...singleValuedField('reviewStatus'),
  answeredBy: {},
  impliesLabeled: true,
  sql: {
    rows: (f) => (f.reviewStatus ? [reviewStatusSql(f.reviewStatus)] : []),
    needsHeap: true,
  },
  // review_state is indexed only when the conversation has a review.
  openSearch: (f) => ({
    filter:
      f.reviewStatus === 'reviewed'
        ? [{ term: { review_state: 'current' } }]
        : f.reviewStatus === 'outdated'
          ? [{ term: { review_state: 'outdated' } }]
          : [],
    mustNot: f.reviewStatus === 'unreviewed' ? [{ exists: { field: 'review_state' } }] : [],
  }),
});
